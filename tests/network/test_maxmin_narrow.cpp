// The narrow search's shortcuts on hand-built cases: a bounding channel's kept load taken from its
// record (with room) or summed from its lowest re-solved slot (full), and the in-place merge that
// moves a kept member to another slot. Each case forces the narrow search; a wrong kept load
// gives the re-solved flow another share, and a kept member's stale slot sends a later removal to
// the wrong entry.
#include <doctest/doctest.h>

#include <cstddef>
#include <limits>
#include <vector>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

constexpr topo::ChannelId kX = 0;  // where the new flow joins
constexpr topo::ChannelId kY = 1;  // the re-solved flow's other channel: it bounds the search
constexpr topo::ChannelId kZ = 2;  // the kept flow's bottleneck

// Flows s (X, Y), t (X) and k (Y, Z) on X = 10, Y = `y_capacity`, Z = 4 B/s. k gets 4 (Z alone
// holds it to 4); s and t share X at 5 each, which on Y leaves y_capacity - 5 >= 4 for k. Then n
// joins X alone: the restart level is X's 10/3 (at level L, X would carry s, t and n: 3L = 10),
// the search crosses X (s, t, n re-solved) and reaches Y through s, where k (4, above 10/3) is
// kept. Y bounds s by y_capacity - 4, at least 5, so s, t and n share X: 10/3 each.
struct BoundingCase {
  MaxMinSharing sharing;
  MaxMinSharing::FlowIndex s, t, k, n;

  explicit BoundingCase(double y_capacity) : sharing({10.0, y_capacity, 4.0}) {
    sharing.set_narrow_search_limit(std::numeric_limits<std::size_t>::max());
    sharing.set_sweep_limit(0);  // the restart and its narrow search, not the sweep
    const std::vector<topo::ChannelId> s_path{kX, kY}, t_path{kX}, k_path{kY, kZ};
    s = sharing.add(s_path);
    t = sharing.add(t_path);
    k = sharing.add(k_path);
    sharing.update();
    REQUIRE(sharing.rate_Bps(k) == 4.0);
    REQUIRE(sharing.rate_Bps(s) == 5.0);
    REQUIRE(sharing.rate_Bps(t) == 5.0);
    const std::vector<topo::ChannelId> n_path{kX};
    n = sharing.add(n_path);
    sharing.update();
  }

  void check_shared_x() const {
    CHECK(sharing.rate_Bps(s) == doctest::Approx(10.0 / 3));
    CHECK(sharing.rate_Bps(t) == doctest::Approx(10.0 / 3));
    CHECK(sharing.rate_Bps(n) == doctest::Approx(10.0 / 3));
    CHECK(sharing.rate_Bps(k) == 4.0);
    CHECK(sharing.load_Bps(kY) == doctest::Approx(10.0 / 3 + 4));
  }
};

TEST_CASE("narrow search: a bounding channel with room keeps its kept flow's load") {
  // Y = 10: before n, Y carries 5 + 4 = 9, room. Its kept load is its load less s's old one,
  // 9 - 5 = 4: s may take up to 10 - 4 = 6 there. Had s's old load not been taken off (9), Y
  // would hold s to 1 and t, n would share X's other 9: 4.5 each.
  BoundingCase bounding(10.0);
  bounding.check_shared_x();
}

TEST_CASE("narrow search: a bounding channel with room limits the flows that rise") {
  // X = 12 carries s, t and u; Y = 10 carries s and k; Z = 5 carries k. k gets 5 (Z), s, t and u
  // 4 each (X), and Y carries 4 + 5 = 9: room. When u leaves, the search crosses X (s and t
  // re-solved) and bounds on Y, whose kept load is 9 - 4 = 5: s may take 10 - 5 = 5 there, less
  // than X's 6, so Y binds s at 5 and t takes X's other 7. Y is then full with k at 5, not above
  // s, so no second round: a kept load taken too low would let s rise to 6 and overload Y.
  MaxMinSharing sharing({12.0, 10.0, 5.0});
  sharing.set_narrow_search_limit(std::numeric_limits<std::size_t>::max());
  sharing.set_sweep_limit(0);
  const std::vector<topo::ChannelId> s_path{kX, kY}, x_path{kX}, k_path{kY, kZ};
  const auto s = sharing.add(s_path);
  const auto t = sharing.add(x_path);
  const auto u = sharing.add(x_path);
  const auto k = sharing.add(k_path);
  sharing.update();
  REQUIRE(sharing.rate_Bps(s) == 4.0);
  REQUIRE(sharing.rate_Bps(k) == 5.0);
  sharing.remove(u);
  sharing.update();
  CHECK(sharing.rate_Bps(s) == doctest::Approx(5.0));
  CHECK(sharing.rate_Bps(t) == doctest::Approx(7.0));
  CHECK(sharing.rate_Bps(k) == 5.0);
  CHECK(sharing.load_Bps(kY) <= 10.0 * (1 + 1e-12));
}

TEST_CASE("narrow search: a full bounding channel sums its kept members") {
  // Y = 9: before n, Y carries 5 + 4 = 9, full (s is bottlenecked on X and Y at once). Its kept
  // load is summed from s's slot: the prefix below it, k's 4. s may take up to 9 - 4 = 5 there.
  BoundingCase bounding(9.0);
  bounding.check_shared_x();
}

TEST_CASE("narrow merge: a kept member that moves keeps its slot in its flow's uses") {
  // Y's members in rate order were k (4), s (5); s falls to 10/3 and moves below k, so k moves
  // from the first slot to the second. Removing k must then drop k's entry, not s's: Y's list
  // keeps s alone, Y carries 10/3, and s, t, n keep 10/3 (X still binds them).
  BoundingCase bounding(10.0);
  MaxMinSharing& sharing = bounding.sharing;
  REQUIRE(sharing.members(kY).size() == 2);
  CHECK(sharing.members(kY)[0].flow == bounding.s);
  CHECK(sharing.members(kY)[1].flow == bounding.k);
  sharing.remove(bounding.k);
  sharing.update();
  REQUIRE(sharing.members(kY).size() == 1);
  CHECK(sharing.members(kY)[0].flow == bounding.s);
  CHECK(sharing.members(kY)[0].multiplicity == 1);  // not taken for the removed k's entry
  CHECK(sharing.load_Bps(kY) == doctest::Approx(10.0 / 3));
  CHECK(sharing.rate_Bps(bounding.s) == doctest::Approx(10.0 / 3));
  // Then t leaves: s and n share X, 5 each, and Y carries s's 5.
  sharing.remove(bounding.t);
  sharing.update();
  CHECK(sharing.rate_Bps(bounding.s) == doctest::Approx(5.0));
  CHECK(sharing.rate_Bps(bounding.n) == doctest::Approx(5.0));
  CHECK(sharing.load_Bps(kY) == doctest::Approx(5.0));
}

}  // namespace
}  // namespace cs::net
