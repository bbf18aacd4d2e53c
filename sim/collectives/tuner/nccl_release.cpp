// What earlier NCCL releases priced otherwise: see nccl_release.hpp.
#include "collectives/tuner/nccl_release.hpp"

#include <algorithm>

namespace cs::coll {
namespace {

constexpr int kFirstNvls = 21700;           // 2.17
constexpr int kFirstNvlsTree = 21800;       // 2.18
constexpr int kNvlsFormulas228 = 22800;     // 2.28.0: NVLS / NVLSTree bandwidth reworked
constexpr int kNvlsTreeHop289 = 22809;      // 2.28.9: NVLSTree's network hop 14 -> 20.9 us
constexpr double kNvlsTreeNetHopUs = 14.0;  // before 2.28.9

bool known(int version) {
  return version > 0;
}

}  // namespace

bool nccl_release_has(Algo algo, int version) {
  if (!known(version)) return true;
  if (algo == Algo::nvls) return version >= kFirstNvls;
  if (algo == Algo::nvls_tree) return version >= kFirstNvlsTree;
  return true;
}

std::optional<double> legacy_nvls_bus_GBps(Algo algo, int version, const GraphInfo& graph,
                                           int nodes) {
  if (!known(version) || version >= kNvlsFormulas228) return std::nullopt;
  const double nch = graph.n_channels;
  if (algo == Algo::nvls) return nch * std::min(graph.bw_intra_GBps, graph.bw_inter_GBps);
  if (algo == Algo::nvls_tree) {
    const double inter = nodes <= 2 ? graph.bw_inter_GBps : graph.bw_inter_GBps / 2.0;
    return nch * std::min(graph.bw_intra_GBps, inter);
  }
  return std::nullopt;
}

std::optional<double> legacy_nvls_tree_net_hop_us(int version) {
  if (!known(version) || version >= kNvlsTreeHop289) return std::nullopt;
  return kNvlsTreeNetHopUs;
}

}  // namespace cs::coll
