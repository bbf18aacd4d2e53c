// Clusters built in code for the collectives tests, with round figures for hand derivations
// (not hardware figures): NVSwitch servers whose GPUs have NVLink x18 at 450 GB/s, a PCIe switch
// per server (64 GB/s) and one NIC per server on a single network switch.
#pragma once

#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::coll::testing {

struct ServerSpec {
  int gpus = 8;
  double nvlink_efficiency = 1.0;  // NVLink capacity = 450 GB/s x this
  double nic_efficiency = 0.5;     // NIC capacity = 50 GB/s x this
};

// `servers` servers "s0", "s1", ... of `spec`; with more than one server, each NIC links to one
// switch "ib". Node names follow the loader: "<server>/<local>", ranks server by server.
inline topo::Cluster nvswitch_cluster(int servers, const ServerSpec& spec) {
  using topo::LinkKind;
  using topo::NodeKind;
  topo::Cluster c;
  c.name = "test-nvswitch";
  c.gpu_models.push_back(topo::GpuModel{"H100-test", 1e15, 1e15, 1e14, 80e9, 3e12, {}});
  auto node = [&](const std::string& local, NodeKind kind, int server) {
    topo::Node n;
    n.local_name = local;
    n.name = server < 0 ? local : c.servers[static_cast<std::size_t>(server)].name + "/" + local;
    n.kind = kind;
    n.server = server;
    c.nodes.push_back(n);
    const int id = static_cast<int>(c.nodes.size()) - 1;
    if (kind == NodeKind::gpu) {
      c.nodes.back().gpu_model = 0;
      c.nodes.back().rank = static_cast<int>(c.ranks.size());
      c.ranks.push_back(id);
      c.servers[static_cast<std::size_t>(server)].gpus.push_back(id);
    }
    if (kind == NodeKind::nic) c.servers[static_cast<std::size_t>(server)].nics.push_back(id);
    return id;
  };
  // NVLink hops 100 ns, PCIe and network 250 ns, so GPU pairs route over the NVSwitch.
  auto link = [&](int a, int b, LinkKind kind, double bw, double eff, int lanes, int gen) {
    topo::Link l;
    l.a = a;
    l.b = b;
    l.kind = kind;
    l.label = topo::to_string(kind);
    l.bandwidth_Bps = bw;
    l.efficiency = eff;
    l.lanes = lanes;
    l.generation = gen;
    l.latency = (kind == LinkKind::nvlink ? 100 : 250) * kPsPerNs;
    c.links.push_back(l);
  };
  const int ib = servers > 1 ? node("ib", NodeKind::network_switch, -1) : -1;
  for (int s = 0; s < servers; ++s) {
    c.servers.push_back(topo::Server{"s" + std::to_string(s), "test-server", {}, {}});
    const int nvswitch = node("nvswitch", NodeKind::nvswitch, s);
    const int pcie = node("pcie", NodeKind::pcie_switch, s);
    for (int g = 0; g < spec.gpus; ++g) {
      const int gpu = node("gpu" + std::to_string(g), NodeKind::gpu, s);
      link(gpu, nvswitch, LinkKind::nvlink, 450e9, spec.nvlink_efficiency, 18, 4);
      link(gpu, pcie, LinkKind::pcie, 64e9, 1.0, 16, 5);
    }
    if (ib >= 0) {
      const int nic = node("nic0", NodeKind::nic, s);
      link(nic, pcie, LinkKind::pcie, 64e9, 1.0, 16, 5);
      link(nic, ib, LinkKind::infiniband, 50e9, spec.nic_efficiency, 0, 0);
    }
  }
  return c;
}

// DGX H100 servers as NCCL's graph search reads them across servers: 8 GPUs of 18 NVLinks x 20.6
// GB/s (NCCL's Hopper figure), 8 NICs of 50 GB/s (NDR) behind PCIe Gen5 (NCCL: 48 GB/s).
inline SearchInput dgx_h100_search_input() {
  SearchInput in;
  in.multi_node = true;
  in.gpus_per_node = 8;
  in.gpu_total_GBps = 18 * 20.6;
  in.gpu_pair_GBps = 18 * 20.6;
  in.nics_per_node = 8;
  in.nic_GBps = 50;
  in.gpu_nic_GBps = 48;
  return in;
}

// One DGX H100 as NCCL sees it, for the tuner alone: 8 ranks on NVLink through an NVSwitch, ring
// and tree graphs of 12 channels x 30 GB/s (test_channel_search derives them), NVLS 16 channels.
inline CommShape dgx_one_node() {
  CommShape s;
  s.n_ranks = 8;
  s.n_nodes = 1;
  s.intra = LinkClass::nvlink;
  s.nvswitch = true;
  s.ring = GraphInfo{12, 30, 30};
  s.tree = s.ring;
  s.nvls = GraphInfo{16, 370.8 / 16, 370.8 / 16};
  return s;
}

// 2 DGX H100 as NCCL's tuner sees them: 16 ranks, NVLS graph of 8 heads at 40 / 48 GB/s.
inline CommShape two_dgx() {
  CommShape s = dgx_one_node();
  s.n_ranks = 16;
  s.n_nodes = 2;
  s.multicast = true;
  s.ring = s.tree = GraphInfo{16, 22.5, 22.5};
  s.nvls = GraphInfo{8, 40, 48};
  return s;
}

// Ranks 0..n-1.
inline std::vector<int> first_ranks(int n) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i) r.push_back(i);
  return r;
}

// A call of `op` moving `bytes` with NCCL_ALGO / NCCL_PROTO forced to one algorithm and protocol.
inline CollectiveCall forced_call(Op op, double bytes, Algo algo, Proto proto) {
  CollectiveCall call;
  call.op = op;
  call.bytes = bytes;
  call.options.algo_mask = 1u << index_of(algo);
  call.options.proto_mask = 1u << index_of(proto);
  return call;
}

}  // namespace cs::coll::testing
