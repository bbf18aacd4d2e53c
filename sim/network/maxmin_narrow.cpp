// Writes a narrow solve's result (maxmin_solve.cpp): the new rates, and each reached channel's
// members in ascending order of rate with their prefix loads. On a crossed channel the re-solved
// flows are all its members above the restart level and follow the kept prefix in the order they
// froze; on a bounding channel they merge with the kept members above the restart level.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "network/maxmin.hpp"

namespace cs::net {

// A bounding channel: its flows in S are open, every other member is kept.
void MaxMinSharing::bound(topo::ChannelId channel, double restart_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  const Member* members = state.members.get();
  std::uint32_t kept = state.member_count;
  std::int32_t open_weight = 0;
  double kept_above_Bps = 0;  // finite load of the kept members at or above the restart level
  double kept_top_Bps = 0;    // the highest rate among them
  state.first_open = static_cast<std::uint32_t>(open_flows_.size());
  while (kept > 0 && member_rate_Bps(members[kept - 1]) >= restart_Bps) {
    const Member member = members[--kept];
    if (flow_visit_[static_cast<std::size_t>(member.flow)] == visit_) {
      open_flows_.push_back(member.flow);
      open_weight += member.multiplicity;
    } else {
      const double rate = member_rate_Bps(member);
      const double load = member.multiplicity * rate;
      if (std::isfinite(load)) kept_above_Bps += load;
      kept_top_Bps = std::max(kept_top_Bps, rate);
    }
  }
  bounding_kept_top_Bps_.push_back(kept_top_Bps);
  state.written = kept;
  state.frozen_load_Bps = (kept == 0 ? 0.0 : members[kept - 1].prefix_load_Bps) + kept_above_Bps;
  open(channel, open_weight);
}

// Step 3: marks each bounding channel that is full and carries a kept flow above every re-solved
// one on it, to be crossed next round.
bool MaxMinSharing::bottleneck_under_kept_flow() {
  bool found = false;
  for (std::size_t b = 0; b < bounding_channels_.size(); ++b) {
    ChannelState& state = channels_[static_cast<std::size_t>(bounding_channels_[b])];
    if (state.open_count == 0 || !full(state.frozen_load_Bps, state.capacity_Bps)) continue;
    double open_top_Bps = 0;
    const FlowIndex* open = open_flows_.data() + state.first_open;
    for (const FlowIndex* end = open + state.open_count; open != end; ++open) {
      open_top_Bps = std::max(open_top_Bps, flow_new_rate_[static_cast<std::size_t>(*open)]);
    }
    if (bounding_kept_top_Bps_[b] > open_top_Bps) {
      state.cross_mark = update_serial_;
      found = true;
    }
  }
  return found;
}

void MaxMinSharing::commit() {
  for (topo::ChannelId c : component_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    state.unfrozen_weight = 0;  // here: re-solved flows staged so far
    if (!state.crossed) continue;
    const double prefix_load =
        state.written == 0 ? 0.0 : state.members[state.written - 1].prefix_load_Bps;
    state.frozen_load_Bps = prefix_load;
    state.load_Bps = prefix_load;
  }
  staged_.resize(open_flows_.size() - bounding_open_first_);
  for (FlowIndex index : freeze_order_) {
    const FlowState& flow = flows_[static_cast<std::size_t>(index)];
    const double rate = flow_new_rate_[static_cast<std::size_t>(index)];
    for (std::uint32_t u = 0; u < flow.use_count; ++u) {
      if (slot_pool_[flow.first_use + u] == kFollowerUse) continue;
      const ChannelUse use = use_pool_[flow.first_use + u];
      ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
      if (!state.crossed) {
        staged_[state.first_open - bounding_open_first_ +
                static_cast<std::uint32_t>(state.unfrozen_weight++)] =
            Staged{Member{index, use.multiplicity, 0.0}, rate, flow.first_use + u,
                   slot_pool_[flow.first_use + u]};
        continue;
      }
      const double load = use.multiplicity * rate;
      if (std::isfinite(load)) state.frozen_load_Bps += load;
      state.load_Bps += load;
      const std::uint32_t slot = state.written++;
      state.members[slot] = Member{index, use.multiplicity, state.frozen_load_Bps};
      slot_pool_[flow.first_use + u] = slot;
    }
  }
  for (topo::ChannelId c : component_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (state.crossed) {
      state.member_count = state.written;  // removed flows' entries drop off the end
    } else {
      merge_bounding(c);
    }
    state.written = 0;
  }
  // Last, since the merges compare the re-solved flows' old rates with their new ones.
  for (FlowIndex index : freeze_order_)
    set_rate(index, flow_new_rate_[static_cast<std::size_t>(index)]);
}

// Merges the re-solved flows of a bounding channel (staged in the order they froze) with its kept
// members above the restart level (in rate order). The list is rewritten only from the first slot
// that changes: the lowest old slot of a re-solved flow or of a rate at or above the lowest new
// one; if no re-solved rate moved, nothing changes.
void MaxMinSharing::merge_bounding(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  const Member* members = state.members.get();
  const Staged* staged = staged_.data() + (state.first_open - bounding_open_first_);
  const Staged* staged_end = staged + state.open_count;
  std::uint32_t start = state.member_count;
  bool moved = false;
  for (const Staged* entry = staged; entry != staged_end; ++entry) {
    start = std::min(start, entry->old_slot);
    moved = moved || member_rate_Bps(entry->member) != entry->rate_Bps;  // its old rate, still
  }
  if (!moved) return;
  // Staged in the order they froze, so the first has the lowest rate.
  const Member* first_above = std::lower_bound(
      members + state.written, members + start, staged->rate_Bps,
      [this](const Member& x, double rate_Bps) { return member_rate_Bps(x) < rate_Bps; });
  start = static_cast<std::uint32_t>(first_above - members);
  merged_.clear();
  for (std::uint32_t i = start; i < state.member_count; ++i) {
    const Member member = members[i];
    if (flow_visit_[static_cast<std::size_t>(member.flow)] == visit_) continue;  // re-solved
    const double rate = member_rate_Bps(member);
    for (; staged != staged_end && staged->rate_Bps < rate; ++staged) {
      merged_.push_back(*staged);
    }
    const FlowState& flow = flows_[static_cast<std::size_t>(member.flow)];
    const ChannelUse* uses_begin = use_pool_.data() + flow.first_use;
    const ChannelUse* use =
        std::lower_bound(uses_begin, uses_begin + flow.use_count, channel,
                         [](const ChannelUse& x, topo::ChannelId c) { return x.channel < c; });
    merged_.push_back(Staged{member, rate, static_cast<std::uint32_t>(use - use_pool_.data()), 0});
  }
  merged_.insert(merged_.end(), staged, staged_end);
  // Members below `start` have finite rates (below a re-solved one), so their load is the prefix.
  state.frozen_load_Bps = start == 0 ? 0.0 : members[start - 1].prefix_load_Bps;
  state.load_Bps = state.frozen_load_Bps;
  std::uint32_t slot = start;
  for (Staged entry : merged_) {
    const double load = entry.member.multiplicity * entry.rate_Bps;
    if (std::isfinite(load)) state.frozen_load_Bps += load;
    state.load_Bps += load;
    entry.member.prefix_load_Bps = state.frozen_load_Bps;
    state.members[slot] = entry.member;
    slot_pool_[entry.use_at] = slot;
    ++slot;
  }
  CS_ASSERT(slot == state.member_count, "a bounding channel's member list changed length");
}

}  // namespace cs::net
