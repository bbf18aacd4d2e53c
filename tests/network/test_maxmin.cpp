// The max-min solver on plain channel capacities: hand-derived cases, incremental updates, and
// randomized checks of feasibility and max-min optimality.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "max_min_check.hpp"
#include "network/maxmin.hpp"

namespace cs::net {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Flows in flight under random changes, with the paths and caps a one-shot solve needs.
struct RandomFlows {
  std::vector<MaxMinSharing::FlowIndex> live;
  std::vector<std::vector<topo::ChannelId>> paths;
  std::vector<double> caps;
  std::vector<int> serials;  // one per flow ever added: indices are reused, serials not
  int next_serial = 0;

  // One time in three (when any is live) removes a random flow; otherwise adds one over 1 to
  // `max_hops` random channels (repeats possible), capped one time in four.
  void change(std::mt19937& rng, MaxMinSharing& sharing, int channel_count, int max_hops) {
    if (!live.empty() && rng() % 3 == 0) {
      const std::size_t victim = rng() % live.size();
      sharing.remove(live[victim]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
      paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(victim));
      caps.erase(caps.begin() + static_cast<std::ptrdiff_t>(victim));
      serials.erase(serials.begin() + static_cast<std::ptrdiff_t>(victim));
      return;
    }
    std::vector<topo::ChannelId> path;
    const int length = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_hops));
    for (int h = 0; h < length; ++h)
      path.push_back(static_cast<topo::ChannelId>(rng() % channel_count));
    const double cap = rng() % 4 == 0 ? 1.0 + (rng() % 500) / 10.0 : kInf;
    live.push_back(sharing.add(path, cap));
    paths.push_back(path);
    caps.push_back(cap);
    serials.push_back(next_serial++);
  }

  // After an update: max-min optimal, and every rate equal to a one-shot solve's to 1e-9
  // (infinite rates exactly).
  void check(const MaxMinSharing& sharing, const std::vector<double>& capacity) const {
    test::check_max_min(sharing, live, caps);
    const auto fresh = max_min_rates(capacity, paths, caps);
    for (std::size_t i = 0; i < live.size(); ++i) {
      const double rate = sharing.rate_Bps(live[i]);
      if (std::isinf(fresh[i])) {
        REQUIRE(rate == fresh[i]);
      } else {
        REQUIRE(rate == doctest::Approx(fresh[i]).epsilon(1e-9));
      }
    }
  }
};

// Rates in these tests are in GB/s-like round numbers; the solver is unit-agnostic.
TEST_CASE("one flow on one channel gets the whole channel") {
  // capacity 100, one flow: level rises to 100 / 1.
  CHECK(max_min_rates({100}, {{0}}) == std::vector<double>{100});
}

TEST_CASE("two flows sharing a bottleneck split it evenly") {
  // channel 0 (100) shared by both; channel 1 (300) only by the second: 100 / 2 = 50 < 300.
  CHECK(max_min_rates({100, 300}, {{0}, {0, 1}}) == std::vector<double>{50, 50});
}

TEST_CASE("the classic case: flows with different bottlenecks") {
  // A = channel 0 (10), B = channel 1 (20). f0 on A, f1 on A and B, f2 on B.
  // Shares: A 10/2 = 5, B 20/2 = 10. A saturates first: f0 = f1 = 5.
  // B keeps 20 - 5 = 15 for f2 alone: f2 = 15.
  CHECK(max_min_rates({10, 20}, {{0}, {0, 1}, {1}}) == std::vector<double>{5, 5, 15});
}

TEST_CASE("a chain of bottlenecks: parking lot") {
  // Channels 0..2 of capacity 12. f0 crosses all three; f1, f2, f3 cross one each.
  // Every channel has weight 2: share 6 everywhere, all saturate at level 6 (ties by channel id):
  // channel 0 freezes f0 and f1 at 6, which leaves channels 1 and 2 with 12 - 6 = 6 for one flow.
  CHECK(max_min_rates({12, 12, 12}, {{0, 1, 2}, {0}, {1}, {2}}) == std::vector<double>{6, 6, 6, 6});
  // Make channel 2 wider (30): f0 still freezes at 6 on channel 0; f3 gets 30 - 6 = 24.
  CHECK(max_min_rates({12, 12, 30}, {{0, 1, 2}, {0}, {1}, {2}}) ==
        std::vector<double>{6, 6, 6, 24});
}

TEST_CASE("a channel listed k times carries k times the rate") {
  // f0 crosses channel 0 twice: alone it gets 100 / 2 = 50.
  CHECK(max_min_rates({100}, {{0, 0}}) == std::vector<double>{50});
  // With f1 (once) the weight is 3: both rise to 100 / 3; load 2 * 100/3 + 100/3 = 100.
  const auto rates = max_min_rates({100}, {{0, 0}, {0}});
  CHECK(rates[0] == doctest::Approx(100.0 / 3));
  CHECK(rates[1] == rates[0]);
}

TEST_CASE("a flow's cap acts as a private channel") {
  // f0 capped at 10 on a 100 channel shared with f1: the cap binds at level 10, f1 gets 90.
  CHECK(max_min_rates({100}, {{0}, {0}}, {10, kInf}) == std::vector<double>{10, 90});
  // A cap above the fair share does not bind: 50 each.
  CHECK(max_min_rates({100}, {{0}, {0}}, {70, kInf}) == std::vector<double>{50, 50});
  // A flow without channels runs at its cap (infinity when uncapped).
  CHECK(max_min_rates({100}, {{}, {}}, {7, kInf}) == std::vector<double>{7, kInf});
}

TEST_CASE("channel lists fold into uses sorted by channel, short or long, narrow or wide") {
  // Long lists over a narrow range of ids are counted per id, the others sorted: both must give
  // each channel once, in ascending order, with the number of times it is listed.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t length = 1 + rng() % 3000;
    const int range = 1 + static_cast<int>(rng() % (trial % 2 == 0 ? 2 * length : 100'000));
    std::vector<topo::ChannelId> channels;
    std::map<topo::ChannelId, std::int32_t> expected;
    for (std::size_t i = 0; i < length; ++i) {
      const auto channel = static_cast<topo::ChannelId>(rng() % static_cast<unsigned>(range));
      channels.push_back(channel);
      ++expected[channel];
    }
    std::vector<ChannelUse> want;
    for (const auto& [channel, count] : expected) want.push_back(ChannelUse{channel, count});
    REQUIRE(count_channel_uses(channels) == want);
  }
}

TEST_CASE("solo rate is min(cap, capacity / multiplicity)") {
  const std::vector<double> capacity{100, 40};
  const auto uses = count_channel_uses(std::vector<topo::ChannelId>{1, 0, 1});
  CHECK(uses == std::vector<ChannelUse>{{0, 1}, {1, 2}});
  CHECK(solo_rate_Bps(capacity, uses, kInf) == 20);  // 40 / 2
  CHECK(solo_rate_Bps(capacity, uses, 15) == 15);
}

TEST_CASE("update re-solves only the component touched by a change") {
  MaxMinSharing sharing({100, 100, 100});
  const auto a = sharing.add(std::vector<topo::ChannelId>{0});
  const auto b = sharing.add(std::vector<topo::ChannelId>{2});
  auto touched = sharing.update();
  CHECK(touched.size() == 2);
  CHECK(sharing.rate_Bps(a) == 100);
  CHECK(sharing.rate_Bps(b) == 100);

  // c joins a on channel 0 and also crosses channel 1; b on channel 2 is a separate component.
  const auto c = sharing.add(std::vector<topo::ChannelId>{0, 1});
  touched = sharing.update();
  std::vector<MaxMinSharing::FlowIndex> got(touched.begin(), touched.end());
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<MaxMinSharing::FlowIndex>{a, c});
  CHECK(sharing.rate_Bps(a) == 50);
  CHECK(sharing.rate_Bps(c) == 50);
  CHECK(sharing.load_Bps(0) == 100);
  CHECK(sharing.load_Bps(1) == 50);

  // a leaves: c alone gets channel 0 back, b untouched.
  sharing.remove(a);
  touched = sharing.update();
  CHECK(std::vector<MaxMinSharing::FlowIndex>(touched.begin(), touched.end()) ==
        std::vector<MaxMinSharing::FlowIndex>{c});
  CHECK(sharing.rate_Bps(c) == 100);
  CHECK(sharing.active_flow_count() == 2);

  // Nothing changed: nothing to re-solve.
  CHECK(sharing.update().empty());
}

TEST_CASE("a change re-solves only the flows at or above its restart level") {
  // A (channel 0) = 10 carries a1 and a2; B (channel 1) = 100 carries a2 and b1.
  // A fills first at 10 / 2 = 5: a1 = a2 = 5. B keeps 100 - 5 = 95 for b1.
  MaxMinSharing sharing({10, 100});
  const auto a1 = sharing.add(std::vector<topo::ChannelId>{0});
  const auto a2 = sharing.add(std::vector<topo::ChannelId>{0, 1});
  const auto b1 = sharing.add(std::vector<topo::ChannelId>{1});
  CHECK(sharing.update().size() == 3);
  CHECK(sharing.rate_Bps(b1) == 95);

  // b2 joins B. With the old rates B carries 5 (a2) + 95 (b1); with b2 rising alongside, B fills
  // where 5 + 2 L = 100, L = 47.5. Nothing below 47.5 can move, so a1 and a2 (at 5) keep their
  // rates without a re-solve, although all four flows are connected through a2.
  const auto b2 = sharing.add(std::vector<topo::ChannelId>{1});
  auto touched = sharing.update();
  std::vector<MaxMinSharing::FlowIndex> got(touched.begin(), touched.end());
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<MaxMinSharing::FlowIndex>{b1, b2});
  CHECK(sharing.rate_Bps(b1) == 47.5);  // (100 - 5) / 2
  CHECK(sharing.rate_Bps(b2) == 47.5);
  CHECK(sharing.rate_Bps(a1) == 5);
  CHECK(sharing.rate_Bps(a2) == 5);
  CHECK(sharing.load_Bps(1) == 100);

  // b2 leaves: nothing below its rate (47.5) can move; b1 gets 100 - 5 = 95 back.
  sharing.remove(b2);
  touched = sharing.update();
  CHECK(std::vector<MaxMinSharing::FlowIndex>(touched.begin(), touched.end()) ==
        std::vector<MaxMinSharing::FlowIndex>{b1});
  CHECK(sharing.rate_Bps(b1) == 95);
  CHECK(sharing.load_Bps(1) == 100);
  // Members stay sorted by rate: a2 (5) before b1 (95).
  const auto members = sharing.members(1);
  REQUIRE(members.size() == 2);
  CHECK(members[0].flow == a2);
  CHECK(members[1].flow == b1);
}

TEST_CASE("of two channels with the same flows, the one with less capacity binds") {
  // A (channel 0) = 12 and B (channel 1) = 10 both carry f1 and f2; C (channel 2) = 8 carries f1
  // and f3. C fills first at 8 / 2 = 4: f1 = f3 = 4; then B (10 - 4 = 6 left, before A's 8): f2 =
  // 6. A and B list the same members at the same rates.
  MaxMinSharing sharing({12, 10, 8});
  sharing.set_narrow_search_limit(0);  // the plain search, which crosses A and B
  const auto f1 = sharing.add(std::vector<topo::ChannelId>{0, 1, 2});
  const auto f2 = sharing.add(std::vector<topo::ChannelId>{0, 1});
  const auto f3 = sharing.add(std::vector<topo::ChannelId>{2});
  sharing.update();
  CHECK(sharing.rate_Bps(f2) == 6);

  // f4 joins C: C fills at 8 / 3 (f1, f3, f4), and f2 gets what B leaves, 10 - 8/3 = 22/3 (A
  // would leave 28/3). The re-solve crosses A and B with the same open flows and frozen load, so
  // only B's share is queued: keeping A's instead would give f2 28/3, over B's capacity.
  const auto f4 = sharing.add(std::vector<topo::ChannelId>{2});
  sharing.update();
  CHECK(sharing.rate_Bps(f1) == doctest::Approx(8.0 / 3));
  CHECK(sharing.rate_Bps(f3) == doctest::Approx(8.0 / 3));
  CHECK(sharing.rate_Bps(f4) == doctest::Approx(8.0 / 3));
  CHECK(sharing.rate_Bps(f2) == doctest::Approx(22.0 / 3));
  CHECK(sharing.load_Bps(1) == doctest::Approx(10));
  CHECK(sharing.load_Bps(0) == doctest::Approx(10));
  test::check_max_min(sharing, {f1, f2, f3, f4}, {kInf, kInf, kInf, kInf});
}

TEST_CASE("random flow sets: feasible, max-min optimal, incremental equals one-shot") {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const int channel_count = 2 + static_cast<int>(rng() % 10);
    std::vector<double> capacity;
    for (int c = 0; c < channel_count; ++c) capacity.push_back(1.0 + (rng() % 1000) / 10.0);
    MaxMinSharing sharing(capacity);
    RandomFlows flows;
    for (int step = 0; step < 60; ++step) {
      flows.change(rng, sharing, channel_count, 4);
      sharing.update();
      flows.check(sharing, capacity);
    }
  }
}

}  // namespace
}  // namespace cs::net

namespace cs::net {
namespace {

// Random batches of adds and removes between updates, with caps, repeated channels and some
// channels of infinite capacity; returns every rate after every update. `narrow_search_limit`
// picks the search (0: always the plain one).
std::vector<double> run_batches(std::uint32_t seed, std::size_t narrow_search_limit) {
  std::mt19937 rng(seed);
  const int channel_count = 3 + static_cast<int>(rng() % 12);
  std::vector<double> capacity;
  for (int c = 0; c < channel_count; ++c) {
    capacity.push_back(rng() % 8 == 0 ? kInf : 1.0 + (rng() % 1000) / 10.0);
  }
  MaxMinSharing sharing(capacity);
  sharing.set_narrow_search_limit(narrow_search_limit);
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
    for (int c = 0; c < channel_count; ++c) {  // every channel's members sorted by rate
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

TEST_CASE("batched changes: max-min optimal, equal to one-shot, deterministic") {
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    for (std::size_t limit : {std::size_t{0}, std::size_t{1'000'000}}) {  // plain, narrow
      CAPTURE(limit);
      const auto first = run_batches(seed, limit);
      CHECK(run_batches(seed, limit) == first);  // same input, same rates, bit for bit
    }
  }
}

}  // namespace
}  // namespace cs::net
