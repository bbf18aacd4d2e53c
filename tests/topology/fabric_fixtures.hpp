// Small generated fabrics for the fabric tests: servers of one GPU and a few NICs on 100 Gb/s
// Ethernet ports, and what their generated switches and links look like.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topology/loader.hpp"

namespace cs::topo::testing {

// `servers` servers with one GPU and `nics` NICs each, joined by `fabric` whose ports are
// `port` of Ethernet (default 100 Gb/s: 12.5 GB/s).
inline Cluster load_fabric(int servers, int nics, const std::string& fabric,
                           const std::string& port = "100Gbps") {
  const std::string text =
      "gpu_models: {G: {bf16: 1TFLOPS, fp16: 1TFLOPS, fp32: 1TFLOPS, memory: 1GB, "
      "memory_bandwidth: 1TB/s}}\n"
      "servers:\n  s:\n    nodes:\n"
      "      - {name: gpu, kind: gpu, model: G}\n"
      "      - {name: cpu, kind: cpu, memory_bandwidth: 1TB/s}\n"
      "      - {name: nic, kind: nic, count: " +
      std::to_string(nics) +
      "}\n"
      "    links:\n"
      "      - {from: gpu, to: cpu, type: pcie, generation: 5}\n"
      "      - {from: \"nic[0-" +
      std::to_string(nics - 1) +
      "]\", to: cpu, type: pcie, generation: 5}\n"
      "cluster: [{server: s, count: " +
      std::to_string(servers) + ", name: n}]\nfabric:\n" + fabric +
      "  link: {type: ethernet, bandwidth: " + port + "}\n";
  return load_cluster_from_string(text, "fabric.yaml");
}

inline const std::string& name_of(const Cluster& c, int node) {
  return c.nodes[static_cast<std::size_t>(node)].name;
}

// NIC -> the switch it is cabled to.
inline std::map<std::string, std::string> nic_switch(const Cluster& c) {
  std::map<std::string, std::string> out;
  for (const auto& l : c.links) {
    if (c.nodes[static_cast<std::size_t>(l.a)].kind == NodeKind::nic &&
        c.nodes[static_cast<std::size_t>(l.b)].kind == NodeKind::network_switch) {
      out[name_of(c, l.a)] = name_of(c, l.b);
    }
  }
  return out;
}

struct SwitchLink {
  std::string leaf;
  std::string spine;
  double bandwidth_Bps;
  std::string label;
};

inline std::vector<SwitchLink> leaf_spine_links(const Cluster& c) {
  std::vector<SwitchLink> out;
  for (const auto& l : c.links) {
    if (c.nodes[static_cast<std::size_t>(l.a)].kind == NodeKind::network_switch &&
        c.nodes[static_cast<std::size_t>(l.b)].kind == NodeKind::network_switch) {
      out.push_back({name_of(c, l.a), name_of(c, l.b), l.bandwidth_Bps, l.label});
    }
  }
  return out;
}

inline double sum_bandwidth(const std::vector<SwitchLink>& links) {
  double total = 0;
  for (const auto& l : links) total += l.bandwidth_Bps;
  return total;
}

inline constexpr double kPort_Bps = 12.5e9;  // 100 Gb/s / 8

}  // namespace cs::topo::testing
