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
// - Its level in the last solve is queued too, if it was full then: when the sweep reaches that
//   level and the channel has not saturated, the flows that were bottlenecked there are still open;
//   they will rise, so they are changed from here (raise()), and every channel they cross is
//   touched at this level, with them open.
// - A flow that a touched channel freezes at its old rate (to kSameWithin) stays unchanged and
//   touches nothing; one that moves touches every channel it crosses.
// The sweep is over when nothing is queued: every changed flow froze, and every other flow kept
// its rate. Each touched channel's members moved only above the level it was touched at, so the
// lists are re-sorted from there (sort_region()).
//
// Cost per update: O(P log Q) for the P uses of the changed flows, plus one pass over each touched
// channel's members above the level it was touched at; the untouched fabric is never read. With
// 10k flows on the fat tree an update changes ~1.7k flows and touches ~3.4k channels, against the
// ~4.8k flows and ~5.3k channels the restart re-solves (maxmin_solve.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "network/maxmin.hpp"

namespace cs::net {
namespace {

// What a queued level stands for, in the high half of its key: at one level, shares pop before
// caps, and those before old levels, so that a channel that saturates where it did before freezes
// its flows unchanged instead of raising them first.
constexpr std::int64_t kShare = 0;
constexpr std::int64_t kCap = 1;
constexpr std::int64_t kOldLevel = 2;
std::int64_t event_key(std::int64_t kind, std::int64_t id) {
  return (kind << 32) | id;
}

// A flow whose new rate is within this fraction of its old one keeps the old one bit for bit: the
// two differ only by the rounding of sums taken in another order, and a change would spread to
// every channel it crosses.
constexpr double kSameWithin = 1e-11;

// Sweeps that may leave a channel with room unsorted, its load summed by differences, before
// one sorts it and sums its load anew.
constexpr std::uint8_t kLazyCommitsAtMost = 32;

// Whether an unchanged flow at `old_Bps` froze before the sweep reached `level_Bps`. Flows frozen
// at one channel may differ by twice kSameWithin (each kept its rate within it), so a flow counts
// as frozen only clearly below the level: one within the band is still open there, and the
// channel that froze it last time, saturating or not at about its rate, decides what it does.
bool froze_below(double old_Bps, double level_Bps) {
  return old_Bps < level_Bps * (1 - 4 * kSameWithin);
}

// Re-solved flows whose channels a sweep proposes as twins, besides the added flows' (with 10k
// flows on the fat tree, 1.3k of the ~2k bundles there form within 100 updates, 1.95k within 600;
// proposing from every flow of a fresh batch instead doubled a one-shot solve's time).
constexpr std::size_t kProposeFromSettled = 32;

// Lists longer than this are sorted with std::stable_sort rather than by insertion.
constexpr std::size_t kInsertionSortAtMost = 32;

double finite_load(std::int32_t multiplicity, double rate_Bps) {
  const double load = multiplicity * rate_Bps;
  return std::isfinite(load) ? load : 0.0;
}

}  // namespace

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
      check_light(id, std::max(level_Bps, top.rate_Bps));  // re-queued if its bound rose
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
      old_level_Bps >= level_Bps) {
    heap_.push(Level{old_level_Bps, event_key(kOldLevel, channel)});
  }
  state.light = false;
  follow_exactly(channel, level_Bps);
}

// A channel touched where it had room in the last solve: while no change can fill it, it is
// followed by a bound alone, without reading its members. Its state: frozen_load_Bps is its load
// with each frozen changed flow at its new rate and every other flow at its old one, open_count
// and light_ the summed multiplicity and multiplicity x old rate of its open changed flows. It
// cannot fill below (capacity - load + open old load) / open weight: at the level L it fills at,
// its open changed flows carry at most L each and every other flow no more than its old rate.
bool MaxMinSharing::touch_light(topo::ChannelId channel, double level_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (!std::isfinite(state.capacity_Bps) || full(state.load_Bps, state.capacity_Bps)) return false;
  channel_visit_[static_cast<std::size_t>(channel)] = visit_;
  component_channels_.push_back(channel);
  state.light = true;
  state.crossed = false;
  state.frozen_load_Bps = state.load_Bps;
  state.open_count = 0;
  state.unfrozen_weight = 0;
  state.first_open = static_cast<std::uint32_t>(light_.size());  // its light_ entry, in touch order
  light_.push_back(LightScratch{0.0, std::numeric_limits<double>::infinity(), level_Bps, false});
  return true;
}

// Queues a light channel's bound where it fell, or follows the channel exactly from here once the
// bound reaches the level (or its load reaches its capacity).
void MaxMinSharing::check_light(topo::ChannelId channel, double level_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  const bool filled = full(state.frozen_load_Bps, state.capacity_Bps);
  if (state.open_count == 0 && !filled) return;
  LightScratch& light = light_of(state);
  const double bound_Bps = filled
                               ? 0.0
                               : (state.capacity_Bps - state.frozen_load_Bps + light.open_old_Bps) /
                                     static_cast<double>(state.open_count);
  if (bound_Bps <= level_Bps) {
    follow_exactly(channel, level_Bps);
  } else if (bound_Bps < light.queued_Bps) {
    if (light.in_heap) {
      light_heap_.push(Level{bound_Bps, channel});
    } else {
      if (std::isinf(light.queued_Bps)) far_light_.push_back(channel);
      far_below_Bps_ = std::min(far_below_Bps_, bound_Bps);
    }
    light.queued_Bps = bound_Bps;
  }
}

// The sweep reached the least bound queued in far_light_: the channels there that still have open
// changed flows move to light_heap_, the rest drop out. Most bounds lie far above the levels an
// update moves through, so most channels never pass through the heap.
void MaxMinSharing::queue_far_light() {
  for (topo::ChannelId c : far_light_) {
    const ChannelState& state = channels_[static_cast<std::size_t>(c)];
    if (!state.light) continue;
    LightScratch& light = light_of(state);
    if (state.open_count == 0) {
      light.queued_Bps = std::numeric_limits<double>::infinity();
      continue;
    }
    light.in_heap = true;
    light_heap_.push(Level{light.queued_Bps, c});
  }
  far_light_.clear();
  far_below_Bps_ = std::numeric_limits<double>::infinity();
}

// From its region's members (state.written on; the rest froze as in the last solve), the
// channel's frozen load and open weight at the level, and its share queued if it can bind.
void MaxMinSharing::follow_exactly(topo::ChannelId channel, double level_Bps) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.light) {
    sort_members(channel);  // by the old rates, which are all still in place
    find_region(state, light_of(state).touched_at_Bps);
  }
  state.light = false;
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

// A light channel's region, found when needed rather than when touched: its members from the
// level it was touched at, and every changed one (all of those lie there). Before commit_sweep()
// writes the new rates, or after: an unchanged member's rate is its old one either way.
void MaxMinSharing::find_region(ChannelState& state, double touched_at_Bps) const {
  const Member* members = state.members.get();
  std::uint32_t below = state.member_count;
  for (; below > 0; --below) {
    const auto flow = static_cast<std::size_t>(members[below - 1].flow);
    if (flow_visit_[flow] != visit_ && froze_below(flow_rate_Bps_[flow], touched_at_Bps)) break;
  }
  state.written = below;
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

double MaxMinSharing::share_Bps(const ChannelState& state) const {
  return std::max(0.0, state.capacity_Bps - state.frozen_load_Bps) /
         static_cast<double>(state.unfrozen_weight);
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

// The channel saturates: its open flows freeze.
void MaxMinSharing::saturate(topo::ChannelId channel, double level_Bps) {
  const ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  const Member* members = state.members.get();
  for (std::uint32_t m = state.written; m < state.member_count; ++m) {
    if (m + 2 < state.member_count) prefetch_uses(members[m + 2].flow);
    const auto flow = static_cast<std::size_t>(members[m].flow);
    if (members[m].multiplicity == 0 || flow_frozen_[flow] == visit_) continue;
    if (flow_visit_[flow] == visit_ || m >= state.first_open) settle(members[m].flow, level_Bps);
  }
}

// The flow freezes at the level; if that moves it, every channel it crosses is touched.
void MaxMinSharing::settle(FlowIndex index, double level_Bps) {
  const auto i = static_cast<std::size_t>(index);
  const bool was_open = flow_visit_[i] == visit_;  // counted open where it was touched
  if (was_open) --open_changed_;
  flow_visit_[i] = visit_;
  flow_frozen_[i] = visit_;
  const double old_Bps = flow_rate_Bps_[i];
  const bool same =
      std::isfinite(old_Bps) && std::abs(level_Bps - old_Bps) <= kSameWithin * old_Bps;
  const double rate_Bps = same ? old_Bps : level_Bps;
  flow_new_rate_[i] = rate_Bps;
  component_flows_.push_back(index);
  const FlowState& flow = flows_[i];
  prefetch_channels(index);
  for (std::uint32_t u = flow.first_use; u < flow.first_use + flow.use_count; ++u) {
    if (followers_ > 0 && slot_pool_[u] == kFollowerUse) continue;
    const ChannelUse use = use_pool_[u];
    const auto c = static_cast<std::size_t>(use.channel);
    ChannelState& state = channels_[c];
    if (channel_visit_[c] != visit_) {
      if (same) continue;
      if (!touch_light(use.channel, level_Bps)) {
        touch(use.channel, level_Bps);
        continue;
      }
    } else if (!state.light) {
      state.frozen_load_Bps += finite_load(use.multiplicity, rate_Bps);
      state.unfrozen_weight -= use.multiplicity;
      if (was_open) state.open_count -= static_cast<std::uint32_t>(use.multiplicity);
      continue;
    }
    // A light channel: the flow's load moves from its old rate to its new one. Its bound only
    // rises: a flow that froze lower leaves more room; an open one froze at the level, not above
    // the bound, and leaves the average. So it is checked only if its load reached its capacity.
    if (was_open) {
      state.open_count -= static_cast<std::uint32_t>(use.multiplicity);
      light_of(state).open_old_Bps -= finite_load(use.multiplicity, old_Bps);
    }
    if (!same) {
      state.frozen_load_Bps +=
          finite_load(use.multiplicity, rate_Bps) - finite_load(use.multiplicity, old_Bps);
      if (full(state.frozen_load_Bps, state.capacity_Bps)) check_light(use.channel, level_Bps);
    }
  }
}

// The flow was bottlenecked at a channel that has not saturated at its old level: it rises.
void MaxMinSharing::raise(FlowIndex index, double level_Bps) {
  const auto i = static_cast<std::size_t>(index);
  flow_visit_[i] = visit_;
  ++open_changed_;
  const FlowState& flow = flows_[i];
  if (std::isfinite(flow.max_rate_Bps))
    heap_.push(Level{flow.max_rate_Bps, event_key(kCap, index)});
  const double old_Bps = flow_rate_Bps_[i];
  prefetch_channels(index);
  for (std::uint32_t u = flow.first_use; u < flow.first_use + flow.use_count; ++u) {
    if (followers_ > 0 && slot_pool_[u] == kFollowerUse) continue;
    const ChannelUse use = use_pool_[u];
    const auto c = static_cast<std::size_t>(use.channel);
    ChannelState& state = channels_[c];
    if (channel_visit_[c] != visit_) {
      if (!touch_light(use.channel, level_Bps)) {
        touch(use.channel, level_Bps);
        continue;
      }
    } else if (!state.light) {
      state.open_count += static_cast<std::uint32_t>(use.multiplicity);
      consider(use.channel);
      continue;
    }
    state.open_count += static_cast<std::uint32_t>(use.multiplicity);
    light_of(state).open_old_Bps += finite_load(use.multiplicity, old_Bps);
    check_light(use.channel, level_Bps);
  }
}

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
  sort_scratch_.clear();
  for (std::uint32_t m = state.written; m < state.member_count; ++m) {
    if (members[m].multiplicity > 0) sort_scratch_.emplace_back(members[m], m);
  }
  const auto rate_of = [this](const std::pair<Member, std::uint32_t>& entry) {
    return flow_rate_Bps_[static_cast<std::size_t>(entry.first.flow)];
  };
  if (sort_scratch_.size() > kInsertionSortAtMost) {
    std::stable_sort(sort_scratch_.begin(), sort_scratch_.end(),
                     [&](const auto& x, const auto& y) { return rate_of(x) < rate_of(y); });
  } else {
    for (std::size_t k = 1; k < sort_scratch_.size(); ++k) {
      const auto entry = sort_scratch_[k];
      const double rate = rate_of(entry);
      std::size_t at = k;
      for (; at > 0 && rate_of(sort_scratch_[at - 1]) > rate; --at) {
        sort_scratch_[at] = sort_scratch_[at - 1];
      }
      sort_scratch_[at] = entry;
    }
  }
  double prefix_Bps = state.written == 0 ? 0.0 : members[state.written - 1].prefix_load_Bps;
  bool infinite = false;
  std::uint32_t slot = state.written;
  for (auto& [member, from] : sort_scratch_) {
    const double load = member.multiplicity * rate_of({member, from});
    if (std::isfinite(load)) {
      prefix_Bps += load;
    } else {
      infinite = true;
    }
    member.prefix_load_Bps = prefix_Bps;
    members[slot] = member;
    if (slot != from) set_kept_slot(member.flow, channel, slot);
    ++slot;
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

}  // namespace cs::net
