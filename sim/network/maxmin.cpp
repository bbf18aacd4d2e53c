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
  } else {
    index = free_flows_.back();
    free_flows_.pop_back();
  }
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  flow.uses = count_channel_uses(channels);
  flow.member_index.resize(flow.uses.size());
  flow.max_rate_Bps = max_rate_Bps;
  flow.rate_Bps = 0;
  flow.active = true;
  for (std::size_t u = 0; u < flow.uses.size(); ++u) {
    const topo::ChannelId c = flow.uses[u].channel;
    CS_ASSERT(c >= 0 && c < channel_count(), "channel id " + std::to_string(c) + " out of range");
    auto& members = channels_[static_cast<std::size_t>(c)].members;
    flow.member_index[u] = static_cast<std::int32_t>(members.size());
    members.push_back(Member{index, flow.uses[u].multiplicity, static_cast<std::int32_t>(u)});
    mark_dirty(c);
  }
  if (flow.uses.empty()) added_without_channels_.push_back(index);
  ++active_flows_;
  return index;
}

void MaxMinSharing::remove(FlowIndex index) {
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  CS_ASSERT(flow.active, "flow " + std::to_string(index) + " removed twice");
  for (std::size_t u = 0; u < flow.uses.size(); ++u) {
    const topo::ChannelId c = flow.uses[u].channel;
    auto& members = channels_[static_cast<std::size_t>(c)].members;
    const auto position = static_cast<std::size_t>(flow.member_index[u]);
    members[position] = members.back();
    members.pop_back();
    if (position < members.size()) {  // the moved member tells its flow where it now lives
      const Member& moved = members[position];
      flows_[static_cast<std::size_t>(moved.flow)]
          .member_index[static_cast<std::size_t>(moved.use_index)] =
          static_cast<std::int32_t>(position);
    }
    mark_dirty(c);
  }
  flow.active = false;
  flow.uses.clear();
  flow.member_index.clear();
  free_flows_.push_back(index);
  --active_flows_;
}

void MaxMinSharing::mark_dirty(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (!state.dirty) {
    state.dirty = true;
    dirty_channels_.push_back(channel);
  }
}

std::span<const ChannelUse> MaxMinSharing::uses(FlowIndex flow) const {
  return flows_[static_cast<std::size_t>(flow)].uses;
}

double MaxMinSharing::load_Bps(topo::ChannelId channel) const {
  double load = 0;
  for (const Member& member : channels_[static_cast<std::size_t>(channel)].members) {
    load += member.multiplicity * flows_[static_cast<std::size_t>(member.flow)].rate_Bps;
  }
  return load;
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

// Breadth-first search flows <-> channels from every dirty channel.
void MaxMinSharing::collect_component() {
  ++visit_;
  component_flows_.clear();
  component_channels_.clear();
  for (topo::ChannelId c : dirty_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    state.dirty = false;
    if (state.visit != visit_) {
      state.visit = visit_;
      component_channels_.push_back(c);
    }
  }
  dirty_channels_.clear();
  for (std::size_t next = 0; next < component_channels_.size(); ++next) {
    const ChannelState& state = channels_[static_cast<std::size_t>(component_channels_[next])];
    for (const Member& member : state.members) {
      FlowState& flow = flows_[static_cast<std::size_t>(member.flow)];
      if (flow.visit == visit_) continue;
      flow.visit = visit_;
      component_flows_.push_back(member.flow);
      for (const ChannelUse& use : flow.uses) {
        ChannelState& reached = channels_[static_cast<std::size_t>(use.channel)];
        if (reached.visit != visit_) {
          reached.visit = visit_;
          component_channels_.push_back(use.channel);
        }
      }
    }
  }
}

void MaxMinSharing::solve_component() {
  heap_.clear();
  const auto channel_keys = static_cast<std::int64_t>(channels_.size());
  for (topo::ChannelId c : component_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    state.remaining_Bps = state.capacity_Bps;
    state.unfrozen_weight = 0;
    for (const Member& member : state.members) state.unfrozen_weight += member.multiplicity;
    if (state.unfrozen_weight > 0) {
      heap_.push_back(Level{state.capacity_Bps / static_cast<double>(state.unfrozen_weight), c});
    }
  }
  for (FlowIndex index : component_flows_) {
    FlowState& flow = flows_[static_cast<std::size_t>(index)];
    flow.frozen = false;
    if (std::isfinite(flow.max_rate_Bps)) {
      heap_.push_back(Level{flow.max_rate_Bps, channel_keys + index});
    }
  }
  std::make_heap(heap_.begin(), heap_.end(), higher);
  std::size_t frozen = 0;
  while (!heap_.empty() && frozen < component_flows_.size()) {
    std::pop_heap(heap_.begin(), heap_.end(), higher);
    const Level level = heap_.back();
    heap_.pop_back();
    if (level.key >= channel_keys) {
      const auto index = static_cast<FlowIndex>(level.key - channel_keys);
      if (!flows_[static_cast<std::size_t>(index)].frozen) {
        freeze(index, level.rate_Bps);
        ++frozen;
      }
      continue;
    }
    ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
    if (state.unfrozen_weight == 0) continue;  // every flow on it froze elsewhere
    const double share =
        std::max(0.0, state.remaining_Bps) / static_cast<double>(state.unfrozen_weight);
    if (share != level.rate_Bps) {  // stale: the share rose since this entry was pushed
      heap_.push_back(Level{share, level.key});
      std::push_heap(heap_.begin(), heap_.end(), higher);
      continue;
    }
    // The channel saturates: freeze its unfrozen flows. Iterating by index keeps this safe while
    // freeze() updates other channels' scratch (it never changes member lists).
    for (const Member& member : state.members) {
      if (!flows_[static_cast<std::size_t>(member.flow)].frozen) {
        freeze(member.flow, share);
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
  flow.frozen = true;
  flow.rate_Bps = rate_Bps;
  for (const ChannelUse& use : flow.uses) {
    ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
    if (std::isfinite(rate_Bps)) state.remaining_Bps -= use.multiplicity * rate_Bps;
    state.unfrozen_weight -= use.multiplicity;
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
