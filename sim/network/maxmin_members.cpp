// The max-min solver's channel member lists: each channel's members sit in a region of one pool,
// sorted by rate. New flows join at update(); a region that outgrows its slots moves to the end of
// the pool, and the pool is packed again once more than half of them is left behind.
#include <algorithm>
#include <bit>
#include <limits>
#include <utility>
#include <vector>

#include "network/maxmin.hpp"

namespace cs::net {

// Counts, per channel, the flows added since the last update() and their summed multiplicity, in
// the solve scratch fields `written` and `unfrozen_weight` (the solve sets them afresh). Each flow
// counts once, as listed from here on: one removed and added again under a reused index before
// this update appears twice among the added flows, and flows removed since are dropped.
void MaxMinSharing::count_added_flows() {
  std::erase_if(added_flows_, [this](FlowIndex index) {
    FlowState& flow = flows_[static_cast<std::size_t>(index)];
    if (!flow.active || flow.listed) return true;
    flow.listed = true;
    for (const ChannelUse& use : uses(index)) {
      ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
      if (state.written == 0) {
        state.unfrozen_weight = 0;
        scratch_channels_.push_back(use.channel);
      }
      ++state.written;
      state.unfrozen_weight += use.multiplicity;
    }
    return false;
  });
}

// Gives every channel with counted flows room for them. Channels that outgrow their slots move
// together, in one resize of the pool, so that building a large flow set from scratch grows the
// pool once. A region is the next power of two (no minimum: a floor of 4 slots per channel made a
// one-shot solve of 1,000 flows on the fat tree allocate twice the memory, which the allocator
// then returned to the system and faulted back in on every solve, 0.53 vs 4.0 ms).
void MaxMinSharing::reserve_slots() {
  const auto slots_for = [](const ChannelState& state) {
    return std::bit_ceil(state.member_count + state.written);
  };
  const auto outgrows = [](const ChannelState& state) {
    return state.member_count + state.written > state.slot_count;
  };
  if (dead_slots_ > 4096 && dead_slots_ > member_pool_.size() / 2) compact_members();
  const std::size_t old_end = member_pool_.size();
  std::size_t end = old_end;
  for (topo::ChannelId c : scratch_channels_) {
    const ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (outgrows(state)) end += slots_for(state);
  }
  if (end == old_end) return;
  member_pool_.resize(end);
  std::size_t next = old_end;
  for (topo::ChannelId c : scratch_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (!outgrows(state)) continue;
    const auto from = static_cast<std::ptrdiff_t>(state.first_slot);
    const auto to = static_cast<std::ptrdiff_t>(next);
    std::copy_n(member_pool_.begin() + from, state.member_count, member_pool_.begin() + to);
    dead_slots_ += state.slot_count;
    state.first_slot = static_cast<std::uint32_t>(next);
    state.slot_count = slots_for(state);
    next += state.slot_count;
  }
}

// Lists the counted flows at the end of their channels' members (they have no rate yet, so they
// sort last).
void MaxMinSharing::list_added_flows() {
  reserve_slots();
  for (topo::ChannelId c : scratch_channels_) channels_[static_cast<std::size_t>(c)].written = 0;
  scratch_channels_.clear();
  for (FlowIndex index : added_flows_) {
    const FlowState& flow = flows_[static_cast<std::size_t>(index)];
    for (std::uint32_t u = 0; u < flow.use_count; ++u) {
      const ChannelUse use = use_pool_[flow.first_use + u];
      ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
      const std::uint32_t slot = state.member_count++;
      member_pool_[state.first_slot + slot] =
          Member{index, use.multiplicity, std::numeric_limits<double>::infinity(), 0.0};
      slot_pool_[flow.first_use + u] = slot;
    }
  }
  added_flows_.clear();
}

// Packs every channel's slots together again, in channel order, with room to grow by half (the
// flows counted for listing included).
void MaxMinSharing::compact_members() {
  std::vector<Member, UninitializedAllocator<Member>> members;
  for (ChannelState& state : channels_) {
    const auto first = static_cast<std::uint32_t>(members.size());
    const std::uint32_t count = state.member_count + state.written;
    const std::uint32_t slots = count == 0 ? 0 : count + count / 2 + 1;
    const auto from = static_cast<std::ptrdiff_t>(state.first_slot);
    const auto to = from + static_cast<std::ptrdiff_t>(state.member_count);
    members.insert(members.end(), member_pool_.begin() + from, member_pool_.begin() + to);
    members.resize(first + slots);
    state.first_slot = first;
    state.slot_count = slots;
  }
  member_pool_ = std::move(members);
  dead_slots_ = 0;
}

}  // namespace cs::net
