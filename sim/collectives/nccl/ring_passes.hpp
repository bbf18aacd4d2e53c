// What a ring or chain pays beyond its link steps: the receive-only pass that ends every loop of a
// ring all-gather, reduce-scatter or all-reduce, and the fill of its last slices.
#pragma once

#include "collectives/nccl/nccl_params.hpp"

namespace cs::coll {

// Link steps per loop of one ring channel: n - 1 for all-gather and reduce-scatter, 2(n - 1) for
// all-reduce; 0 for ops without that loop (broadcast and reduce run a chain, one pass per chunk).
int ring_link_steps(Op op, int n_ranks);

// Factor (>= 1) on a ring's bandwidth time: (S + a) / S with S = ring_link_steps and a =
// NcclParams::ring_recv_pass_steps for the protocol. NCCL's ring kernels (src/device/all_gather.h,
// reduce_scatter.h, all_reduce.h) run, per loop and channel, one pass per step: a send, n - 2 (or
// 2n - 3) passes that receive and send, and a last pass that only receives. The link moves data in
// S of them; the receive-only pass adds `a` step times (it copies out of NCCL's buffer for LL and
// LL128; for Simple it still waits on the last chunk's arrival). A chain (broadcast) has every rank
// do one pass per chunk, so no pass is extra. 1 for other ops.
double ring_pass_factor(Op op, Proto proto, int n_ranks, const NcclParams& params);

// A Simple broadcast / reduce chain's step: NCCL's 4 MiB Simple buffer over NCCL_STEPS 8 slots
// (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1, so a chunk is one step and one slice).
inline constexpr double chain_chunk_bytes = 4.0 * 1024 * 1024 / 8;
// A Simple ring loop's chunk (ALLREDUCE / ALLGATHER / REDUCESCATTER_CHUNKSTEPS 4 steps) and the
// smallest slice prims_simple.h cuts it into (its slice, 2 steps, over 32).
inline constexpr double ring_chunk_bytes = 4 * chain_chunk_bytes;
inline constexpr double ring_min_slice_bytes = 2 * chain_chunk_bytes / 32;

// The last slice a channel moves on one step, bytes. A chain (broadcast, reduce): its part
// (bytes / channels) one chunk at a time, min(part, chain_chunk_bytes). A ring (all-gather,
// reduce-scatter, all-reduce), per step the channel's share of one rank's chunk, b = bytes / n /
// channels, in the two slices prims_simple.h cuts a loop's chunk into: min(b, max(min(b,
// ring_chunk_bytes) / 2, ring_min_slice_bytes)).
double ring_last_slice_bytes(Op op, double bytes, int n_ranks, int channels);

// The pipeline's fill, us: a ring or chain moves each channel's data slice by slice through
// NCCL's buffers, each slice's copies overlapping the next slice's; the last slice's final copy
// on the last rank has nothing left to overlap, and every channel makes it at the same moment,
// at one GPU-wide rate `fill_GBps` (NcclParams::ring_fill_GBps):
//   channels x ring_last_slice_bytes / fill_GBps.
// Ring algorithm, Simple, one server; 0 otherwise, or without the figure.
double ring_fill_us(Op op, Algo algo, Proto proto, double bytes, int n_ranks, int channels,
                    int n_nodes, double fill_GBps);

}  // namespace cs::coll
