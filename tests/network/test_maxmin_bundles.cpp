// Channel bundles of the max-min solver (maxmin_bundles.cpp): a channel that carries the same
// flows as one with no more capacity is left out of the solve, until a flow tells them apart.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "max_min_check.hpp"
#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A (channel 0, capacity 10) and B (channel 1, capacity 12) carry f1, f2, f3: A binds at 10 / 3
// and B, with the same flows and more capacity, never does. The third flow's update, a sweep,
// proposes the two channels it crosses (as many members, the same load), and their lists are the
// same: B follows A.
struct Twins {
  MaxMinSharing sharing{std::vector<double>{10, 12}};
  MaxMinSharing::FlowIndex f1, f2, f3;
  Twins() {
    sharing.set_narrow_search_limit(0);
    f1 = sharing.add(std::vector<topo::ChannelId>{0, 1});
    f2 = sharing.add(std::vector<topo::ChannelId>{0, 1});
    sharing.update();  // a fresh batch: no search, no bundle yet
    f3 = sharing.add(std::vector<topo::ChannelId>{0, 1});
    sharing.update();
  }
};

TEST_CASE("a channel with its twin's flows and more capacity follows it") {
  Twins t;
  REQUIRE(t.sharing.follower_count() == 1);
  CHECK(t.sharing.rate_Bps(t.f3) == doctest::Approx(10.0 / 3));
  CHECK(t.sharing.load_Bps(1) == t.sharing.load_Bps(0));  // B's load is A's: 10
  CHECK(t.sharing.members(1).size() == 3);
  // A removed flow leaves both: still bundled, f1 and f2 at 10 / 2 = 5, B carries 10.
  t.sharing.remove(t.f3);
  t.sharing.update();
  CHECK(t.sharing.follower_count() == 1);
  CHECK(t.sharing.rate_Bps(t.f1) == 5);
  CHECK(t.sharing.load_Bps(1) == 10);
}

TEST_CASE("a flow on the follower alone splits the bundle, and the follower binds") {
  // f4 on B only: B carries f1..f4 with 12, 12 / 4 = 3 each, below A's 10 / 3: B binds first and
  // freezes all four at 3; A carries 9. Left out, B would let f1..f3 take 10 / 3.
  Twins t;
  const auto f4 = t.sharing.add(std::vector<topo::ChannelId>{1});
  t.sharing.update();
  CHECK(t.sharing.follower_count() == 0);
  for (auto f : {t.f1, t.f2, t.f3, f4}) CHECK(t.sharing.rate_Bps(f) == 3);
  CHECK(t.sharing.load_Bps(1) == 12);
  CHECK(t.sharing.load_Bps(0) == 9);
  CHECK(t.sharing.members(1).size() == 4);
  CHECK(t.sharing.members(0).size() == 3);
}

TEST_CASE("a flow on the leader alone splits the bundle: the follower keeps its own list") {
  // f5 on A only: A carries f1, f2, f3, f5 with 10: 2.5 each. B keeps f1..f3: 7.5 of 12.
  Twins t;
  const auto f5 = t.sharing.add(std::vector<topo::ChannelId>{0});
  t.sharing.update();
  CHECK(t.sharing.follower_count() == 0);
  CHECK(t.sharing.rate_Bps(f5) == 2.5);
  CHECK(t.sharing.load_Bps(0) == 10);
  // B kept its room: its load is summed by differences (maxmin_sweep.cpp), to rounding.
  CHECK(t.sharing.load_Bps(1) == doctest::Approx(7.5).epsilon(1e-15));
  CHECK(t.sharing.members(1).size() == 3);
  // Then f1 leaves: the split list of B must have lost it too (A: 3 flows at 10 / 3; B: 2 of
  // them, 20 / 3).
  t.sharing.remove(t.f1);
  t.sharing.update();
  CHECK(t.sharing.members(1).size() == 2);
  CHECK(t.sharing.load_Bps(1) == doctest::Approx(20.0 / 3));
}

TEST_CASE("a flow crossing the twins with different multiplicities splits the bundle") {
  // f6 crosses A once and B twice: B's weight 5 over 12 (2.4) is below A's 4 over 10 (2.5).
  Twins t;
  const auto f6 = t.sharing.add(std::vector<topo::ChannelId>{0, 1, 1});
  t.sharing.update();
  CHECK(t.sharing.follower_count() == 0);
  CHECK(t.sharing.rate_Bps(f6) == doctest::Approx(2.4));
  CHECK(t.sharing.load_Bps(1) == doctest::Approx(12));
}

// Flows over pairs of twin channels (2p, 2p + 1; the second has the same or more capacity),
// mostly crossing both, sometimes one of them only, with random batches of adds and removes:
// bundles form and split all along. Every update must be max-min fair and equal a one-shot solve.
// Bundles form after plain searches only, so the first 20 updates take the plain one, and the
// rest the search asked for.
void churn_twins(std::uint32_t seed, std::size_t narrow_search_limit, int& most_followers) {
  std::mt19937 rng(seed);
  const int pairs = 3 + static_cast<int>(rng() % 6);
  std::vector<double> capacity;
  for (int p = 0; p < pairs; ++p) {
    const double first = 1.0 + (rng() % 200) / 10.0;
    capacity.push_back(first);
    capacity.push_back(rng() % 3 == 0 ? first : first + (rng() % 50) / 10.0);
  }
  MaxMinSharing sharing(capacity);
  sharing.set_narrow_search_limit(0);
  std::vector<MaxMinSharing::FlowIndex> live;
  std::vector<std::vector<topo::ChannelId>> paths;
  for (int step = 0; step < 60; ++step) {
    if (step == 20) sharing.set_narrow_search_limit(narrow_search_limit);
    for (int change = 0; change < 1 + static_cast<int>(rng() % 3); ++change) {
      if (!live.empty() && rng() % 3 == 0) {
        const std::size_t victim = rng() % live.size();
        sharing.remove(live[victim]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
        paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(victim));
        continue;
      }
      std::vector<topo::ChannelId> path;
      for (int hop = 0; hop < 1 + static_cast<int>(rng() % 3); ++hop) {
        const auto p = static_cast<topo::ChannelId>(rng() % pairs);
        const unsigned pick = rng() % 10;  // 0: the first only, 1: the second only, else both
        if (pick != 1) path.push_back(2 * p);
        if (pick != 0) path.push_back(2 * p + 1);
      }
      live.push_back(sharing.add(path));
      paths.push_back(path);
    }
    sharing.update();
    sharing.check_lists();
    if (step >= 20) most_followers = std::max(most_followers, sharing.follower_count());
    const std::vector<double> caps(live.size(), kInf);
    test::check_max_min(sharing, live, caps);
    const auto fresh = max_min_rates(capacity, paths);
    for (std::size_t f = 0; f < live.size(); ++f) {
      REQUIRE(sharing.rate_Bps(live[f]) == doctest::Approx(fresh[f]).epsilon(1e-9));
    }
    for (int c = 0; c < sharing.channel_count(); ++c) {  // loads add up over the listed members
      double load = 0;
      for (const auto& member : sharing.members(c)) {
        load += member.multiplicity * sharing.rate_Bps(member.flow);
      }
      REQUIRE(sharing.load_Bps(c) == doctest::Approx(load).epsilon(1e-9));
    }
  }
}

TEST_CASE("random churn over twin channels: bundles form and split, rates stay max-min fair") {
  for (std::size_t limit : {std::size_t{0}, std::size_t{1'000'000}}) {  // plain, narrow
    CAPTURE(limit);
    int most_followers = 0;
    for (std::uint32_t seed = 1; seed <= 40; ++seed) {
      CAPTURE(seed);
      churn_twins(seed, limit, most_followers);
    }
    CHECK(most_followers > 0);  // the churn did exercise bundles
  }
}

}  // namespace
}  // namespace cs::net
