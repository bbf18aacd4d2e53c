// The search of a re-solve (maxmin_solve.cpp says which flows it gathers and why): breadth-first
// from the changed channels through the flows at or above the restart level, each channel reached
// getting its solve scratch; and the software prefetches the search and the freezes share.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

// The most channels of one flow prefetched ahead: a route through a fabric (about 8), where a
// ring collective's flow crosses thousands, which would only evict each other.
constexpr std::uint32_t kPrefetchUses = 16;
// A narrow search prefetches once it has gathered this many flows (with fewer, prefetching
// slowed BM_MaxMinChange/1000 down by ~2%).
constexpr std::size_t kPrefetchFlowsFrom = 256;

}  // namespace

// Breadth-first search flows <-> channels from every changed channel. Each channel and flow
// reached gets its solve scratch and its candidate level (fair share, or cap). False (and the
// search abandoned) once it finds more than `flow_limit` flows.
bool MaxMinSharing::collect_component(double restart_Bps, std::size_t flow_limit) {
  ++visit_;
  if (narrow_ && !open_cursor_) {  // allocated by the first narrow search, written before read
    open_cursor_ = std::make_unique_for_overwrite<std::uint32_t[]>(channels_.size());
  }
  component_flows_.clear();
  component_channels_.clear();
  bounding_channels_.clear();
  open_flows_.clear();
  freeze_order_.clear();
  heap_.clear();
  shadow_hashes_.clear();
  shadowed_pairs_.clear();
  caps_.clear();
  for (topo::ChannelId c : dirty_channels_) {
    if (channel_visit_[static_cast<std::size_t>(c)] != visit_) reach(c, restart_Bps);
  }
  for (std::size_t next = 0; next < component_flows_.size(); ++next) {
    if (component_flows_.size() > flow_limit) return false;
    const FlowIndex index = component_flows_[next];
    const FlowState& flow = flows_[static_cast<std::size_t>(index)];
    const ChannelUse* use = use_pool_.data() + flow.first_use;
    // A small narrow search's flows stay in cache; a large one's use slots are read again when
    // its bounding channels are filled.
    if (!narrow_ || component_flows_.size() > kPrefetchFlowsFrom) {
      prefetch_uses(component_flows_, next + 4);
      if (narrow_) prefetch_slots(component_flows_, next + 4);
      prefetch_unvisited_channels(component_flows_, next + 1);
      for (const ChannelUse* end = use + std::min(flow.use_count, kPrefetchUses); use != end;
           ++use) {
        const ChannelState& state = channels_[static_cast<std::size_t>(use->channel)];
        if (channel_visit_[static_cast<std::size_t>(use->channel)] != visit_ &&
            state.member_count > 0) {  // its top members, which reach() reads first
          __builtin_prefetch(state.members.get() + state.member_count - 1);
        }
      }
      use = use_pool_.data() + flow.first_use;
    }
    for (const ChannelUse* end = use + flow.use_count; use != end; ++use) {
      if (channel_visit_[static_cast<std::size_t>(use->channel)] != visit_) {
        reach(use->channel, restart_Bps);
      }
      if (narrow_) {  // counts the uses of each bounding channel (bound_channels())
        std::uint32_t& cursor = open_cursor_[static_cast<std::size_t>(use->channel)];
        if (cursor != kNotBounding) ++cursor;
      }
    }
    if (std::isfinite(flow.max_rate_Bps)) caps_.push_back(Level{flow.max_rate_Bps, index});
  }
  // The heap holds the crossed channels' shares only, so far: in a narrow search, the few
  // changed ones.
  if (!narrow_) drop_shadowed_channels();
  if (narrow_) {
    bound_channels();
    for (topo::ChannelId c : component_channels_) {  // the crossed ones' freeze log
      std::uint32_t& cursor = open_cursor_[static_cast<std::size_t>(c)];
      if (cursor == kNotBounding) cursor = channels_[static_cast<std::size_t>(c)].first_open;
    }
    freeze_log_.resize(open_flows_.size());
  }
  return true;
}

// A channel the search crosses: its members below the restart level are kept (a prefix), the ones
// above it join the search. In the narrow search a channel neither changed nor marked bounds the
// search instead (bound()), and if it was full its top members join the search.
void MaxMinSharing::reach(topo::ChannelId channel, double restart_Bps) {
  channel_visit_[static_cast<std::size_t>(channel)] = visit_;
  if (narrow_) open_cursor_[static_cast<std::size_t>(channel)] = kNotBounding;  // unless bounding
  // A follower is left out (maxmin_bundles.cpp); marked visited, it is neither fetched ahead nor
  // looked up again.
  if (is_follower(channel)) return;
  sort_members(channel);
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  component_channels_.push_back(channel);
  state.crossed = !narrow_ || state.dirty || state.cross_mark == update_serial_;
  const Member* members = state.members.get();
  if (!state.crossed) {
    bounding_channels_.push_back(channel);
    open_cursor_[static_cast<std::size_t>(channel)] = 0;
    std::uint32_t top = state.member_count;
    if (top == 0 || !full(state.load_Bps, state.capacity_Bps)) return;
    const double top_Bps =
        std::max(restart_Bps, member_rate_Bps(members[top - 1]) * (1 - kFullWithin));
    for (; top > 0 && member_rate_Bps(members[top - 1]) >= top_Bps; --top)
      discover(members[top - 1].flow);
    return;
  }
  std::uint32_t kept = state.member_count;
  std::int32_t open_weight = 0;
  std::uint32_t hash = 0;
  state.first_open = static_cast<std::uint32_t>(open_flows_.size());
  while (kept > 0 && member_rate_Bps(members[kept - 1]) >= restart_Bps) {
    const Member member = members[--kept];
    hash = (hash ^ static_cast<std::uint32_t>(member.flow)) * 0x9E3779B1U +
           static_cast<std::uint32_t>(member.multiplicity);
    if (member.multiplicity == 0) continue;  // removed since the last update
    open_flows_.push_back(member.flow);
    open_weight += member.multiplicity;
    discover(member.flow);
  }
  state.written = kept;
  state.frozen_load_Bps = kept == 0 ? 0.0 : members[kept - 1].prefix_load_Bps;
  if (!narrow_) state.load_Bps = state.frozen_load_Bps;  // the plain solve writes as it goes
  const std::size_t queued = heap_.size();
  open(channel, open_weight);
  if (heap_.size() != queued) shadow_hashes_.push_back(hash);
}

// Software prefetches for the search and the freezes, which walk flows in an order the hardware
// cannot guess: a flow's uses a few flows ahead, then the channels it will reach.
void MaxMinSharing::prefetch_uses(FlowIndex index) const {
  __builtin_prefetch(use_pool_.data() + flows_[static_cast<std::size_t>(index)].first_use);
}
void MaxMinSharing::prefetch_uses(const std::vector<FlowIndex>& flows, std::size_t at) const {
  if (at < flows.size()) prefetch_uses(flows[at]);
}
void MaxMinSharing::prefetch_slots(const std::vector<FlowIndex>& flows, std::size_t at) const {
  if (at < flows.size())
    __builtin_prefetch(slot_pool_.data() + flows_[static_cast<std::size_t>(flows[at])].first_use);
}
void MaxMinSharing::prefetch_channels(FlowIndex index) const {
  const FlowState& flow = flows_[static_cast<std::size_t>(index)];
  const ChannelUse* use = use_pool_.data() + flow.first_use;
  for (const ChannelUse* end = use + std::min(flow.use_count, kPrefetchUses); use != end; ++use) {
    __builtin_prefetch(&channels_[static_cast<std::size_t>(use->channel)]);
  }
}
void MaxMinSharing::prefetch_unvisited_channels(const std::vector<FlowIndex>& flows,
                                                std::size_t at) const {
  if (at >= flows.size()) return;
  const FlowState& flow = flows_[static_cast<std::size_t>(flows[at])];
  const ChannelUse* use = use_pool_.data() + flow.first_use;
  for (const ChannelUse* end = use + std::min(flow.use_count, kPrefetchUses); use != end; ++use) {
    const auto c = static_cast<std::size_t>(use->channel);
    if (channel_visit_[c] != visit_) __builtin_prefetch(&channels_[c]);
  }
}

void MaxMinSharing::discover(FlowIndex flow) {
  std::uint32_t& visited = flow_visit_[static_cast<std::size_t>(flow)];
  if (visited != visit_) {
    visited = visit_;
    component_flows_.push_back(flow);
  }
}

}  // namespace cs::net
