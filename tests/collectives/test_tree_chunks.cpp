// Tree LL128 all-reduce across servers: NCCL's chunk, the busiest head's network connections and
// the fixed cost of each further chunk (collectives/transport.hpp), each derived by hand.
#include <doctest/doctest.h>

#include "collectives/transport.hpp"

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

TEST_CASE(
    "the busiest head of NCCL's double binary tree serves 2 network connections, 3 from 4 "
    "servers") {
  CHECK(tree_head_net_connections(1) == 0);
  CHECK(tree_head_net_connections(2) == 2);  // the root: its child server's data in, the sum out
  CHECK(tree_head_net_connections(3) == 2);  // ncclGetBtree(3): 0 -> 2 -> 1, a chain
  CHECK(tree_head_net_connections(4) == 3);  // ncclGetBtree(4): 2 has parent 0, children 1 and 3
  CHECK(tree_head_net_connections(32) == 3);
}

TEST_CASE("each Tree LL128 chunk after the first costs the busiest head per network connection") {
  NcclParams prm;
  prm.tree_ll128_net_chunk_us = 4.5;
  TreeCall two = tree_call(2, Proto::ll128);
  // 4 MiB on 32 channels: chunks of 17280 B (above), loops = ceil(4194304 / 552960) = 8; seven
  // further chunks x 2 connections x 4.5 us = 63 us.
  CHECK(tree_net_chunk_us(two.shape, Op::all_reduce, two.estimate, 4194304, 32, prm) ==
        doctest::Approx(63.0));
  // A call of one loop pays nothing: 256 KiB is under one loop of 32 x 17280 B.
  CHECK(tree_net_chunk_us(two.shape, Op::all_reduce, two.estimate, 262144, 32, prm) == 0);
  // 4 servers: steps = 1 + 2 + 0.8 = 3.8, loops < 30.4 then < 7.6; 16 MiB on 32 channels:
  // 576000 (0) -> 288000 (1) -> 144000 (3) -> 72000 (7) -> 36000 (14 >= 7.6): stop; 36000 rounds
  // to 18 x 1920 = 34560; loops = ceil(16777216 / 1105920) = 16; 15 x 3 x 4.5 = 202.5 us.
  TreeCall four = tree_call(4, Proto::ll128);
  CHECK(tree_net_chunk_us(four.shape, Op::all_reduce, four.estimate, 16777216, 32, prm) ==
        doctest::Approx(202.5));
  // Only Tree LL128 all-reduce across servers: not LL, not one server.
  TreeCall ll = tree_call(2, Proto::ll);
  CHECK(tree_net_chunk_us(ll.shape, Op::all_reduce, ll.estimate, 4194304, 32, prm) == 0);
  TreeCall one = tree_call(1, Proto::ll128);
  CHECK(tree_net_chunk_us(one.shape, Op::all_reduce, one.estimate, 4194304, 32, prm) == 0);
}

TEST_CASE("the Tree LL128 chunk cost has its priors by GPU generation") {
  CHECK(nccl_priors(GpuArch::hopper).tree_ll128_net_chunk_us == doctest::Approx(4.5));
  CHECK(nccl_priors(GpuArch::ampere).tree_ll128_net_chunk_us == doctest::Approx(7.0));
  CHECK(nccl_priors(GpuArch::blackwell).tree_ll128_net_chunk_us == 0);
}
