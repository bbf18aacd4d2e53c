// Ring all-gather and reduce-scatter whose per-rank chunks are not multiples of 16 bytes: how
// much longer their copies take than aligned ones.
#pragma once

#include "collectives/nccl_params.hpp"

namespace cs::coll {

// Whether a collective's per-rank chunks (S / n for all-gather, reduce-scatter and all-to-all;
// the whole buffer otherwise) start at multiples of 16 bytes in the full buffer. NCCL's
// reduceCopy moves 16-byte packs only between pointers that share their alignment.
bool rank_chunks_aligned(Op op, double bytes, int n_ranks);

// Share of a ring's n - 1 steps that pay the misaligned copy rate: 1 / (n - 1). Two ranks
// (one step) are measured (calibrate/data/h200x2-align). Beyond two ranks it is a hypothesis
// from the data path of NCCL's all-gather kernel (src/device/all_gather.h) in one process,
// where peers write into each other's buffers directly: step 0 copies the rank's input
// (offset 0 of its own buffer) to r x chunk of the gathered buffers, while the later steps
// forward chunk c from one gathered buffer to the same offset of the next, so source and
// destination share their misalignment. Reduce-scatter is given the same share without such an
// argument (its every step reads the input at a chunk offset); on the held-out 3-rank points of
// calibrate/data/h200x4 it slows down less than even that.
double ring_misaligned_step_share(Op op, int n_ranks);

// Factor (>= 1) on the bandwidth time of a Ring call: 1 where the chunks are aligned or the op
// has no per-rank chunks, else 1 + (slowdown - 1) x step share, with the measured slowdown of a
// ring whose every step is misaligned (NcclParams::ring_misaligned_slowdown).
double ring_misaligned_factor(Op op, Proto proto, double bytes, int n_ranks,
                              const NcclParams& params);

}  // namespace cs::coll
