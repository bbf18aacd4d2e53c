// NVLS by NCCL's default and NVLSTree across servers: the graph, NCCL's estimate, the run's
// latency and the bytes a 2-server tree sends between servers, each derived by hand.
#include <doctest/doctest.h>

#include "collectives/coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "collectives/nccl/channel_search.hpp"
#include "collectives/tuner/transport.hpp"
#include "network/flow_network.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

using testing::two_dgx;

// The same servers, four of them.
CommShape four_dgx() {
  CommShape s = two_dgx();
  s.n_ranks = 32;
  s.n_nodes = 4;
  return s;
}

// An estimate's busBw, algbw (GB/s) and latency (us).
void check_estimate(const Estimate& e, double bus, double algbw, double latency) {
  CHECK(e.bus_bw_GBps == doctest::Approx(bus));
  CHECK(e.algo_bw_GBps == doctest::Approx(algbw));
  CHECK(e.latency_us == doctest::Approx(latency));
}

TunerOptions nvls_tree_only() {
  TunerOptions o;
  o.algo_mask = 1u << index_of(Algo::nvls_tree);
  return o;
}

// Bytes that leave server `server` through its NICs (NIC -> switch directions).
double bytes_out_of(const topo::ClusterGraph& graph, const net::FlowNetwork& network, int server) {
  double bytes = 0;
  for (topo::ChannelId c = 0; c < graph.channel_count(); ++c) {
    const topo::Node& from = graph.cluster().nodes[static_cast<std::size_t>(graph.channel(c).from)];
    if (from.kind == topo::NodeKind::nic && from.server == server &&
        graph.link_of(c).kind == topo::LinkKind::infiniband)
      bytes += network.channel_stats(c).bytes;
  }
  return bytes;
}

}  // namespace

TEST_CASE("NVLS graph across DGX H100 servers: 8 heads at 40 GB/s, the network raised to 48") {
  // A head takes s of every GPU's 370.8 GB/s and 2s of its own: 8 heads fit while 9 s <= 370.8,
  // s <= 41.2: 40 on the inter-server list (48, 45, 42, 40). bwInter then rises while below
  // 2 x 40 and the NIC path (min(NIC 50, PCIe 48) = 48) carries it: 42, 45, 48.
  const NcclParams p = nccl_priors(GpuArch::hopper);
  SearchInput in = testing::dgx_h100_search_input();
  const GraphInfo g = nvls_graph(in, p);
  CHECK(g.n_channels == 8);
  CHECK(g.bw_intra_GBps == doctest::Approx(40.0));
  CHECK(g.bw_inter_GBps == doctest::Approx(48.0));
  // 4 GPUs a server: 5 s <= 370.8 already holds at 48. One GPU a server: no heads.
  in.gpus_per_node = 4;
  CHECK(nvls_graph(in, p).n_channels == 4);
  CHECK(nvls_graph(in, p).bw_intra_GBps == doctest::Approx(48.0));
  in.gpus_per_node = 1;
  CHECK(nvls_graph(in, p).n_channels == 0);
}

TEST_CASE("NVLSTree estimate: NCCL's per-channel cap on 2 servers, the network on 4") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = two_dgx();
  // Per channel min(2 x 40 x 0.85 x 7/8 = 59.5, 48 x 2 = 96, 57.7) = 57.7; busBw 8 x 57.7 =
  // 461.6 GB/s, algbw 461.6 x 16 / 30 = 246.19. Latency 0 + 25 (NVLink) + 2 x log2(2) x 20.9.
  const Estimate e = estimate_all(s, Op::all_reduce, 1e9, prm, nvls_tree_only()).front();
  CHECK(e.algo == Algo::nvls_tree);
  CHECK(e.proto == Proto::simple);
  check_estimate(e, 461.6, 461.6 * 16 / 30, 25 + 2 * 20.9);
  // 4 servers: min(59.5, 48, 45.5) = 45.5; busBw 364, algbw 364 x 32 / 62; 25 + 2 x 2 x 20.9.
  check_estimate(estimate_all(four_dgx(), Op::all_reduce, 1e9, prm, nvls_tree_only()).front(),
                 364.0, 364.0 * 32 / 62, 25 + 4 * 20.9);
  // EFA's plugin reports 75 us, charged twice for Simple: 25 + 2 x (20.9 + 150) = 366.8 us.
  CommShape efa = s;
  efa.net_plugin_latency_us = 75;
  CHECK(estimate_all(efa, Op::all_reduce, 1e9, prm, nvls_tree_only()).front().latency_us ==
        doctest::Approx(366.8));
  // The run's latency: the transport's step (InfiniBand 9.6 us) plus NVLSTree Simple's network
  // figure over Tree LL's (20.9 - 5.0): 25 + 2 x (9.6 + 15.9) = 76.0 us; then the pipeline fill:
  // 16 channels x 8 heads of 128 KiB chunks (1e9 B is over 4 x 128 x 128 KiB) = 16 MiB a loop,
  // 16777216 / 246.19e3 = 68.15 us, twice, with the two 9.6 us steps: 155.5 us.
  CommShape ib = s;
  ib.net_step_latency_us = 9.6;
  const TunerChoice c = choose(ib, Op::all_reduce, 1e9, prm, nvls_tree_only());
  CHECK(c.run_latency_us == doctest::Approx(76.0 + 2 * (16777216 / (461.6 * 16 / 30 * 1e3) + 9.6)));
  // NVLSTree needs the switch's multicast, all-reduce, and NVLS on; one server runs NVLS.
  CommShape no_multicast = s;
  no_multicast.multicast = false;
  for (const Estimate& x : estimate_all(no_multicast, Op::all_reduce, 1e9, prm, TunerOptions{}))
    CHECK(x.algo != Algo::nvls_tree);
  TunerOptions off;
  off.nvls = false;
  for (const Estimate& x : estimate_all(s, Op::all_reduce, 1e9, prm, off))
    CHECK(x.algo != Algo::nvls_tree);
  CHECK(estimate_all(s, Op::all_gather, 1e9, prm, nvls_tree_only()).empty());
  // At 1 GB NCCL picks it on 2 servers: 66.8 + 1e9 / 246.19e3 = 4128.7 us, against Ring Simple's
  // 131.6 x 1.4 + 1e9 / (360 x 16 / 30 x 1e3) = 5392.6 us.
  CHECK(choose(s, Op::all_reduce, 1e9, prm, TunerOptions{}).estimate.algo == Algo::nvls_tree);
}

TEST_CASE("a 2-server NVLSTree sends half of Ring's bytes between the servers") {
  // Two NVSwitch servers of 8 GPUs, one NIC each. NVLSTree: each of the 8 heads carries S / 16 of
  // each tree; in tree 0 server 1's heads send their shares up and server 0's send the sums down,
  // tree 1 the other way: each server sends 8 x S / 16 x 2 = S. Ring: each of the 2 network edges
  // carries 2 (n - 1) / n S = 30/16 S across all channels.
  const topo::Cluster cluster = testing::nvswitch_cluster(2, testing::ServerSpec{8, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(16), nccl_priors(GpuArch::hopper));
  CHECK(comm.layout().shape.multicast);
  const double S = 64.0 * 1024 * 1024;
  auto run = [&](Algo algo) {
    EventQueue queue;
    net::FlowNetwork network(queue, graph);
    CollectiveCall call;
    call.bytes = S;
    call.options.algo_mask = 1u << index_of(algo);
    CollectiveResult result;
    comm.run(queue, network, call, [&](const CollectiveResult& r) { result = r; });
    queue.run();
    CHECK(result.choice.estimate.algo == algo);
    return std::pair{bytes_out_of(graph, network, 0), bytes_out_of(graph, network, 1)};
  };
  const auto [tree0, tree1] = run(Algo::nvls_tree);
  CHECK(tree0 == doctest::Approx(S));
  CHECK(tree1 == doctest::Approx(S));
  const auto [ring0, ring1] = run(Algo::ring);
  CHECK(ring0 == doctest::Approx(S * 30 / 16));
  CHECK(ring1 == doctest::Approx(S * 30 / 16));
}

TEST_CASE("NVLS follows the hardware: multicast on the switch, sm90 or newer") {
  topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{8, 1.0, 0.5});
  {
    const topo::ClusterGraph graph(cluster);
    Communicator comm(graph, testing::first_ranks(8), nccl_priors(GpuArch::hopper));
    CHECK(comm.layout().shape.multicast);
    CollectiveCall call;
    call.bytes = 1e9;
    CHECK(comm.tune(call).estimate.algo == Algo::nvls);  // NCCL's default
    call.options.nvls = false;
    CHECK(comm.tune(call).estimate.algo == Algo::ring);
  }
  for (topo::Node& n : cluster.nodes) {
    if (n.kind == topo::NodeKind::nvswitch) n.multicast = false;  // `multicast: false`
  }
  {
    const topo::ClusterGraph graph(cluster);
    Communicator comm(graph, testing::first_ranks(8), nccl_priors(GpuArch::hopper));
    CHECK_FALSE(comm.layout().shape.multicast);
    CollectiveCall call;
    call.bytes = 1e9;
    call.options.nvls = true;  // NCCL_NVLS_ENABLE=1 cannot add multicast
    CHECK(comm.tune(call).estimate.algo != Algo::nvls);
  }
  cluster = testing::nvswitch_cluster(1, testing::ServerSpec{8, 1.0, 0.5});
  cluster.gpu_models.front().name = "A100-test";  // sm80: no NVLS graph in NCCL
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(8), nccl_priors(GpuArch::ampere));
  CHECK_FALSE(comm.layout().shape.multicast);
}

TEST_CASE("across servers the tree correction times Tree, NVLSTree pays its pipeline fill") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = two_dgx();
  const double bytes = 16.0 * 1024 * 1024;  // 262144 x 64 B: index 18, Simple row 0.7
  // NCCL's table (its choice) leaves NVLSTree alone on Hopper (2.28 corrects Tree only); so does
  // the call's time, which charges the pipeline's fill instead.
  CHECK(estimate_all(s, Op::all_reduce, bytes, prm, nvls_tree_only()).front().algo_bw_GBps ==
        doctest::Approx(461.6 * 16 / 30));
  const TunerChoice c = choose(s, Op::all_reduce, bytes, prm, nvls_tree_only());
  CHECK(c.estimate.algo_bw_GBps == doctest::Approx(461.6 * 16 / 30));
  // Tree Simple: min(360 x 0.92, 16 x 41.4) / 2 = 165.6, x 0.7 in both.
  TunerOptions tree;
  tree.algo_mask = 1u << index_of(Algo::tree);
  tree.proto_mask = 1u << index_of(Proto::simple);
  CHECK(estimate_all(s, Op::all_reduce, bytes, prm, tree).front().algo_bw_GBps ==
        doctest::Approx(165.6 * 0.7));
  CHECK(choose(s, Op::all_reduce, bytes, prm, tree).estimate.algo_bw_GBps ==
        doctest::Approx(165.6 * 0.7));
  // One server: the time is uncorrected (test_tuner.cpp).
}

TEST_CASE(
    "NVLSTree's fill: NCCL's chunk for the size, servers and plugin, two loops and two steps") {
  // 128 ops (16 channels x 8 heads). 2 servers: 128 KiB from 4 x 128 x 128 KiB = 64 MiB up, 64 KiB
  // from 128 x 64 KiB = 8 MiB, 32 KiB below. From 4 servers at most 64 KiB.
  CHECK(nvls_tree_chunk_bytes(64.0 * 1024 * 1024, 2, 128) == 131072);
  CHECK(nvls_tree_chunk_bytes(64.0 * 1024 * 1024 - 1, 2, 128) == 65536);
  CHECK(nvls_tree_chunk_bytes(8.0 * 1024 * 1024, 2, 128) == 65536);
  CHECK(nvls_tree_chunk_bytes(8.0 * 1024 * 1024 - 1, 2, 128) == 32768);
  CHECK(nvls_tree_chunk_bytes(1e12, 4, 128) == 65536);
  CHECK(nvls_tree_chunk_bytes(8.0 * 1024 * 1024 - 1, 4, 128) == 32768);
  // aws-ofi-nccl on p5: 512 KiB for both, then the same halvings: 512 KiB from 32 x 128 x 512 KiB
  // = 2 GiB, 256 KiB from 16 x 128 x 256 KiB = 512 MiB, 128 KiB from 64 MiB; 4 servers alike.
  const double gib = 1024.0 * 1024 * 1024;
  CHECK(nvls_tree_chunk_bytes(2 * gib, 2, 128, OfiPlatform::p5) == 524288);
  CHECK(nvls_tree_chunk_bytes(2 * gib - 1, 2, 128, OfiPlatform::p5) == 262144);
  CHECK(nvls_tree_chunk_bytes(gib / 2, 4, 128, OfiPlatform::p5) == 262144);
  CHECK(nvls_tree_chunk_bytes(gib / 2 - 1, 4, 128, OfiPlatform::p5) == 131072);
  CHECK(nvls_tree_chunk_bytes(64.0 * 1024 * 1024, 32, 128, OfiPlatform::p5) == 131072);
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape s = two_dgx();
  s.net_step_latency_us = 5.0;
  // 16 MiB on 2 servers: 64 KiB chunks, a loop of 8 MiB at 200 GB/s = 41.94 us; 2 x (41.94 + 5).
  const double mib16 = 16.0 * 1024 * 1024;
  CHECK(nvls_tree_fill_us(s, Op::all_reduce, Algo::nvls_tree, mib16, 200, prm) ==
        doctest::Approx(2 * (8388608 / 200e3 + 5.0)));
  // 4 servers at 1 GiB: still 64 KiB, the same loop.
  CommShape four = s;
  four.n_ranks = 32;
  four.n_nodes = 4;
  CHECK(nvls_tree_fill_us(four, Op::all_reduce, Algo::nvls_tree, 1073741824.0, 200, prm) ==
        doctest::Approx(2 * (8388608 / 200e3 + 5.0)));
  // A call smaller than a loop is its only loop: 1 MiB (32 KiB chunks, 4 MiB a loop) moves its
  // 1 MiB at 200 GB/s = 5.24 us; 2 x (5.24 + 5).
  CHECK(nvls_tree_fill_us(s, Op::all_reduce, Algo::nvls_tree, 1048576.0, 200, prm) ==
        doctest::Approx(2 * (1048576 / 200e3 + 5.0)));
  // Nothing for another algorithm or on one server.
  CHECK(nvls_tree_fill_us(s, Op::all_reduce, Algo::tree, mib16, 200, prm) == 0);
  CommShape one = s;
  one.n_ranks = 8;
  one.n_nodes = 1;
  CHECK(nvls_tree_fill_us(one, Op::all_reduce, Algo::nvls_tree, mib16, 200, prm) == 0);
}

TEST_CASE("NCCL before 2.28 priced NVLSTree and NVLS otherwise, 2.28.0-2.28.7 its hop at 14 us") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = two_dgx();
  TunerOptions o = nvls_tree_only();
  o.nccl_version = parse_nccl_version("2.27.7", "nccl");
  CHECK(o.nccl_version == 22707);
  // 2 servers: per channel min(bwIntra 40, bwInter 48) = 40; busBw 8 x 40 = 320, algbw x 5/6 =
  // 266.67. Latency 25 + 2 x log2(2) x 14 = 53.
  check_estimate(estimate_all(s, Op::all_reduce, 1e9, prm, o).front(), 320.0, 320.0 * 5 / 6,
                 25 + 2 * 14.0);
  // 4 servers halve bwInter: min(40, 24) = 24; busBw 192, algbw 160; 25 + 4 x 14 = 81.
  check_estimate(estimate_all(four_dgx(), Op::all_reduce, 1e9, prm, o).front(), 192.0, 160.0,
                 25 + 4 * 14.0);
  // 2.28.7 has 2.28's bandwidth (the 461.6 GB/s above) and the 14 us hop; 2.28.9 is the default.
  o.nccl_version = parse_nccl_version("2.28.7", "nccl");
  const Estimate e287 = estimate_all(s, Op::all_reduce, 1e9, prm, o).front();
  CHECK(e287.bus_bw_GBps == doctest::Approx(461.6));
  CHECK(e287.latency_us == doctest::Approx(25 + 2 * 14.0));
  o.nccl_version = parse_nccl_version("2.28.9", "nccl");
  CHECK(estimate_all(s, Op::all_reduce, 1e9, prm, o).front().latency_us ==
        doctest::Approx(25 + 2 * 20.9));
  // The call's time is the transport's, whatever the release: the estimate the run keeps is
  // 2.28's (461.6 GB/s), only the choice reads the release's formula.
  o.nccl_version = 22707;
  CHECK(choose(s, Op::all_reduce, 1e9, prm, o).estimate.bus_bw_GBps == doctest::Approx(461.6));
  // Before 2.18 there is no NVLSTree, before 2.17 no NVLS.
  o.nccl_version = parse_nccl_version("2.17", "nccl");
  CHECK(estimate_all(s, Op::all_reduce, 1e9, prm, o).empty());
  // One server, NVLS before 2.28: per channel min(bwIntra, bwInter) x 16 channels, algbw x 5/6.
  CommShape one = testing::dgx_one_node();
  one.multicast = true;
  one.nvls = GraphInfo{16, 23.175, 23.175};
  TunerOptions nvls;
  nvls.algo_mask = 1u << index_of(Algo::nvls);
  nvls.nccl_version = 22602;
  const Estimate n1 = estimate_all(one, Op::all_reduce, 1e9, prm, nvls).front();
  CHECK(n1.bus_bw_GBps == doctest::Approx(16 * 23.175));
  CHECK(n1.algo_bw_GBps == doctest::Approx(16 * 23.175 * 5 / 6));
  nvls.nccl_version = 21612;
  CHECK(estimate_all(one, Op::all_reduce, 1e9, prm, nvls).empty());
}

TEST_CASE("an NCCL release is read as NCCL_VERSION_CODE, anything else names its key") {
  CHECK(parse_nccl_version("", "nccl") == 0);
  CHECK(parse_nccl_version("2.24.3", "nccl") == 22403);
  CHECK(parse_nccl_version("2.24", "nccl") == 22400);
  CHECK_THROWS_WITH_AS(parse_nccl_version("3.1", "nccl"), doctest::Contains("key 'nccl'"),
                       InputError);
  CHECK_THROWS_AS(parse_nccl_version("2.24.3-1", "nccl"), InputError);
  CHECK_THROWS_AS(parse_nccl_version("2.11.4", "nccl"), InputError);
  CHECK_THROWS_AS(parse_nccl_version("v2.24", "nccl"), InputError);
}
