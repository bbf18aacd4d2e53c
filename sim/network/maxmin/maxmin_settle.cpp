// The sweep's flows (maxmin_sweep.cpp says why it works): a saturating channel freezes its open
// flows, a flow that freezes at a new rate touches every channel it crosses, and a flow that was
// bottlenecked where the level it froze at no longer binds rises.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "network/maxmin/maxmin.hpp"
#include "network/maxmin/maxmin_sweep.hpp"

namespace cs::net {

using sweep::event_key;
using sweep::finite_load;
using sweep::kCap;
using sweep::kSameWithin;

// The channel saturates: its open flows freeze.
void MaxMinSharing::saturate(topo::ChannelId channel, double level_Bps) {
  const ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  const Member* members = state.members.get();
  for (std::uint32_t m = state.written; m < state.member_count; ++m) {
    if (m + 2 < state.member_count) prefetch_uses(members[m + 2].flow);
    const auto flow = static_cast<std::size_t>(members[m].flow);
    if (members[m].multiplicity == 0 || flow_frozen_[flow] == visit_) continue;
    if (flow_visit_[flow] == visit_ || m >= state.first_open) settle(members[m].flow, level_Bps);
  }
}

// A changed flow's channel: touched at the level if no change reached it yet, by a bound if it has
// room (light: the caller counts the flow in), else exactly (counted: the touch read the flow as it
// stands); or, reached before, followed exactly or light.
MaxMinSharing::Reached MaxMinSharing::reach_use(topo::ChannelId channel, double level_Bps) {
  if (channel_visit_[static_cast<std::size_t>(channel)] != visit_) {
    if (touch_light(channel, level_Bps)) return Reached::light;
    touch(channel, level_Bps);
    return Reached::counted;
  }
  return channels_[static_cast<std::size_t>(channel)].light ? Reached::light : Reached::exact;
}

// The flow freezes at the level; if that moves it, every channel it crosses is touched.
void MaxMinSharing::settle(FlowIndex index, double level_Bps) {
  const auto i = static_cast<std::size_t>(index);
  const bool was_open = flow_visit_[i] == visit_;  // counted open where it was touched
  if (was_open) --open_changed_;
  flow_visit_[i] = visit_;
  flow_frozen_[i] = visit_;
  const double old_Bps = flow_rate_Bps_[i];
  const bool same =
      std::isfinite(old_Bps) && std::abs(level_Bps - old_Bps) <= kSameWithin * old_Bps;
  const double rate_Bps = same ? old_Bps : level_Bps;
  flow_new_rate_[i] = rate_Bps;
  component_flows_.push_back(index);
  const FlowState& flow = flows_[i];
  prefetch_channels(index);
  for (std::uint32_t u = flow.first_use; u < flow.first_use + flow.use_count; ++u) {
    if (followers_ > 0 && slot_pool_[u] == kFollowerUse) continue;
    const ChannelUse use = use_pool_[u];
    if (same && channel_visit_[static_cast<std::size_t>(use.channel)] != visit_) continue;
    const Reached reached = reach_use(use.channel, level_Bps);
    if (reached == Reached::counted) continue;
    ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
    if (reached == Reached::exact) {
      state.frozen_load_Bps += finite_load(use.multiplicity, rate_Bps);
      state.unfrozen_weight -= use.multiplicity;
      if (was_open) state.open_count -= static_cast<std::uint32_t>(use.multiplicity);
      continue;
    }
    // A light channel: the flow's load moves from its old rate to its new one. Its bound only
    // rises (up to rounding): a flow that froze lower leaves more room; an open one froze at the
    // level, not above the bound, and leaves the average. So it is checked only if its load
    // reached its capacity.
    if (was_open) {
      state.open_count -= static_cast<std::uint32_t>(use.multiplicity);
      light_of(state).open_old_Bps -= finite_load(use.multiplicity, old_Bps);
    }
    if (!same) {
      state.frozen_load_Bps +=
          finite_load(use.multiplicity, rate_Bps) - finite_load(use.multiplicity, old_Bps);
      if (full(state.frozen_load_Bps, state.capacity_Bps)) check_light(use.channel, level_Bps);
    }
  }
}

// The flow was bottlenecked at a channel that has not saturated at its old level: it rises.
void MaxMinSharing::raise(FlowIndex index, double level_Bps) {
  const auto i = static_cast<std::size_t>(index);
  flow_visit_[i] = visit_;
  ++open_changed_;
  const FlowState& flow = flows_[i];
  if (std::isfinite(flow.max_rate_Bps))
    heap_.push(Level{flow.max_rate_Bps, event_key(kCap, index)});
  const double old_Bps = flow_rate_Bps_[i];
  prefetch_channels(index);
  for (std::uint32_t u = flow.first_use; u < flow.first_use + flow.use_count; ++u) {
    if (followers_ > 0 && slot_pool_[u] == kFollowerUse) continue;
    const ChannelUse use = use_pool_[u];
    const Reached reached = reach_use(use.channel, level_Bps);
    if (reached == Reached::counted) continue;
    ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
    if (reached == Reached::exact) {
      state.open_count += static_cast<std::uint32_t>(use.multiplicity);
      consider(use.channel);
      continue;
    }
    state.open_count += static_cast<std::uint32_t>(use.multiplicity);
    light_of(state).open_old_Bps += finite_load(use.multiplicity, old_Bps);
    check_light(use.channel, level_Bps);
  }
}

}  // namespace cs::net
