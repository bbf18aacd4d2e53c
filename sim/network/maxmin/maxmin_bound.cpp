// The narrow search's bounding channels (maxmin_solve.cpp, steps 2 and 3): each one's open list,
// kept load and share before the solve, and after it the check that no re-solved flow is
// bottlenecked under a kept one there.
#include <algorithm>
#include <cmath>

#include "network/maxmin/maxmin.hpp"

namespace cs::net {

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

}  // namespace cs::net
