// The receive-only pass that ends every loop of a ring all-gather, reduce-scatter or all-reduce.
#pragma once

#include "collectives/nccl_params.hpp"

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

}  // namespace cs::coll
