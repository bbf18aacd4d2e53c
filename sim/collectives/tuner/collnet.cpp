// CollNet's place in NCCL's choice: see collnet.hpp.
#include "collectives/tuner/collnet.hpp"

#include <algorithm>

namespace cs::coll {

bool collnet_enabled(const CommShape& shape, const TunerOptions& options) {
  constexpr int kNodeThreshold = 2;  // NCCL_COLLNET_NODE_THRESHOLD's default (init.cc)
  return options.collnet.value_or(false) && shape.sharp && shape.n_nodes >= kNodeThreshold;
}

bool collnet_applicable(const CommShape& shape, Op op, Algo algo, Proto proto,
                        const TunerOptions& options) {
  if (algo != Algo::collnet_direct && algo != Algo::collnet_chain) return false;
  if (op != Op::all_reduce || proto != Proto::simple || !collnet_enabled(shape, options))
    return false;
  // Both run their in-server part over the NVSwitch here (collectives/communicator.cpp); NCCL also
  // disables CollNetDirect without one (tuning.cc, nvsCount == 0).
  if (!shape.nvswitch) return false;
  const GraphInfo& g = algo == Algo::collnet_direct ? shape.collnet_direct : shape.collnet_chain;
  return g.n_channels > 0;
}

double collnet_bus_GBps(const CommShape& shape, Algo algo, double bus) {
  if (algo != Algo::collnet_direct) return bus;
  // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed".
  const double ppn = static_cast<double>(shape.n_ranks) / std::max(shape.n_nodes, 1);
  double factor = ppn / std::max(shape.collnet_direct.n_channels, 1);
  factor -= (factor - 1) / 2;
  bus /= factor;
  if (shape.sm90) bus *= 0.85;
  return bus;
}

double collnet_latency_us(const CommShape& shape, Algo algo, double intra_hop_us,
                          double net_hop_us) {
  const int ppn = shape.n_ranks / std::max(shape.n_nodes, 1);
  if (algo == Algo::collnet_direct) {
    constexpr double kAritySerializationUs = 0.4;  // tuning.cc, per further GPU of the server
    return 2.0 * (std::min(1, ppn - 1) * intra_hop_us + (ppn - 1) * kAritySerializationUs) +
           net_hop_us;
  }
  if (algo == Algo::collnet_chain) return 2.0 * (ppn - 1) * intra_hop_us + net_hop_us;
  return 0;
}

}  // namespace cs::coll
