// The end of a sweep (maxmin_sweep.cpp): the new rates, each touched channel's members re-sorted
// from where it was touched (or, with room, left as they are), and the channel pairs proposed for
// bundles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

// Sweeps that may leave a channel with room unsorted, its load summed by differences, before
// one sorts it and sums its load anew: a bound, so that the sum errs by a few dozen roundings
// at most, far inside kFullWithin.
constexpr std::uint8_t kLazyCommitsAtMost = 32;

// Re-solved flows whose channels a sweep proposes as twins, besides the added flows' (with 10k
// flows on the fat tree, 1.3k of the ~2k bundles there form within 100 updates, 1.95k within 600;
// proposing from every flow of a fresh batch instead doubled a one-shot solve's time).
constexpr std::size_t kProposeFromSettled = 32;

// Regions with more live entries than this are sorted with std::stable_sort, not by insertion.
constexpr std::size_t kInsertionSortAtMost = 32;

}  // namespace

void MaxMinSharing::commit_sweep() {
  for (FlowIndex index : component_flows_) {
    set_rate(index, flow_new_rate_[static_cast<std::size_t>(index)]);
  }
  for (topo::ChannelId c : component_channels_) sort_region(c);
  for (topo::ChannelId c : dirty_channels_) channels_[static_cast<std::size_t>(c)].dirty = false;
  dirty_channels_.clear();
  for (FlowIndex index : sweep_added_) propose_twins(index);
  const std::size_t proposing = std::min(component_flows_.size(), kProposeFromSettled);
  for (std::size_t f = 0; f < proposing; ++f) propose_twins(component_flows_[f]);
}

// The sweep has no search to find channels with the same flows (maxmin_bundles.cpp): it proposes
// the pairs among an added flow's channels, and a few re-solved flows' (kProposeFromSettled),
// that list as many members with the same load (to rounding), and form_bundles() keeps those
// whose lists, sorted, are the same. A pair of twins that carries flows is crossed by some of them
// sooner or later. Flows over many channels (a ring's) are passed over.
void MaxMinSharing::propose_twins(FlowIndex index) {
  constexpr std::uint32_t kProposeUsesAtMost = 16;
  const FlowState& flow = flows_[static_cast<std::size_t>(index)];
  if (!flow.active || flow.use_count > kProposeUsesAtMost) return;
  const std::uint32_t end = flow.first_use + flow.use_count;
  for (std::uint32_t u = flow.first_use; u < end; ++u) {
    if (slot_pool_[u] == kFollowerUse) continue;
    const topo::ChannelId a = use_pool_[u].channel;
    const ChannelState& x = channels_[static_cast<std::size_t>(a)];
    for (std::uint32_t v = u + 1; v < end; ++v) {
      if (slot_pool_[v] == kFollowerUse) continue;
      const topo::ChannelId b = use_pool_[v].channel;
      const ChannelState& y = channels_[static_cast<std::size_t>(b)];
      // Loads to rounding: a list left unsorted has its load summed by differences.
      if (x.member_count != y.member_count ||
          std::abs(x.load_Bps - y.load_Bps) > kFullWithin * x.load_Bps) {
        continue;
      }
      // The one with less capacity (on a tie, the lower id: a comes first) leads.
      if (y.capacity_Bps < x.capacity_Bps) {
        shadowed_pairs_.emplace_back(a, b);
      } else {
        shadowed_pairs_.emplace_back(b, a);
      }
    }
  }
}

// Re-sorts the channel's members from where it was touched by their new rates (stable: ties keep
// their order), drops removed flows' entries, and writes the prefix loads, the load and the slots
// of the entries that moved.
void MaxMinSharing::sort_region(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.light) {
    // A light channel keeps its list as it is while it has room: its load is already summed,
    // from the last exact sum on. Every kLazyCommitsAtMost sweeps it is sorted and summed anew,
    // so that the rounding of those sums stays that of a few.
    if (!full(state.frozen_load_Bps, state.capacity_Bps) &&
        ++state.lazy_commits < kLazyCommitsAtMost) {
      state.load_Bps = state.frozen_load_Bps;
      state.unsorted = true;  // and its prefix loads stale
      state.light = false;
      state.crossed = false;
      state.written = 0;
      return;
    }
    if (state.unsorted) {
      state.written = 0;
    } else {
      find_region(state, light_of(state).touched_at_Bps);
    }
  }
  Member* members = state.members.get();
  const auto rate_of = [this](const Member& member) {
    return flow_rate_Bps_[static_cast<std::size_t>(member.flow)];
  };
  // In place when the live entries are in order already (a batch drained, or the changed flows
  // kept their places): removed entries drop out and the rest slide down.
  bool in_order = true;
  double last_Bps = 0;
  for (std::uint32_t m = state.written; m < state.member_count && in_order; ++m) {
    if (members[m].multiplicity == 0) continue;
    const double rate = rate_of(members[m]);
    in_order = rate >= last_Bps;
    last_Bps = rate;
  }
  sort_scratch_.clear();
  if (!in_order) {
    for (std::uint32_t m = state.written; m < state.member_count; ++m) {
      if (members[m].multiplicity > 0) sort_scratch_.emplace_back(members[m], m);
    }
    const auto before = [&](const auto& x, const auto& y) {
      return rate_of(x.first) < rate_of(y.first);
    };
    if (sort_scratch_.size() > kInsertionSortAtMost) {
      std::stable_sort(sort_scratch_.begin(), sort_scratch_.end(), before);
    } else {
      for (std::size_t k = 1; k < sort_scratch_.size(); ++k) {
        const auto entry = sort_scratch_[k];
        std::size_t at = k;
        for (; at > 0 && before(entry, sort_scratch_[at - 1]); --at) {
          sort_scratch_[at] = sort_scratch_[at - 1];
        }
        sort_scratch_[at] = entry;
      }
    }
  }
  double prefix_Bps = state.written == 0 ? 0.0 : members[state.written - 1].prefix_load_Bps;
  bool infinite = false;
  std::uint32_t slot = state.written;
  const auto place = [&](Member member, std::uint32_t from) {
    const double load = member.multiplicity * rate_of(member);
    if (std::isfinite(load)) {
      prefix_Bps += load;
    } else {
      infinite = true;
    }
    member.prefix_load_Bps = prefix_Bps;
    members[slot] = member;
    if (slot != from) set_kept_slot(member.flow, channel, slot);
    ++slot;
  };
  if (in_order) {
    for (std::uint32_t m = state.written; m < state.member_count; ++m) {
      if (members[m].multiplicity > 0) place(members[m], m);
    }
  } else {
    for (const auto& [member, from] : sort_scratch_) place(member, from);
  }
  state.member_count = slot;
  state.load_Bps = infinite ? std::numeric_limits<double>::infinity() : prefix_Bps;
  state.written = 0;
  state.crossed = false;
  state.light = false;
  state.unsorted = false;
  state.lazy_commits = 0;
}

// Sorts a list left unsorted by a sweep, from the rates as they stand, with exact prefix loads.
void MaxMinSharing::sort_members(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (!state.unsorted) return;
  state.light = false;
  state.written = 0;
  sort_region(channel);
}

void MaxMinSharing::check_lists() const {
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    if (is_follower(static_cast<topo::ChannelId>(c))) continue;
    const ChannelState& state = channels_[c];
    const std::string where = "channel " + std::to_string(c);
    CS_ASSERT(state.written == 0 && !state.light, where + " keeps solve scratch");
    double prefix_Bps = 0;
    double last_rate_Bps = 0;
    bool infinite = false;
    for (std::uint32_t m = 0; m < state.member_count; ++m) {
      const Member& member = state.members[m];
      CS_ASSERT(member.multiplicity > 0, where + " lists a removed flow");
      const double rate = flow_rate_Bps_[static_cast<std::size_t>(member.flow)];
      const double load = member.multiplicity * rate;
      if (std::isfinite(load)) {
        prefix_Bps += load;
      } else {
        infinite = true;
      }
      if (state.unsorted) continue;
      CS_ASSERT(rate >= last_rate_Bps,
                where + " is out of rate order at member " + std::to_string(m));
      CS_ASSERT(std::abs(member.prefix_load_Bps - prefix_Bps) <= 1e-12 * prefix_Bps,
                where + " has a stale prefix load at member " + std::to_string(m));
      last_rate_Bps = rate;
    }
    const double load_Bps = infinite ? std::numeric_limits<double>::infinity() : prefix_Bps;
    const double within = state.unsorted ? kFullWithin : 1e-12;
    CS_ASSERT(
        load_Bps == state.load_Bps || std::abs(load_Bps - state.load_Bps) <= within * load_Bps,
        where + " has load " + std::to_string(state.load_Bps) + ", its members sum to " +
            std::to_string(load_Bps));
  }
}

}  // namespace cs::net
