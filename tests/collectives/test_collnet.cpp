// CollNet (in-network reduction on a SHARP fabric): when NCCL may run it, its estimates on two
// DGX H100 as NCCL 2.28's tuning.cc prices them, its graph and the bytes its heads send through
// their NICs, each derived by hand.
#include <doctest/doctest.h>

#include <algorithm>

#include "collectives/coll_fixtures.hpp"
#include "collectives/comm_layout.hpp"
#include "collectives/route_cache.hpp"
#include "collectives/transfer_paths.hpp"
#include "collectives/tuner/collnet.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

// 2 DGX H100 on a SHARP fabric as NCCL's tuner sees them: 16 ranks; ring and tree graphs of 16
// channels at 22.5 GB/s, the NVLS graph's 8 heads at 40 / 48 GB/s, CollNetDirect's 8 heads at 48.
CommShape two_dgx_sharp() {
  CommShape s = testing::two_dgx();
  s.sm90 = true;
  s.sharp = true;
  s.collnet_direct = GraphInfo{8, 48, 48};
  s.collnet_chain = GraphInfo{16, 22.5, 22.5};
  return s;
}

TunerOptions only(Algo a, bool collnet) {
  TunerOptions o;
  o.algo_mask = 1u << index_of(a);
  o.proto_mask = 1u << index_of(Proto::simple);
  o.collnet = collnet;
  return o;
}

// NCCL's estimate of `a` (Simple) for a 64 MiB all-reduce; none if NCCL would not consider it.
std::vector<Estimate> estimate(const CommShape& s, Algo a, bool collnet) {
  return estimate_all(s, Op::all_reduce, 64 << 20, nccl_priors(GpuArch::hopper), only(a, collnet));
}

// Two servers of 2 GPUs on an NVSwitch, each GPU with its own NIC, on one SHARP switch.
const char* kTwoSharpServers = R"(
name: sharp-pair
gpu_models:
  G: {bf16: 1PFLOPS, fp16: 1PFLOPS, fp32: 1PFLOPS, memory: 80GB, memory_bandwidth: 3TB/s}
servers:
  s:
    nodes:
      - {name: gpu, kind: gpu, model: G, count: 2}
      - {name: nvswitch, kind: nvswitch}
      - {name: pcie, kind: pcie_switch, count: 2}
      - {name: nic, kind: nic, count: 2}
    links:
      - {from: "gpu[0-1]", to: nvswitch, type: nvlink, generation: 4, count: 18}
      - {from: "gpu[0-1]", to: "pcie[0-1]", type: pcie, generation: 5, width: 16}
      - {from: "nic[0-1]", to: "pcie[0-1]", type: pcie, generation: 5, width: 16}
cluster:
  - {server: s, count: 2, name: node}
fabric:
  kind: single_switch
  sharp: true
  link: {type: infiniband, rate: NDR}
)";

}  // namespace

TEST_CASE("CollNet runs only where asked, on a SHARP fabric, across 2 servers or more") {
  CommShape s = two_dgx_sharp();
  TunerOptions o;
  CHECK_FALSE(collnet_enabled(s, o));  // NCCL_COLLNET_ENABLE's default: off
  o.collnet = true;
  CHECK(collnet_enabled(s, o));
  CHECK(estimate(s, Algo::collnet_direct, true).size() == 1);
  CHECK(estimate(s, Algo::collnet_direct, false).empty());
  // NVLS across servers is CollNet's too.
  CHECK(estimate(s, Algo::nvls, true).size() == 1);
  CHECK(estimate(s, Algo::nvls, false).empty());
  // Only all-reduce.
  CHECK(estimate_all(s, Op::all_gather, 64 << 20, nccl_priors(GpuArch::hopper),
                     only(Algo::collnet_direct, true))
            .empty());
  s.sharp = false;  // a fabric without in-network reduction
  CHECK_FALSE(collnet_enabled(s, o));
  s = two_dgx_sharp();
  s.n_nodes = 1;  // one server: NCCL_COLLNET_NODE_THRESHOLD is 2
  s.n_ranks = 8;
  CHECK_FALSE(collnet_enabled(s, o));
  s = two_dgx_sharp();
  s.nvswitch = false;  // the in-server part needs the NVSwitch here
  CHECK(estimate(s, Algo::collnet_direct, true).empty());
  CHECK(estimate(s, Algo::collnet_chain, true).empty());
}

TEST_CASE("NCCL's CollNet estimates on two DGX H100") {
  const CommShape s = two_dgx_sharp();
  // CollNetDirect: 8 heads x bwIntra 48 = 384; GPUs / channels = 8 / 8 = 1, so f - (f - 1) / 2 = 1;
  // x 0.85 from sm90 = 326.4 busBw; algbw = / 2 = 163.2. Latency: 2 (min(1, 7) x 3.7 NVLink hop +
  // 7 x 0.4) + 31 network hop = 2 x 6.5 + 31 = 44.0 us.
  const Estimate d = estimate(s, Algo::collnet_direct, true).at(0);
  CHECK(d.bus_bw_GBps == doctest::Approx(326.4));
  CHECK(d.algo_bw_GBps == doctest::Approx(163.2));
  CHECK(d.latency_us == doctest::Approx(44.0));
  // CollNetChain: 16 channels x 22.5 = 360 busBw, algbw 180; latency 2 x 7 x 2.8 + 30 = 69.2 us.
  const Estimate c = estimate(s, Algo::collnet_chain, true).at(0);
  CHECK(c.bus_bw_GBps == doctest::Approx(360));
  CHECK(c.algo_bw_GBps == doctest::Approx(180));
  CHECK(c.latency_us == doctest::Approx(69.2));
  // NVLS across servers: 8 x min(2 x 40 x 0.85 x 7 / 8 = 59.5, 48) = 384 busBw; algbw = 384 x 16
  // / 30 = 204.8; latency NVLS's 25 + the network's 18 = 43 us.
  const Estimate v = estimate(s, Algo::nvls, true).at(0);
  CHECK(v.bus_bw_GBps == doctest::Approx(384));
  CHECK(v.algo_bw_GBps == doctest::Approx(204.8));
  CHECK(v.latency_us == doctest::Approx(43.0));
  // Four GPUs per NIC head (32 GPUs, 8 heads): f = 4, 4 - 3 / 2 = 2.5: 384 / 2.5 x 0.85 = 130.56.
  CommShape wide = s;
  wide.n_ranks = 64;
  CHECK(collnet_bus_GBps(wide, Algo::collnet_direct, 384) == doctest::Approx(130.56));
}

TEST_CASE("NCCL's CollNetDirect graph: one head per GPU, twice its speed on the GPU's links") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);  // inter speeds 48, 45, 42, 40, 30, 24, ..
  SearchInput in;
  in.multi_node = true;
  in.gpus_per_node = 8;
  in.gpu_total_GBps = 18 * 20.6;  // 370.8
  in.nic_GBps = in.gpu_nic_GBps = 50;
  // 48 fits the NIC (50) and 2 x 48 = 96 the GPU's 370.8: 8 heads at 48 both ways.
  GraphInfo g = collnet_direct_graph(in, prm);
  CHECK(g.n_channels == 8);
  CHECK(g.bw_inter_GBps == doctest::Approx(48));
  CHECK(g.bw_intra_GBps == doctest::Approx(48));
  // A 200 Gb/s NIC (25): bwInter 24; bwIntra rises up the list while below 2 x 24 = 48:
  // 30, 40, 42, 45, 48.
  in.nic_GBps = in.gpu_nic_GBps = 25;
  g = collnet_direct_graph(in, prm);
  CHECK(g.bw_inter_GBps == doctest::Approx(24));
  CHECK(g.bw_intra_GBps == doctest::Approx(48));
  // Twelve GPUs: at most 8 heads (NCCL_MAX_DIRECT_ARITY + 1).
  in.gpus_per_node = 12;
  CHECK(collnet_direct_graph(in, prm).n_channels == 8);
  in.multi_node = false;
  CHECK(collnet_direct_graph(in, prm).n_channels == 0);
}

TEST_CASE("a SHARP reduction sends each head's share through its NIC once each way") {
  const topo::Cluster cluster = topo::load_cluster_from_string(kTwoSharpServers, "sharp.yaml");
  const topo::ClusterGraph graph(cluster);
  RouteCache routes(graph);
  const CommLayout layout = make_layout(routes, {0, 1, 2, 3}, nccl_priors(GpuArch::hopper));
  CHECK(layout.shape.sharp);
  PathBuilder builder(layout, routes);
  // Head 0 of each server: its NIC to the switch and back, each direction once (4 network link
  // directions); nothing crosses to the other server's NIC, where a ring or tree would: the switch
  // returns the sum. With 2 heads a server sends S / 2 up and takes S / 2 back through each NIC.
  for (int head = 0; head < 2; ++head) {
    const ChannelList path = builder.collnet(head, 0);
    int network = 0;
    for (topo::ChannelId ch : path) {
      if (graph.link_of(ch).kind == topo::LinkKind::infiniband) {
        ++network;
        CHECK(std::count(path.begin(), path.end(), ch) == 1);
      }
    }
    CHECK(network == 4);
  }
  // The two heads use different NICs: GPU 0's and GPU 1's own.
  const ChannelList h0 = builder.collnet(0, 0);
  const ChannelList h1 = builder.collnet(1, 0);
  for (topo::ChannelId ch : h0) {
    if (graph.link_of(ch).kind == topo::LinkKind::infiniband)
      CHECK(std::count(h1.begin(), h1.end(), ch) == 0);
  }
}
