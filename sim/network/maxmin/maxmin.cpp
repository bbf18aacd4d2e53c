// The max-min solver's flows: added and removed between updates, their channel uses in one pool,
// and which way update() re-solves them. The member lists are in maxmin_members.cpp; the sweep in
// maxmin_sweep.cpp (its shared rules in maxmin_sweep.hpp), its flows in maxmin_settle.cpp, its
// channels with room in maxmin_light.cpp and its end in maxmin_sort.cpp; the restart level in
// maxmin_restart.cpp, the restart's solve in maxmin_solve.cpp (its levels in maxmin_level.hpp) and
// its search in maxmin_search.cpp, the narrow search's bounding channels in maxmin_bound.cpp and
// its commit in maxmin_narrow.cpp, the solve of a batch of flows on empty channels in
// maxmin_fresh.cpp, the channels a solve need not queue in maxmin_shadow.cpp and those it need
// not even search in maxmin_bundles.cpp.
#include "network/maxmin/maxmin.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace cs::net {

// A long channel list over a narrow range of ids (a ring collective's flow crosses most of the
// fabric) is counted per id instead of sorted: O(n + range) instead of O(n log n) (sorting was 60%
// of BM_AllReduce1GiB_SimulateOnly/128).
std::vector<ChannelUse> count_channel_uses(std::span<const topo::ChannelId> channels) {
  constexpr std::size_t kCountAtLeast = 64;
  if (channels.size() >= kCountAtLeast) {
    const auto [low, high] = std::minmax_element(channels.begin(), channels.end());
    const auto range = static_cast<std::size_t>(std::int64_t{*high} - *low) + 1;
    if (range <= 4 * channels.size()) {
      std::vector<std::int32_t> count(range, 0);
      for (topo::ChannelId channel : channels) ++count[static_cast<std::size_t>(channel - *low)];
      std::vector<ChannelUse> uses;
      for (std::size_t i = 0; i < range; ++i) {
        if (count[i] > 0)
          uses.push_back(ChannelUse{*low + static_cast<topo::ChannelId>(i), count[i]});
      }
      return uses;
    }
  }
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
  channel_visit_.resize(capacity_Bps.size(), 0);
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
    flow_new_rate_.push_back(0);
    flow_rate_Bps_.push_back(0);
  } else {
    index = free_flows_.back();
    free_flows_.pop_back();
  }
  const std::vector<ChannelUse> counted = count_channel_uses(channels);
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  flow.max_rate_Bps = max_rate_Bps;
  flow_rate_Bps_[static_cast<std::size_t>(index)] = std::numeric_limits<double>::infinity();
  flow.active = true;
  flow.listed = false;
  flow.first_use = static_cast<std::uint32_t>(use_pool_.size());
  flow.use_count = static_cast<std::uint32_t>(counted.size());
  for (const ChannelUse& use : counted) {
    CS_ASSERT(use.channel >= 0 && use.channel < channel_count(),
              "channel id " + std::to_string(use.channel) + " out of range");
    use_pool_.push_back(use);
    slot_pool_.push_back(0);  // set when update() lists it
    mark_dirty(use.channel);
  }
  keep_bundles_whole(counted);
  if (counted.empty()) {
    added_without_channels_.push_back(index);
  } else {
    restart_cap_Bps_ = std::min(restart_cap_Bps_, max_rate_Bps);
    added_flows_.push_back(index);
  }
  ++active_flows_;
  return index;
}

// The flow's member entries stay, with multiplicity 0, until update() rewrites that part of the
// lists. (A flow added since the last update() is not listed yet.)
void MaxMinSharing::remove(FlowIndex index) {
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  CS_ASSERT(flow.active, "flow " + std::to_string(index) + " removed twice");
  // The restart stays at or below the removed flow's rate, so that its entries lie in the part of
  // the member lists that update() rewrites.
  if (flow.listed) {
    restart_cap_Bps_ = std::min(restart_cap_Bps_, flow_rate_Bps_[static_cast<std::size_t>(index)]);
  }
  for (std::uint32_t u = 0; u < flow.use_count; ++u) {
    const ChannelUse use = use_pool_[flow.first_use + u];
    ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
    const std::uint32_t slot = slot_pool_[flow.first_use + u];
    if (flow.listed && slot != kFollowerUse) state.members[slot].multiplicity = 0;
    mark_dirty(use.channel);
  }
  dead_uses_ += flow.use_count;
  flow.use_count = 0;
  flow.active = false;
  free_flows_.push_back(index);
  --active_flows_;
  ++removed_since_update_;
  if (dead_uses_ > 4096 && dead_uses_ > use_pool_.size() / 2) compact_uses();
}

// Drops the pool entries of removed flows in place, sliding live flows' entries down in their
// pool order: new pools would be fresh memory, faulted in page by page, several times over while
// a collective's flows drain.
void MaxMinSharing::compact_uses() {
  std::vector<FlowIndex> live;
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    if (flows_[f].use_count > 0) live.push_back(static_cast<FlowIndex>(f));
  }
  std::sort(live.begin(), live.end(), [this](FlowIndex x, FlowIndex y) {
    return flows_[static_cast<std::size_t>(x)].first_use <
           flows_[static_cast<std::size_t>(y)].first_use;
  });
  std::uint32_t next = 0;
  for (FlowIndex index : live) {
    FlowState& flow = flows_[static_cast<std::size_t>(index)];
    std::copy_n(use_pool_.begin() + flow.first_use, flow.use_count, use_pool_.begin() + next);
    std::copy_n(slot_pool_.begin() + flow.first_use, flow.use_count, slot_pool_.begin() + next);
    flow.first_use = next;
    next += flow.use_count;
  }
  use_pool_.resize(next);
  slot_pool_.resize(next);
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
  changed_flows_.clear();
  drop_dirty_followers();
  for (topo::ChannelId c : dirty_channels_) sort_members(c);
  count_added_flows();
  // With a flow removed since, the update is no fresh batch even where the sort above dropped
  // its entries and left its channels empty: those must be listed in updated_channels().
  all_changed_ = removed_since_update_ == 0 && fresh_batch();
  if (all_changed_) {
    solve_fresh_batch();
  } else if (sweep_pays(added_flows_.size() + removed_since_update_)) {
    const std::size_t changes = added_flows_.size() + removed_since_update_;
    sweep_added_.assign(added_flows_.begin(), added_flows_.end());
    restart_cap_Bps_ = std::numeric_limits<double>::infinity();
    list_added_flows();
    sweep(sweep_added_);
    if (changes > 0) {  // an update with nothing to do says nothing about the cost
      average_in(sweep_flows_per_change_,
                 static_cast<double>(component_flows_.size()) / static_cast<double>(changes));
    }
    restarts_in_a_row_ = 0;
  } else {
    const std::size_t added = added_flows_.size();
    const double restart_Bps = restart_level_Bps();
    list_added_flows();
    resolve(restart_Bps, added);
    if (added + removed_since_update_ > 0) {
      average_in(restart_flows_, static_cast<double>(component_flows_.size()));
    }
    ++restarts_in_a_row_;
  }
  removed_since_update_ = 0;
  for (FlowIndex index : added_without_channels_) {
    FlowState& flow = flows_[static_cast<std::size_t>(index)];
    if (!flow.active || flow.use_count != 0) continue;  // removed (and maybe reused) since
    flow_rate_Bps_[static_cast<std::size_t>(index)] = flow.max_rate_Bps;
    component_flows_.push_back(index);
    if (!all_changed_) changed_flows_.push_back(index);
  }
  added_without_channels_.clear();
  list_updated_followers();
  form_bundles();
  return component_flows_;
}

// A running average over the last few updates (weight 1/4 to the newest): one update's count
// varies several-fold with where its change lands.
void MaxMinSharing::average_in(std::optional<double>& average, double value) {
  average = average ? *average + (value - *average) / 4 : value;
}

bool MaxMinSharing::sweep_pays(std::size_t changes) const {
  // A bound: where the restart wins, one sweep in 17 updates costs a few % (with 100k flows on the
  // fat tree a sweep costs ~1.5x a restart).
  constexpr int kRetrySweepAfter = 16;
  if (sweep_limit_) return changes <= *sweep_limit_;
  if (changes > kSweepChanges) return false;
  if (restarts_in_a_row_ >= kRetrySweepAfter) return true;
  // Before any restart, half the flows: where a sweep re-solves more than a third of them, a
  // restart is tried and counted.
  const double restart_flows = restart_flows_.value_or(0.5 * active_flows_);
  return 1.5 * static_cast<double>(changes) * sweep_flows_per_change_.value_or(0) <= restart_flows;
}

std::vector<double> max_min_rates(const std::vector<double>& capacity_Bps,
                                  const std::vector<std::vector<topo::ChannelId>>& flows,
                                  const std::vector<double>& max_rate_Bps) {
  CS_ASSERT(max_rate_Bps.empty() || max_rate_Bps.size() == flows.size(),
            "one max rate per flow, or none");
  MaxMinSharing sharing(capacity_Bps);
  std::vector<MaxMinSharing::FlowIndex> indices;
  indices.reserve(flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) {
    indices.push_back(sharing.add(flows[f], max_rate_Bps.empty()
                                                ? std::numeric_limits<double>::infinity()
                                                : max_rate_Bps[f]));
  }
  sharing.update();
  std::vector<double> rates;
  rates.reserve(indices.size());
  for (auto index : indices) rates.push_back(sharing.rate_Bps(index));
  return rates;
}

}  // namespace cs::net
