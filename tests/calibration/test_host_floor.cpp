// The host floor of host-paced NCCL records (fit/fit_host_floor.hpp, calfile/host_floor.hpp): the
// flat part of each curve, the floor between and beyond the fitted rank counts, and which points
// it leaves GPU-bound.
#include <doctest/doctest.h>

#include <vector>

#include "calibration/fit/fit_host_floor.hpp"
#include "calibration/measurements/split.hpp"

namespace {

using namespace cs::cal;

NcclPoint point(int n_ranks, double bytes, double time_us, const char* algo = "default",
                const char* proto = "default") {
  NcclPoint p;
  p.op = "allreduce";
  p.n_ranks = n_ranks;
  p.bytes = bytes;
  p.time_us = time_us;
  p.forced_algo = algo;
  p.forced_proto = proto;
  return p;
}

const Split kNoHoldout{{}, SizeHoldout::none};

// Two default curves and one forced one. n = 2: fastest 12 us, so the flat part is <= 13.2 us:
// {12, 12.5, 13}, median 12.5 (20 and 40 us already pay for GPU work). n = 4: fastest 24, flat
// <= 26.4: {24, 25, 26}, median 25. ring/LL on 2 ranks: {18, 19}, median 18.5.
Measurements two_curves() {
  Measurements m;
  const double times2[] = {12.5, 12, 13, 20, 40};
  const double times4[] = {25, 24, 26, 60};
  double bytes = 8;
  for (double t : times2) m.nccl.push_back(point(2, bytes *= 4, t));
  bytes = 8;
  for (double t : times4) m.nccl.push_back(point(4, bytes *= 4, t));
  m.nccl.push_back(point(2, 32, 18, "ring", "LL"));
  m.nccl.push_back(point(2, 128, 19, "ring", "LL"));
  m.nccl.push_back(point(2, 512, 30, "ring", "LL"));
  return m;
}

}  // namespace

TEST_CASE("the floor is the median of each curve's flat part") {
  const HostFloors floors = fit_host_floors(two_curves(), kNoHoldout, "allreduce");
  REQUIRE(floors.curves.size() == 3);
  CHECK(floors.at("default", 2) == 12.5);
  CHECK(floors.curves[0].points == 3);
  CHECK(floors.at("default", 4) == 25);
  CHECK(floors.at("ring/LL", 2) == 18.5);
  CHECK(fit_host_floors(two_curves(), kNoHoldout, "allgather").empty());
}

TEST_CASE("between and beyond fitted rank counts the floor is linear in the ranks") {
  const HostFloors floors = fit_host_floors(two_curves(), kNoHoldout, "allreduce");
  // 12.5 at 2, 25 at 4: 6.25 us per rank.
  CHECK(floors.at("default", 3) == doctest::Approx(18.75));
  CHECK(floors.at("default", 8) == doctest::Approx(50.0));
  // One rank is NCCL's copy, not on the collectives' line: nothing fitted there, so the prior's
  // one-rank floor, 4.8 us (calfile/host_floor.hpp).
  CHECK(!floors.fitted("default", 1));
  CHECK(floors.at("default", 1) == 0.0);
  CHECK(floors.host_paced_us("default", 1, 1.0) == doctest::Approx(4.8));
  // One fitted count: that floor everywhere; a configuration never run: the default runs'.
  CHECK(floors.at("ring/LL", 4) == 18.5);
  CHECK(floors.at("tree/Simple", 3) == doctest::Approx(18.75));
  // A host-paced call takes whichever is longer.
  CHECK(floors.host_paced_us("default", 3, 10.0) == doctest::Approx(18.75));
  CHECK(floors.host_paced_us("default", 3, 30.0) == 30.0);
  // None fitted: the prior floor, 3 ranks x 6.9 us = 20.7 us (calfile/host_floor.hpp).
  CHECK(HostFloors{}.host_paced_us("default", 3, 10.0) == doctest::Approx(20.7));
  CHECK(HostFloors{}.host_paced_us("default", 3, 30.0) == 30.0);
}

TEST_CASE("points under 1.5 floors are hidden by the host, gated points never are") {
  const HostFloors floors = fit_host_floors(two_curves(), kNoHoldout, "allreduce");
  CHECK(!device_bound(point(2, 1 << 20, 18.7), floors));  // 1.5 x 12.5 = 18.75
  CHECK(device_bound(point(2, 1 << 20, 18.75), floors));
  NcclPoint gated = point(2, 8, 7.0);
  gated.timing = NcclTiming::gated;
  CHECK(device_bound(gated, floors));
}

TEST_CASE("gated data has no host floor, and held-out points do not set one") {
  Measurements m = two_curves();
  m.nccl[0].timing = NcclTiming::gated;
  CHECK(fit_host_floors(m, kNoHoldout, "allreduce").empty());
  // Rank count 4 held out: only the 2-rank curves give floors.
  const HostFloors floors =
      fit_host_floors(two_curves(), Split{{4}, SizeHoldout::none}, "allreduce");
  CHECK(floors.curves.size() == 2);
  CHECK(floors.at("default", 4) == 12.5);
}

TEST_CASE("one rank's floor (NCCL's copy) stands apart from the collectives' rank-count line") {
  // Floors 4 us at 1 rank, 12.5 at 2 and 25 at 4 (the default curves above). At 3 ranks: between
  // 2 and 4, 18.75; at 8: beyond 4 on the same line, 25 + 4 x 6.25 = 50; at 1: its own 4 us. Had
  // the 1-rank floor joined the line, 3 ranks would still be 18.75 but a folder with only 1 and 2
  // would extrapolate 8 ranks from the copy's launch.
  Measurements m = two_curves();
  m.nccl.push_back(point(1, 32, 4));
  m.nccl.push_back(point(1, 128, 4));
  const HostFloors floors = fit_host_floors(m, kNoHoldout, "allreduce");
  CHECK(floors.at("default", 1) == 4.0);
  CHECK(floors.at("default", 3) == doctest::Approx(18.75));
  CHECK(floors.at("default", 8) == doctest::Approx(50.0));
  // Only the copy's floor: no collective floor to give at 2 ranks.
  Measurements one;
  one.nccl.push_back(point(1, 32, 4));
  const HostFloors copy_only = fit_host_floors(one, kNoHoldout, "allreduce");
  CHECK(copy_only.at("default", 1) == 4.0);
  CHECK(copy_only.at("default", 2) == 0.0);
}

TEST_CASE("the default split holds out the rank counts between the collectives' extremes") {
  // 2..4 -> 3; one rank (NCCL's copy) is neither an extreme nor held out: {1, 2, 4} -> none.
  CHECK(default_split({2, 3, 4}).holdout_ranks == std::vector<int>{3});
  CHECK(default_split({1, 2, 3, 4}).holdout_ranks == std::vector<int>{3});
  CHECK(default_split({1, 2, 4}).holdout_ranks.empty());
  CHECK(default_split({1}).holdout_ranks.empty());
}
