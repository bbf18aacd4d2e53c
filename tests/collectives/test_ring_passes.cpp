// The receive-only pass that ends each loop of a ring all-gather, reduce-scatter or all-reduce:
// link steps per loop, the factor, and a simulated all-gather, by hand.
#include <doctest/doctest.h>

#include "coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "collectives/ring_passes.hpp"

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
  filled.chain_fill_GBps = 834;
  Communicator with_fill(graph, {0, 1, 2, 3}, filled);
  CHECK(simulate_alone(with_fill, call, Fidelity::flow).time_us() ==
        doctest::Approx(22.0 + 15.087424 + 1.2e9 / 360e9 * 1e6).epsilon(1e-6));
}

// The chain's fill (ring_passes.hpp), by hand at 834 GB/s (a calibrated figure): 2 MiB on 24
// channels is 87381 B per channel, all of it the last chunk: 2097152 / 834e3 = 2.514571 us; 64 MiB
// on 24: parts of 2.67 MiB, last chunks 512 KiB: 24 x 524288 / 834e3 = 15.087424 us. Nothing for
// all-gather, LL, two servers or no figure.
TEST_CASE("a broadcast chain's last chunks add the fill") {
  const double mib = 1024.0 * 1024;
  CHECK(chain_fill_us(Op::broadcast, Proto::simple, 2 * mib, 24, 1, 834) ==
        doctest::Approx(2.514571));
  CHECK(chain_fill_us(Op::reduce, Proto::simple, 64 * mib, 24, 1, 834) ==
        doctest::Approx(15.087424));
  CHECK(chain_fill_us(Op::all_gather, Proto::simple, 64 * mib, 24, 1, 834) == 0);
  CHECK(chain_fill_us(Op::broadcast, Proto::ll, 64 * mib, 24, 1, 834) == 0);
  CHECK(chain_fill_us(Op::broadcast, Proto::simple, 64 * mib, 24, 2, 834) == 0);
  CHECK(chain_fill_us(Op::broadcast, Proto::simple, 64 * mib, 24, 1, 0) == 0);
}
