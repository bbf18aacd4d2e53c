// The restart level of an update: a level below which the changes since the last update move no
// rate, so that the flows frozen below it keep their rates and the solve restarts from it
// (maxmin_solve.cpp).
//
// Why, in exact arithmetic, comparing the last filling (old) with the filling after the changes
// (new): the two run alike until some changed channel saturates in one and not in the other, since
// a channel no change touches sees the same flows at the same levels until then. So it is enough
// to bound, for each changed channel c, the first level where that can happen:
// - in the old filling c saturated, if it did, at the highest rate among its members;
// - in the new one c carries at level L at most load_old(L) + W L, where load_old(L) sums
//   m min(rate, L) over its old members (removed ones too, where still listed: more load gives an
//   earlier, safe bound; a list a sweep left unsorted is sorted at the start of update(), which
//   drops them, and the bound without them holds as well)
//   and W is the multiplicity of the flows added on it; c cannot saturate before that reaches its
//   capacity. load_old is piecewise linear over the members sorted by rate, so the crossing is
//   found by scanning them down from the top, and the scan stops where the re-solve begins.
// An added flow's rate is at least the least of these bounds and its own cap, so every re-solved
// rate lies at or above the restart level and the members stay sorted by rate.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

// The capacity left below the crossing is cut by a few units of the capacity's rounding, so that
// the subtraction's own rounding never lifts the bound above the exact one.
constexpr double kRoundingCut = 4 * DBL_EPSILON;

}  // namespace

double MaxMinSharing::restart_level_Bps() {
  double level = restart_cap_Bps_;
  restart_cap_Bps_ = std::numeric_limits<double>::infinity();
  for (topo::ChannelId c : dirty_channels_) {
    level = std::min(level, unmoved_below_Bps(channels_[static_cast<std::size_t>(c)]));
  }
  return level;
}

// The bound for one changed channel, with the flows added on it counted in (count_added_flows()).
double MaxMinSharing::unmoved_below_Bps(const ChannelState& state) const {
  const Member* members = state.members.get();
  std::uint32_t below = state.member_count;
  double level = std::numeric_limits<double>::infinity();
  if (below > 0 && full(state.load_Bps, state.capacity_Bps)) {
    level = member_rate_Bps(members[below - 1]);
  }
  if (state.written == 0 || !std::isfinite(state.capacity_Bps)) return level;
  // Weight rising with the level above the crossing: the added flows and the members above it.
  auto above = static_cast<double>(state.unfrozen_weight);
  while (below > 0 &&
         !(members[below - 1].prefix_load_Bps + member_rate_Bps(members[below - 1]) * above <
           state.capacity_Bps)) {
    --below;
    above += members[below].multiplicity;
  }
  const double prefix_load = below == 0 ? 0.0 : members[below - 1].prefix_load_Bps;
  const double left = state.capacity_Bps * (1 - kRoundingCut) - prefix_load;
  return std::min(level, std::max(0.0, left) / above);
}

}  // namespace cs::net
