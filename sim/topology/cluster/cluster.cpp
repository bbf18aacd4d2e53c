// Small queries on the plain cluster structs.
#include "topology/cluster/cluster.hpp"

namespace cs::topo {

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::gpu:
      return "gpu";
    case NodeKind::cpu:
      return "cpu";
    case NodeKind::pcie_switch:
      return "pcie_switch";
    case NodeKind::nvswitch:
      return "nvswitch";
    case NodeKind::nic:
      return "nic";
    case NodeKind::network_switch:
      return "switch";
  }
  return "?";
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::pcie:
      return "pcie";
    case LinkKind::nvlink:
      return "nvlink";
    case LinkKind::socket:
      return "socket";
    case LinkKind::infiniband:
      return "infiniband";
    case LinkKind::ethernet:
      return "ethernet";
    case LinkKind::efa:
      return "efa";
  }
  return "?";
}

int Cluster::find_node(const std::string& node_name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == node_name) return static_cast<int>(i);
  }
  return -1;
}

const ServerPrice* Cluster::price_of(const std::string& template_name) const {
  for (const ServerPrice& p : prices) {
    if (p.template_name == template_name) return &p;
  }
  return nullptr;
}

}  // namespace cs::topo
