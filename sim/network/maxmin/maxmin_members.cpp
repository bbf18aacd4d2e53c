// The max-min solver's channel member lists: each channel's members, sorted by rate, in slots of
// its own. New flows join at update(); a list that outgrows its slots moves to twice as many.
#include <algorithm>
#include <bit>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "network/maxmin/maxmin.hpp"

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
      if (is_follower(use.channel)) continue;
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

// Gives every channel with counted flows room for them. A channel without slots gets as many as
// it needs (a batch of flows all started together, such as a collective's, often never grows);
// one that outgrows its slots moves to the next power of two, so that growing one flow at a time
// costs O(1) per flow.
void MaxMinSharing::reserve_slots() {
  for (topo::ChannelId c : scratch_channels_) {
    ChannelState& state = channels_[static_cast<std::size_t>(c)];
    const std::uint32_t count = state.member_count + state.written;
    if (count <= state.slot_count()) continue;
    const std::uint32_t slots = state.members ? std::bit_ceil(count) : count;
    auto grown = std::make_unique_for_overwrite<Member[]>(slots);
    std::copy_n(state.members.get(), state.member_count, grown.get());
    state.members = std::move(grown);
    state.slots_log2 = static_cast<std::uint8_t>(std::bit_width(slots) - 1);
  }
}

// Lists the counted flows at the end of their channels' members (their rate is infinity until
// solved, so they sort last).
void MaxMinSharing::list_added_flows() {
  reserve_slots();
  for (topo::ChannelId c : scratch_channels_) channels_[static_cast<std::size_t>(c)].written = 0;
  scratch_channels_.clear();
  for (FlowIndex index : added_flows_) {
    const FlowState& flow = flows_[static_cast<std::size_t>(index)];
    for (std::uint32_t u = 0; u < flow.use_count; ++u) {
      const ChannelUse use = use_pool_[flow.first_use + u];
      if (is_follower(use.channel)) {
        slot_pool_[flow.first_use + u] = kFollowerUse;
        continue;
      }
      ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
      const std::uint32_t slot = state.member_count++;
      state.members[slot] = Member{index, use.multiplicity, 0.0};
      slot_pool_[flow.first_use + u] = slot;
    }
  }
  added_flows_.clear();
}

}  // namespace cs::net
