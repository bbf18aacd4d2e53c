// Misaligned ring all-gather / reduce-scatter chunks (ring_alignment.hpp).
#include "collectives/ring_alignment.hpp"

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

}  // namespace cs::coll
