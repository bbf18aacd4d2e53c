// The sweep (maxmin_sweep.cpp) on hand-derived cases: it re-solves only the flows that move, where
// the restart re-solves every flow at or above its level, and a channel with room that the rising
// flows fill binds them.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

std::vector<MaxMinSharing::FlowIndex> sorted(std::span<const MaxMinSharing::FlowIndex> flows) {
  std::vector<MaxMinSharing::FlowIndex> out(flows.begin(), flows.end());
  std::sort(out.begin(), out.end());
  return out;
}

// X = 12 carries x1, x2; Y = 20 carries x2, y1; Z = 50 carries y1, z1, w1; W = 10 carries w1.
// X fills first at 6 (x1 = x2 = 6), W at 10 (w1 = 10), then Y: y1 = 20 - 6 = 14, and Z last:
// z1 = 50 - 14 - 10 = 26. Then n joins X: X fills at 12 / 3 = 4 (x1 = x2 = n = 4), so Y leaves
// y1 20 - 4 = 16 and Z leaves z1 50 - 16 - 10 = 24. w1 stays at 10, held by W, which no change
// reaches: the sweep leaves it alone, where the restart from X's level 4 (with its plain search)
// re-solves it too.
struct Chain {
  static constexpr topo::ChannelId kX = 0, kY = 1, kZ = 2, kW = 3;
  MaxMinSharing sharing{std::vector<double>{12, 20, 50, 10}};
  MaxMinSharing::FlowIndex x1, x2, y1, z1, w1;
  Chain() {
    x1 = sharing.add(std::vector<topo::ChannelId>{kX});
    x2 = sharing.add(std::vector<topo::ChannelId>{kX, kY});
    y1 = sharing.add(std::vector<topo::ChannelId>{kY, kZ});
    z1 = sharing.add(std::vector<topo::ChannelId>{kZ});
    w1 = sharing.add(std::vector<topo::ChannelId>{kZ, kW});
    sharing.update();
    REQUIRE(sharing.rate_Bps(x1) == 6);
    REQUIRE(sharing.rate_Bps(y1) == 14);
    REQUIRE(sharing.rate_Bps(z1) == 26);
    REQUIRE(sharing.rate_Bps(w1) == 10);
  }
};

TEST_CASE("the sweep re-solves only the flows that move") {
  Chain chain;
  const auto n = chain.sharing.add(std::vector<topo::ChannelId>{Chain::kX});
  const auto resolved = sorted(chain.sharing.update());
  CHECK(resolved ==
        std::vector<MaxMinSharing::FlowIndex>{chain.x1, chain.x2, chain.y1, chain.z1, n});
  CHECK(chain.sharing.rate_Bps(n) == 4);
  CHECK(chain.sharing.rate_Bps(chain.x2) == 4);
  CHECK(chain.sharing.rate_Bps(chain.y1) == 16);
  CHECK(chain.sharing.rate_Bps(chain.z1) == 24);
  CHECK(chain.sharing.rate_Bps(chain.w1) == 10);
  CHECK(chain.sharing.load_Bps(Chain::kZ) == 50);
  // n leaves: everything moves back, w1 still untouched.
  chain.sharing.remove(n);
  CHECK(sorted(chain.sharing.update()) ==
        std::vector<MaxMinSharing::FlowIndex>{chain.x1, chain.x2, chain.y1, chain.z1});
  CHECK(chain.sharing.rate_Bps(chain.y1) == 14);
  CHECK(chain.sharing.rate_Bps(chain.z1) == 26);
}

TEST_CASE("the restart re-solves every flow at or above its level") {
  Chain chain;
  chain.sharing.set_sweep_limit(0);
  chain.sharing.set_narrow_search_limit(0);
  const auto n = chain.sharing.add(std::vector<topo::ChannelId>{Chain::kX});
  CHECK(sorted(chain.sharing.update()) ==
        std::vector<MaxMinSharing::FlowIndex>{chain.x1, chain.x2, chain.y1, chain.z1, chain.w1, n});
  CHECK(chain.sharing.rate_Bps(chain.z1) == 24);
  CHECK(chain.sharing.rate_Bps(chain.w1) == 10);
}

// A = 4 carries a1, a2; B = 4 carries b1, b2; P = 5 carries a1 and b1. A and B fill at 2, leaving
// P at 4 of 5: it has room. a2 leaves: a1 rises from 2, and P, followed by a bound while it has
// room, fills where a1 + b1 = 5 with b1 held at 2 by B: a1 = 3, below A's 4.
TEST_CASE("a channel with room that a rising flow fills binds it") {
  MaxMinSharing sharing({4, 4, 5});
  const auto a1 = sharing.add(std::vector<topo::ChannelId>{0, 2});
  const auto a2 = sharing.add(std::vector<topo::ChannelId>{0});
  const auto b1 = sharing.add(std::vector<topo::ChannelId>{1, 2});
  sharing.add(std::vector<topo::ChannelId>{1});
  sharing.update();
  REQUIRE(sharing.rate_Bps(a1) == 2);
  REQUIRE(sharing.load_Bps(2) == 4);
  sharing.remove(a2);
  CHECK(sorted(sharing.update()) == std::vector<MaxMinSharing::FlowIndex>{a1});
  CHECK(sharing.rate_Bps(a1) == 3);
  CHECK(sharing.rate_Bps(b1) == 2);
  CHECK(sharing.load_Bps(2) == 5);
  CHECK(sharing.load_Bps(0) == 3);
}

}  // namespace
}  // namespace cs::net
