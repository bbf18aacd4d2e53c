// NCCL's division of a collective over its channels (channel_parts.hpp), by hand from
// enqueue.cc's arithmetic, against the channel counts NCCL logged (calibrate/data logs).
#include <doctest/doctest.h>

#include "collectives/nccl/channel_parts.hpp"

using namespace cs::coll;

TEST_CASE("NCCL's cells: how many channels a call fills") {
  // All-gather, 2 ranks, LL, 16384 B per rank (S = 32768), 4 channels after the shrink, 24 in the
  // communicator: t = 2 x 4 = 8; traffic 16384 x 8 = 131072, 32768 per channel; cells of
  // 16384 / 8 = 2048 B: 8 of them; per channel ceil(32768 / (2048 x 8)) = 2 -> 4 channels
  // (NCCL's log for calibrate/data/h200x2-align-run2/off0: channel{Lo..Hi}={0..3}).
  CHECK(nccl_channel_count(Op::all_gather, Proto::ll, 32768, 2, 4, 24, 4) == 4);
  // 16388 B per rank (one float more): 9 cells; 131104 / 4 = 32776 per channel -> 3 cells per
  // channel -> 3 channels (off1's log: {0..2}).
  CHECK(nccl_channel_count(Op::all_gather, Proto::ll, 32776, 2, 4, 24, 4) == 3);
  // 131072 B per rank, 24 channels: 64 cells, 1048576 / 24 = 43690 per channel -> 3 cells per
  // channel: 3 + 20 x 3 + 1 -> 22 channels (off0's log: {0..21}).
  CHECK(nccl_channel_count(Op::all_gather, Proto::ll, 262144, 2, 24, 24, 4) == 22);
  // Broadcast, Simple, 2 MiB (bytes: t = 1, cells of 16 KiB, 128 of them): 2097152 / 24 = 87381
  // per channel -> 6 cells: 6 + 20 x 6 + 2 -> 22 channels (the h200x4-run3 logs: {0..21}).
  CHECK(nccl_channel_count(Op::broadcast, Proto::simple, 2097152, 2, 24, 24, 4) == 22);
  // All-reduce, Simple, 400000 B of floats, 12 channels after the shrink: t = 2, cells of 8192 B,
  // ceil(400000 / 8192) = 49; 800000 / 12 = 66666 per channel -> ceil(66666 / 16384) = 5 cells:
  // 5 + 8 x 5 + 4 -> 10 channels.
  CHECK(nccl_channel_count(Op::all_reduce, Proto::simple, 400000, 8, 12, 24, 4) == 10);
  // Large calls fill every channel the shrink left; one channel, or nothing to move, is one.
  CHECK(nccl_channel_count(Op::all_reduce, Proto::simple, 1e9, 8, 24, 24, 4) == 24);
  CHECK(nccl_channel_count(Op::all_reduce, Proto::simple, 1e9, 8, 1, 1, 4) == 1);
  CHECK(nccl_channel_count(Op::all_gather, Proto::ll, 0, 2, 4, 24, 4) == 1);
}
