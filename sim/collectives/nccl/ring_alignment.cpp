// Misaligned ring all-gather / reduce-scatter chunks (ring_alignment.hpp).
#include "collectives/nccl/ring_alignment.hpp"

#include <algorithm>
#include <cmath>

namespace cs::coll {

bool rank_chunks_aligned(Op op, double bytes, int n_ranks) {
  const bool per_rank_chunks =
      op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_to_all;
  if (!per_rank_chunks || n_ranks <= 1) return true;
  return std::fmod(bytes / n_ranks, 16.0) == 0.0;
}

int misaligned_chunks(double bytes, int n_ranks) {
  const double chunk = bytes / n_ranks;
  int m = 0;
  for (int r = 1; r < n_ranks; ++r) {
    if (std::fmod(r * chunk, 16.0) != 0.0) ++m;
  }
  return m;
}

double ring_misaligned_factor(Op op, Proto proto, double bytes, int n_ranks,
                              const NcclParams& params) {
  if (op != Op::all_gather && op != Op::reduce_scatter) return 1.0;
  if (rank_chunks_aligned(op, bytes, n_ranks)) return 1.0;
  const int row = op == Op::all_gather ? 0 : 1;
  const double slowdown = params.ring_misaligned_slowdown[row][index_of(proto)];
  const double share = op == Op::all_gather ? misaligned_chunks(bytes, n_ranks) / (n_ranks - 1.0)
                                            : 1.0 / (n_ranks - 1);
  return 1.0 + (slowdown - 1.0) * share;
}

double ring_misaligned_us(Op op, Algo algo, Proto proto, double bytes, int n_ranks, int channels,
                          int n_nodes, const NcclParams& params) {
  if (op != Op::all_gather || algo != Algo::ring || proto != Proto::simple) return 0;
  if (n_nodes > 1 || channels < 1 || n_ranks <= 1) return 0;
  const int m = misaligned_chunks(bytes, n_ranks);
  if (m == 0) return 0;
  const double b = bytes / n_ranks / channels;
  const double head = std::min(b, params.ring_misaligned_head_bytes);
  const double ps = params.ring_misaligned_head_ps_per_byte * head +
                    params.ring_misaligned_tail_ps_per_byte * (b - head);
  return m * ps * 1e-6;
}

}  // namespace cs::coll
