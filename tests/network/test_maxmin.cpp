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
#include "network/maxmin/maxmin.hpp"
#include "random_flows.hpp"

namespace cs::net {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using test::RandomFlows;

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
  sharing.set_sweep_limit(0);  // the restart (the sweep re-solves the same two here)
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
