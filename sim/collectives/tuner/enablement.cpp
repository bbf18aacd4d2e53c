// Which (algorithm, protocol) NCCL considers: see enablement.hpp.
#include "collectives/tuner/enablement.hpp"

#include "collectives/tuner/collnet.hpp"
#include "collectives/tuner/nccl_release.hpp"

namespace cs::coll {

bool nvls_enabled(const CommShape& shape, const TunerOptions& options) {
  return shape.multicast && options.nvls.value_or(true);
}

bool applicable(const CommShape& s, Op op, Algo a, Proto p, const TunerOptions& o) {
  if (!(o.algo_mask & (1u << index_of(a))) || !(o.proto_mask & (1u << index_of(p)))) return false;
  if (p == Proto::ll128 && s.intra != LinkClass::nvlink) return false;  // NVLink-only paths
  if (!nccl_release_has(a, o.nccl_version)) return false;
  const bool ppn1 = s.n_ranks == s.n_nodes;
  switch (a) {
    case Algo::ring:
      return op != Op::all_to_all && op != Op::send_recv;
    case Algo::tree:
      return op == Op::all_reduce && s.tree.n_channels > 0;
    case Algo::nvls:  // in-switch reduction in an NVSwitch server; across servers with CollNet
      return op == Op::all_reduce && p == Proto::simple && nvls_enabled(s, o) && s.n_ranks > 1 &&
             (s.n_nodes == 1 ? s.nvls.n_channels > 0
                             : collnet_enabled(s, o) && s.nvls.n_channels >= 2);
    case Algo::nvls_tree:  // NVLS inside each server, a tree across them; at least 2 channels
      return op == Op::all_reduce && p == Proto::simple && nvls_enabled(s, o) && s.n_nodes > 1 &&
             s.nvls.n_channels >= 2;
    case Algo::pat:  // one rank per node
      return (op == Op::all_gather || op == Op::reduce_scatter) && p == Proto::simple && ppn1 &&
             s.n_nodes > 1;
    case Algo::collnet_direct:
    case Algo::collnet_chain:
      return collnet_applicable(s, op, a, p, o);
  }
  return false;
}

const GraphInfo& graph_of(const CommShape& s, Algo a) {
  if (a == Algo::collnet_direct) return s.collnet_direct;
  if (a == Algo::collnet_chain) return s.collnet_chain;
  return a == Algo::tree ? s.tree : a == Algo::nvls || a == Algo::nvls_tree ? s.nvls : s.ring;
}

}  // namespace cs::coll
