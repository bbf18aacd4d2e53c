// The sweep's light channels (maxmin_sweep.cpp): a channel that had room in the last solve is
// followed by a lower bound on the level it can fill at, without reading its members, until the
// sweep reaches that bound or the channel's load reaches its capacity.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "network/maxmin/maxmin.hpp"
#include "network/maxmin/maxmin_sweep.hpp"

namespace cs::net {

using sweep::froze_below;

// A channel touched where it had room in the last solve: while no change can fill it, it is
// followed by a bound alone, without reading its members. Its state: frozen_load_Bps is its load
// with each frozen changed flow at its new rate and every other flow at its old one, open_count
// and light_ the summed multiplicity and multiplicity x old rate of its open changed flows. It
// cannot fill below (capacity - load + open old load) / open weight: at the level L it fills at,
// its open changed flows carry at most L each and every other flow no more than its old rate.
bool MaxMinSharing::touch_light(topo::ChannelId channel, double level_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (!std::isfinite(state.capacity_Bps) || full(state.load_Bps, state.capacity_Bps)) return false;
  channel_visit_[static_cast<std::size_t>(channel)] = visit_;
  component_channels_.push_back(channel);
  state.light = true;
  state.crossed = false;
  state.frozen_load_Bps = state.load_Bps;
  state.open_count = 0;
  state.unfrozen_weight = 0;
  state.first_open = static_cast<std::uint32_t>(light_.size());  // its light_ entry, in touch order
  light_.push_back(LightScratch{0.0, std::numeric_limits<double>::infinity(), level_Bps, false});
  return true;
}

// Queues a light channel's bound where it fell, or follows the channel exactly from here once the
// bound reaches the level (or its load reaches its capacity).
void MaxMinSharing::check_light(topo::ChannelId channel, double level_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  const bool filled = full(state.frozen_load_Bps, state.capacity_Bps);
  if (state.open_count == 0 && !filled) return;
  LightScratch& light = light_of(state);
  const double bound_Bps = filled
                               ? 0.0
                               : (state.capacity_Bps - state.frozen_load_Bps + light.open_old_Bps) /
                                     static_cast<double>(state.open_count);
  if (bound_Bps <= level_Bps) {
    follow_exactly(channel, level_Bps);
  } else if (bound_Bps < light.queued_Bps) {
    if (light.in_heap) {
      light_heap_.push(Level{bound_Bps, channel});
    } else {
      if (std::isinf(light.queued_Bps)) far_light_.push_back(channel);
      far_below_Bps_ = std::min(far_below_Bps_, bound_Bps);
    }
    light.queued_Bps = bound_Bps;
  }
}

// The sweep reached the least bound queued in far_light_: the channels there that still have open
// changed flows move to light_heap_, the rest drop out. Most bounds lie far above the levels an
// update moves through, so most channels never pass through the heap.
void MaxMinSharing::queue_far_light() {
  for (topo::ChannelId c : far_light_) {
    const ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (!state.light) continue;
    LightScratch& light = light_of(state);
    if (state.open_count == 0) {
      light.queued_Bps = std::numeric_limits<double>::infinity();
      continue;
    }
    light.in_heap = true;
    light_heap_.push(Level{light.queued_Bps, c});
  }
  far_light_.clear();
  far_below_Bps_ = std::numeric_limits<double>::infinity();
}

// A light channel's region, found when needed rather than when touched: its members from the
// level it was touched at, and every changed one (all of those lie there). Before commit_sweep()
// writes the new rates, or after: an unchanged member's rate is its old one either way.
void MaxMinSharing::find_region(ChannelState& state, double touched_at_Bps) const {
  const Member* members = state.members.get();
  std::uint32_t below = state.member_count;
  for (; below > 0; --below) {
    const auto flow = static_cast<std::size_t>(members[below - 1].flow);
    if (flow_visit_[flow] != visit_ && froze_below(flow_rate_Bps_[flow], touched_at_Bps)) break;
  }
  state.written = below;
}

}  // namespace cs::net
