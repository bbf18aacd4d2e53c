// How many channels NCCL spreads one collective over (enqueue.cc scheduleCollTasksToPlan): it
// cuts the data into cells and fills the channels in order, which may leave some idle.
#pragma once

#include "collectives/nccl_types.hpp"

namespace cs::coll {

// The element size the division assumes for reducing collectives: float32, nccl-tests' default
// type and the gradients DDP reduces (all-gather and broadcast move bytes whatever the type).
inline constexpr int kCallElementBytes = 4;

// The channels a ring, tree or PAT call alone in its kernel plan uses, as NCCL 2.28 lays them
// out. `bytes` is nccl-tests' S; the count NCCL divides is a rank's S / n for all-gather and
// reduce-scatter, S otherwise, in elements of `element_bytes` (all-gather and broadcast: bytes,
// which NCCL moves as int8). `task_channels` is the tuner's count after the small-message shrink
// (tuner.hpp shrink_channels), `comm_channels` the communicator's.
//   traffic per byte t: all-reduce 2, all-gather and reduce-scatter n, others 1; x 4 for LL;
//   the call's traffic T = count x element_bytes x t, per channel max(16 KiB, T / task_channels);
//   cells of 16 KiB / t bytes rounded up to 16, the count rounded up to whole cells;
//   channel 0 takes ceil(per-channel traffic / (cell x t)) cells, the next ones as many, the last
//   one the rest; where that needs more than comm_channels, the other comm_channels - 1 share
//   what channel 0 leaves.
// The channels' cells differ by at most one, except the last's remainder: the model gives each
// used channel an equal share. On a communicator of one channel, 1.
int nccl_channel_count(Op op, Proto proto, double bytes, int n_ranks, int task_channels,
                       int comm_channels, int element_bytes);

}  // namespace cs::coll
