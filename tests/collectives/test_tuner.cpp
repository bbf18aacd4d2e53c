// NCCL's tuner on hand-built communicator shapes: latency and bandwidth formulas, the protocol
// flipping LL -> LL128 -> Simple as the size grows, the small-message channel shrink, overrides.
#include <doctest/doctest.h>

#include "coll_fixtures.hpp"
#include "collectives/tuner/tuner.hpp"
#include "core/error.hpp"

using namespace cs::coll;

namespace {

using testing::dgx_one_node;

const Estimate& find(const std::vector<Estimate>& table, Algo a, Proto p) {
  for (const Estimate& e : table) {
    if (e.algo == a && e.proto == p) return e;
  }
  FAIL("missing estimate");
  return table.front();
}

}  // namespace

TEST_CASE("ring all-reduce estimates on one DGX H100") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const auto table = estimate_all(dgx_one_node(), Op::all_reduce, 1e6, prm, TunerOptions{});
  // busBw = 12 x 30 = 360 GB/s; nsteps = 2 x 7 = 14; algbw = busBw x 8 / 14.
  const Estimate& ll = find(table, Algo::ring, Proto::ll);
  CHECK(ll.latency_us == doctest::Approx(6.6 + 14 * 0.6));  // 15.0 us
  CHECK(ll.bus_bw_GBps == doctest::Approx(141.0));          // min(llMaxBw 141, 360 x 0.5)
  const Estimate& ll128 = find(table, Algo::ring, Proto::ll128);
  CHECK(ll128.latency_us == doctest::Approx(14.0 + 14 * 1.9));  // 40.6 us
  CHECK(ll128.bus_bw_GBps == doctest::Approx(360 * 0.92));      // min(331.2, 12 x 36.7)
  const Estimate& simple = find(table, Algo::ring, Proto::simple);
  CHECK(simple.latency_us == doctest::Approx(8.4 + 14 * 3.4));  // 56.0 us
  CHECK(simple.bus_bw_GBps == doctest::Approx(360.0));
  CHECK(simple.algo_bw_GBps == doctest::Approx(360.0 * 8 / 14));
  // time = latency + bytes / algbw: 56 us + 1e6 B / 205.714e3 B/us = 60.861 us.
  CHECK(simple.time_us == doctest::Approx(56.0 + 1e6 / (360.0 * 8 / 14 * 1e3)));
  // Tree on one node: latency 8.4 + 2 x 7 x 4.0 = 64.4 us; bw min(360 x .92, 12 x 38.7) / 2.
  const Estimate& tree = find(table, Algo::tree, Proto::simple);
  CHECK(tree.latency_us == doctest::Approx(8.4 + 2 * 7 * 4.0));
  // NCCL's table scales it by its tree correction: 1e6 B = 15625 x 64 B, floor(log2) = 13, Simple
  // row 0.5.
  CHECK(tree.algo_bw_GBps == doctest::Approx(331.2 / 2 * 0.5));
  // NVLS needs a switch with multicast; this shape has none.
  for (const Estimate& e : table) CHECK(e.algo != Algo::nvls);
  // The chosen call is timed without the correction: forced Tree Simple runs at 331.2 / 2.
  TunerOptions tree_simple;
  tree_simple.algo_mask = 1u << index_of(Algo::tree);
  tree_simple.proto_mask = 1u << index_of(Proto::simple);
  const TunerChoice c = choose(dgx_one_node(), Op::all_reduce, 1e6, prm, tree_simple);
  CHECK(c.estimate.algo_bw_GBps == doctest::Approx(331.2 / 2));
}

TEST_CASE("NCCL's tree correction: what its table multiplies Tree all-reduce by, per size") {
  // tuning.cc treeCorrectionFactor, index floor(log2(bytes / 64)): LL at 256 KiB (4096 x 64 B,
  // index 12) 0.4, LL128 at 1 MiB (index 14) 0.6, Simple at 16 MiB (index 18) 0.7; below 64 B
  // and from 512 MiB (index 23) 1.
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  auto tree_bw = [&](Proto p, double bytes) {
    TunerOptions o;
    o.algo_mask = 1u << index_of(Algo::tree);
    o.proto_mask = 1u << index_of(p);
    return estimate_all(dgx_one_node(), Op::all_reduce, bytes, prm, o).front().algo_bw_GBps;
  };
  const double ll = tree_bw(Proto::ll, 32);  // uncorrected
  CHECK(tree_bw(Proto::ll, 256 * 1024) == doctest::Approx(0.4 * ll));
  const double ll128 = tree_bw(Proto::ll128, 32);
  CHECK(tree_bw(Proto::ll128, 1024 * 1024) == doctest::Approx(0.6 * ll128));
  const double simple = tree_bw(Proto::simple, 32);
  CHECK(tree_bw(Proto::simple, 16.0 * 1024 * 1024) == doctest::Approx(0.7 * simple));
  CHECK(tree_bw(Proto::simple, 512.0 * 1024 * 1024) == doctest::Approx(simple));
}

TEST_CASE("the protocol flips from LL to LL128 to Simple as the all-reduce grows") {
  // LL: 15.0 + S / 80.571e3 (algbw 141 x 8/14); LL128: 40.6 + S / 189.257e3 (331.2 x 8/14);
  // Simple: 56.0 + S / 205.714e3. LL = LL128 where S (1/80571 - 1/189257) = 25.6 -> S = 3.592 MB;
  // LL128 = Simple where S (1/189257 - 1/205714) = 15.4 -> S = 36.44 MB.
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = dgx_one_node();
  auto proto_at = [&](double bytes) {
    return choose(s, Op::all_reduce, bytes, prm, TunerOptions{}).estimate.proto;
  };
  CHECK(proto_at(8) == Proto::ll);
  CHECK(proto_at(3.55e6) == Proto::ll);
  CHECK(proto_at(3.65e6) == Proto::ll128);
  CHECK(proto_at(36.0e6) == Proto::ll128);
  CHECK(proto_at(37.0e6) == Proto::simple);
  CHECK(choose(s, Op::all_reduce, 1e9, prm, TunerOptions{}).estimate.algo == Algo::ring);
}

TEST_CASE("channels shrink for small messages") {
  // The communicator runs 2 x 12 = 24 channels. Ring LL threshold = 8 x nRanks = 64 B per
  // thread; nt = 512: keep nc channels while bytes >= nc x 512 x 64 = nc x 32768.
  // 131072 B -> 4 channels.
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = dgx_one_node();
  const TunerChoice mid = choose(s, Op::all_reduce, 131072, prm, TunerOptions{});
  CHECK(mid.estimate.proto == Proto::ll);
  CHECK(mid.graph_channels == 12);
  CHECK(mid.comm_channels == 24);
  CHECK(mid.n_channels == 4);
  CHECK(mid.n_threads == 512);
  // 8 B: one channel, then threads halve while a multiple of 128: 512 -> 256 -> 128 -> 64.
  const TunerChoice tiny = choose(s, Op::all_reduce, 8, prm, TunerOptions{});
  CHECK(tiny.n_channels == 1);
  CHECK(tiny.n_threads == 64);
  // 1 GB of Simple: 24 x 512 x 64 = 786 KB is far below it: all 24 channels. 400 KB: the shrink
  // leaves 12, and NCCL's cells fill 10 of them (test_channel_parts.cpp has the arithmetic).
  CHECK(choose(s, Op::all_reduce, 1e9, prm, TunerOptions{}).n_channels == 24);
  TunerOptions simple;
  simple.proto_mask = 1u << index_of(Proto::simple);
  CHECK(choose(s, Op::all_reduce, 400000, prm, simple).n_channels == 10);
}

TEST_CASE("multi-node latencies: network hops, the ring plateau factor, tree log term") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape s = dgx_one_node();
  s.n_ranks = 16;
  s.n_nodes = 2;
  s.ring = s.tree = GraphInfo{16, 22.5, 22.5};
  const auto small = estimate_all(s, Op::all_reduce, 8, prm, TunerOptions{});
  // Ring LL: 6.6 + (30 - 2) x max(0.6, 1.0) + 2 x 2.7 = 40.0 us (nsteps 30, inter steps 2(N-1) =
  // 2; each step at least NCCL's network post overhead, 1 us on Intel), and the call is timed
  // without that floor: 6.6 + 28 x 0.6 + 5.4 = 28.8 us.
  CHECK(find(small, Algo::ring, Proto::ll).latency_us == doctest::Approx(40.0));
  TunerOptions ring_ll;
  ring_ll.algo_mask = 1u << index_of(Algo::ring);
  ring_ll.proto_mask = 1u << index_of(Proto::ll);
  CHECK(choose(s, Op::all_reduce, 8, prm, ring_ll).estimate.latency_us == doctest::Approx(28.8));
  // AMD hosts: a 2 us floor (x 3 for Simple), LL capped at 22.5 GB/s on 2 servers (39 on Intel):
  // Ring LL 6.6 + 28 x 2 + 5.4 = 68.0 us; Simple 8.4 + 28 x max(3.4, 6) + 2 x 14 = 204.4 us.
  CommShape amd = s;
  amd.amd_cpu = true;
  const auto on_amd = estimate_all(amd, Op::all_reduce, 8, prm, TunerOptions{});
  CHECK(find(on_amd, Algo::ring, Proto::ll).latency_us == doctest::Approx(68.0));
  CHECK(find(on_amd, Algo::ring, Proto::simple).latency_us == doctest::Approx(204.4));
  CHECK(find(on_amd, Algo::ring, Proto::ll).bus_bw_GBps == doctest::Approx(22.5));
  CHECK(find(small, Algo::ring, Proto::ll).bus_bw_GBps == doctest::Approx(39.0));
  // Tree LL: 6.8 + 2 x (7 x 0.6 + log2(2) x 5.0) = 25.2 us: tree wins the small sizes.
  CHECK(find(small, Algo::tree, Proto::ll).latency_us == doctest::Approx(25.2));
  CHECK(choose(s, Op::all_reduce, 8, prm, TunerOptions{}).estimate.algo == Algo::tree);
  // Ring Simple: 8.4 + 28 x 3.4 + 2 x 14 = 131.6 us; x 1.4 once bytes / (16 x 16) >= 64.
  CHECK(find(small, Algo::ring, Proto::simple).latency_us == doctest::Approx(131.6));
  const auto big = estimate_all(s, Op::all_reduce, 1e6, prm, TunerOptions{});
  CHECK(find(big, Algo::ring, Proto::simple).latency_us == doctest::Approx(131.6 * 1.4));
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO overrides") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const CommShape s = dgx_one_node();
  TunerOptions forced;
  forced.proto_mask = parse_proto_mask("LL", "NCCL_PROTO");
  const TunerChoice c = choose(s, Op::all_reduce, 1e9, prm, forced);
  CHECK(c.estimate.proto == Proto::ll);
  CHECK(c.estimate.algo == Algo::ring);  // ring LL (80.6 GB/s algbw) beats tree LL

  forced = TunerOptions{};
  forced.algo_mask = parse_algo_mask("tree", "NCCL_ALGO");
  CHECK(choose(s, Op::all_reduce, 1e9, prm, forced).estimate.algo == Algo::tree);
  // Tree only runs all-reduce: an all-gather forced to tree has nothing left.
  CHECK_THROWS_AS(choose(s, Op::all_gather, 1e6, prm, forced), cs::InputError);

  CHECK(parse_algo_mask("Ring,TREE", "NCCL_ALGO") ==
        ((1u << index_of(Algo::ring)) | (1u << index_of(Algo::tree))));
  CHECK_THROWS_AS(parse_algo_mask("ring,bogus", "NCCL_ALGO"), cs::InputError);
  CHECK_THROWS_AS(parse_proto_mask("LL256", "NCCL_PROTO"), cs::InputError);
}

TEST_CASE(
    "enablement: LL128 needs NVLink-only paths, NVLS a switch with multicast unless turned off, "
    "PAT one rank per node") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape pcie = dgx_one_node();
  pcie.intra = LinkClass::pcie;
  for (const Estimate& e : estimate_all(pcie, Op::all_reduce, 1e6, prm, TunerOptions{}))
    CHECK(e.proto != Proto::ll128);

  // NVLS follows NCCL's default: on where the switch has multicast, unless turned off; forcing it
  // on cannot add multicast to a switch without it.
  CommShape multicast = dgx_one_node();
  multicast.multicast = true;
  const auto with_nvls = estimate_all(multicast, Op::all_reduce, 1e9, prm, TunerOptions{});
  TunerOptions off;
  off.nvls = false;
  TunerOptions on;
  on.nvls = true;
  for (const Estimate& e : estimate_all(multicast, Op::all_reduce, 1e9, prm, off))
    CHECK(e.algo != Algo::nvls);
  for (const Estimate& e : estimate_all(dgx_one_node(), Op::all_reduce, 1e9, prm, on))
    CHECK(e.algo != Algo::nvls);
  // NVLS busBw = 2 x (16 x 23.175) x 0.85 x 15/16 = 590.9 GB/s; latency = one NVLink hop, 25 us.
  const Estimate& v = find(with_nvls, Algo::nvls, Proto::simple);
  CHECK(v.bus_bw_GBps == doctest::Approx(2 * 370.8 * 0.85 * 15.0 / 16.0));
  CHECK(v.latency_us == doctest::Approx(25.0));

  CommShape one_per_node = dgx_one_node();
  one_per_node.n_ranks = 4;
  one_per_node.n_nodes = 4;
  bool has_pat = false;
  for (const Estimate& e : estimate_all(one_per_node, Op::all_gather, 1e6, prm, TunerOptions{}))
    has_pat = has_pat || e.algo == Algo::pat;
  CHECK(has_pat);
  for (const Estimate& e : estimate_all(dgx_one_node(), Op::all_gather, 1e6, prm, TunerOptions{}))
    CHECK(e.algo != Algo::pat);
}

TEST_CASE("broadcast: NCCL charges its ring one hop, the run pays every hop of the pipeline") {
  // Four ranks of the DGX shape (12 x 30 GB/s; every channel on the same ring, NCCL's
  // sameChannels). NCCL's latency: Ring LL 6.6 + 0.6 = 7.2 us, LL128 14.0 + 1.9 = 15.9, Simple
  // 8.4 + 3.4 = 11.8. Broadcast's algbw is its busBw (nsteps = n): LL 141, LL128 331.2, Simple
  // 360 GB/s. At 2 MiB: LL 7.2 + 14.87 = 22.07, LL128 15.9 + 6.33 = 22.23, Simple 11.8 + 5.83 =
  // 17.63 us: Simple, as NCCL logged on 3 and 4 H200s. At 1 MiB: LL 7.2 + 7.44 = 14.64 against
  // Simple 11.8 + 2.91 = 14.71: LL.
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape s = dgx_one_node();
  s.n_ranks = 4;
  const TunerChoice at2 = choose(s, Op::broadcast, 2097152, prm, TunerOptions{});
  CHECK(at2.estimate.proto == Proto::simple);
  CHECK(at2.estimate.latency_us == doctest::Approx(11.8));
  CHECK(choose(s, Op::broadcast, 1048576, prm, TunerOptions{}).estimate.proto == Proto::ll);
  // The pipeline itself crosses all 4 hops: 8.4 + 4 x 3.4 = 22.0 us.
  CHECK(at2.run_latency_us == doctest::Approx(22.0));
  // A calibrated chain fill (834 GB/s) adds its last chunks, channels x min(2 MiB / channels,
  // 512 KiB) = 2 MiB: 2.514571 us; the choice does not move.
  NcclParams filled = prm;
  filled.ring_fill_GBps = 834;
  const TunerChoice timed = choose(s, Op::broadcast, 2097152, filled, TunerOptions{});
  CHECK(timed.estimate.proto == Proto::simple);
  CHECK(timed.run_latency_us == doctest::Approx(22.0 + 2.514571));
}
