// aws-ofi-nccl's region tuner on p5 (collectives/tuner/ofi_tuner.hpp): points read off the plugin's
// all-reduce regions by hand, in its log2 (bytes, ranks) plane.
#include <doctest/doctest.h>

#include <optional>

#include "collectives/tuner/ofi_tuner.hpp"

using namespace cs::coll;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<OfiChoice> p5(double bytes, int nodes, bool nvls = true) {
  return ofi_tuner_choice(OfiPlatform::p5, Op::all_reduce, bytes, 8 * nodes, nodes,
                          [&](Algo a, Proto) { return nvls || a != Algo::nvls_tree; });
}

bool is(const std::optional<OfiChoice>& c, Algo a, Proto p) {
  return c && c->algo == a && c->proto == p;
}

}  // namespace

TEST_CASE("the plugin's platform is the instance type") {
  CHECK(ofi_platform("p5.48xlarge") == OfiPlatform::p5);
  CHECK(ofi_platform("p5e.48xlarge") == OfiPlatform::p5);
  CHECK(ofi_platform("p4d.24xlarge") == OfiPlatform::none);
  CHECK(ofi_platform("dgx-h100") == OfiPlatform::none);
}

TEST_CASE("p5 all-reduce regions") {
  // 32 ranks (4 servers): Tree LL128's region reaches the vertex (37748736 B = 36 MiB, 32), so
  // 32 and 36 MiB (on the edge, which counts) are Tree LL128 and 37 MiB is past it, in Ring
  // LL128's region, whose right edge runs from (2^30, 17) to (2^31, 64): at log2(32) = 5 it is at
  // x = 30 + (5 - log2 17) / (6 - log2 17) = 30.477, 1.39 GiB (1425 MiB). Ring Simple's region
  // starts at its vertex (1610612736 B = 1.5 GiB, 32).
  CHECK(is(p5(32 * kMiB, 4), Algo::tree, Proto::ll128));
  CHECK(is(p5(36 * kMiB, 4), Algo::tree, Proto::ll128));
  CHECK(is(p5(37 * kMiB, 4), Algo::ring, Proto::ll128));
  CHECK(is(p5(1024 * kMiB, 4), Algo::ring, Proto::ll128));
  CHECK(!p5(1450 * kMiB, 4));  // between the two regions (1.39 - 1.5 GiB): NCCL's choice
  CHECK(is(p5(1536 * kMiB, 4), Algo::ring, Proto::simple));
  CHECK(is(p5(8192 * kMiB, 4), Algo::ring, Proto::simple));
  // 128 ranks: Tree LL128 up to its vertex (301989888 B = 288 MiB, 128); NVLSTree's region holds
  // (4 GiB, 128), between its vertices (2^31, 128) and (6 x 2^30, 128).
  CHECK(is(p5(256 * kMiB, 16), Algo::tree, Proto::ll128));
  CHECK(is(p5(1024 * kMiB, 16), Algo::ring, Proto::ll128));
  CHECK(is(p5(4096 * kMiB, 16), Algo::nvls_tree, Proto::simple));
  // Without NVLS the plugin skips that region; no later one holds the point: NCCL chooses.
  CHECK(!p5(4096 * kMiB, 16, false));
}

TEST_CASE("the plugin leaves two servers, other layouts and collectives to NCCL") {
  auto any = [](Algo, Proto) { return true; };
  CHECK(!p5(32 * kMiB, 2));
  CHECK(!ofi_tuner_choice(OfiPlatform::p5, Op::all_reduce, 32 * kMiB, 16, 4, any));
  CHECK(!ofi_tuner_choice(OfiPlatform::p5, Op::all_gather, 32 * kMiB, 32, 4, any));
  CHECK(!ofi_tuner_choice(OfiPlatform::none, Op::all_reduce, 32 * kMiB, 32, 4, any));
}

TEST_CASE("ray casting: inside, on an edge, outside") {
  // The square (2, 2) - (8, 8) in plain coordinates is (1, 1) - (3, 3) in log2.
  const std::vector<OfiPoint> square = {{2, 2}, {8, 2}, {8, 8}, {2, 8}};
  CHECK(ofi_inside({4, 4}, square));
  CHECK(ofi_inside({8, 4}, square));  // on the right edge
  CHECK(!ofi_inside({16, 4}, square));
  CHECK(!ofi_inside({4, 1}, square));
}
