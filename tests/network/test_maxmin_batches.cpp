// The max-min solver under random batches of adds and removes: max-min optimal after every
// update, equal to a one-shot solve, the same for either search, and deterministic.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "max_min_check.hpp"
#include "network/maxmin/maxmin.hpp"
#include "random_flows.hpp"

namespace cs::net {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using test::RandomFlows;

// Random batches of adds and removes between updates, with caps, repeated channels and some
// channels of infinite capacity; returns every rate after every update. `paths` picks the
// restart for every update (its search by `narrow_search_limit`, 0: always the plain one), the
// sweep (maxmin_sweep.cpp), or the two in turn, so that each starts from what the other left.
enum class Paths { restart, sweep, in_turn };
std::vector<double> run_batches(std::uint32_t seed, std::size_t narrow_search_limit,
                                Paths paths = Paths::restart) {
  std::mt19937 rng(seed);
  const int channel_count = 3 + static_cast<int>(rng() % 12);
  std::vector<double> capacity;
  for (int c = 0; c < channel_count; ++c) {
    capacity.push_back(rng() % 8 == 0 ? kInf : 1.0 + (rng() % 1000) / 10.0);
  }
  MaxMinSharing sharing(capacity);
  sharing.set_narrow_search_limit(narrow_search_limit);
  const auto sweep_limit = [&](int step) {
    const bool sweep = paths == Paths::sweep || (paths == Paths::in_turn && step % 2 == 1);
    return sweep ? std::numeric_limits<std::size_t>::max() : 0;
  };
  RandomFlows flows;
  std::vector<double> history;
  for (int step = 0; step < 40; ++step) {
    // Rates before the changes, by serial: a flow not among changed_flows() must keep its rate bit
    // for bit, a flow added since must be among them.
    std::map<int, double> before;
    for (std::size_t f = 0; f < flows.live.size(); ++f)
      before[flows.serials[f]] = sharing.rate_Bps(flows.live[f]);
    const int changes = 1 + static_cast<int>(rng() % 5);
    for (int change = 0; change < changes; ++change) flows.change(rng, sharing, channel_count, 5);
    sharing.set_sweep_limit(sweep_limit(step));
    sharing.update();
    flows.check(sharing, capacity);
    const auto changed = sharing.changed_flows();
    for (std::size_t f = 0; f < flows.live.size(); ++f) {
      const bool listed = std::find(changed.begin(), changed.end(), flows.live[f]) != changed.end();
      const auto old = before.find(flows.serials[f]);
      if (old == before.end()) {
        REQUIRE(listed);
      } else if (!listed) {
        REQUIRE(sharing.rate_Bps(flows.live[f]) == old->second);
      }
    }
    for (const auto flow : flows.live) history.push_back(sharing.rate_Bps(flow));
    for (int c = 0; c < channel_count; ++c) {  // every full channel's members sorted by rate
      if (sharing.load_Bps(c) < sharing.capacity_Bps(c) * (1 - 1e-9)) continue;
      const auto members = sharing.members(c);
      for (std::size_t m = 1; m < members.size(); ++m) {
        REQUIRE(sharing.rate_Bps(members[m - 1].flow) <= sharing.rate_Bps(members[m].flow));
      }
    }
  }
  return history;
}

TEST_CASE("random flow sets large enough to rebuild the heap: max-min optimal, as one-shot") {
  // 300 channels and ~600 flows over up to 6 of them: most channels carry several flows, so the
  // heap of a solve holds well over the 64 shares from which it is rebuilt once half of them may
  // have no open flow left (maxmin_solve.cpp).
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const int channel_count = 300;
    std::vector<double> capacity;
    for (int c = 0; c < channel_count; ++c) capacity.push_back(1.0 + (rng() % 1000) / 10.0);
    MaxMinSharing sharing(capacity);
    sharing.set_narrow_search_limit(0);  // the plain search, whose heaps are the largest
    RandomFlows flows;
    for (int step = 0; step < 900; ++step) flows.change(rng, sharing, channel_count, 6);
    sharing.update();
    flows.check(sharing, capacity);
    for (int step = 0; step < 6; ++step) {
      flows.change(rng, sharing, channel_count, 6);
      sharing.update();
      flows.check(sharing, capacity);
    }
  }
}

TEST_CASE("a fresh batch solves as the searches do, bit for bit") {
  // A batch added on channels that list no member takes the fresh-batch solve (every one-shot
  // solve does). The same batch added where a removed flow still lists on every channel takes the
  // restart and a search instead: the removed flow's rate caps the restart level, so every added
  // flow is re-solved from below its first level, in the same order. Both must give the same
  // rates, bit for bit, and the same member lists.
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const int channel_count = 2 + static_cast<int>(rng() % 10);
    std::vector<double> capacity;
    for (int c = 0; c < channel_count; ++c) capacity.push_back(1.0 + (rng() % 1000) / 7.0);
    std::vector<std::vector<topo::ChannelId>> paths;
    std::vector<double> caps;
    for (int f = 0; f < 3 + static_cast<int>(rng() % 12); ++f) {
      std::vector<topo::ChannelId> path;
      for (int h = 0; h < 1 + static_cast<int>(rng() % 4); ++h)
        path.push_back(static_cast<topo::ChannelId>(rng() % channel_count));
      paths.push_back(path);
      caps.push_back(rng() % 4 == 0 ? 1.0 + (rng() % 500) / 3.0 : kInf);
    }
    MaxMinSharing fresh(capacity);
    std::vector<MaxMinSharing::FlowIndex> fresh_flows;
    for (std::size_t f = 0; f < paths.size(); ++f)
      fresh_flows.push_back(fresh.add(paths[f], caps[f]));
    fresh.update();
    for (std::size_t limit : {std::size_t{0}, std::size_t{1'000'000}}) {  // plain, narrow
      CAPTURE(limit);
      MaxMinSharing searched(capacity);
      searched.set_narrow_search_limit(limit);
      searched.set_sweep_limit(0);
      std::vector<topo::ChannelId> everywhere;
      for (int c = 0; c < channel_count; ++c) everywhere.push_back(c);
      const auto placeholder = searched.add(everywhere);
      searched.update();
      searched.remove(placeholder);  // listed, then removed: its entries stay until the update
      std::vector<MaxMinSharing::FlowIndex> flows;
      for (std::size_t f = 0; f < paths.size(); ++f)
        flows.push_back(searched.add(paths[f], caps[f]));
      searched.update();
      for (std::size_t f = 0; f < paths.size(); ++f) {
        REQUIRE(searched.rate_Bps(flows[f]) == fresh.rate_Bps(fresh_flows[f]));
      }
      for (int c = 0; c < channel_count; ++c) {
        const auto a = fresh.members(c);
        const auto b = searched.members(c);
        REQUIRE(a.size() == b.size());
        for (std::size_t m = 0; m < a.size(); ++m) {
          CHECK(fresh.rate_Bps(a[m].flow) == searched.rate_Bps(b[m].flow));
          CHECK(a[m].prefix_load_Bps == b[m].prefix_load_Bps);
          CHECK(fresh.load_Bps(c) == searched.load_Bps(c));
        }
      }
    }
  }
}

TEST_CASE("a wider fabric under long churn: the sweep stays max-min fair, as one-shot") {
  // Capacities like a fat tree's (48.5, 52.5 and 97 GB/s, in B/s) and hundreds of flows over up
  // to 6 of 48 channels: many flows freeze together at thirds, sevenths and the like, and after a
  // few hundred updates flows that froze at one channel differ in their last bits (each kept its
  // rate within rounding). The sweep must still treat them as frozen together.
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const int channel_count = 48;
    const std::vector<double> kinds{48.5e9, 52.5e9, 97e9};
    std::vector<double> capacity;
    for (int c = 0; c < channel_count; ++c) capacity.push_back(kinds[rng() % kinds.size()]);
    MaxMinSharing sharing(capacity);
    RandomFlows flows;
    for (int f = 0; f < 240; ++f) flows.change(rng, sharing, channel_count, 6, 1e9);
    sharing.update();
    for (int step = 0; step < 300; ++step) {
      const int changes = 1 + static_cast<int>(rng() % 4);
      for (int change = 0; change < changes; ++change) {
        flows.change(rng, sharing, channel_count, 6, 1e9);
      }
      sharing.update();
      sharing.check_lists();
      if (step % 10 == 9) flows.check(sharing, capacity);
    }
  }
}

TEST_CASE("batched changes: max-min optimal, equal to one-shot, deterministic") {
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    for (std::size_t limit : {std::size_t{0}, std::size_t{1'000'000}}) {  // plain, narrow
      CAPTURE(limit);
      const auto first = run_batches(seed, limit);
      CHECK(run_batches(seed, limit) == first);  // same input, same rates, bit for bit
    }
    for (Paths paths : {Paths::sweep, Paths::in_turn}) {
      const auto first = run_batches(seed, 0, paths);
      CHECK(run_batches(seed, 0, paths) == first);
    }
  }
}

}  // namespace
}  // namespace cs::net
