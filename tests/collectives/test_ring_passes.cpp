// The receive-only pass that ends each loop of a ring all-gather, reduce-scatter or all-reduce:
// link steps per loop, the factor, and a simulated all-gather, by hand.
#include <doctest/doctest.h>

#include "coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "collectives/nccl/ring_passes.hpp"

using namespace cs;
using namespace cs::coll;

TEST_CASE("link steps per ring loop and the receive-only pass's factor") {
  CHECK(ring_link_steps(Op::all_gather, 2) == 1);
  CHECK(ring_link_steps(Op::reduce_scatter, 4) == 3);
  CHECK(ring_link_steps(Op::all_reduce, 4) == 6);
  CHECK(ring_link_steps(Op::broadcast, 4) == 0);  // a chain: one pass per chunk on every rank
  CHECK(ring_link_steps(Op::all_gather, 1) == 0);

  const NcclParams prm = nccl_priors(GpuArch::hopper);
  REQUIRE(prm.ring_recv_pass_steps[index_of(Proto::ll)] == 0.62);
  REQUIRE(prm.ring_recv_pass_steps[index_of(Proto::simple)] == 0.47);
  // LL all-gather on 2 ranks: (1 + 0.62) / 1; on 4: (3 + 0.62) / 3; all-reduce on 4: 6.62 / 6.
  CHECK(ring_pass_factor(Op::all_gather, Proto::ll, 2, prm) == doctest::Approx(1.62));
  CHECK(ring_pass_factor(Op::all_gather, Proto::ll, 4, prm) == doctest::Approx(3.62 / 3));
  CHECK(ring_pass_factor(Op::all_reduce, Proto::ll, 4, prm) == doctest::Approx(6.62 / 6));
  CHECK(ring_pass_factor(Op::broadcast, Proto::ll, 4, prm) == 1.0);
  CHECK(ring_pass_factor(Op::all_gather, Proto::ll, 2, nccl_priors(GpuArch::ampere)) == 1.0);
}

// The server of test_ring_simulation: ring Simple busBw 360 GB/s over 24 channel flows of 15 GB/s
// each, below the 450 GB/s NVLink, so the per-channel cap paces every flow.
TEST_CASE("the receive-only pass slows a ring all-gather's channels, not a broadcast's") {
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{4, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CollectiveCall call = testing::forced_call(Op::all_gather, 1.2e9, Algo::ring, Proto::simple);
  // Four ranks: edge bytes 3/4 x 1.2e9 = 9e8 B at 360 / (3.47 / 3) GB/s = 311.24 GB/s ->
  // 2891.67 us; latency 8.4 + 3 x 3.4 = 18.6 us.
  Communicator comm(graph, {0, 1, 2, 3}, prm);
  CHECK(simulate_alone(comm, call, Fidelity::flow).time_us() ==
        doctest::Approx(18.6 + 9e8 * 3.47 / 3 / 360e9 * 1e6).epsilon(1e-6));
  // Broadcast from rank 0: the chain carries 1.2e9 B at the full 360 GB/s -> 3333.33 us; latency
  // 8.4 + 4 x 3.4 = 22.0 us (no chain fill in the priors).
  call.op = Op::broadcast;
  CHECK(simulate_alone(comm, call, Fidelity::flow).time_us() ==
        doctest::Approx(22.0 + 1.2e9 / 360e9 * 1e6).epsilon(1e-6));
  // With a calibrated chain fill of 834 GB/s: + 24 channels' last 512 KiB chunks = 12582912 /
  // 834e3 = 15.087424 us.
  NcclParams filled = prm;
  filled.ring_fill_GBps = 834;
  Communicator with_fill(graph, {0, 1, 2, 3}, filled);
  CHECK(simulate_alone(with_fill, call, Fidelity::flow).time_us() ==
        doctest::Approx(22.0 + 15.087424 + 1.2e9 / 360e9 * 1e6).epsilon(1e-6));
}

// A channel's rate cap when few channels run: the graph channel's share of the tuner's figure
// (busBw / 12 on this server, whose 12 graph channels run twice), but an LL broadcast chain's is
// its communicator channel's (busBw / 24). 64 KiB forced Ring LL on 4 ranks: 4 channels of
// 16 KiB (NCCL's shrink and cells), no fill (Simple only) and no receive-only pass (zeroed).
TEST_CASE(
    "an LL broadcast chain's channels run at their communicator share, ring channels at the "
    "graph's") {
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{4, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  NcclParams prm = nccl_priors(GpuArch::hopper);
  for (double& a : prm.ring_recv_pass_steps) a = 0.0;
  Communicator comm(graph, {0, 1, 2, 3}, prm);
  CollectiveCall call = testing::forced_call(Op::broadcast, 65536, Algo::ring, Proto::ll);
  const CollectiveResult chain = simulate_alone(comm, call, Fidelity::flow);
  REQUIRE(chain.choice.n_channels == 4);
  REQUIRE(chain.choice.graph_channels == 12);
  REQUIRE(chain.choice.comm_channels == 24);
  // 16384 B per channel at busBw / 24.
  const double chain_cap = chain.choice.estimate.bus_bw_GBps * 1e9 / 24;
  CHECK(chain.time_us() ==
        doctest::Approx(chain.choice.run_latency_us + 16384 / chain_cap * 1e6).epsilon(1e-6));
  // All-gather, 64 KiB: edge bytes 3/4 x 65536 = 49152 B over its channels at busBw / 12.
  call.op = Op::all_gather;
  const CollectiveResult ring = simulate_alone(comm, call, Fidelity::flow);
  const double ring_cap = ring.choice.estimate.bus_bw_GBps * 1e9 / 12;
  CHECK(ring.time_us() == doctest::Approx(ring.choice.run_latency_us +
                                          49152.0 / ring.choice.n_channels / ring_cap * 1e6)
                              .epsilon(1e-6));
}

// The fill (ring_passes.hpp), by hand at 834 GB/s (a calibrated figure).
//   Broadcast, 2 MiB on 24 channels: 87381 B per channel, all of it the last chunk: 2097152 /
//   834e3 = 2.514571 us; 64 MiB: parts of 2.67 MiB, last chunks 512 KiB: 24 x 524288 / 834e3 =
//   15.087424 us.
//   All-gather on 4 ranks, 24 channels: 4 MiB is b = 43690.67 B per channel and step, cut in two
//   slices of max(b / 2, 32 KiB) = 32 KiB: 24 x 32768 / 834e3 = 0.942964 us; 64 MiB: b = 699050.67,
//   slices of 349525.33: 24 x 349525.33 / 834e3 = 10.058273 us; 1 GiB: b = 11184810.67, a loop's
//   chunk 2 MiB in slices of 1 MiB: 24 x 1048576 / 834e3 = 30.174849 us.
//   Nothing for Tree, LL, two servers, a 1-rank "ring" or no figure.
TEST_CASE("a ring's or chain's last slices add the fill") {
  const double mib = 1024.0 * 1024;
  const Algo ring = Algo::ring;
  const Proto simple = Proto::simple;
  CHECK(ring_fill_us(Op::broadcast, ring, simple, 2 * mib, 4, 24, 1, 834) ==
        doctest::Approx(2.514571));
  CHECK(ring_fill_us(Op::reduce, ring, simple, 64 * mib, 4, 24, 1, 834) ==
        doctest::Approx(15.087424));
  CHECK(ring_fill_us(Op::all_gather, ring, simple, 4 * mib, 4, 24, 1, 834) ==
        doctest::Approx(0.942964));
  CHECK(ring_fill_us(Op::all_gather, ring, simple, 64 * mib, 4, 24, 1, 834) ==
        doctest::Approx(10.058273));
  CHECK(ring_fill_us(Op::all_reduce, ring, simple, 1024 * mib, 4, 24, 1, 834) ==
        doctest::Approx(30.174849));
  CHECK(ring_fill_us(Op::all_reduce, Algo::tree, simple, 64 * mib, 4, 24, 1, 834) == 0);
  CHECK(ring_fill_us(Op::broadcast, ring, Proto::ll, 64 * mib, 4, 24, 1, 834) == 0);
  CHECK(ring_fill_us(Op::broadcast, ring, simple, 64 * mib, 16, 24, 2, 834) == 0);
  CHECK(ring_fill_us(Op::all_gather, ring, simple, 64 * mib, 1, 24, 1, 834) == 0);
  CHECK(ring_fill_us(Op::broadcast, ring, simple, 64 * mib, 4, 24, 1, 0) == 0);
}
