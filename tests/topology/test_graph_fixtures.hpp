// Clusters built in code for the graph, bisection and summary tests, so they do not depend on the
// YAML loader. Figures are chosen to make hand derivations easy, not taken from hardware.
#pragma once

#include <string>

#include "topology/cluster/cluster.hpp"

namespace cs::topo::testing {

// Appends nodes, links and servers to a Cluster with the bookkeeping the loader would do
// (node names "<server>/<local>", GPU ranks in server order).
class ClusterBuilder {
 public:
  explicit ClusterBuilder(std::string name) { cluster_.name = std::move(name); }

  int server(const std::string& name, const std::string& template_name = "test-server") {
    cluster_.servers.push_back(Server{name, template_name, {}, {}});
    return static_cast<int>(cluster_.servers.size()) - 1;
  }

  // A node inside server `server` (or a fabric node when server is -1).
  int node(const std::string& local_name, NodeKind kind, int server = -1) {
    Node n;
    n.local_name = local_name;
    n.name = server < 0
                 ? local_name
                 : cluster_.servers[static_cast<std::size_t>(server)].name + "/" + local_name;
    n.kind = kind;
    n.server = server;
    cluster_.nodes.push_back(n);
    const int id = static_cast<int>(cluster_.nodes.size()) - 1;
    if (kind == NodeKind::gpu) {
      if (cluster_.gpu_models.empty())
        cluster_.gpu_models.push_back(GpuModel{"TestGPU", 1e15, 1e15, 1e14, 80e9, 3e12, {}});
      cluster_.nodes.back().gpu_model = 0;
      cluster_.nodes.back().rank = static_cast<int>(cluster_.ranks.size());
      cluster_.ranks.push_back(id);
      cluster_.servers[static_cast<std::size_t>(server)].gpus.push_back(id);
    }
    if (kind == NodeKind::nic)
      cluster_.servers[static_cast<std::size_t>(server)].nics.push_back(id);
    return id;
  }

  void link(int a, int b, LinkKind kind, const std::string& label, double bandwidth_Bps,
            TimePs latency, int lanes = 0, double efficiency = 1.0) {
    Link l;
    l.a = a;
    l.b = b;
    l.kind = kind;
    l.label = label;
    l.lanes = lanes;
    l.bandwidth_Bps = bandwidth_Bps;
    l.efficiency = efficiency;
    l.latency = latency;
    cluster_.links.push_back(l);
  }

  Cluster take() { return std::move(cluster_); }

 private:
  Cluster cluster_;
};

// A two-level fat tree: 2 leaves x 4 servers, 4 spines. Each server has 8 GPUs on one NVSwitch
// (NVLink x18, 450 GB/s, 100 ns) and on one PCIe switch (64 GB/s, 150 ns) with one NIC; NIC-leaf
// links are 50 GB/s at efficiency 0.96 (48 GB/s), 500 ns; leaf-spine links 25 GB/s, 600 ns, so a
// leaf has 4 x 50 = 200 GB/s down and 4 x 25 = 100 GB/s up (2:1 oversubscribed).
inline Cluster small_fat_tree() {
  ClusterBuilder b("small-fat-tree");
  const int leaves[2] = {b.node("leaf0", NodeKind::network_switch),
                         b.node("leaf1", NodeKind::network_switch)};
  for (int k = 0; k < 4; ++k) {
    const int spine = b.node("spine" + std::to_string(k), NodeKind::network_switch);
    for (int leaf : leaves) {
      b.link(leaf, spine, LinkKind::infiniband, "InfiniBand 200Gbps", 25e9, 600 * kPsPerNs);
    }
  }
  for (int s = 0; s < 8; ++s) {
    const int server = b.server("node" + std::to_string(s), "mini-dgx");
    const int nvswitch = b.node("nvswitch", NodeKind::nvswitch, server);
    const int pcie = b.node("pcie0", NodeKind::pcie_switch, server);
    for (int g = 0; g < 8; ++g) {
      const int gpu = b.node("gpu" + std::to_string(g), NodeKind::gpu, server);
      b.link(gpu, nvswitch, LinkKind::nvlink, "NVLink4 x18", 450e9, 100 * kPsPerNs, 18);
      b.link(gpu, pcie, LinkKind::pcie, "PCIe Gen5 x16", 64e9, 150 * kPsPerNs, 16);
    }
    const int nic = b.node("nic0", NodeKind::nic, server);
    b.link(nic, pcie, LinkKind::pcie, "PCIe Gen5 x16", 64e9, 150 * kPsPerNs, 16);
    b.link(nic, leaves[s / 4], LinkKind::infiniband, "InfiniBand NDR", 50e9, 500 * kPsPerNs, 0,
           0.96);
  }
  return b.take();
}

// One server with every PCIe relationship nvidia-smi names (all links 32 GB/s, 100 ns):
//   cpu0 -- pcie_root -- pcie_a -- gpu0, gpu1      gpu0-gpu1: PIX
//                     `- pcie_b -- gpu2            gpu0-gpu2: PXB
//   cpu0 -- pcie_c -- gpu3                         gpu0-gpu3: PHB
//   cpu0 == cpu1 (socket link, 20 GB/s, 300 ns)
//   cpu1 -- pcie_d -- gpu4, gpu5                   gpu0-gpu4: SYS
//   gpu4 == gpu5 (NVLink3 x4 bridge, 100 GB/s)     gpu4-gpu5: NV4
inline Cluster pcie_server() {
  ClusterBuilder b("pcie-server");
  const int server = b.server("box", "pcie-box");
  const int cpu0 = b.node("cpu0", NodeKind::cpu, server);
  const int cpu1 = b.node("cpu1", NodeKind::cpu, server);
  const int root = b.node("pcie_root", NodeKind::pcie_switch, server);
  const int pa = b.node("pcie_a", NodeKind::pcie_switch, server);
  const int pb = b.node("pcie_b", NodeKind::pcie_switch, server);
  const int pc = b.node("pcie_c", NodeKind::pcie_switch, server);
  const int pd = b.node("pcie_d", NodeKind::pcie_switch, server);
  int gpu[6];
  for (int g = 0; g < 6; ++g) gpu[g] = b.node("gpu" + std::to_string(g), NodeKind::gpu, server);
  const TimePs hop = 100 * kPsPerNs;
  auto pcie = [&](int x, int y) { b.link(x, y, LinkKind::pcie, "PCIe Gen4 x16", 32e9, hop, 16); };
  pcie(cpu0, root);
  pcie(root, pa);
  pcie(root, pb);
  pcie(pa, gpu[0]);
  pcie(pa, gpu[1]);
  pcie(pb, gpu[2]);
  pcie(cpu0, pc);
  pcie(pc, gpu[3]);
  pcie(cpu1, pd);
  pcie(pd, gpu[4]);
  pcie(pd, gpu[5]);
  b.link(cpu0, cpu1, LinkKind::socket, "UPI", 20e9, 300 * kPsPerNs);
  b.link(gpu[4], gpu[5], LinkKind::nvlink, "NVLink3 x4", 100e9, hop, 4);
  return b.take();
}

}  // namespace cs::topo::testing
