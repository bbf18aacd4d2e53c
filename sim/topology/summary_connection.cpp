// nvidia-smi style classification of the route between two GPUs (X, NV<n>, PIX, PXB, PHB, SYS,
// NET). It reads the route the simulator itself takes, so the matrix shows what transfers will do.
#include <algorithm>
#include <limits>

#include "topology/bisection.hpp"
#include "topology/summary.hpp"

namespace cs::topo {

std::string to_string(const GpuConnection& connection) {
  switch (connection.type) {
    case ConnectionType::self:
      return "X";
    case ConnectionType::nvlink:
      return "NV" + std::to_string(connection.nvlink_lanes);
    case ConnectionType::pix:
      return "PIX";
    case ConnectionType::pxb:
      return "PXB";
    case ConnectionType::phb:
      return "PHB";
    case ConnectionType::sys:
      return "SYS";
    case ConnectionType::net:
      return "NET";
  }
  return "?";
}

GpuConnection classify_connection(const ClusterGraph& graph, int gpu_a, int gpu_b) {
  GpuConnection result;
  if (gpu_a == gpu_b) {
    result.bandwidth_Bps = std::numeric_limits<double>::infinity();
    result.line_rate_Bps = result.bandwidth_Bps;
    return result;
  }
  const Cluster& cluster = graph.cluster();
  const Route route = graph.route(gpu_a, gpu_b);
  result.bandwidth_Bps = route.bottleneck_Bps;
  result.latency = route.latency;
  result.hops = route.hops();

  bool all_nvlink = true;
  bool network = cluster.nodes[static_cast<std::size_t>(gpu_a)].server !=
                 cluster.nodes[static_cast<std::size_t>(gpu_b)].server;
  bool socket = false;
  bool host_bridge = false;
  int pcie_switches = 0;
  int fewest_lanes = std::numeric_limits<int>::max();
  result.line_rate_Bps = std::numeric_limits<double>::infinity();
  for (ChannelId c : route.channels) {
    const Link& link = graph.link_of(c);
    result.line_rate_Bps = std::min(result.line_rate_Bps, link.bandwidth_Bps);
    all_nvlink = all_nvlink && link.kind == LinkKind::nvlink;
    network = network || is_network_link(link.kind);
    socket = socket || link.kind == LinkKind::socket;
    if (link.kind == LinkKind::nvlink) fewest_lanes = std::min(fewest_lanes, link.lanes);
    const int through = graph.channel(c).to;
    if (through == gpu_b) continue;
    const NodeKind kind = cluster.nodes[static_cast<std::size_t>(through)].kind;
    host_bridge = host_bridge || kind == NodeKind::cpu;
    if (kind == NodeKind::pcie_switch) ++pcie_switches;
  }
  if (network) {
    result.type = ConnectionType::net;
  } else if (all_nvlink) {
    result.type = ConnectionType::nvlink;
    result.nvlink_lanes = fewest_lanes;
  } else if (socket) {
    result.type = ConnectionType::sys;
  } else if (host_bridge) {
    result.type = ConnectionType::phb;
  } else {
    result.type = pcie_switches >= 2 ? ConnectionType::pxb : ConnectionType::pix;
  }
  return result;
}

}  // namespace cs::topo
