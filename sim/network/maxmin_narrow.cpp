// Writes a narrow solve's result (maxmin_solve.cpp): the new rates, and each reached channel's
// members in ascending order of rate with their prefix loads. On a crossed channel the re-solved
// flows are all its members above the restart level and follow the kept prefix in the order they
// froze; on a bounding channel they merge with the kept members above the restart level.
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "network/maxmin.hpp"

namespace cs::net {
namespace {

// How many channels ahead commit() fetches the top of a member list.
constexpr std::size_t kFetchAhead = 4;

}  // namespace

// The last members of a channel's list, which bound() and merge_bounding() read first.
void MaxMinSharing::prefetch_top_members(topo::ChannelId channel) const {
  const ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.member_count == 0) return;
  const Member* top = state.members.get() + state.member_count - 1;
  __builtin_prefetch(top);
  __builtin_prefetch(top - 4);
}

// The open lists of the bounding channels, from the re-solved flows' uses rather than from the
// channels' members: the search counted, per bounding channel, the uses of the flows it gathered
// (open_cursor_); each channel gets its part of open_flows_, filled here with the re-solved
// members' summed multiplicity and old finite load, and the lowest slot among them (in
// `written`). So a bounding channel costs its re-solved members, not every member above the
// restart level, most of them kept (BM_MaxMinChangeNarrow/10000: 31k members scanned per update).
void MaxMinSharing::bound_channels() {
  const auto first = static_cast<std::uint32_t>(open_flows_.size());
  std::uint32_t next = first;
  for (topo::ChannelId c : bounding_channels_) {
    std::uint32_t& cursor = open_cursor_[static_cast<std::size_t>(c)];
    const std::uint32_t count = cursor;
    cursor = next;
    next += count;
  }
  open_flows_.resize(next);
  open_uses_.resize(next - first);
  for (FlowIndex index : component_flows_) {
    const FlowState& flow = flows_[static_cast<std::size_t>(index)];
    for (std::uint32_t u = flow.first_use; u < flow.first_use + flow.use_count; ++u) {
      std::uint32_t& cursor = open_cursor_[static_cast<std::size_t>(use_pool_[u].channel)];
      if (cursor == kNotBounding) continue;
      open_uses_[cursor - first] = u;
      open_flows_[cursor++] = index;
    }
  }
  next = first;
  for (topo::ChannelId c : bounding_channels_) {
    const std::uint32_t end = open_cursor_[static_cast<std::size_t>(c)];
    bound(c, next, end - next, first);
    next = end;
  }
}

// A bounding channel, its open list filled: its kept load, and its share queued.
//
// On a channel with room the kept load is (the finite load of all members) - (the old finite
// loads of the re-solved ones), from the record alone: the finite load is the last member's prefix
// load, and so is load_Bps, summed in the same order (a channel with an infinite load counts as
// full). In exact arithmetic that is the kept members' sum. Each of those n + s roundings errs by
// at most 1.1e-16 of a running value that never exceeds the channel's load, so the result errs by
// at most (n + s) x 1.1e-16 of the load, as a sum over the n kept members would: far inside
// kFullWithin (1e-9), which is what keeps a full channel from being taken for one with room, and
// inside the tolerance of any load check. A negative result can only be rounding (kept loads are
// not negative): it is taken as 0, closer to the exact value; a channel whose members are all
// re-solved keeps exactly 0.
// A full channel, where the re-solved flows are likely to be bottlenecked, sums its kept members
// instead: the prefix below the lowest re-solved slot, then the kept members above it. The share
// of a channel that binds then rounds as it did when the same flows froze there before, instead
// of taking the difference's last bits: with the difference everywhere, 2,298 instead of 1,787
// rates per update changed with 10k flows (counted), each one more drain time for FlowNetwork to
// move.
void MaxMinSharing::bound(topo::ChannelId channel, std::uint32_t first_open,
                          std::uint32_t open_count, std::uint32_t first_bounding) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  open_cursor_[static_cast<std::size_t>(channel)] = first_open;  // now the freeze log's
  state.first_open = first_open;
  state.open_count = open_count;
  std::int32_t open_weight = 0;
  double resolved_load_Bps = 0;        // the re-solved members' old finite load
  state.written = state.member_count;  // the lowest slot among them
  const std::uint32_t* use_at = open_uses_.data() + (first_open - first_bounding);
  for (std::uint32_t i = 0; i < open_count; ++i) {
    const std::int32_t multiplicity = use_pool_[use_at[i]].multiplicity;
    open_weight += multiplicity;
    const double load =
        multiplicity * flow_rate_Bps_[static_cast<std::size_t>(open_flows_[first_open + i])];
    if (std::isfinite(load)) resolved_load_Bps += load;
    state.written = std::min(state.written, slot_pool_[use_at[i]]);
  }
  state.unfrozen_weight = open_weight;
  double kept_load_Bps = 0.0;
  if (full(state.load_Bps, state.capacity_Bps)) {
    const Member* members = state.members.get();
    std::uint32_t kept = state.member_count;
    double kept_above_Bps = 0;
    while (kept > state.written) {
      const Member member = members[--kept];
      if (flow_visit_[static_cast<std::size_t>(member.flow)] == visit_) continue;
      const double load = member.multiplicity * member_rate_Bps(member);
      if (std::isfinite(load)) kept_above_Bps += load;
    }
    kept_load_Bps = (kept == 0 ? 0.0 : members[kept - 1].prefix_load_Bps) + kept_above_Bps;
  } else if (state.open_count != state.member_count) {  // so load_Bps is finite
    kept_load_Bps = std::max(0.0, state.load_Bps - resolved_load_Bps);
  }
  state.frozen_load_Bps = kept_load_Bps;
  queue_level(channel);
}

// Step 3: marks each bounding channel that is full and carries a kept flow at or above the restart
// level above every re-solved one on it, to be crossed next round. Only full channels read their
// members: from the top, past the re-solved ones, the first kept member has the highest kept rate.
bool MaxMinSharing::bottleneck_under_kept_flow(double restart_Bps) {
  bool found = false;
  for (topo::ChannelId c : bounding_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (state.open_count == 0 || !full(state.frozen_load_Bps, state.capacity_Bps)) continue;
    // The last to freeze has the highest new rate.
    const FrozenUse& last = freeze_log_[state.first_open + state.open_count - 1];
    const double open_top_Bps = flow_new_rate_[static_cast<std::size_t>(last.flow)];
    const Member* members = state.members.get();
    std::uint32_t top = state.member_count;
    while (top > 0 && flow_visit_[static_cast<std::size_t>(members[top - 1].flow)] == visit_) --top;
    if (top == 0) continue;
    const double kept_top_Bps = member_rate_Bps(members[top - 1]);
    if (kept_top_Bps >= restart_Bps && kept_top_Bps > open_top_Bps) {
      state.cross_mark = update_serial_;
      found = true;
    }
  }
  return found;
}

// Each reached channel's list is written from its own part of the freeze log, which holds its
// re-solved flows in the order they froze, that is in ascending order of their new rates.
void MaxMinSharing::commit() {
  for (std::size_t i = 0; i < component_channels_.size(); ++i) {
    if (i + kFetchAhead < component_channels_.size())
      prefetch_top_members(component_channels_[i + kFetchAhead]);
    const topo::ChannelId c = component_channels_[i];
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (state.crossed) {
      write_crossed(c);
    } else {
      merge_bounding(c);
    }
    state.written = 0;
  }
  // Last, since the merges compare the re-solved flows' old rates with their new ones.
  for (FlowIndex index : freeze_order_)
    set_rate(index, flow_new_rate_[static_cast<std::size_t>(index)]);
}

// A crossed channel: its re-solved flows are all its members above the restart level.
void MaxMinSharing::write_crossed(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  Member* members = state.members.get();
  double frozen_load = state.written == 0 ? 0.0 : members[state.written - 1].prefix_load_Bps;
  double load = frozen_load;
  const FrozenUse* entry = freeze_log_.data() + state.first_open;
  for (const FrozenUse* end = entry + state.open_count; entry != end; ++entry) {
    const std::int32_t multiplicity = use_pool_[entry->use_at].multiplicity;
    const double rate_load = multiplicity * flow_new_rate_[static_cast<std::size_t>(entry->flow)];
    if (std::isfinite(rate_load)) frozen_load += rate_load;
    load += rate_load;
    members[state.written] = Member{entry->flow, multiplicity, frozen_load};
    slot_pool_[entry->use_at] = state.written++;
  }
  state.frozen_load_Bps = frozen_load;
  state.load_Bps = load;
  state.member_count = state.written;  // removed flows' entries drop off the end
}

// Merges the re-solved flows of a bounding channel (in the order they froze) with its kept
// members, in place. The list is rewritten only from the first slot that changes: the lowest old
// slot of a re-solved flow or of a kept rate at or above the lowest new one; if no re-solved rate
// moved, nothing changes. The kept members of that part move to its end first, so that the
// merge, writing from its front, never overtakes the next kept member it reads; a kept member's
// slot in its flow's uses is looked up only if it lands in another slot.
void MaxMinSharing::merge_bounding(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  Member* members = state.members.get();
  const std::uint32_t count = state.member_count;
  const FrozenUse* resolved = freeze_log_.data() + state.first_open;
  const FrozenUse* resolved_end = resolved + state.open_count;
  std::uint32_t start = count;
  bool moved = false;
  old_slots_.clear();
  for (const FrozenUse* entry = resolved; entry != resolved_end; ++entry) {
    const auto f = static_cast<std::size_t>(entry->flow);
    old_slots_.push_back(slot_pool_[entry->use_at]);
    start = std::min(start, old_slots_.back());
    moved = moved || flow_rate_Bps_[f] != flow_new_rate_[f];  // its old rate, still
  }
  if (!moved) return;
  // Kept members below `start` at or above the lowest new rate move up: scanned down a few, then
  // searched.
  const double lowest_Bps = flow_new_rate_[static_cast<std::size_t>(resolved->flow)];
  for (int step = 0; step < 4 && start > 0 && member_rate_Bps(members[start - 1]) >= lowest_Bps;
       ++step) {
    --start;
  }
  if (start > 0 && member_rate_Bps(members[start - 1]) >= lowest_Bps) {
    start = static_cast<std::uint32_t>(std::lower_bound(members, members + start, lowest_Bps,
                                                        [this](const Member& x, double rate_Bps) {
                                                          return member_rate_Bps(x) < rate_Bps;
                                                        }) -
                                       members);
  }
  std::sort(old_slots_.begin(), old_slots_.end(), std::greater<>{});
  kept_from_.resize(count - start);
  std::uint32_t kept = count;
  std::size_t next_old = 0;
  for (std::uint32_t i = count; i-- > start;) {
    if (next_old < old_slots_.size() && old_slots_[next_old] == i) {
      ++next_old;
      continue;
    }
    members[--kept] = members[i];
    kept_from_[kept - start] = i;
  }
  // Members below `start` have finite rates (below a re-solved one), so their load is the prefix.
  double frozen_load = start == 0 ? 0.0 : members[start - 1].prefix_load_Bps;
  double load = frozen_load;
  for (std::uint32_t slot = start; slot < count; ++slot) {
    Member member;
    double rate_Bps;
    if (kept < count && (resolved == resolved_end ||
                         member_rate_Bps(members[kept]) <=
                             flow_new_rate_[static_cast<std::size_t>(resolved->flow)])) {
      member = members[kept];
      rate_Bps = member_rate_Bps(member);
      if (kept_from_[kept - start] != slot) set_kept_slot(member.flow, channel, slot);
      ++kept;
    } else {
      member = Member{resolved->flow, use_pool_[resolved->use_at].multiplicity, 0.0};
      rate_Bps = flow_new_rate_[static_cast<std::size_t>(resolved->flow)];
      slot_pool_[resolved->use_at] = slot;
      ++resolved;
    }
    const double rate_load = member.multiplicity * rate_Bps;
    if (std::isfinite(rate_load)) frozen_load += rate_load;
    load += rate_load;
    member.prefix_load_Bps = frozen_load;
    members[slot] = member;
  }
  state.frozen_load_Bps = frozen_load;
  state.load_Bps = load;
  CS_ASSERT(resolved == resolved_end && kept == count,
            "a bounding channel's member list changed length");
}

void MaxMinSharing::set_kept_slot(FlowIndex index, topo::ChannelId channel, std::uint32_t slot) {
  const FlowState& flow = flows_[static_cast<std::size_t>(index)];
  const ChannelUse* begin = use_pool_.data() + flow.first_use;
  const ChannelUse* use =
      std::lower_bound(begin, begin + flow.use_count, channel,
                       [](const ChannelUse& x, topo::ChannelId c) { return x.channel < c; });
  slot_pool_[static_cast<std::size_t>(use - use_pool_.data())] = slot;
}

}  // namespace cs::net
