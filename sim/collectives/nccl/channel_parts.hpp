// How many channels and threads NCCL gives one collective: the small-message shrink of its
// tuner (enqueue.cc topoGetAlgoInfo) and the division of the data over the channels
// (scheduleCollTasksToPlan), which cuts it into cells and may leave some channels idle.
#pragma once

#include "collectives/nccl/nccl_params.hpp"
#include "collectives/nccl/nccl_types.hpp"

namespace cs::coll {

// The channels and threads per channel the tuner leaves a call of `bytes` (nccl-tests' S):
// nc = comm_channels, nt = maxThreads of the protocol; while bytes < nc x nt x threshold (the
// protocol's, x n_ranks for Ring LL): nc-- if nc >= 2, else nt /= 2 while nt is a multiple of
// 128. NVLS and NVLSTree keep their channels and threads.
struct ChannelShrink {
  int channels = 1;
  int threads = 0;
};
ChannelShrink nccl_channel_shrink(Algo algo, Proto proto, double bytes, int n_ranks,
                                  int comm_channels, const NcclParams& params);

// The element size the division assumes for reducing collectives: float32, nccl-tests' default
// type and the gradients DDP reduces (all-gather and broadcast move bytes whatever the type).
inline constexpr int kCallElementBytes = 4;

// The channels a ring, tree or PAT call alone in its kernel plan uses, as NCCL 2.28 lays them
// out. `bytes` is nccl-tests' S; the count NCCL divides is a rank's S / n for all-gather and
// reduce-scatter, S otherwise, in elements of `element_bytes` (all-gather and broadcast: bytes,
// which NCCL moves as int8). `task_channels` is the tuner's count after the small-message shrink
// (nccl_channel_shrink), `comm_channels` the communicator's.
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
