// Ring all-gather and reduce-scatter whose per-rank chunks are not multiples of 16 bytes: how
// much longer their copies take than aligned ones.
#pragma once

#include "collectives/nccl/nccl_params.hpp"

namespace cs::coll {

// Whether a collective's per-rank chunks (S / n for all-gather, reduce-scatter and all-to-all;
// the whole buffer otherwise) start at multiples of 16 bytes in the full buffer. NCCL's
// reduceCopy (src/device/common_kernel.h) moves 16-byte packs only when every source and
// destination pointer is 16-byte aligned, and one element per load otherwise.
bool rank_chunks_aligned(Op op, double bytes, int n_ranks);

// Chunks of the full buffer that start off a 16-byte boundary: ranks r in 1..n-1 with
// r x (S / n) not a multiple of 16 (chunks of 4 mod 16 bytes: all n - 1; of 8 mod 16: the odd r).
int misaligned_chunks(double bytes, int n_ranks);

// Factor (>= 1) on the bandwidth time of a Ring all-gather or reduce-scatter:
//   all-gather:     1 + (slowdown - 1) x m / (n - 1),  m = misaligned_chunks,
//   reduce-scatter: 1 + (slowdown - 1) / (n - 1),
// slowdown = NcclParams::ring_misaligned_slowdown, measured on 2 ranks (m = 1, n - 1 = 1). Why
// m / (n - 1) for all-gather: a pipelined ring runs at the pace of its busiest rank. Each rank
// copies n - 1 of the n chunks (its own into the gathered buffers, then n - 2 forwards at the same
// offsets), and every copy of a misaligned chunk is slow, since a pointer off a 16-byte boundary
// at either end leaves the 16-byte packs. The rank that skips an aligned chunk copies all m
// misaligned ones: (n - 1 - m) + m x slowdown chunk times for n - 1. Reduce-scatter pays one
// step's worth whatever m is: that is what calibrate/data/h200x4-align measures on 3 and 4 ranks
// with offset chunks (1.04-1.09 for m = 1, 2 and 3), without an argument from the kernel's code.
// 1 for aligned chunks and for other ops.
double ring_misaligned_factor(Op op, Proto proto, double bytes, int n_ranks,
                              const NcclParams& params);

// Time (us) that the misaligned chunks of a Simple ring all-gather on one server add to it:
//   m x (head_ps x min(b, head) + tail_ps x max(b - head, 0)) / 1e6,
// m = misaligned_chunks, b = bytes / n_ranks / channels (one chunk's share of a channel), head
// and the two costs from NcclParams. Every rank copies every chunk once (its own at step 0, the
// others as they pass), so each rank's channel meets the m misaligned ones, and their copies in
// reduceCopy's misaligned path (src/device/common_kernel.h: packs of one element, here one byte,
// since NCCL moves all-gather data as int8) add to the ring's time rather than to its rate:
// calibrate/data/h200x2-align, -align-run2 and h200x4-align give the same cost per misaligned
// byte whatever the rank count and m (2 and 4 ranks, m = 1, 2, 3), about 85 ps/B up to ~80 KB
// per chunk and channel and 47 ps/B beyond. 0 for other ops, algorithms, protocols, several
// servers, aligned chunks and zero costs.
double ring_misaligned_us(Op op, Algo algo, Proto proto, double bytes, int n_ranks, int channels,
                          int n_nodes, const NcclParams& params);

}  // namespace cs::coll
