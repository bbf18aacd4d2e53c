// Progressive filling from a restart level. All unfrozen flows share one rising water level; the
// next event is the smallest of (a channel's remaining capacity / the summed multiplicity of its
// unfrozen flows) and (an unfrozen flow's cap). The channel (or cap) that binds freezes its flows
// at that level. A channel's fair share only rises as other flows freeze, so the heap keeps stale,
// lower entries and re-pushes them with the current share when popped (lazy invalidation).
//
// The restart: the changes since the last update cannot move any rate below a level L
// (maxmin_restart.cpp says why). Up to L the filling runs
// as it did last time, so every flow frozen below L keeps its rate, and what is left is the same
// filling, from L, of the flows at or above L over what the kept flows leave of each channel. In
// that residual problem the parts not connected to a changed channel are unchanged too, so the
// flows to re-solve are found by a search from the changed channels that crosses only flows at or
// above L. Both cuts are exact: the same rates as a full solve, up to rounding order.
// Each channel's members are kept in ascending order of rate (the order they froze in: levels
// never fall, which the solve enforces against rounding), so the kept flows are a prefix, their
// load is one stored prefix sum, and the search scans a channel's list from the back down to L.
//
// Cost per update: O(P log C) for the P uses (flow x channel) of the re-solved flows over the C
// channels they cross, plus one pass over the members of those channels at or above L; the flows
// kept below L and the rest of the fabric are not touched.
//
// Measured and dropped (BM_FlowNetworkChange, 10k flows on the fat tree, ~5.1k re-solved per
// update): a search that crosses only changed or full channels, keeps the other flows above L and
// re-runs when a kept flow ends above a re-solved one on a channel that filled up, re-solves 2.8k
// flows but costs more per flow (merging kept and re-solved members, repeated rounds): 3.7 vs
// 3.0 ms per iteration (25x faster at 1k flows, where the cascade is small); sorted share arrays
// in place of the heap: no difference.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "network/maxmin.hpp"

namespace cs::net {

// Breadth-first search flows <-> channels from every changed channel, through flows at or above
// the restart level. Each channel and flow reached gets its solve scratch and its candidate level
// (fair share, or cap) on the way.
void MaxMinSharing::collect_component(double restart_Bps) {
  ++visit_;
  component_flows_.clear();
  component_channels_.clear();
  open_flows_.clear();
  heap_.clear();
  caps_.clear();
  for (topo::ChannelId c : dirty_channels_) {
    channels_[static_cast<std::size_t>(c)].dirty = false;
    if (channels_[static_cast<std::size_t>(c)].visit != visit_) reach(c, restart_Bps);
  }
  dirty_channels_.clear();
  for (std::size_t next = 0; next < component_flows_.size(); ++next) {
    const FlowIndex index = component_flows_[next];
    const FlowState& flow = flows_[static_cast<std::size_t>(index)];
    const ChannelUse* use = use_pool_.data() + flow.first_use;
    for (const ChannelUse* end = use + flow.use_count; use != end; ++use) {
      if (channels_[static_cast<std::size_t>(use->channel)].visit != visit_) {
        reach(use->channel, restart_Bps);
      }
    }
    if (std::isfinite(flow.max_rate_Bps)) caps_.push_back(Level{flow.max_rate_Bps, index});
  }
}

// Splits the channel's members into the kept prefix (rates below the restart level) and the open
// flows above it, which join the search.
void MaxMinSharing::reach(topo::ChannelId channel, double restart_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  state.visit = visit_;
  const Member* members = member_pool_.data() + state.first_slot;
  std::uint32_t kept = state.member_count;
  std::int32_t open_weight = 0;
  state.first_open = static_cast<std::uint32_t>(open_flows_.size());
  while (kept > 0 && members[kept - 1].rate_Bps >= restart_Bps) {
    const Member member = members[--kept];
    if (member.multiplicity == 0) continue;  // removed since the last update
    open_flows_.push_back(member.flow);
    open_weight += member.multiplicity;
    std::uint32_t& visited = flow_visit_[static_cast<std::size_t>(member.flow)];
    if (visited != visit_) {
      visited = visit_;
      component_flows_.push_back(member.flow);
    }
  }
  state.open_count = static_cast<std::uint32_t>(open_flows_.size()) - state.first_open;
  state.written = kept;
  state.frozen_load_Bps = kept == 0 ? 0.0 : members[kept - 1].prefix_load_Bps;
  state.load_Bps = state.frozen_load_Bps;
  state.unfrozen_weight = open_weight;
  component_channels_.push_back(channel);
  if (state.open_count == 0) return;
  const double share =
      std::max(0.0, state.capacity_Bps - state.frozen_load_Bps) / static_cast<double>(open_weight);
  // A channel left to one open flow is that flow's private cap: on sparse fabrics most channels
  // are, so this keeps the heap to the shared channels.
  if (state.open_count == 1) {
    caps_.push_back(Level{share, open_flows_.back()});
  } else {
    heap_.push_unordered(Level{share, channel});
  }
}

void MaxMinSharing::solve_component(double restart_Bps) {
  // Caps never change during a solve, so they wait in one sorted array and merge with the heap
  // of channel shares, which keeps the heap to the channels.
  std::sort(caps_.begin(), caps_.end(), Lower{});
  std::size_t next_cap = 0;
  heap_.build();
  // Levels never fall in exact arithmetic; the floor keeps rounding from breaking the members'
  // rate order.
  double floor_Bps = std::isfinite(restart_Bps) ? restart_Bps : 0.0;
  std::size_t frozen = 0;
  while (frozen < component_flows_.size() && (!heap_.empty() || next_cap < caps_.size())) {
    if (!heap_.empty()) {
      const Level level = heap_.top();
      const ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
      if (state.unfrozen_weight == 0) {  // every flow on it froze elsewhere
        heap_.pop();
        continue;
      }
      const double share = std::max(0.0, state.capacity_Bps - state.frozen_load_Bps) /
                           static_cast<double>(state.unfrozen_weight);
      if (share != level.rate_Bps) {  // stale: the share rose since this entry was pushed
        heap_.replace_top(Level{share, level.key});
        continue;
      }
    }
    if (next_cap < caps_.size() && (heap_.empty() || Lower{}(caps_[next_cap], heap_.top()))) {
      const auto index = static_cast<FlowIndex>(caps_[next_cap].key);
      if (flow_frozen_[static_cast<std::size_t>(index)] != visit_) {
        floor_Bps = std::max(floor_Bps, caps_[next_cap].rate_Bps);
        freeze(index, floor_Bps);
        ++frozen;
      }
      ++next_cap;
      continue;
    }
    const Level level = heap_.top();
    heap_.pop();
    floor_Bps = std::max(floor_Bps, level.rate_Bps);
    // The channel saturates: freeze its open flows.
    const ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
    const FlowIndex* open = open_flows_.data() + state.first_open;
    for (const FlowIndex* end = open + state.open_count; open != end; ++open) {
      if (flow_frozen_[static_cast<std::size_t>(*open)] != visit_) {
        freeze(*open, floor_Bps);
        ++frozen;
      }
    }
  }
  CS_ASSERT(frozen == component_flows_.size(),
            "progressive filling left " + std::to_string(component_flows_.size() - frozen) +
                " flows without a rate");
  for (topo::ChannelId c : component_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    state.member_count = state.written;  // removed flows' entries drop off the end
    state.written = 0;
  }
}

// Gives the flow its rate and writes it next in each of its channels' member lists, with the
// channel's load so far.
void MaxMinSharing::freeze(FlowIndex index, double rate_Bps) {
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  flow_frozen_[static_cast<std::size_t>(index)] = visit_;
  flow.rate_Bps = rate_Bps;
  for (std::uint32_t u = 0; u < flow.use_count; ++u) {
    const ChannelUse use = use_pool_[flow.first_use + u];
    ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
    const double load = use.multiplicity * rate_Bps;
    if (std::isfinite(load)) state.frozen_load_Bps += load;
    state.load_Bps += load;
    state.unfrozen_weight -= use.multiplicity;
    const std::uint32_t slot = state.written++;
    const std::size_t at = state.first_slot + slot;
    member_pool_[at] = Member{index, use.multiplicity, rate_Bps, state.frozen_load_Bps};
    slot_pool_[flow.first_use + u] = slot;
  }
}

}  // namespace cs::net
