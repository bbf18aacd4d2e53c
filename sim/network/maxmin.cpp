// Progressive filling over the connected component of a change. All unfrozen flows share one rising
// water level; the next event is the smallest of (a channel's remaining capacity / the summed
// multiplicity of its unfrozen flows) and (an unfrozen flow's cap). The channel (or cap) that
// binds freezes its flows at that level. A channel's fair share only rises as other flows freeze,
// so the heap keeps stale, lower entries and re-pushes them with the current share when popped
// (lazy invalidation): each solve costs O((sum of path lengths) log L).
#include "network/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace cs::net {

std::vector<ChannelUse> count_channel_uses(std::span<const topo::ChannelId> channels) {
  std::vector<topo::ChannelId> sorted(channels.begin(), channels.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<ChannelUse> uses;
  for (topo::ChannelId channel : sorted) {
    if (!uses.empty() && uses.back().channel == channel) {
      ++uses.back().multiplicity;
    } else {
      uses.push_back(ChannelUse{channel, 1});
    }
  }
  return uses;
}

double solo_rate_Bps(std::span<const double> capacity_Bps, std::span<const ChannelUse> uses,
                     double max_rate_Bps) {
  double rate = max_rate_Bps;
  for (const ChannelUse& use : uses) {
    rate = std::min(rate, capacity_Bps[static_cast<std::size_t>(use.channel)] /
                              static_cast<double>(use.multiplicity));
  }
  return rate;
}

MaxMinSharing::MaxMinSharing(std::vector<double> capacity_Bps) {
  channels_.resize(capacity_Bps.size());
  members_.resize(capacity_Bps.size());
  for (std::size_t c = 0; c < capacity_Bps.size(); ++c) {
    CS_ASSERT(capacity_Bps[c] >= 0, "channel " + std::to_string(c) + " has negative capacity");
    channels_[c].capacity_Bps = capacity_Bps[c];
  }
}

MaxMinSharing::FlowIndex MaxMinSharing::add(std::span<const topo::ChannelId> channels,
                                            double max_rate_Bps) {
  CS_ASSERT(max_rate_Bps >= 0, "a flow's max rate must not be negative");
  FlowIndex index;
  if (free_flows_.empty()) {
    index = static_cast<FlowIndex>(flows_.size());
    flows_.emplace_back();
    flow_visit_.push_back(0);
    flow_frozen_.push_back(0);
  } else {
    index = free_flows_.back();
    free_flows_.pop_back();
  }
  const std::vector<ChannelUse> counted = count_channel_uses(channels);
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  flow.max_rate_Bps = max_rate_Bps;
  flow.rate_Bps = 0;
  flow.active = true;
  flow.first_use = static_cast<std::uint32_t>(use_pool_.size());
  flow.use_count = static_cast<std::uint32_t>(counted.size());
  for (std::size_t u = 0; u < counted.size(); ++u) {
    const ChannelUse use = counted[u];
    CS_ASSERT(use.channel >= 0 && use.channel < channel_count(),
              "channel id " + std::to_string(use.channel) + " out of range");
    auto& members = members_[static_cast<std::size_t>(use.channel)];
    use_pool_.push_back(use);
    member_index_pool_.push_back(static_cast<std::int32_t>(members.size()));
    members.push_back(Member{index, use.multiplicity, static_cast<std::int32_t>(u)});
    channels_[static_cast<std::size_t>(use.channel)].total_weight += use.multiplicity;
    ++channels_[static_cast<std::size_t>(use.channel)].flow_count;
    mark_dirty(use.channel);
  }
  if (counted.empty()) added_without_channels_.push_back(index);
  ++active_flows_;
  return index;
}

void MaxMinSharing::remove(FlowIndex index) {
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  CS_ASSERT(flow.active, "flow " + std::to_string(index) + " removed twice");
  for (std::uint32_t u = 0; u < flow.use_count; ++u) {
    const ChannelUse use = use_pool_[flow.first_use + u];
    auto& members = members_[static_cast<std::size_t>(use.channel)];
    const auto position = static_cast<std::size_t>(member_index_pool_[flow.first_use + u]);
    members[position] = members.back();
    members.pop_back();
    if (position < members.size()) {  // the moved member tells its flow where it now lives
      const Member& moved = members[position];
      const FlowState& owner = flows_[static_cast<std::size_t>(moved.flow)];
      member_index_pool_[owner.first_use + static_cast<std::uint32_t>(moved.use_index)] =
          static_cast<std::int32_t>(position);
    }
    channels_[static_cast<std::size_t>(use.channel)].total_weight -= use.multiplicity;
    --channels_[static_cast<std::size_t>(use.channel)].flow_count;
    mark_dirty(use.channel);
  }
  dead_uses_ += flow.use_count;
  flow.use_count = 0;
  flow.active = false;
  free_flows_.push_back(index);
  --active_flows_;
  if (dead_uses_ > 4096 && dead_uses_ > use_pool_.size() / 2) compact_pools();
}

// Drops the pool entries of removed flows, keeping live flows' entries in flow index order.
void MaxMinSharing::compact_pools() {
  std::vector<ChannelUse> uses;
  std::vector<std::int32_t> member_index;
  uses.reserve(use_pool_.size() - dead_uses_);
  member_index.reserve(use_pool_.size() - dead_uses_);
  for (FlowState& flow : flows_) {
    const std::uint32_t first = static_cast<std::uint32_t>(uses.size());
    for (std::uint32_t u = 0; u < flow.use_count; ++u) {
      uses.push_back(use_pool_[flow.first_use + u]);
      member_index.push_back(member_index_pool_[flow.first_use + u]);
    }
    flow.first_use = first;
  }
  use_pool_ = std::move(uses);
  member_index_pool_ = std::move(member_index);
  dead_uses_ = 0;
}

void MaxMinSharing::mark_dirty(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (!state.dirty) {
    state.dirty = true;
    dirty_channels_.push_back(channel);
  }
}

std::span<const MaxMinSharing::FlowIndex> MaxMinSharing::update() {
  collect_component();
  solve_component();
  for (FlowIndex index : added_without_channels_) {
    FlowState& flow = flows_[static_cast<std::size_t>(index)];
    if (!flow.active) continue;  // added and removed again before this update
    flow.rate_Bps = flow.max_rate_Bps;
    component_flows_.push_back(index);
  }
  added_without_channels_.clear();
  return component_flows_;
}

// Breadth-first search flows <-> channels from every dirty channel. Each channel and flow
// reached gets its solve scratch and its heap entry (fair share, or cap) on the way.
void MaxMinSharing::collect_component() {
  ++visit_;
  component_flows_.clear();
  component_channels_.clear();
  heap_.clear();
  caps_.clear();
  const auto reach = [&](topo::ChannelId c) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    state.visit = visit_;
    state.remaining_Bps = state.capacity_Bps;
    state.unfrozen_weight = state.total_weight;
    state.load_Bps = 0;
    // A channel with one flow on it is that flow's private cap (see below), not a heap entry.
    if (state.flow_count > 1) {
      heap_.push_unordered(Level{state.capacity_Bps / static_cast<double>(state.total_weight), c});
    }
    component_channels_.push_back(c);
  };
  for (topo::ChannelId c : dirty_channels_) {
    channels_[static_cast<std::size_t>(c)].dirty = false;
    if (channels_[static_cast<std::size_t>(c)].visit != visit_) reach(c);
  }
  dirty_channels_.clear();
  for (std::size_t next = 0; next < component_channels_.size(); ++next) {
    for (const Member& member : members_[static_cast<std::size_t>(component_channels_[next])]) {
      std::uint32_t& visited = flow_visit_[static_cast<std::size_t>(member.flow)];
      if (visited == visit_) continue;
      visited = visit_;
      component_flows_.push_back(member.flow);
      const FlowState& flow = flows_[static_cast<std::size_t>(member.flow)];
      // The flow's cap: its max rate and the share of every channel it has to itself. On sparse
      // fabrics most channels carry one flow, so this keeps the heap to the shared channels.
      double cap = flow.max_rate_Bps;
      const ChannelUse* use = use_pool_.data() + flow.first_use;
      for (const ChannelUse* end = use + flow.use_count; use != end; ++use) {
        const auto c = static_cast<std::size_t>(use->channel);
        if (channels_[c].flow_count == 1) {
          cap = std::min(cap, channels_[c].capacity_Bps / static_cast<double>(use->multiplicity));
        }
        if (channels_[c].visit != visit_) reach(use->channel);
      }
      if (std::isfinite(cap)) caps_.push_back(Level{cap, member.flow});
    }
  }
}

void MaxMinSharing::solve_component() {
  // Caps never change during a solve, so they wait in one sorted array and merge with the heap
  // of channel shares, which keeps the heap to the channels.
  std::sort(caps_.begin(), caps_.end(), Lower{});
  std::size_t next_cap = 0;
  heap_.build();
  std::size_t frozen = 0;
  while (frozen < component_flows_.size() && (!heap_.empty() || next_cap < caps_.size())) {
    if (!heap_.empty()) {
      const Level level = heap_.top();
      const ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
      if (state.unfrozen_weight == 0) {  // every flow on it froze elsewhere
        heap_.pop();
        continue;
      }
      const double share =
          std::max(0.0, state.remaining_Bps) / static_cast<double>(state.unfrozen_weight);
      if (share != level.rate_Bps) {  // stale: the share rose since this entry was pushed
        heap_.replace_top(Level{share, level.key});
        continue;
      }
    }
    if (next_cap < caps_.size() && (heap_.empty() || Lower{}(caps_[next_cap], heap_.top()))) {
      const auto index = static_cast<FlowIndex>(caps_[next_cap].key);
      if (flow_frozen_[static_cast<std::size_t>(index)] != visit_) {
        freeze(index, caps_[next_cap].rate_Bps);
        ++frozen;
      }
      ++next_cap;
      continue;
    }
    const Level level = heap_.top();
    heap_.pop();
    // The channel saturates: freeze its unfrozen flows (freeze() never changes member lists).
    for (const Member& member : members_[static_cast<std::size_t>(level.key)]) {
      if (flow_frozen_[static_cast<std::size_t>(member.flow)] != visit_) {
        freeze(member.flow, level.rate_Bps);
        ++frozen;
      }
    }
  }
  CS_ASSERT(frozen == component_flows_.size(),
            "progressive filling left " + std::to_string(component_flows_.size() - frozen) +
                " flows without a rate");
}

void MaxMinSharing::freeze(FlowIndex index, double rate_Bps) {
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  flow_frozen_[static_cast<std::size_t>(index)] = visit_;
  flow.rate_Bps = rate_Bps;
  const ChannelUse* use = use_pool_.data() + flow.first_use;
  for (const ChannelUse* end = use + flow.use_count; use != end; ++use) {
    ChannelState& state = channels_[static_cast<std::size_t>(use->channel)];
    const double load = use->multiplicity * rate_Bps;
    if (std::isfinite(load)) state.remaining_Bps -= load;
    state.load_Bps += load;
    state.unfrozen_weight -= use->multiplicity;
  }
}

std::vector<double> max_min_rates(const std::vector<double>& capacity_Bps,
                                  const std::vector<std::vector<topo::ChannelId>>& flows,
                                  const std::vector<double>& max_rate_Bps) {
  CS_ASSERT(max_rate_Bps.empty() || max_rate_Bps.size() == flows.size(),
            "one max rate per flow, or none");
  MaxMinSharing sharing(capacity_Bps);
  std::vector<MaxMinSharing::FlowIndex> indices;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    indices.push_back(sharing.add(flows[f], max_rate_Bps.empty()
                                                ? std::numeric_limits<double>::infinity()
                                                : max_rate_Bps[f]));
  }
  sharing.update();
  std::vector<double> rates;
  for (auto index : indices) rates.push_back(sharing.rate_Bps(index));
  return rates;
}

}  // namespace cs::net
