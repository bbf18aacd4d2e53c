// NCCL's point-to-point path: the channel split of init.cc / enqueue.cc worked by hand, the
// tuner's p2p choice, and send/recv and all-to-all simulated as flows with hand-derived times.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "collectives/nccl/p2p_plan.hpp"
#include "support/cli_run.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

CollectiveCall p2p_call(Op op, double bytes) {
  CollectiveCall call;
  call.op = op;
  call.bytes = bytes;
  return call;
}

}  // namespace

// A communicator running 24 channels (12 graph channels x 2), as on the 4 x H200 node:
// p2pnChannels = pow2Up(min(24, 64)) = 32, p2pnChannelsPerPeer = pow2Up(24) = 32; the minimum
// per peer halves while min x nRanks > 32: 2 ranks 32 -> 16, 3 ranks 16 -> 8 (8 x 3 = 24),
// 4 ranks 8 (8 x 4 = 32).
TEST_CASE("p2p channel counts follow NCCL's init and enqueue") {
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  const P2pChannels two = p2p_channels(24, 2, 1, prm);
  CHECK(two.comm_channels == 32);
  CHECK(two.per_peer_max == 32);
  CHECK(two.per_peer_min == 16);
  CHECK(p2p_channels(24, 3, 1, prm).per_peer_min == 8);
  const P2pChannels four = p2p_channels(24, 4, 1, prm);
  CHECK(four.per_peer_min == 8);
  // Across nodes a peer gets NCCL_NCHANNELS_PER_NET_PEER = 2 channels at most.
  CHECK(p2p_channels(24, 4, 2, prm).per_peer_max == 2);

  // One node, chunk 512 KiB: parts between 64 KiB and 16 MiB. 4 ranks (min 8, max 32):
  //   1 KiB: min(8, ceil(1 KiB / 64 KiB) = 1) = 1 channel;
  //   16 MiB: 8 channels of 2 MiB; 128 MiB: 8 of exactly 16 MiB (not above the cap);
  //   256 MiB: 8 of 32 MiB > 16 MiB -> 16 of 16 MiB.
  const Proto simple = Proto::simple;
  CHECK(p2p_part_channels(1024, four, 1, simple, prm) == 1);
  CHECK(p2p_part_channels(16 * kMiB, four, 1, simple, prm) == 8);
  CHECK(p2p_part_channels(128 * kMiB, four, 1, simple, prm) == 8);
  CHECK(p2p_part_channels(256 * kMiB, four, 1, simple, prm) == 16);
  // 2 ranks (min 16): 256 MiB in 16 parts of 16 MiB; 512 MiB: 32 MiB -> 32 channels of 16 MiB.
  CHECK(p2p_part_channels(256 * kMiB, two, 1, simple, prm) == 16);
  CHECK(p2p_part_channels(512 * kMiB, two, 1, simple, prm) == 32);
  // The doubling stops at the per-peer maximum: 4 GiB on 2 ranks stays at 32 channels.
  CHECK(p2p_part_channels(4096 * kMiB, two, 1, simple, prm) == 32);
  CHECK(p2p_part_channels(0, four, 1, simple, prm) == 1);
  // LL's step is its 512 KiB buffer over 8 slots, 64 KiB: parts from 8 KiB. 128 KiB on 2 ranks:
  // min(16, ceil(128 / 8) = 16) = 16 channels (Simple: ceil(128 / 64) = 2); 24 KiB: 3.
  CHECK(p2p_part_channels(128 * 1024, two, 1, Proto::ll, prm) == 16);
  CHECK(p2p_part_channels(128 * 1024, two, 1, simple, prm) == 2);
  CHECK(p2p_part_channels(24 * 1024, two, 1, Proto::ll, prm) == 3);

  // LL while bytes <= p2pnChannelsPerPeer x 16 KiB: 32 x 16 KiB = 512 KiB with 32 per peer.
  CHECK(p2p_uses_ll(16384, 1, prm));
  CHECK_FALSE(p2p_uses_ll(16385, 1, prm));
  CHECK(p2p_uses_ll(512 * 1024, two.per_peer_max, prm));
  CHECK_FALSE(p2p_uses_ll(512 * 1024 + 1, two.per_peer_max, prm));

  CHECK(p2p_peers(Op::send_recv, 2) == 1);
  CHECK(p2p_peers(Op::send_recv, 4) == 2);
  CHECK(p2p_peers(Op::all_to_all, 4) == 3);
  CHECK(p2p_peers(Op::all_to_all, 1) == 0);
}

// The tuner's p2p choice on a 12-channel x 30 GB/s ring graph (24 runtime channels): send/recv
// of 128 MiB on 4 ranks uses 8 channels; the Hopper prior per-channel rate is 19.04 GB/s, so
// busBw = 152.32 GB/s; latency = the Hopper NVLink send latency 6.74, + the extra-peer latency per
// peer beyond the first (send/recv on 4 ranks: 2 peers, 1 extra), + the fill of its last chunks:
// 8 channels x min(16 MiB, 512 KiB) / 457 GB/s = 4194304 / 457e3 = 9.177908 us.
TEST_CASE("the tuner's p2p choice") {
  NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape shape;
  shape.n_ranks = 4;
  shape.nvswitch = true;
  shape.ring = GraphInfo{12, 30.0, 30.0};
  TunerChoice c = choose(shape, Op::send_recv, 128 * kMiB, prm, {});
  CHECK(c.p2p);
  CHECK(c.comm_channels == 24);
  CHECK(c.n_channels == 8);
  CHECK(c.estimate.proto == Proto::simple);
  CHECK(c.estimate.bus_bw_GBps == doctest::Approx(152.32));
  CHECK(c.estimate.latency_us == doctest::Approx(6.74 + 0.37 + 9.177908));
  prm.p2p_extra_peer_latency_us = 10.0;
  prm.p2p_per_channel_GBps = 20.0;
  prm.p2p_fill_GBps = 0;  // no fill from here on
  c = choose(shape, Op::send_recv, 128 * kMiB, prm, {});
  CHECK(c.estimate.latency_us == doctest::Approx(16.74));
  CHECK(c.estimate.bus_bw_GBps == doctest::Approx(160.0));
  // All-to-all of 4 MiB: 1 MiB per peer, above 32 per-peer channels x 16 KiB = 512 KiB, so
  // Simple, on min(8, 1 MiB / 64 KiB = 16) = 8 channels. 2 MiB: 512 KiB per peer, LL, whose
  // 64 KiB step makes parts from 8 KiB: min(8, 64) = 8 channels at the LL rate, 8 x 5.18 GB/s.
  c = choose(shape, Op::all_to_all, 4 * kMiB, prm, {});
  CHECK(c.n_channels == 8);
  CHECK(c.estimate.proto == Proto::simple);
  c = choose(shape, Op::all_to_all, 2 * kMiB, prm, {});
  CHECK(c.estimate.proto == Proto::ll);
  CHECK(c.n_channels == 8);
  CHECK(c.estimate.bus_bw_GBps == doctest::Approx(8 * 5.18));
  // 8 B: 2 B per peer on one channel, LL. Without a measured LL rate, LL's 16-byte lines carry
  // 8 bytes of data: one channel's 20 GB/s x 0.5 = 10 GB/s.
  prm.p2p_ll_per_channel_GBps = 0;
  c = choose(shape, Op::all_to_all, 8, prm, {});
  CHECK(c.estimate.proto == Proto::ll);
  CHECK(c.n_channels == 1);
  CHECK(c.estimate.bus_bw_GBps == doctest::Approx(10.0));
  // Two ranks: one peer, no extra-peer latency.
  shape.n_ranks = 2;
  CHECK(choose(shape, Op::send_recv, 8, prm, {}).estimate.latency_us == doctest::Approx(6.74));
  // Without the measured NVLink latency, NCCL's rule: Ring Simple base 8.4 + NVLink hop 3.4.
  prm.p2p_nvlink_latency_us = 0;
  CHECK(choose(shape, Op::send_recv, 8, prm, {}).estimate.latency_us == doctest::Approx(11.8));
}

// One NVSwitch server of 4 GPUs (NVLink 450 GB/s each way per GPU), per-channel rate 20 GB/s,
// extra-peer latency 10 us, one-peer NVLink latency 6.74 us (Hopper prior): send/recv on 4 ranks
// reaches 2 peers (6.74 + 10 = 16.74 us), all-to-all 3 (6.74 + 2 x 10 = 26.74 us). No fill
// (its own case below).
TEST_CASE("send/recv and all-to-all run as channel-capped flows") {
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{4, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  NcclParams prm = nccl_priors(GpuArch::hopper);
  prm.p2p_per_channel_GBps = 20.0;
  prm.p2p_extra_peer_latency_us = 10.0;
  prm.p2p_fill_GBps = 0;
  Communicator comm(graph, testing::first_ranks(4), prm);
  REQUIRE(comm.tune(p2p_call(Op::send_recv, 8)).comm_channels == 24);

  // Every rank sends S to rank + 1, one send per GPU port: the channels pace it, not the link.
  // 128 MiB: 8 channels x 20 = 160 GB/s -> 134217728 B / 160e9 B/s = 838.8608 us.
  // 256 MiB: 16 channels, 320 GB/s -> the same 838.8608 us: twice the bytes, same time.
  const CollectiveResult r128 =
      simulate_alone(comm, p2p_call(Op::send_recv, 128 * kMiB), Fidelity::flow);
  CHECK(r128.time_us() == doctest::Approx(16.74 + 838.8608).epsilon(1e-6));
  CHECK(r128.flows == 1);  // one flow holding all four sends
  CHECK(simulate_alone(comm, p2p_call(Op::send_recv, 256 * kMiB), Fidelity::flow).time_us() ==
        doctest::Approx(16.74 + 838.8608).epsilon(1e-6));

  // All-to-all of 1.2 GB: 3e8 B per peer; min 8 channels of 37.5 MB > 16 MiB -> 16 of 18.75 MB
  // -> 32 channels x 20 = 640 GB/s per peer. Each GPU port carries 3 peer sends: 450 / 3 = 150
  // GB/s each, so the link paces: 3e8 / 150e9 = 2000 us.
  CHECK(simulate_alone(comm, p2p_call(Op::all_to_all, 1.2e9), Fidelity::flow).time_us() ==
        doctest::Approx(26.74 + 2000.0).epsilon(1e-6));
  // At 2 GB/s per channel the channels pace. The three sends' 32 channels each would need 96
  // channels; the communicator has 32 p2p channels, so each send gets 32 / 3 of them:
  // 10.667 x 2 = 21.333 GB/s -> 3e8 / 21.333e9 = 14062.5 us.
  prm.p2p_per_channel_GBps = 2.0;
  Communicator slow(graph, testing::first_ranks(4), prm);
  CHECK(simulate_alone(slow, p2p_call(Op::all_to_all, 1.2e9), Fidelity::flow).time_us() ==
        doctest::Approx(26.74 + 14062.5).epsilon(1e-6));

  // One float more per peer: 1,200,000,016 B, chunks of 300,000,004 B (4 mod 16), misaligned.
  // Still 32 part channels, 10.667 of them per send; at 7.8 GB/s each that is 83.2 GB/s, over
  // the GPU's misaligned cap shared by its 3 sends: 159 / 3 = 53 GB/s per send (the Hopper
  // priors). 300000004 / 53e9 s = 5660.377434 us; the 3 sends load each NVLink port with 159 of
  // its 396 GB/s, so the link does not pace.
  prm.p2p_per_channel_GBps = 20.0;
  Communicator hopper(graph, testing::first_ranks(4), prm);
  REQUIRE(prm.p2p_unaligned_per_channel_GBps == 7.8);
  REQUIRE(prm.p2p_unaligned_gpu_GBps == 159.0);
  CHECK(simulate_alone(hopper, p2p_call(Op::all_to_all, 1200000016.0), Fidelity::flow).time_us() ==
        doctest::Approx(26.74 + 5660.377434).epsilon(1e-9));

  // Two ranks: one peer (latency 6.74 us); 64 MiB in 16 channels of 4 MiB, 320 GB/s:
  // 67108864 / 320e9 = 209.7152 us.
  prm.p2p_per_channel_GBps = 20.0;
  Communicator pair20(graph, testing::first_ranks(2), prm);
  CHECK(simulate_alone(pair20, p2p_call(Op::send_recv, 64 * kMiB), Fidelity::flow).time_us() ==
        doctest::Approx(6.74 + 209.7152).epsilon(1e-6));
}

// The fill (p2p_plan.hpp): every busy channel's last chunk, min(part, 512 KiB), at the GPU-wide
// 457 GB/s (Hopper prior).
//   send/recv 4 MiB on 4 ranks: 8 channels of 512 KiB, one send: 8 x 524288 B / 457e3 = 9.177908
//     us, all of each part in one chunk; 64 MiB on 2 ranks: 16 channels of 4 MiB, last chunk
//     512 KiB: 16 x 524288 / 457e3 = 18.355814 us.
//   all-to-all 4 MiB on 4 ranks: 1 MiB per peer on 8 channels of 128 KiB, 3 sends: 3 x 8 x
//     131072 / 457e3 = 6.883431 us.
//   LL sends and other fabrics have none; nor does a GPU without the figure.
TEST_CASE("the last chunks of Simple sends over NVLink add the pipeline's fill") {
  CHECK(p2p_fill_us(4 * kMiB, 8, 1, 512 * 1024, 457) == doctest::Approx(9.177908));
  CHECK(p2p_fill_us(64 * kMiB, 16, 1, 512 * 1024, 457) == doctest::Approx(18.355814));
  CHECK(p2p_fill_us(kMiB, 8, 3, 512 * 1024, 457) == doctest::Approx(6.883431));
  CHECK(p2p_fill_us(kMiB, 8, 3, 512 * 1024, 0) == 0);
  CHECK(p2p_fills(1, LinkClass::nvlink, Proto::simple));
  CHECK_FALSE(p2p_fills(1, LinkClass::nvlink, Proto::ll));
  CHECK_FALSE(p2p_fills(1, LinkClass::pcie, Proto::simple));
  CHECK_FALSE(p2p_fills(2, LinkClass::nvlink, Proto::simple));

  // Through the tuner: Hopper priors on a 12 x 30 GB/s graph; latency 6.74 + 0.37 per extra peer.
  NcclParams prm = nccl_priors(GpuArch::hopper);
  CommShape shape;
  shape.n_ranks = 4;
  shape.nvswitch = true;
  shape.intra = LinkClass::nvlink;
  shape.ring = GraphInfo{12, 30.0, 30.0};
  CHECK(choose(shape, Op::send_recv, 4 * kMiB, prm, {}).estimate.latency_us ==
        doctest::Approx(6.74 + 0.37 + 9.177908));
  CHECK(choose(shape, Op::all_to_all, 4 * kMiB, prm, {}).estimate.latency_us ==
        doctest::Approx(6.74 + 2 * 0.37 + 6.883431));
  // 512 KiB: LL, no fill.
  CHECK(choose(shape, Op::send_recv, 512 * 1024, prm, {}).estimate.latency_us ==
        doctest::Approx(6.74 + 0.37));
  shape.n_ranks = 2;
  CHECK(choose(shape, Op::send_recv, 64 * kMiB, prm, {}).estimate.latency_us ==
        doctest::Approx(6.74 + 18.355814));
}

// All-to-all sends chunk p at p x S / n and lands it at r x S / n: aligned only when S / n is a
// multiple of 16 bytes. Send/recv starts at offset 0 whatever its size.
TEST_CASE("misaligned p2p sends: which, and at what rate") {
  CHECK(p2p_aligned(Op::all_to_all, 4 * kMiB, 4));             // 1 MiB chunks
  CHECK_FALSE(p2p_aligned(Op::all_to_all, 12, 3));             // 4 B chunks
  CHECK_FALSE(p2p_aligned(Op::all_to_all, 4 * kMiB + 16, 4));  // 1 MiB + 4 B
  CHECK_FALSE(p2p_aligned(Op::all_to_all, 4 * kMiB + 32, 4));  // 1 MiB + 8 B
  CHECK(p2p_aligned(Op::all_to_all, 4 * kMiB + 64, 4));        // 1 MiB + 16 B
  CHECK(p2p_aligned(Op::send_recv, 1001, 3));

  // Sends share the communicator's p2p channels: 32 channels over 3 sends = 10.667 each.
  CHECK(p2p_rate_channels(8, 1, 32) == 8.0);
  CHECK(p2p_rate_channels(32, 3, 32) == doctest::Approx(32.0 / 3.0));
  CHECK(p2p_rate_channels(16, 2, 32) == 16.0);

  NcclParams prm = nccl_priors(GpuArch::hopper);
  // Aligned: channels x the per-channel rate.
  CHECK(p2p_send_GBps(16, Proto::simple, 20.0, true, 2, prm) == 320.0);
  // Misaligned on Hopper: 16 x 7.8 = 124.8 GB/s, over 159 / 2 = 79.5 per send: 79.5.
  CHECK(p2p_send_GBps(16, Proto::simple, 20.0, false, 2, prm) == doctest::Approx(79.5));
  // One send on 8 channels: 62.4 GB/s, under its cap of 159.
  CHECK(p2p_send_GBps(8, Proto::simple, 20.0, false, 1, prm) == doctest::Approx(62.4));
  // Uncalibrated generations: a quarter of the aligned channel rate (4-byte packs for 16), no
  // cap: 16 x 20 / 4 = 80 GB/s.
  prm.p2p_unaligned_per_channel_GBps = 0;
  prm.p2p_unaligned_gpu_GBps = 0;
  CHECK(p2p_send_GBps(16, Proto::simple, 20.0, false, 2, prm) == doctest::Approx(80.0));
  // LL whatever the alignment: its own rate (Hopper 5.18 GB/s per channel), else half Simple's.
  CHECK(p2p_send_GBps(16, Proto::ll, 20.0, false, 2, prm) == doctest::Approx(16 * 5.18));
  prm.p2p_ll_per_channel_GBps = 0;
  CHECK(p2p_send_GBps(16, Proto::ll, 20.0, true, 2, prm) == doctest::Approx(160.0));
}
TEST_CASE(
    "all-to-all shifts: exact up to the limit, then cross-server distances merged into runs") {
  // 8 ranks, limit 8: every distance 1..7 alone.
  const auto exact = cs::coll::alltoall_shifts(8, 4, 8, 3);
  REQUIRE(exact.size() == 7);
  CHECK(exact.back().distance == 7);
  // 20 ranks of 4 per server, limit 8, 3 runs: distances 1-3 and 17-19 keep peers inside a server
  // for some ranks and stay alone; 4..16 (13 distances) split at 4 + 13g/3 = 4, 8, 12: runs 4-7,
  // 8-11, 12-16 sent at their middles 5, 9, 14 with weights 4, 4, 5.
  const auto grouped = cs::coll::alltoall_shifts(20, 4, 8, 3);
  std::vector<std::pair<int, int>> got;
  int total = 0;
  for (const auto& g : grouped) {
    got.emplace_back(g.distance, g.weight);
    total += g.weight;
  }
  CHECK(got == std::vector<std::pair<int, int>>{
                   {1, 1}, {2, 1}, {3, 1}, {5, 4}, {9, 4}, {14, 5}, {17, 1}, {18, 1}, {19, 1}});
  CHECK(total == 19);  // every peer's bytes are sent once
}

TEST_CASE("all-to-all beyond 1,024 ranks runs on grouped distances and keeps every byte") {
  // 256 DGX H100 (2,048 ranks) on the rail-optimized NDR fabric. Each GPU sends (n - 8) / n of
  // the buffer through its own 50 GB/s NIC at p2p_net_wire_efficiency 0.84, so busbw = S (n - 1)
  // / n / t cannot pass 0.84 x 50 GB/s x (n - 1) / (n - 8) = 42.2 GB/s: faster would mean bytes
  // were dropped by grouping. Slower than 10 GB/s would be more than the remote peers' 2,040 x
  // 2.84 us = 5.8 ms of latency and that wire rate (256 MiB: 6.4 ms) explain.
  const std::string command = std::string("env -u NCCL_ALGO -u NCCL_PROTO '") + CLUSTERSIM_BINARY +
                              "' coll -t '" + CLUSTERSIM_SOURCE_DIR +
                              "/topologies/dgx-h100-16node.yaml' --nodes 256 --op alltoall "
                              "-b 256M -e 256M --csv 2>&1";
  const cs::test::CommandResult r = cs::test::run_command(command);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto last = r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1);
  std::vector<std::string> cells;
  std::stringstream row(last);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  REQUIRE(cells.size() > 8);
  const double busbw = std::stod(cells[7]);
  CHECK(busbw > 10);
  CHECK(busbw <= 42.2);
}

TEST_CASE("point-to-point across servers: the wire's efficiency and the remote peers") {
  // Remote peers: all-to-all on 2 x 8 reaches the 8 of the other server; send/recv one neighbour
  // across, both when each server has one GPU; one server none.
  CHECK(p2p_remote_peers(Op::all_to_all, 16, 2) == 8);
  CHECK(p2p_remote_peers(Op::all_to_all, 256, 32) == 248);
  CHECK(p2p_remote_peers(Op::send_recv, 16, 2) == 1);
  CHECK(p2p_remote_peers(Op::send_recv, 4, 4) == 2);
  CHECK(p2p_remote_peers(Op::send_recv, 2, 2) == 1);
  CHECK(p2p_remote_peers(Op::all_to_all, 8, 1) == 0);

  // Two servers of one GPU, each with one NIC of 50 GB/s x 0.5 = 25 GB/s; channels fast enough
  // not to pace. All-to-all of S: each rank sends S / 2 through its NIC at 0.84 of its rate, so
  // doubling S from 1 GiB adds 2^29 B / (0.84 x 25e9 B/s) = 25565.281524 us (latency cancels).
  const topo::Cluster cluster = testing::nvswitch_cluster(2, testing::ServerSpec{1, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  NcclParams prm = nccl_priors(GpuArch::hopper);
  prm.p2p_per_channel_GBps = 1000.0;
  Communicator comm(graph, testing::first_ranks(2), prm);
  const double t1 =
      simulate_alone(comm, p2p_call(Op::all_to_all, 1024 * kMiB), Fidelity::flow).time_us();
  const double t2 =
      simulate_alone(comm, p2p_call(Op::all_to_all, 2048 * kMiB), Fidelity::flow).time_us();
  CHECK(t2 - t1 == doctest::Approx(25565.281524).epsilon(1e-6));
}
