// Collectives run as flows on the network model, with every expected time derived by hand:
// ring all-reduce inside one NVSwitch server (latency and bandwidth terms apart), two servers
// whose NICs are the bottleneck, and two all-reduces sharing a link.
#include <doctest/doctest.h>

#include "coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "core/error.hpp"
#include "network/flow_network.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

CollectiveCall ring_simple_allreduce(double bytes) {
  return testing::forced_call(Op::all_reduce, bytes, Algo::ring, Proto::simple);
}

// NCCL's Hopper priors without the receive-only pass of ring loops (test_ring_passes.cpp), so the
// times below are NCCL's formulas alone.
NcclParams ring_priors() {
  NcclParams p = nccl_priors(GpuArch::hopper);
  for (double& a : p.ring_recv_pass_steps) a = 0.0;
  return p;
}

}  // namespace

// The server: GPUs on one NVSwitch, NVLink x18 at 450 GB/s each way. NCCL sees 18 x 20.6 =
// 370.8 GB/s per GPU and builds 12 channels x 30 GB/s (test_channel_search), so ring Simple
// busBw = 360 GB/s. NCCL runs the 12 graph channels twice (24), so each channel's flow is capped
// at 360 / 24 = 15 GB/s. Each GPU's NVLink carries one ring edge per channel: 24 x 15 = 360 <=
// 450, so the cap, not the link, sets the pace.
TEST_CASE("ring all-reduce on 2, 4 and 8 GPUs of one NVSwitch server") {
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{8, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  const NcclParams prm = ring_priors();

  struct Case {
    int n;
    double latency_us;    // 8.4 + 2(n-1) x 3.4
    double bandwidth_us;  // 2(n-1)/n x 1.2 GB / 360 GB/s
  };
  const Case cases[] = {
      {2, 8.4 + 2 * 3.4, 1.2e9 / 360e9 * 1e6},         // 15.2 us, 3333.333 us
      {4, 8.4 + 6 * 3.4, 1.5 * 1.2e9 / 360e9 * 1e6},   // 28.8 us, 5000 us
      {8, 8.4 + 14 * 3.4, 1.75 * 1.2e9 / 360e9 * 1e6}  // 56.0 us, 5833.333 us
  };
  for (const Case& c : cases) {
    CAPTURE(c.n);
    Communicator comm(graph, testing::first_ranks(c.n), prm);
    CHECK(comm.layout().shape.ring.n_channels == 12);
    // Latency term alone: a zero-byte call still pays every step.
    const CollectiveResult empty = simulate_alone(comm, ring_simple_allreduce(0), Fidelity::flow);
    CHECK(empty.time_us() == doctest::Approx(c.latency_us).epsilon(1e-9));
    // Both terms: 24 flows (one per channel), all at 15 GB/s.
    const CollectiveResult full =
        simulate_alone(comm, ring_simple_allreduce(1.2e9), Fidelity::flow);
    CHECK(full.flows == 24);
    CHECK(full.time_us() - c.latency_us == doctest::Approx(c.bandwidth_us).epsilon(1e-6));
    // Alone, the analytical fidelity agrees (no channel is shared between flows at full rate).
    const CollectiveResult flat =
        simulate_alone(comm, ring_simple_allreduce(1.2e9), Fidelity::analytical);
    CHECK(flat.time_us() == doctest::Approx(full.time_us()).epsilon(1e-9));
  }
}

TEST_CASE("ring all-reduce slows to the NVLink when the link is below NCCL's channel figure") {
  // NVLink at efficiency 0.5: 225 GB/s < 360. Every uplink carries 24 channel flows, so each runs
  // at 225 / 24 = 9.375 GB/s: 8 GPUs, 1.2 GB -> 2.1 GB per edge / 225 GB/s = 9333.333 us + 56 us.
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{8, 0.5, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(8), ring_priors());
  const CollectiveResult r = simulate_alone(comm, ring_simple_allreduce(1.2e9), Fidelity::flow);
  CHECK(r.time_us() == doctest::Approx(56.0 + 2.1e9 / 225e9 * 1e6).epsilon(1e-6));
}

// Two servers of 2 GPUs, one NIC each (50 GB/s line rate at efficiency 0.5: 25 GB/s) on one
// switch. NCCL's search: path GPU -> NIC = min(PCIe Gen5 48, NIC 50) = 48; at 48 GB/s one ring
// fits the NIC; lower speeds do no better before 20/48 < 0.49 -> 1 x 48, duplicated to 2 x 24.
// Ring Simple busBw = 2 x 24 = 48 GB/s over 4 runtime channels, capped at 12 each. All four
// cross the one NIC uplink of each server: 4 r <= 25 -> r = 6.25, so the ring runs at 25 GB/s:
// NIC-bound.
TEST_CASE("two servers: the NICs bound a ring all-reduce") {
  const topo::Cluster cluster = testing::nvswitch_cluster(2, testing::ServerSpec{2, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(4), ring_priors());
  CHECK(comm.layout().shape.n_nodes == 2);
  CHECK(comm.layout().shape.ring.n_channels == 2);
  CHECK(comm.layout().shape.ring.bw_intra_GBps == doctest::Approx(24.0));
  // Latency: nsteps 6, inter steps 2: 8.4 + 4 x 3.4 + 2 x 14 = 50 us, x 1.4 (bytes / (2 x 4)
  // >= 64) = 70 us. Bandwidth: 2 x 3/4 x 1 GB = 1.5 GB per edge / 25 GB/s = 60 ms.
  const CollectiveResult r = simulate_alone(comm, ring_simple_allreduce(1e9), Fidelity::flow);
  CHECK(r.time_us() == doctest::Approx(70.0 + 60000.0).epsilon(1e-6));
  // The analytical fidelity sees each channel alone on the NIC (min(12 cap, 25)) and misses the
  // sharing: 1.5 GB / 4 channels / 12 GB/s = 31.25 ms.
  const CollectiveResult flat =
      simulate_alone(comm, ring_simple_allreduce(1e9), Fidelity::analytical);
  CHECK(flat.time_us() == doctest::Approx(70.0 + 31250.0).epsilon(1e-6));
}

// Same two servers; all-reduce A on ranks {0, 2} (gpu0 of each server), B on {1, 3} (gpu1).
// One rank per node: search as above (the GPUs' NVLink no longer limits) -> 2 x 24 GB/s.
// n = 2: each edge carries 2 x 1/2 x S = S. Latency with ppn = 1 uses Tree's network hop:
// 8.4 + 2 x 14 = 36.4 us, x 1.4 = 50.96 us. Alone: 4 channel flows (cap 12 GB/s) on the NIC
// uplink, 25 GB/s in all: 1 GB / 25 GB/s = 40 ms. Together: 8 flows share it, 12.5 GB/s per
// collective: 80 ms.
TEST_CASE("two all-reduces sharing the NICs take twice as long as one alone") {
  const topo::Cluster cluster = testing::nvswitch_cluster(2, testing::ServerSpec{2, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  const NcclParams prm = ring_priors();
  Communicator a(graph, {0, 2}, prm);
  Communicator b(graph, {1, 3}, prm);

  const CollectiveResult alone = simulate_alone(a, ring_simple_allreduce(1e9), Fidelity::flow);
  CHECK(alone.time_us() == doctest::Approx(50.96 + 40000.0).epsilon(1e-6));

  EventQueue queue;
  net::FlowNetwork network(queue, graph);
  CollectiveResult ra, rb;
  a.run(queue, network, ring_simple_allreduce(1e9), [&](const CollectiveResult& r) { ra = r; });
  b.run(queue, network, ring_simple_allreduce(1e9), [&](const CollectiveResult& r) { rb = r; });
  queue.run();
  CHECK(ra.time_us() == doctest::Approx(50.96 + 80000.0).epsilon(1e-6));
  CHECK(rb.time_us() == doctest::Approx(50.96 + 80000.0).epsilon(1e-6));
  CHECK(ra.time_us() > alone.time_us());
}

TEST_CASE("other collectives move the bytes nccl-tests expects") {
  // One server, 8 GPUs, 1.2 GB, Simple forced (busBw 360 GB/s, algbw = busBw x n / nsteps):
  //  all-gather / reduce-scatter: edge bytes 7/8 S = 1.05 GB -> 2916.667 us + (8.4 + 7 x 3.4) us;
  //  broadcast: the chain from the root carries S -> 3333.333 us + (8.4 + 8 x 3.4) us.
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{8, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(8), ring_priors());
  CollectiveCall call = ring_simple_allreduce(1.2e9);
  call.op = Op::all_gather;
  CHECK(simulate_alone(comm, call, Fidelity::flow).time_us() ==
        doctest::Approx(8.4 + 7 * 3.4 + 1.05e9 / 360e9 * 1e6).epsilon(1e-6));
  call.op = Op::reduce_scatter;
  CHECK(simulate_alone(comm, call, Fidelity::flow).time_us() ==
        doctest::Approx(8.4 + 7 * 3.4 + 1.05e9 / 360e9 * 1e6).epsilon(1e-6));
  call.op = Op::broadcast;
  call.root = 3;
  CHECK(simulate_alone(comm, call, Fidelity::flow).time_us() ==
        doctest::Approx(8.4 + 8 * 3.4 + 1.2e9 / 360e9 * 1e6).epsilon(1e-6));
  // Send/recv between two GPUs: 32 p2p channels x 30 GB/s (test_p2p) = 960 GB/s per send, so
  // the NVLink (450 GB/s) paces it; latency = the Hopper NVLink send latency, 6.74 us, + the fill
  // of its 32 channels' last 512 KiB chunks at 457 GB/s: 32 x 524288 / 457e3 = 36.711628 us.
  Communicator pair(graph, {0, 5}, ring_priors());
  CollectiveCall p2p;
  p2p.op = Op::send_recv;
  p2p.bytes = 0.9e9;
  CHECK(simulate_alone(pair, p2p, Fidelity::flow).time_us() ==
        doctest::Approx(6.74 + 36.711628 + 0.9e9 / 450e9 * 1e6).epsilon(1e-6));
}

TEST_CASE("bad communicators and calls are input errors") {
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{4, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  const NcclParams prm = ring_priors();
  CHECK_THROWS_AS(Communicator(graph, {0, 4}, prm), InputError);
  CHECK_THROWS_AS(Communicator(graph, {1, 1}, prm), InputError);
  CHECK_THROWS_AS(Communicator(graph, {}, prm), InputError);
  Communicator comm(graph, {0, 1}, prm);
  CollectiveCall call = ring_simple_allreduce(1e6);
  call.root = 2;
  CHECK_THROWS_AS(simulate_alone(comm, call, Fidelity::flow), InputError);
  call.root = 0;
  call.bytes = -1;
  CHECK_THROWS_AS(simulate_alone(comm, call, Fidelity::flow), InputError);
  // One rank: nothing crosses a link, but out of place NCCL copies the send buffer into the
  // receive buffer on the GPU: the copy's fixed 1.85 us, then 1 MB at 0.9 x half of H100-test's
  // 3 TB/s (read and write) = 1e6 / 1.35e12 s = 0.7407 us: 2.5907 us. Zero bytes complete at once.
  Communicator single(graph, {2}, prm);
  CHECK(simulate_alone(single, ring_simple_allreduce(1e6), Fidelity::flow).time_us() ==
        doctest::Approx(1.85 + 1e6 / 1.35e12 * 1e6).epsilon(1e-6));
  CHECK(simulate_alone(single, ring_simple_allreduce(0), Fidelity::flow).time_us() == 0.0);
}

// Four servers, one GPU and one NIC (25 GB/s) each. Channel search as above: 2 channels x 24.
// Tree all-reduce forced to Simple: busBw = 2 x 24 = 48 -> min(48 x 0.92, 2 x 36.0) = 44.16,
// algbw 22.08, 4 runtime channels capped at 5.52 GB/s. Channels 0 and 2 run tree 0 (NCCL's btree
// over 4: 0 <- 2 <- {1, 3}), channels 1 and 3 tree 1 (mirrored: 3 <- 1 <- {0, 2}). Each tree
// edge carries S / 4 up and S / 4 down. Server 2 sends 3 edges of tree 0 (one up, two down) and 1
// of tree 1 per channel: 3 (r0 + r2) + (r1 + r3) <= 25, server 1 likewise -> every r = 3.125
// GB/s (below the cap). 1 GB: 0.25 GB / 3.125 GB/s = 80 ms. Latency, one rank per node (network hop
// = Tree's 14 us): 8.4 + 2 x log2(4) x 14 = 64.4 us.
TEST_CASE("tree all-reduce over four servers: double binary tree, NIC-bound") {
  const topo::Cluster cluster = testing::nvswitch_cluster(4, testing::ServerSpec{1, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(4), ring_priors());
  CHECK(PathBuilder::dtree_parent(1, 4, 0) == 2);
  CHECK(PathBuilder::dtree_parent(3, 4, 0) == 2);
  CHECK(PathBuilder::dtree_parent(2, 4, 0) == 0);
  CHECK(PathBuilder::dtree_parent(0, 4, 0) == -1);
  CHECK(PathBuilder::dtree_parent(0, 4, 1) == 1);
  CHECK(PathBuilder::dtree_parent(2, 4, 1) == 1);
  CHECK(PathBuilder::dtree_parent(1, 4, 1) == 3);
  CHECK(PathBuilder::dtree_parent(3, 4, 1) == -1);
  CollectiveCall call = ring_simple_allreduce(1e9);
  call.options.algo_mask = 1u << index_of(Algo::tree);
  const CollectiveResult r = simulate_alone(comm, call, Fidelity::flow);
  CHECK(r.choice.estimate.algo == Algo::tree);
  CHECK(r.flows == 4);
  CHECK(r.time_us() == doctest::Approx(64.4 + 80000.0).epsilon(1e-6));
}

// Same four servers, all-gather by PAT (one rank per node). busBw = 48 x 0.75 = 36 GB/s, no
// algbw conversion; per-channel cap 36 / 4 x 3/4 = 6.75 GB/s over 4 runtime channels. Step 1:
// every rank sends one block (S / 4) to its neighbour; step 2: two blocks to the rank two away;
// a quarter of it per channel. All four channels cross each NIC uplink once: r = 25 / 4 = 6.25
// GB/s. 1 GB: step 1 = 250 MB / 25 GB/s = 10 ms, step 2 = 500 MB / 25 GB/s = 20 ms. Latency 8 +
// log2(4) x 14 / 3.5 + 4 x 2.8 = 27.2 us, spread over the two steps.
TEST_CASE("PAT all-gather at one rank per server runs its doubling steps in turn") {
  const topo::Cluster cluster = testing::nvswitch_cluster(4, testing::ServerSpec{1, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(4), ring_priors());
  CollectiveCall call;
  call.op = Op::all_gather;
  call.bytes = 1e9;
  call.options.algo_mask = 1u << index_of(Algo::pat);
  const CollectiveResult r = simulate_alone(comm, call, Fidelity::flow);
  CHECK(r.choice.estimate.algo == Algo::pat);
  CHECK(r.flows == 8);  // 2 steps x 4 channels
  CHECK(r.time_us() == doctest::Approx(27.2 + 30000.0).epsilon(1e-6));
}
