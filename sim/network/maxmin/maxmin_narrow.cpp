// Writes a narrow solve's result (maxmin_solve.cpp): the new rates, and each reached channel's
// members in ascending order of rate with their prefix loads. On a crossed channel the re-solved
// flows are all its members above the restart level and follow the kept prefix in the order they
// froze; on a bounding channel they merge with the kept members above the restart level.
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

// How many channels ahead commit() fetches the top of a member list.
constexpr std::size_t kFetchAhead = 4;

}  // namespace

// The last members of a channel's list, which merge_bounding() reads first.
void MaxMinSharing::prefetch_top_members(topo::ChannelId channel) const {
  const ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.member_count == 0) return;
  const Member* top = state.members.get() + state.member_count - 1;
  __builtin_prefetch(top);
  if (state.member_count > 4) __builtin_prefetch(top - 4);  // the cache line below
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
