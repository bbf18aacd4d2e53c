// Multi-node mechanisms derived by hand: the transport's latency floor on the critical path, the
// tree graph NCCL raises on two servers, a 2-server tree's bytes across the network, and
// point-to-point sends striped over a GPU's several NICs.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "collectives/comm_layout.hpp"
#include "collectives/communicator.hpp"
#include "collectives/nccl/channel_search.hpp"
#include "collectives/transfer_paths.hpp"
#include "collectives/tuner/transport.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

// Two servers of one GPU and four 100 Gb/s EFA NICs each (all on the GPU's PCIe switch, as on
// p5), on one switch.
const char* kTwoServersFourRails = R"(
name: rails
gpu_models:
  G: {bf16: 1PFLOPS, fp16: 1PFLOPS, fp32: 1PFLOPS, memory: 80GB, memory_bandwidth: 3TB/s}
servers:
  s:
    nodes:
      - {name: gpu, kind: gpu, model: G}
      - {name: pcie, kind: pcie_switch}
      - {name: efa, kind: nic, count: 4}
    links:
      - {from: gpu, to: pcie, type: pcie, generation: 5, width: 16}
      - {from: "efa[0-3]", to: pcie, type: pcie, generation: 5, width: 16}
cluster:
  - {server: s, count: 2, name: node}
fabric:
  kind: single_switch
  link: {type: efa, bandwidth: 100Gbps}
)";

// Two servers of one GPU and one NIC each.
const char* kTwoServersOneNic = R"(
name: pair
gpu_models:
  G: {bf16: 1PFLOPS, fp16: 1PFLOPS, fp32: 1PFLOPS, memory: 80GB, memory_bandwidth: 3TB/s}
servers:
  s:
    nodes:
      - {name: gpu, kind: gpu, model: G}
      - {name: pcie, kind: pcie_switch}
      - {name: nic, kind: nic}
    links:
      - {from: gpu, to: pcie, type: pcie, generation: 5, width: 16}
      - {from: nic, to: pcie, type: pcie, generation: 5, width: 16}
cluster:
  - {server: s, count: 2, name: node}
fabric:
  kind: single_switch
  link: {type: infiniband, rate: NDR, step_latency: 10us}
)";

bool is_network(const topo::Link& l) {
  return l.kind == topo::LinkKind::infiniband || l.kind == topo::LinkKind::efa ||
         l.kind == topo::LinkKind::ethernet;
}

// Two servers of 8 NVLink GPUs, 16 graph channels of 22.5 GB/s, EFA's 27.9 us network step.
CommShape two_servers_of_eight() {
  CommShape s;
  s.n_ranks = 16;
  s.n_nodes = 2;
  s.intra = LinkClass::nvlink;
  s.ring = GraphInfo{16, 22.5, 22.5};
  s.tree = s.ring;
  s.net_step_latency_us = 27.9;
  return s;
}

}  // namespace

TEST_CASE("network steps on a ring's critical path") {
  // 2 servers x 8: all-reduce, 30 steps over a 16-edge ring with network edges 8 apart: one lap
  // (2 network edges) and 14 more edges, which can hold 2 of them.
  CHECK(ring_network_steps(30, 16, 2) == 4);
  // All-gather: 15 consecutive edges of 16 hold both network edges.
  CHECK(ring_network_steps(15, 16, 2) == 2);
  // One rank per server: every edge crosses the network.
  CHECK(ring_network_steps(2, 2, 2) == 2);
  CHECK(ring_network_steps(1, 2, 2) == 1);
  // 4 servers x 8, all-gather: 31 edges hold all 4 network edges; one server: none.
  CHECK(ring_network_steps(31, 32, 4) == 4);
  CHECK(ring_network_steps(14, 8, 1) == 0);
}

TEST_CASE("the transport's latency floor of a 2-server tree all-reduce") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape s = two_servers_of_eight();
  const TunerChoice c = choose(s, Op::all_reduce, 8, prm, TunerOptions{});
  REQUIRE(c.estimate.algo == Algo::tree);
  REQUIRE(c.estimate.proto == Proto::ll);
  // Tree LL: base 6.8 + 2 x (7 NVLink hops x 0.6 + 1 network step of 27.9) = 71.0 us, where
  // NCCL's own figure has a network hop of 5.0: 6.8 + 2 x (4.2 + 5.0) = 25.2 us.
  CHECK(c.run_latency_us == doctest::Approx(71.0));
  CHECK(c.estimate.latency_us == doctest::Approx(25.2));
  // Without a transport figure the call takes NCCL's estimate, as on one server.
  s.net_step_latency_us = 0;
  CHECK(choose(s, Op::all_reduce, 8, prm, TunerOptions{}).run_latency_us == doctest::Approx(25.2));
}

TEST_CASE("the plugin's reported latency enters NCCL's choice, not the time") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape s;
  s.n_ranks = 16;
  s.n_nodes = 2;
  s.ring = GraphInfo{16, 22.5, 22.5};
  s.tree = s.ring;
  const double plain = choose(s, Op::all_reduce, 8, prm, TunerOptions{}).estimate.latency_us;
  s.net_plugin_latency_us = 75;
  const TunerChoice c = choose(s, Op::all_reduce, 8, prm, TunerOptions{});
  // Tree LL crosses the network twice (up and down): 2 x 75 us more in NCCL's estimate.
  CHECK(c.estimate.latency_us == doctest::Approx(plain + 150));
  CHECK(c.run_latency_us == doctest::Approx(c.estimate.latency_us));  // no transport figure
}

TEST_CASE("NCCL raises the tree's intra-server speed on two servers") {
  const NcclParams prm = nccl_priors(GpuArch::ampere);
  // p4d as NCCL sees it: 8 A100 with NVLink3 x12 (12 x 20 = 240 GB/s), 4 EFA NICs of 12.5 GB/s.
  SearchInput in;
  in.multi_node = true;
  in.gpus_per_node = 8;
  in.gpu_total_GBps = 240;
  in.gpu_pair_GBps = 240;
  in.nics_per_node = 4;
  in.nic_GBps = 12.5;
  in.gpu_nic_GBps = 12.5;
  const GraphInfo ring = search_channels(in, prm);
  // 12 GB/s is the first speed a NIC carries: one channel per NIC.
  CHECK(ring.n_channels == 4);
  CHECK(ring.bw_inter_GBps == doctest::Approx(12));
  // Up the list 15, 17.5, 20, 24 while below 2 x 12 and 4 channels fit 240 GB/s: 24.
  const GraphInfo tree = tree_graph(in, ring, prm);
  CHECK(tree.bw_intra_GBps == doctest::Approx(24));
  CHECK(tree.bw_inter_GBps == doctest::Approx(12));
  // So NCCL's Tree beats its Ring at 1 GiB: Tree algbw = min(4 x 24 x 0.92, 4 x perChMaxTree) / 2,
  // Ring 4 x 12 x 16 / 30.
  CommShape s;
  s.n_ranks = 16;
  s.n_nodes = 2;
  s.ring = ring;
  s.tree = tree;
  CHECK(choose(s, Op::all_reduce, 1 << 30, prm, TunerOptions{}).estimate.algo == Algo::tree);

  // When the GPU's bandwidth is what limits the channels, the speed stays: 16 channels of 22.5 on
  // 370.8 GB/s cannot run at 24 (384).
  in.gpu_total_GBps = 370.8;
  in.gpu_pair_GBps = 370.8;
  const GraphInfo fixed{16, 22.5, 22.5};
  CHECK(tree_graph(in, fixed, nccl_priors(GpuArch::hopper)).bw_intra_GBps == doctest::Approx(22.5));
}

TEST_CASE("a 2-server tree crosses each network direction once per channel") {
  const topo::Cluster cluster = topo::load_cluster_from_string(kTwoServersOneNic, "pair.yaml");
  const topo::ClusterGraph graph(cluster);
  RouteCache routes(graph);
  const CommLayout layout = make_layout(routes, {0, 1}, nccl_priors(GpuArch::hopper));
  CHECK(layout.shape.net_step_latency_us == doctest::Approx(10.0));
  PathBuilder builder(layout, routes);
  // Up (node1 -> node0) and down (node0 -> node1): each of the 4 network link directions (NIC to
  // switch, switch to NIC, both servers) appears exactly once, so a channel carrying S / nc moves
  // S / nc each way; Ring all-reduce's edges carry 2 (n-1) / n S = S each way on 2 ranks too, but
  // with 16 ranks on 2 servers Ring carries 1.875 S where the tree still carries S.
  const ChannelList tree = builder.tree(0);
  int network = 0;
  for (topo::ChannelId ch : tree) {
    if (is_network(graph.link_of(ch))) {
      ++network;
      CHECK(std::count(tree.begin(), tree.end(), ch) == 1);
    }
  }
  CHECK(network == 4);
}

TEST_CASE("point-to-point sends stripe over a GPU's own NICs") {
  const topo::Cluster cluster = topo::load_cluster_from_string(kTwoServersFourRails, "r.yaml");
  const topo::ClusterGraph graph(cluster);
  RouteCache routes(graph);
  const CommLayout layout = make_layout(routes, {0, 1}, nccl_priors(GpuArch::hopper));
  PathBuilder builder(layout, routes);
  CHECK(builder.rails() == 4);
  // Rail r leaves through NIC r of the sender: four rails, four different NICs.
  std::set<int> nics_used;
  for (int r = 0; r < 4; ++r) {
    for (topo::ChannelId ch : builder.p2p_shift(1, r)) {
      const int from = graph.channel(ch).from;
      for (int nic : cluster.servers[0].nics) {
        if (from == nic && is_network(graph.link_of(ch))) nics_used.insert(nic);
      }
    }
  }
  CHECK(nics_used.size() == 4);
  // EFA NICs behind one GPU are one NCCL device of their summed speed (aws-ofi-nccl's RDMA
  // protocol): one ring channel per 4 x 12.5 = 50 GB/s device, not four of 12.5.
  CHECK(layout.shape.net_plugin_latency_us == doctest::Approx(75.0));
  CHECK(layout.shape.ring.bw_inter_GBps > 12.5);
}

TEST_CASE("an all-to-all across servers pays each further remote peer") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = two_servers_of_eight();
  const TunerChoice c = choose(s, Op::all_to_all, 1 << 30, prm, TunerOptions{});
  REQUIRE(c.p2p);
  REQUIRE(c.estimate.proto == Proto::simple);
  // One peer: Ring Simple base 8.4 + NCCL's network hop 14.0; 14 further peers x 0.37 (Hopper
  // prior) = 5.18; 7 further remote peers x 2.84 = 19.88: 47.46 us in NCCL's terms. The run
  // swaps the hop for the transport's step, 27.9 + (14.0 - 2.7) = 39.2: 8.4 + 39.2 + 5.18 + 19.88
  // = 72.66 us.
  CHECK(c.estimate.latency_us == doctest::Approx(47.46));
  CHECK(c.run_latency_us == doctest::Approx(72.66));
}

TEST_CASE("a multi-node Ring Simple all-reduce keeps NCCL's plateau factor, not the plugin's") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape s = two_servers_of_eight();
  s.net_plugin_latency_us = 75;
  TunerOptions forced;
  forced.algo_mask = 1u << index_of(Algo::ring);
  forced.proto_mask = 1u << index_of(Proto::simple);
  const TunerChoice c = choose(s, Op::all_reduce, 1 << 30, prm, forced);
  // 30 steps, 4 of them across the network (ring_network_steps), each 27.9 + (14.0 - 2.7) us;
  // 26 NVLink hops of 3.4 us; base 8.4 us; the plateau factor 1.4 as 1 GiB / (16 x 16) >= 64:
  // (8.4 + 26 x 3.4 + 4 x 39.2) x 1.4 = 355.04 us. The plugin's 2 x 75 us per network hop stays in
  // NCCL's estimate only.
  CHECK(c.estimate.plateau_factor == doctest::Approx(1.4));
  CHECK(c.run_latency_us == doctest::Approx(355.04));
}
