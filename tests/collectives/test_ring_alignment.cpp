// Ring all-gather / reduce-scatter with per-rank chunks that are not multiples of 16 bytes: which
// calls are misaligned, the factor on their bandwidth time or the time their chunks add, and the
// simulated times, by hand.
#include <doctest/doctest.h>

#include "coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "collectives/nccl/ring_alignment.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

CollectiveCall ring_simple(Op op, double bytes) {
  return testing::forced_call(op, bytes, Algo::ring, Proto::simple);
}

}  // namespace

TEST_CASE("which collectives have misaligned per-rank chunks") {
  CHECK(rank_chunks_aligned(Op::all_gather, 32, 2));                    // 16 B per rank
  CHECK_FALSE(rank_chunks_aligned(Op::all_gather, 40, 2));              // 20 B: 4 mod 16
  CHECK_FALSE(rank_chunks_aligned(Op::reduce_scatter, 1073741820, 3));  // 357913940 B: 4 mod 16
  CHECK_FALSE(rank_chunks_aligned(Op::all_gather, 536870904, 3));       // 178956968 B: 8 mod 16
  CHECK(rank_chunks_aligned(Op::all_gather, 48, 3));                    // 16 B per rank
  CHECK(rank_chunks_aligned(Op::all_reduce, 1001, 3));                  // no per-rank chunks
  CHECK(rank_chunks_aligned(Op::broadcast, 1001, 3));
  CHECK_FALSE(rank_chunks_aligned(Op::all_to_all, 40, 2));
}

TEST_CASE("misaligned chunks: which ranks' offsets leave the 16-byte boundary") {
  CHECK(misaligned_chunks(40, 2) == 1);   // 20 B: rank 1 at 20
  CHECK(misaligned_chunks(60, 3) == 2);   // 20 B: ranks 1, 2 at 20, 40 (4 and 8 mod 16)
  CHECK(misaligned_chunks(72, 3) == 1);   // 24 B: rank 1 at 24, rank 2 at 48 = 3 x 16
  CHECK(misaligned_chunks(96, 4) == 2);   // 24 B: ranks 1, 3 at 24, 72; rank 2 at 48
  CHECK(misaligned_chunks(80, 4) == 3);   // 20 B: 20, 40, 60
  CHECK(misaligned_chunks(128, 4) == 0);  // 32 B
}

TEST_CASE("the misaligned factor: the 2-rank slowdown times the busiest rank's misaligned share") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  // Hopper priors (h200x2-align): all-gather LL128 1.46, reduce-scatter LL128 1.22; all-gather
  // Simple 1 (its misaligned chunks add time instead: ring_misaligned_us below).
  REQUIRE(prm.ring_misaligned_slowdown[0][index_of(Proto::ll128)] == 1.46);
  REQUIRE(prm.ring_misaligned_slowdown[1][index_of(Proto::ll128)] == 1.22);
  REQUIRE(prm.ring_misaligned_slowdown[0][index_of(Proto::simple)] == 1.0);
  struct Case {
    Op op;
    Proto proto;
    double bytes;
    int n;
    double factor;
  };
  const Case cases[] = {
      // Two ranks: one misaligned chunk of one: the factor itself.
      {Op::all_gather, Proto::ll128, 40, 2, 1.46},
      // Three ranks, chunks of 4 mod 16: 2 of 2 -> 1.46; of 8 mod 16: 1 of 2 -> 1 + 0.46 / 2.
      {Op::all_gather, Proto::ll128, 60, 3, 1.46},
      {Op::all_gather, Proto::ll128, 72, 3, 1.23},
      // Four ranks, chunks of 8 mod 16: 2 of 3 -> 1 + 0.46 x 2 / 3; Simple: no factor.
      {Op::all_gather, Proto::ll128, 96, 4, 1 + 0.46 * 2 / 3},
      {Op::all_gather, Proto::simple, 96, 4, 1.0},
      // Reduce-scatter pays one step's worth whatever m is: 1 + 0.22 / 2 = 1.11 (LL128) with one
      // misaligned chunk or two; Simple on 3 ranks 1 + 0.14 / 2 = 1.07.
      {Op::reduce_scatter, Proto::ll128, 72, 3, 1.11},
      {Op::reduce_scatter, Proto::ll128, 60, 3, 1.11},
      {Op::reduce_scatter, Proto::simple, 60, 3, 1.07},
  };
  for (const Case& c : cases) {
    CAPTURE(c.bytes);
    CAPTURE(c.n);
    CHECK(ring_misaligned_factor(c.op, c.proto, c.bytes, c.n, prm) ==
          doctest::Approx(c.factor).epsilon(1e-12));
  }
  // Aligned chunks, ops without per-rank chunks, and other generations: no penalty.
  CHECK(ring_misaligned_factor(Op::all_gather, Proto::ll128, 64, 2, prm) == 1.0);
  CHECK(ring_misaligned_factor(Op::all_reduce, Proto::ll128, 40, 2, prm) == 1.0);
  CHECK(ring_misaligned_factor(Op::all_gather, Proto::ll128, 40, 2, nccl_priors(GpuArch::ampere)) ==
        1.0);
}

TEST_CASE("a Simple all-gather's misaligned chunks add head and tail costs per chunk") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  // Hopper priors: the first 79 kB of a chunk's share of a channel at 85.5 ps/B, the rest 47.4.
  REQUIRE(prm.ring_misaligned_head_bytes == 79e3);
  REQUIRE(prm.ring_misaligned_head_ps_per_byte == 85.5);
  REQUIRE(prm.ring_misaligned_tail_ps_per_byte == 47.4);
  auto extra = [&](double bytes, int n, int channels, int nodes = 1) {
    return ring_misaligned_us(Op::all_gather, Algo::ring, Proto::simple, bytes, n, channels, nodes,
                              prm);
  };
  // 40 B on 2 ranks, 1 channel: one chunk of 20 B (4 mod 16), all head: 20 x 85.5 ps.
  CHECK(extra(40, 2, 1) == doctest::Approx(20 * 85.5e-6).epsilon(1e-12));
  // 60 B on 3 ranks: two misaligned chunks (at 20 and 40) of 20 B each.
  CHECK(extra(60, 3, 1) == doctest::Approx(2 * 20 * 85.5e-6).epsilon(1e-12));
  // 9600008 B on 2 ranks, 24 channels: 4800004 B per rank (4 mod 16), 200000.1667 B per channel:
  // 79000 B at 85.5 and 121000.1667 B at 47.4 ps/B = 6754500 + 5735407.9 ps = 12.4899 us.
  CHECK(extra(9600008, 2, 24) ==
        doctest::Approx((79e3 * 85.5 + (4800004.0 / 24 - 79e3) * 47.4) * 1e-6).epsilon(1e-12));
  CHECK(extra(9600008, 2, 24) == doctest::Approx(12.4899).epsilon(1e-5));
  // 72 B on 3 ranks: one misaligned chunk (rank 1 at 24; rank 2 at 48), 24 B.
  CHECK(extra(72, 3, 1) == doctest::Approx(24 * 85.5e-6).epsilon(1e-12));
  // Aligned chunks, several servers, other ops, algorithms, protocols, generations: nothing.
  CHECK(extra(9600000, 2, 24) == 0.0);
  CHECK(extra(9600008, 2, 24, 2) == 0.0);
  CHECK(ring_misaligned_us(Op::reduce_scatter, Algo::ring, Proto::simple, 40, 2, 1, 1, prm) == 0);
  CHECK(ring_misaligned_us(Op::all_gather, Algo::ring, Proto::ll, 40, 2, 1, 1, prm) == 0);
  CHECK(ring_misaligned_us(Op::all_gather, Algo::pat, Proto::simple, 40, 2, 1, 1, prm) == 0);
  CHECK(ring_misaligned_us(Op::all_gather, Algo::ring, Proto::simple, 40, 2, 1, 1,
                           nccl_priors(GpuArch::ampere)) == 0);
}

// The server of test_ring_simulation: ring Simple busBw 360 GB/s over 24 channel flows of 15 GB/s
// each, below the 450 GB/s NVLink, so the per-channel cap paces every flow.
TEST_CASE(
    "a misaligned Simple all-gather takes its aligned time plus the misaligned chunks' cost") {
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{4, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  NcclParams prm = nccl_priors(GpuArch::hopper);
  for (double& a : prm.ring_recv_pass_steps) a = 0.0;  // test_ring_passes.cpp has that factor
  // Two ranks, 1.2e9 B (6e8 B per rank: 0 mod 16): edge bytes S / 2 = 6e8 B at busBw 360 GB/s ->
  // 1666.667 us; latency 8.4 + 1 x 3.4 = 11.8 us.
  Communicator pair(graph, testing::first_ranks(2), prm);
  const double aligned =
      simulate_alone(pair, ring_simple(Op::all_gather, 1.2e9), Fidelity::flow).time_us();
  CHECK(aligned == doctest::Approx(11.8 + 6e8 / 360e9 * 1e6).epsilon(1e-6));
  // 1.2e9 + 8 B: 600000004 B per rank, 4 mod 16, one misaligned chunk: 25000000.17 B per channel,
  // 79 kB at 85.5 ps/B and the rest at 47.4 -> 1188.01 us more, at the aligned rate.
  const double per_channel = 600000004.0 / 24;
  const double misaligned =
      simulate_alone(pair, ring_simple(Op::all_gather, 1.2e9 + 8), Fidelity::flow).time_us();
  CHECK(misaligned == doctest::Approx(11.8 + 600000004.0 / 360e9 * 1e6 +
                                      (79e3 * 85.5 + (per_channel - 79e3) * 47.4) * 1e-6)
                          .epsilon(1e-6));
  // Three ranks, 1.2e9 + 24 B: 400000008 B per rank (8 mod 16), rank 1 at 8 mod 16, rank 2 at
  // 800000016 = 0 mod 16: one misaligned chunk of 16666667 B per channel. Edge bytes 2/3 S =
  // 800000016 B at 360 GB/s; latency 8.4 + 2 x 3.4 = 15.2 us. The all-reduce of the same size has
  // no per-rank chunks: 2(n-1)/n S = 1600000032 B at 360 GB/s.
  Communicator three(graph, testing::first_ranks(3), prm);
  CHECK(simulate_alone(three, ring_simple(Op::all_gather, 1.2e9 + 24), Fidelity::flow).time_us() ==
        doctest::Approx(15.2 + 800000016.0 / 360e9 * 1e6 +
                        (79e3 * 85.5 + (400000008.0 / 24 - 79e3) * 47.4) * 1e-6)
            .epsilon(1e-6));
  CHECK(simulate_alone(three, ring_simple(Op::all_reduce, 1.2e9 + 24), Fidelity::flow).time_us() ==
        doctest::Approx(8.4 + 4 * 3.4 + 1600000032.0 / 360e9 * 1e6).epsilon(1e-6));
}
