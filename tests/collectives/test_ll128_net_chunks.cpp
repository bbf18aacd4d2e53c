// LL128 across servers: a chunk's fixed cost on a network connection
// (collectives/tuner/transport.hpp), in Tree all-reduce (NCCL's chunk, the busiest GPU's
// connections) and as a ring's step floor, each derived by hand.
#include <doctest/doctest.h>

#include "collectives/tuner/transport.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

// A call of `bytes` on `nodes` servers of 8 GPUs, chosen as Tree `proto` on `channels` channels.
struct TreeCall {
  CommShape shape;
  Estimate estimate;
};

TreeCall tree_call(int nodes, Proto proto) {
  TreeCall t;
  t.shape.n_nodes = nodes;
  t.shape.n_ranks = 8 * nodes;
  t.estimate.algo = Algo::tree;
  t.estimate.proto = proto;
  return t;
}

}  // namespace

TEST_CASE("NCCL's Tree LL128 chunk shrinks for calls of a few loops") {
  // An LL128 step holds 4915200 / 8 = 614400 B of lines, 15/16 of them data: 576000 B.
  // 2 servers of 8: steps = 1 + log2(2) + 0.8 = 2.8; halve while loops < 2.8 x 64 / 8 = 22.4 and
  // the chunk is above 131072, then while loops < 2.8 x 16 / 8 = 5.6 and above 32768.
  // 4 MiB on 32 channels: 4194304 / (32 x 576000) = 0 loops -> 288000 (0) -> 144000 (0) -> 72000
  // stops the first rule; 72000 (1 loop) -> 36000 (3) -> 18000 (7 >= 5.6 would stop, but 18000 is
  // below 32768 anyway). 18000 rounds down to LL128's 1920-byte grain: 9 x 1920 = 17280.
  CHECK(tree_ll128_chunk_bytes(4194304, 16, 2, 32) == doctest::Approx(17280));
  // 256 MiB: 268435456 / (32 x 576000) = 14 < 22.4 -> 288000 (29 >= 22.4): stop; 29 >= 5.6.
  // 288000 = 150 grains exactly.
  CHECK(tree_ll128_chunk_bytes(268435456, 16, 2, 32) == doctest::Approx(288000));
  // 1 GiB: 1073741824 / (32 x 576000) = 58 loops, no halving.
  CHECK(tree_ll128_chunk_bytes(1073741824, 16, 2, 32) == doctest::Approx(576000));
}

TEST_CASE("the busiest GPU of NCCL's balanced tree serves 2 network connections a loop") {
  CHECK(tree_head_net_connections(1) == 0);
  CHECK(tree_head_net_connections(2) == 2);  // the root: its child server's data in, the sum out
  CHECK(tree_head_net_connections(3) == 2);  // ncclGetBtree(3): 0 -> 2 -> 1, a chain
  // ncclGetBtree(4): server 2 has parent 0 and children 1 and 3; the balanced pattern puts the
  // parent and child 3 (its second, down1) on the first GPU, child 1 on the second.
  CHECK(tree_head_net_connections(4) == 2);
  CHECK(tree_head_net_connections(32) == 2);
}

TEST_CASE("each Tree LL128 chunk after the first costs the busiest head per network connection") {
  NcclParams prm;
  prm.ll128_net_chunk_us = 4.5;
  TreeCall two = tree_call(2, Proto::ll128);
  // 4 MiB on 32 channels: chunks of 17280 B (above), loops = ceil(4194304 / 552960) = 8; seven
  // further chunks x 2 connections x 4.5 us = 63 us.
  CHECK(tree_net_chunk_us(two.shape, Op::all_reduce, two.estimate, 4194304, 32, prm) ==
        doctest::Approx(63.0));
  // A call of one loop pays nothing: 256 KiB is under one loop of 32 x 17280 B.
  CHECK(tree_net_chunk_us(two.shape, Op::all_reduce, two.estimate, 262144, 32, prm) == 0);
  // 4 servers: steps = 1 + 2 + 0.8 = 3.8, loops < 30.4 then < 7.6; 16 MiB on 32 channels:
  // 576000 (0) -> 288000 (1) -> 144000 (3) -> 72000 (7) -> 36000 (14 >= 7.6): stop; 36000 rounds
  // to 18 x 1920 = 34560; loops = ceil(16777216 / 1105920) = 16; 15 x 2 x 4.5 = 135 us.
  TreeCall four = tree_call(4, Proto::ll128);
  CHECK(tree_net_chunk_us(four.shape, Op::all_reduce, four.estimate, 16777216, 32, prm) ==
        doctest::Approx(135.0));
  // Only Tree LL128 all-reduce across servers: not LL, not one server.
  TreeCall ll = tree_call(2, Proto::ll);
  CHECK(tree_net_chunk_us(ll.shape, Op::all_reduce, ll.estimate, 4194304, 32, prm) == 0);
  TreeCall one = tree_call(1, Proto::ll128);
  CHECK(tree_net_chunk_us(one.shape, Op::all_reduce, one.estimate, 4194304, 32, prm) == 0);
}

TEST_CASE("every step of an LL128 ring across servers costs at least a network chunk") {
  NcclParams prm = nccl_priors(GpuArch::hopper);  // 4.5 us a chunk on a network connection
  TunerChoice c;
  c.estimate.algo = Algo::ring;
  c.estimate.proto = Proto::ll128;
  CommShape s;
  s.n_ranks = 16;
  s.n_nodes = 2;
  s.intra = LinkClass::nvlink;
  s.net_step_latency_us = 5.0;
  // All-gather over 16 ranks: 15 steps, 2 of them across the network (ring_network_steps: the
  // last chunk passes one server's 8 ranks and the next server's first). Base 14.0; a network
  // step 5.0 + 4.0 - 2.7 (NCCL's Ring LL128 network hop over its LL one) = 6.3; the 13 steps
  // inside a server at NVLink's 1.9 would give 14 + 13 x 1.9 + 2 x 6.3 = 51.3 us; each takes
  // 4.5 instead: 14 + 13 x 4.5 + 2 x 6.3 = 85.1 us.
  CHECK(run_latency_us(s, Op::all_gather, c, prm) == doctest::Approx(85.1));
  prm.ll128_net_chunk_us = 0;
  CHECK(run_latency_us(s, Op::all_gather, c, prm) == doctest::Approx(51.3));
  // LL keeps NVLink's 0.6 us a step: its network buffers are in host memory.
  prm = nccl_priors(GpuArch::hopper);
  c.estimate.proto = Proto::ll;
  // Base 6.6; network step 5.0 (LL is the reference); 6.6 + 13 x 0.6 + 2 x 5.0 = 24.4 us.
  CHECK(run_latency_us(s, Op::all_gather, c, prm) == doctest::Approx(24.4));
  // One server: no floor.
  CHECK(ll128_net_step_floor(CommShape{}, Proto::ll128, prm) == 0);
}

TEST_CASE("the LL128 network chunk cost has its priors by GPU generation") {
  CHECK(nccl_priors(GpuArch::hopper).ll128_net_chunk_us == doctest::Approx(4.5));
  CHECK(nccl_priors(GpuArch::ampere).ll128_net_chunk_us == doctest::Approx(7.0));
  CHECK(nccl_priors(GpuArch::blackwell).ll128_net_chunk_us == 0);
}
