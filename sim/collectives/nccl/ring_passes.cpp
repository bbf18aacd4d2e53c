// The receive-only pass of ring loops and the fill of their last slices (ring_passes.hpp).
#include "collectives/nccl/ring_passes.hpp"

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

double ring_last_slice_bytes(Op op, double bytes, int n_ranks, int channels) {
  if (channels < 1 || n_ranks < 1) return 0;
  if (op == Op::broadcast || op == Op::reduce) return std::min(bytes / channels, chain_chunk_bytes);
  const double b = bytes / n_ranks / channels;
  return std::min(b, std::max(std::min(b, ring_chunk_bytes) / 2, ring_min_slice_bytes));
}

double ring_fill_us(Op op, Algo algo, Proto proto, double bytes, int n_ranks, int channels,
                    int n_nodes, double fill_GBps) {
  if (algo != Algo::ring || proto != Proto::simple || n_nodes > 1 || channels < 1) return 0;
  if (!(fill_GBps > 0) || !(bytes > 0)) return 0;
  if (op != Op::broadcast && op != Op::reduce && ring_link_steps(op, n_ranks) == 0) return 0;
  return channels * ring_last_slice_bytes(op, bytes, n_ranks, channels) / (fill_GBps * 1e3);
}

}  // namespace cs::coll
