// The solve of a fresh batch: flows added on channels that list no member (a collective's flows
// starting together, a one-shot solve). Every flow the change reaches is then one of the added
// ones, and all of them are re-solved, so there is no restart level to find and no search to run:
// one progressive filling over the added flows, as the plain search would do it, without first
// listing them with no rate and reading the lists back. Their open lists come straight from their
// uses, in the order the plain search would read them (the reverse of the order added), so the
// rates and lists are the plain search's, bit for bit.
#include <algorithm>
#include <cmath>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {

bool MaxMinSharing::fresh_batch() const {
  return std::all_of(dirty_channels_.begin(), dirty_channels_.end(), [this](topo::ChannelId c) {
    return channels_[static_cast<std::size_t>(c)].member_count == 0;
  });
}

// With count_added_flows() done: each added flow once, each counted channel's `written` its number
// of added flows and `unfrozen_weight` their summed multiplicity.
void MaxMinSharing::solve_fresh_batch() {
  ++visit_;
  restart_cap_Bps_ = std::numeric_limits<double>::infinity();
  narrow_ = false;
  component_flows_.clear();
  component_channels_.clear();
  heap_.clear();
  caps_.clear();
  reserve_slots();
  std::size_t open_end = 0;
  for (topo::ChannelId c : scratch_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    channel_visit_[static_cast<std::size_t>(c)] = visit_;
    state.first_open = static_cast<std::uint32_t>(open_end);
    open_end += state.written;
    state.open_count = 0;
    state.written = 0;  // from here: the next member slot to write
    state.frozen_load_Bps = 0;
    state.load_Bps = 0;
    component_channels_.push_back(c);
  }
  open_flows_.resize(open_end);
  for (auto flow = added_flows_.rbegin(); flow != added_flows_.rend(); ++flow) {
    const FlowState& added = flows_[static_cast<std::size_t>(*flow)];
    for (std::uint32_t u = added.first_use; u < added.first_use + added.use_count; ++u) {
      const topo::ChannelId c = use_pool_[u].channel;
      if (is_follower(c)) {  // left out
        slot_pool_[u] = kFollowerUse;
        continue;
      }
      ChannelState& state = channels_[static_cast<std::size_t>(c)];
      open_flows_[state.first_open + state.open_count++] = *flow;
    }
  }
  for (FlowIndex index : added_flows_) {
    flow_visit_[static_cast<std::size_t>(index)] = visit_;
    component_flows_.push_back(index);
    const double max_rate_Bps = flows_[static_cast<std::size_t>(index)].max_rate_Bps;
    if (std::isfinite(max_rate_Bps)) caps_.push_back(Level{max_rate_Bps, index});
  }
  for (topo::ChannelId c : component_channels_) queue_level(c);
  solve_component(0.0);
  for (topo::ChannelId c : component_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    state.member_count = state.written;
    state.written = 0;
  }
  for (topo::ChannelId c : dirty_channels_) channels_[static_cast<std::size_t>(c)].dirty = false;
  dirty_channels_.clear();
  scratch_channels_.clear();
  added_flows_.clear();
}

}  // namespace cs::net
