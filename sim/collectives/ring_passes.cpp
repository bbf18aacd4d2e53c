// The receive-only pass of ring loops (ring_passes.hpp).
#include "collectives/ring_passes.hpp"

#include <algorithm>

namespace cs::coll {

int ring_link_steps(Op op, int n_ranks) {
  if (n_ranks <= 1) return 0;
  switch (op) {
    case Op::all_gather:
    case Op::reduce_scatter:
      return n_ranks - 1;
    case Op::all_reduce:
      return 2 * (n_ranks - 1);
    default:
      return 0;
  }
}

double ring_pass_factor(Op op, Proto proto, int n_ranks, const NcclParams& params) {
  const int steps = ring_link_steps(op, n_ranks);
  if (steps == 0) return 1.0;
  return (steps + params.ring_recv_pass_steps[index_of(proto)]) / steps;
}

double chain_fill_us(Op op, Proto proto, double bytes, int channels, int n_nodes,
                     double fill_GBps) {
  if (op != Op::broadcast && op != Op::reduce) return 0;
  if (proto != Proto::simple || n_nodes > 1 || channels < 1) return 0;
  if (!(fill_GBps > 0) || !(bytes > 0)) return 0;
  const double last_chunk = std::min(bytes / channels, chain_chunk_bytes);
  return channels * last_chunk / (fill_GBps * 1e3);
}

}  // namespace cs::coll
