// The sweep: an update that re-solves only the flows whose rates move, found as it goes, by
// replaying the last progressive filling level by level and doing work only where it differs.
//
// Why it works, in exact arithmetic. Progressive filling saturates channels in rising order of
// level; a flow freezes at the first level one of its channels saturates at (or its cap). Call a
// flow changed once the sweep knows its rate differs from the last solve's, and a channel touched
// once a change reached it (a flow added or removed there, or a changed flow crossing it).
// - An untouched channel sees the same flows as in the last filling, and each of them froze at the
//   same level as before, so it saturates where it did and freezes the same flows at the same
//   rates: it needs no work at all. Neither does a flow that stays unchanged.
// - A touched channel is followed exactly from the level it was touched at. Its flows below that
//   level froze as before (any change to one would have touched it then), so their load is one
//   stored prefix sum of the rate-sorted members; a flow above the level counts as open until the
//   sweep passes its old rate (then it froze there, if nothing changed it: pass_below()) or freezes
//   it. Its share is queued when it can bind: when a changed flow on it is still open, or when the
//   share is not above its highest open unchanged flow. Otherwise it is parked: its share only
//   rises while nothing on it changes (every flow that freezes takes no more than the share).
// - Its level in the last solve (its highest old rate still listed) is queued too, if it was full:
// when the sweep reaches that
//   level and the channel has not saturated, the flows that were bottlenecked there are still open;
//   they will rise, so they are changed from here (raise()), and every channel they cross is
//   touched at this level, with them open.
// - A flow that a touched channel freezes at its old rate (to kSameWithin) stays unchanged and
//   touches nothing; one that moves touches every channel it crosses.
// - A channel that had room in the last solve, touched by a flow that moved, is followed by a
//   bound alone while it cannot fill (maxmin_light.cpp): most channels a change reaches are such,
//   and they never bind.
// The sweep is over when nothing is queued: every changed flow froze, and every other flow kept
// its rate. Each touched channel's members moved only above the level it was touched at, so the
// lists are re-sorted from there (maxmin_sort.cpp); a channel that still has room is left
// unsorted, its load summed by differences, until something reads its order.
//
// Here: the loop over queued levels and the channels followed exactly; flows freeze and rise in
// maxmin_settle.cpp.
//
// Cost per update: O(P log Q) for the P uses of the flows that move, plus a pass over each exactly
// followed channel's members above the level it was touched at (all of them for a channel a flow
// was added to or removed from), and a scan from the top of its list each time it may park; the
// untouched fabric is never read. With 10k flows on the fat tree (BM_MaxMinChange/10000, bundles
// formed) an update re-solves ~1.7k flows (nearly all of them move), follows ~520 channels exactly
// and ~2k by a bound, and pops ~1.7k levels: ~0.5 ms, where the restart re-solves ~4.8k flows over
// ~4.7k channels in ~0.95 ms. With 100k flows nearly half of them move and the two cost about the
// same.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "network/maxmin/maxmin.hpp"
#include "network/maxmin/maxmin_sweep.hpp"

namespace cs::net {

using sweep::event_key;
using sweep::finite_load;
using sweep::froze_below;
using sweep::kCap;
using sweep::kOldLevel;
using sweep::kShare;

void MaxMinSharing::sweep(std::span<const FlowIndex> added) {
  ++visit_;
  ++update_serial_;
  narrow_ = false;
  component_flows_.clear();
  component_channels_.clear();
  shadowed_pairs_.clear();
  heap_.clear();
  light_heap_.clear();
  far_light_.clear();
  far_below_Bps_ = std::numeric_limits<double>::infinity();
  light_.clear();
  open_changed_ = added.size();
  for (FlowIndex index : added) {
    flow_visit_[static_cast<std::size_t>(index)] = visit_;
    const double cap = flows_[static_cast<std::size_t>(index)].max_rate_Bps;
    if (std::isfinite(cap)) heap_.push(Level{cap, event_key(kCap, index)});
  }
  for (topo::ChannelId c : dirty_channels_) {
    if (channel_visit_[static_cast<std::size_t>(c)] != visit_) touch(c, 0.0);
  }
  double level_Bps = 0;  // the sweep's: it never falls, whatever rounding does to a share
  // Bounds matter only while a changed flow is open: with none, the light channels cannot fill.
  while (!heap_.empty() || (open_changed_ > 0 && !(light_heap_.empty() && far_light_.empty()))) {
    const bool light_first =
        !light_heap_.empty() && (heap_.empty() || Lower{}(light_heap_.top(), heap_.top()));
    const double next_Bps = light_first     ? light_heap_.top().rate_Bps
                            : heap_.empty() ? std::numeric_limits<double>::infinity()
                                            : heap_.top().rate_Bps;
    if (!far_light_.empty() && far_below_Bps_ <= next_Bps) {
      queue_far_light();
      continue;
    }
    if (light_first) {
      const Level top = light_heap_.top();
      const auto id = static_cast<std::int32_t>(top.key);
      const ChannelState& state = channels_[static_cast<std::size_t>(id)];
      light_heap_.pop();
      if (!state.light) continue;  // followed exactly since
      LightScratch& light = light_of(state);
      if (light.queued_Bps != top.rate_Bps) continue;  // not the entry it is queued at
      light.queued_Bps = std::numeric_limits<double>::infinity();
      light.in_heap = false;
      // The sweep has reached the bound: every level below it is done.
      level_Bps = std::max(level_Bps, top.rate_Bps);
      check_light(id, level_Bps);  // re-queued if its bound rose
      continue;
    }
    const Level top = heap_.top();
    const std::int64_t kind = top.key >> 32;
    const auto id = static_cast<std::int32_t>(top.key & 0xFFFFFFFF);
    const double at_Bps = std::max(level_Bps, top.rate_Bps);
    if (kind == kCap) {
      heap_.pop();
      if (flow_frozen_[static_cast<std::size_t>(id)] != visit_) {
        level_Bps = at_Bps;
        settle(id, level_Bps);
      }
      continue;
    }
    ChannelState& state = channels_[static_cast<std::size_t>(id)];
    if (kind == kOldLevel) {
      heap_.pop();
      if (state.unfrozen_weight == 0) continue;
      level_Bps = at_Bps;
      pass_below(state, level_Bps);
      const Member* members = state.members.get();
      for (std::uint32_t m = state.first_open; m < state.member_count; ++m) {
        const auto flow = static_cast<std::size_t>(members[m].flow);
        if (members[m].multiplicity > 0 && flow_visit_[flow] != visit_) {
          raise(members[m].flow, level_Bps);
        }
      }
      consider(id);
      continue;
    }
    if (state.unfrozen_weight > 0) pass_below(state, at_Bps);
    if (state.unfrozen_weight == 0) {
      heap_.pop();
      state.crossed = false;
      continue;
    }
    const double share = share_Bps(state);
    if (share > top.rate_Bps && state.open_count == 0 && share > top_unchanged_Bps(state)) {
      heap_.pop();  // parked (see the top of this file)
      state.crossed = false;
    } else if (share != top.rate_Bps) {
      heap_.replace_top(Level{share, top.key});
    } else {
      heap_.pop();
      state.crossed = false;
      level_Bps = at_Bps;
      saturate(id, level_Bps);
    }
  }
  CS_ASSERT(open_changed_ == 0,
            "the sweep left " + std::to_string(open_changed_) + " changed flows without a rate");
  commit_sweep();
}

// The channel's state from `level_Bps` on: its members below it froze as in the last solve (a
// prefix), the changed ones count as they stand now, the rest are open.
void MaxMinSharing::touch(topo::ChannelId channel, double level_Bps) {
  channel_visit_[static_cast<std::size_t>(channel)] = visit_;
  if (is_follower(channel)) return;  // left out (maxmin_bundles.cpp)
  sort_members(channel);
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  component_channels_.push_back(channel);
  const Member* members = state.members.get();
  std::uint32_t below = state.member_count;
  double old_level_Bps = -1;  // its highest rate in the last solve
  for (; below > 0; --below) {
    const Member& member = members[below - 1];
    if (member.multiplicity == 0) continue;  // removed since
    const auto flow = static_cast<std::size_t>(member.flow);
    const double old_Bps = flow_rate_Bps_[flow];
    if (old_level_Bps < 0 && std::isfinite(old_Bps)) old_level_Bps = old_Bps;
    if (flow_visit_[flow] != visit_ && froze_below(old_Bps, level_Bps)) break;
  }
  state.written = below;
  if (std::isfinite(state.capacity_Bps) && full(state.load_Bps, state.capacity_Bps) &&
      !froze_below(old_level_Bps, level_Bps)) {
    heap_.push(Level{old_level_Bps, event_key(kOldLevel, channel)});
  }
  follow_exactly(channel, level_Bps);
}

// From its region's members (state.written on; the rest froze as in the last solve), the
// channel's frozen load and open weight at the level, and its share queued if it can bind.
void MaxMinSharing::follow_exactly(topo::ChannelId channel, double level_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.light) {        // a light channel converts (between updates no channel is light)
    sort_members(channel);  // by the old rates, which are all still in place
    find_region(state, light_of(state).touched_at_Bps);
    state.light = false;
  }
  const Member* members = state.members.get();
  double frozen_Bps = 0;
  std::int32_t weight = 0;
  std::int32_t open = 0;
  for (std::uint32_t m = state.written; m < state.member_count; ++m) {
    const Member& member = members[m];
    if (member.multiplicity == 0) continue;  // removed since
    const auto flow = static_cast<std::size_t>(member.flow);
    if (flow_frozen_[flow] == visit_) {
      frozen_Bps += finite_load(member.multiplicity, flow_new_rate_[flow]);
    } else {
      weight += member.multiplicity;
      if (flow_visit_[flow] == visit_) open += member.multiplicity;
    }
  }
  state.first_open = state.written;
  state.frozen_load_Bps =
      (state.written == 0 ? 0.0 : members[state.written - 1].prefix_load_Bps) + frozen_Bps;
  state.unfrozen_weight = weight;
  state.open_count = static_cast<std::uint32_t>(open);
  state.crossed = false;
  pass_below(state, level_Bps);
  consider(channel);
}

// The channel's unchanged open members with an old rate below the level froze there.
void MaxMinSharing::pass_below(ChannelState& state, double level_Bps) {
  const Member* members = state.members.get();
  for (; state.first_open < state.member_count; ++state.first_open) {
    const Member& member = members[state.first_open];
    const auto flow = static_cast<std::size_t>(member.flow);
    if (member.multiplicity == 0 || flow_visit_[flow] == visit_) continue;
    const double old_Bps = flow_rate_Bps_[flow];
    if (!froze_below(old_Bps, level_Bps)) break;
    state.frozen_load_Bps += finite_load(member.multiplicity, old_Bps);
    state.unfrozen_weight -= member.multiplicity;
  }
}

// The old rate of the channel's highest open unchanged member, or -1 if none.
double MaxMinSharing::top_unchanged_Bps(const ChannelState& state) const {
  const Member* members = state.members.get();
  for (std::uint32_t m = state.member_count; m > state.first_open; --m) {
    const auto flow = static_cast<std::size_t>(members[m - 1].flow);
    if (members[m - 1].multiplicity > 0 && flow_visit_[flow] != visit_) return flow_rate_Bps_[flow];
  }
  return -1;
}

// Queues the channel's share unless it is queued already or parks (see the top of this file).
void MaxMinSharing::consider(topo::ChannelId channel) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.crossed || state.unfrozen_weight == 0) return;
  const double share = share_Bps(state);
  if (state.open_count == 0 && share > top_unchanged_Bps(state)) return;
  heap_.push(Level{share, event_key(kShare, channel)});
  state.crossed = true;
}

}  // namespace cs::net
