// Bundles of channels that carry the same flows: a follower channel lists exactly its leader's
// flows, with the same multiplicities, in the same order, with the same prefix loads, and has no
// less capacity (the same: a higher id). On the fat tree a NIC's port and its PCIe link are such
// a pair: with 10k flows, 2,047 pairs and 20k of 79.5k channel uses (counted).
//
// Why a follower can be left out of every solve, rates bit for bit: the two lists being the same,
// the flows on them freeze in the same order in any filling, so the two frozen loads are the same
// sums; their shares, max(0, capacity - frozen load) / unfrozen weight, differ only in the
// capacity, and each step is monotone in it under rounding, so the follower's share is never
// below its leader's, and on a tie the leader's lower id pops first. The leader saturates first,
// freezing every open flow of the follower: the follower never binds, and its list and load, were
// it kept, would be written as the leader's are. Nor does it lower a restart level (the same list
// with more capacity crosses its capacity no earlier). So a follower is not searched, queued or
// written; its members and load are read from its leader (listing()), and its uses in the pool
// carry kFollowerUse instead of a member slot, which the search and the freezes skip.
//
// The bundle holds while no change tells the two apart: add() splits it first when a flow crosses
// one and not the other, or with another multiplicity (the follower gets a copy of its leader's
// list as of the last update, with the entries of flows removed since marked, as they are in the
// leader's). A removed flow leaves both. Bundles form after a plain solve, from the pairs of
// channels drop_shadowed_channels() found (the same open members and frozen load), or after a
// sweep, from the pairs propose_twins() found (maxmin_sort.cpp), once their whole lists, sorted,
// have come out the same.
#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

bool crosses(std::span<const ChannelUse> uses, topo::ChannelId channel, std::int32_t multiplicity) {
  const auto use =
      std::lower_bound(uses.begin(), uses.end(), channel,
                       [](const ChannelUse& x, topo::ChannelId c) { return x.channel < c; });
  return use != uses.end() && use->channel == channel && use->multiplicity == multiplicity;
}

}  // namespace

// Splits every bundle the flow with these uses (sorted by channel) tells apart.
void MaxMinSharing::keep_bundles_whole(std::span<const ChannelUse> uses) {
  if (followers_ == 0) return;
  for (const ChannelUse& use : uses) {
    const topo::ChannelId leader = leader_[static_cast<std::size_t>(use.channel)];
    if (leader >= 0) {
      if (!crosses(uses, leader, use.multiplicity)) split(use.channel);
      continue;
    }
    for (topo::ChannelId follower = next_follower_[static_cast<std::size_t>(use.channel)];
         follower >= 0;) {
      const topo::ChannelId next = next_follower_[static_cast<std::size_t>(follower)];
      if (!crosses(uses, follower, use.multiplicity)) split(follower);
      follower = next;
    }
  }
}

// The follower leaves its leader's chain with a copy of the leader's list.
void MaxMinSharing::split(topo::ChannelId follower) {
  const auto f = static_cast<std::size_t>(follower);
  const topo::ChannelId leader = leader_[f];
  topo::ChannelId* link = &next_follower_[static_cast<std::size_t>(leader)];
  while (*link != follower) link = &next_follower_[static_cast<std::size_t>(*link)];
  *link = next_follower_[f];
  next_follower_[f] = -1;
  leader_[f] = -1;
  --followers_;
  const ChannelState& source = channels_[static_cast<std::size_t>(leader)];
  ChannelState& state = channels_[f];
  state.member_count = source.member_count;
  state.load_Bps = source.load_Bps;
  state.unsorted = source.unsorted;
  state.lazy_commits = source.lazy_commits;
  state.members.reset();
  state.slots_log2 = 0;
  if (source.member_count > 0) {  // exactly as many slots, as for a first allocation
    state.members = std::make_unique_for_overwrite<Member[]>(source.member_count);
    std::copy_n(source.members.get(), source.member_count, state.members.get());
    state.slots_log2 = static_cast<std::uint8_t>(std::bit_width(source.member_count) - 1);
  }
  set_use_slots(follower, {state.members.get(), state.member_count}, false);
}

// In each listed flow of `members`, the use of `channel`: its slot there, or kFollowerUse.
// Entries of flows removed since the last update (multiplicity 0) have no uses left.
void MaxMinSharing::set_use_slots(topo::ChannelId channel, std::span<const Member> members,
                                  bool follower) {
  for (std::uint32_t slot = 0; slot < members.size(); ++slot) {
    if (members[slot].multiplicity == 0) continue;
    const FlowState& flow = flows_[static_cast<std::size_t>(members[slot].flow)];
    const ChannelUse* begin = use_pool_.data() + flow.first_use;
    const ChannelUse* use =
        std::lower_bound(begin, begin + flow.use_count, channel,
                         [](const ChannelUse& x, topo::ChannelId c) { return x.channel < c; });
    CS_ASSERT(use != begin + flow.use_count && use->channel == channel,
              "flow " + std::to_string(members[slot].flow) + " listed on channel " +
                  std::to_string(channel) + " does not cross it");
    slot_pool_[static_cast<std::size_t>(use - use_pool_.data())] = follower ? kFollowerUse : slot;
  }
}

// Followers changed along with their leaders: the update works on the leaders alone.
void MaxMinSharing::drop_dirty_followers() {
  if (followers_ == 0) return;
  std::erase_if(dirty_channels_, [this](topo::ChannelId c) {
    if (leader_[static_cast<std::size_t>(c)] < 0) return false;
    channels_[static_cast<std::size_t>(c)].dirty = false;
    return true;
  });
}

// updated_channels() names the followers of the leaders the update reached.
void MaxMinSharing::list_updated_followers() {
  if (followers_ == 0) return;
  const std::size_t reached = component_channels_.size();
  for (std::size_t i = 0; i < reached; ++i) {
    for (topo::ChannelId follower =
             next_follower_[static_cast<std::size_t>(component_channels_[i])];
         follower >= 0; follower = next_follower_[static_cast<std::size_t>(follower)]) {
      component_channels_.push_back(follower);
    }
  }
}

void MaxMinSharing::form_bundles() {
  if (!shadowed_pairs_.empty() && leader_.empty()) {
    leader_.resize(channels_.size(), -1);
    next_follower_.resize(channels_.size(), -1);
  }
  for (auto [shadowed, shadowing] : shadowed_pairs_) {
    const topo::ChannelId found = leader_[static_cast<std::size_t>(shadowing)];
    const topo::ChannelId leader = found >= 0 ? found : shadowing;
    const auto f = static_cast<std::size_t>(shadowed);
    const auto l = static_cast<std::size_t>(leader);
    if (leader == shadowed || leader_[f] >= 0 || next_follower_[f] >= 0) continue;
    sort_members(leader);  // a sweep may have left either unsorted
    sort_members(shadowed);
    const ChannelState& lead = channels_[l];
    ChannelState& state = channels_[f];
    const bool leads = lead.capacity_Bps < state.capacity_Bps ||
                       (lead.capacity_Bps == state.capacity_Bps && leader < shadowed);
    if (!leads || !same_list(lead, state)) continue;
    set_use_slots(shadowed, {state.members.get(), state.member_count}, true);
    leader_[f] = leader;
    next_follower_[f] = next_follower_[l];
    next_follower_[l] = shadowed;
    ++followers_;
    state.members.reset();  // its list is its leader's from here
    state.member_count = 0;
    state.slots_log2 = 0;
  }
  shadowed_pairs_.clear();
}

bool MaxMinSharing::same_list(const ChannelState& x, const ChannelState& y) const {
  if (x.member_count != y.member_count || x.load_Bps != y.load_Bps) return false;
  const Member* a = x.members.get();
  const Member* b = y.members.get();
  for (std::uint32_t i = 0; i < x.member_count; ++i) {
    if (a[i].flow != b[i].flow || a[i].multiplicity != b[i].multiplicity ||
        a[i].prefix_load_Bps != b[i].prefix_load_Bps) {
      return false;
    }
  }
  return true;
}

}  // namespace cs::net
