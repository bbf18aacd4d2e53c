// Drops from a solve's heap the shares of crossed channels that another crossed channel shadows:
// one with the same open members (the same flows, with the same multiplicities, in the same order)
// and the same load frozen below the restart level, and no more capacity. On the fat tree a
// GPU's PCIe link, its NIC's PCIe link and the NIC's port carry the same flows: with 10k flows
// the heap of an update held 5.0k shares, 1.4k of them shadowed (counted), each popped at last
// with every flow on it frozen elsewhere.
//
// Why the rates do not change: two such channels see the same flows freeze in the
// same order, so their frozen loads take the same values, the same sums in the same order from
// the same start. Their shares, max(0, capacity - frozen load) / unfrozen weight, then differ
// only in the capacity, and each step is monotone in it under rounding too, so the channel with
// the least capacity (the least id among equal ones) never has a larger share than the other.
// It saturates first, or at the same share, freezing the same open flows in the same order at
// the same level; either way the other channel has no open flow left after it, and its entry
// would only have been popped as empty. Its loads and member list are still written by the
// freezes of its flows. Bit for bit, too, but for one case: where rounding gives the two
// different capacities the same share and the dropped one the lower id, a third channel of that
// very share may now saturate between them: the flows frozen at that level get the same rate,
// but loads are summed in another order, which can move later levels in their last bit. (The churn
// check of a re-solve against the solver before this file, and the goldens, came out identical.)
#include <algorithm>
#include <bit>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {

void MaxMinSharing::drop_shadowed_channels() {
  std::vector<Level>& levels = heap_.unordered_items();
  if (levels.size() < 2) return;
  // Open addressing, at most half full: an entry is a hash in the high half and 1 + an index
  // into `levels` in the low half (0: empty), so that probes read no channel record until the
  // hashes match.
  const std::size_t mask = std::bit_ceil(2 * levels.size()) - 1;
  shadow_table_.assign(mask + 1, 0);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::uint32_t hash = shadow_hashes_[i];
    for (std::size_t slot = hash & mask;; slot = (slot + 1) & mask) {
      const std::uint64_t entry = shadow_table_[slot];
      if (entry == 0) {
        shadow_table_[slot] = (std::uint64_t{hash} << 32) | (i + 1);
        break;
      }
      if (entry >> 32 != hash) continue;
      Level& other = levels[static_cast<std::uint32_t>(entry) - 1];
      const ChannelState& state = channels_[static_cast<std::size_t>(levels[i].key)];
      const ChannelState& other_state = channels_[static_cast<std::size_t>(other.key)];
      if (!same_open_members(state, other_state)) continue;
      if (state.capacity_Bps < other_state.capacity_Bps ||
          (state.capacity_Bps == other_state.capacity_Bps && levels[i].key < other.key)) {
        shadowed_pairs_.emplace_back(other.key, levels[i].key);
        other = levels[i];  // this one shadows the one listed
      } else {
        shadowed_pairs_.emplace_back(levels[i].key, other.key);
      }
      levels[i].key = -1;  // dropped below
      break;
    }
  }
  std::erase_if(levels, [](const Level& level) { return level.key < 0; });
}

bool MaxMinSharing::same_open_members(const ChannelState& x, const ChannelState& y) const {
  const std::uint32_t count = x.member_count - x.written;
  if (y.member_count - y.written != count || x.unfrozen_weight != y.unfrozen_weight ||
      x.frozen_load_Bps != y.frozen_load_Bps) {
    return false;
  }
  const Member* x_members = x.members.get() + x.written;
  const Member* y_members = y.members.get() + y.written;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (x_members[i].flow != y_members[i].flow ||
        x_members[i].multiplicity != y_members[i].multiplicity) {
      return false;
    }
  }
  return true;
}

}  // namespace cs::net
