// The restart: progressive filling from a restart level, over the flows a change can move (the
// other way update() re-solves is the sweep, maxmin_sweep.cpp, which update() takes for a few
// changes while it re-solves fewer flows; the sweep's lists obey the order this relies on, except
// a channel with room that it left unsorted, which reach() sorts first). All unfrozen flows
// share one rising water level; the next event is the smallest of (a channel's remaining capacity
// / the summed multiplicity of its unfrozen flows) and (an unfrozen flow's cap). The channel (or
// cap) that binds freezes its flows at that level. A channel's fair share only rises as other
// flows freeze, so the heap keeps stale, lower entries and re-pushes them with the current share
// when popped (lazy invalidation); once half its channels may have no open flow left, it is
// rebuilt instead (rebuild_heap()). A crossed channel that another one shadows (the same open
// members and frozen load, no less capacity) is not queued at all (maxmin_shadow.cpp), and one
// that carries the same flows as another, with no less capacity, is not even searched or written
// (a follower, maxmin_bundles.cpp).
//
// Which flows are re-solved (S; the rest, K, keep their rates), in exact arithmetic:
// 1. The restart level L (maxmin_restart.cpp): every flow below L is in K. Up to L the filling
//    runs as it did last time, and what is left is the filling, from L, of the flows at or above L
//    over what K leaves of each channel. Its parts not connected to a changed channel do not
//    change either, so the plain search from the changed channels crosses every channel it
//    reaches, through its flows at or above L.
// 2. The narrow search crosses only changed channels (and those marked in step 3); of any other
//    channel it reached, which then bounds S by what K leaves of it, only the top flows join S if
//    it was full (they were bottlenecked there). A kept flow at or above L keeps a full bottleneck
//    that no re-solved flow crosses. With S at L and K as it was no channel is over capacity (each
//    carried as much before), so the filling of S starts at L.
// 3. If a bounding channel fills up under a kept flow that ends above every re-solved flow on it,
//    one of those may be bottlenecked below a kept flow, which max-min forbids: the narrow search
//    runs again crossing that channel. Otherwise every flow of S is bottlenecked where no kept
//    flow is above it, and every flow of K keeps its bottleneck: the rates are max-min fair.
// The narrow search re-solves fewest flows (14 instead of 440 per update with 1k flows on the fat
// tree) but costs more per flow: its bounding channels (1.2 per re-solved flow) are queued and
// merged, and rounds repeat (1.3 per update). With 10k flows, bundles formed, it re-solves 3.3k
// flows per update counting the rounds it drops (2.6k in the round it keeps), in ~1.15 ms (~350 ns
// per flow; ~400 ns before its bounding channels were filled from the re-solved flows' uses and
// merged in place, maxmin_bound.cpp and maxmin_narrow.cpp), where the plain one re-solves 4.5k in
// ~0.92 ms (~200 ns per flow; in-process, min of 4 alternating runs). So it gives way to the plain
// one once it gathers 1/16 of the flows (a limit of 1/8 or 1/4 measured 2% and 8% slower at 10k
// flows, the plain one ~2x faster at 100k).
//
// Each channel's members are kept in ascending order of rate (the order they froze in: levels
// never fall, which the solve enforces against rounding), so the kept flows below L are a prefix,
// their load is one stored prefix sum, and a search scans a channel's list from the back down to L.
//
// Cost per update: O(P log C) per round for the P uses (flow x channel) of the re-solved flows over
// the C channels they reach, plus one pass over those channels' members at or above L (the narrow
// search reads a bounding channel's members only from its lowest re-solved slot, when it is full
// or when its commit merges them); the flows below L and the rest of the fabric are not touched.
// The heap rebuilds cost O(C) in all: each needs as many channels emptied since the last one as
// half the entries it rebuilds. Memory, not arithmetic, sets the constant: an update with 10k flows
// on the fat tree re-solves ~4.8k flows over ~38k uses, ~5.3k channels and ~38k members at or above
// L (counted), about 340 KB of channel records, 600 KB of members and 300 KB of uses at random
// places, more than the 1 MB second-level cache of the machine measured; so the search and the
// freezes prefetch the uses and channels of the flows a few steps ahead (maxmin_search.cpp). Those
// counts are from before the followers were left out (maxmin_bundles.cpp): now a plain re-solve
// there crosses ~35k uses of ~6k flows (~6 of each flow's 8) and ~4.7k channels (counted).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "network/maxmin/maxmin.hpp"

namespace cs::net {
namespace {

// Rounds of the narrow search (step 3) before the plain one takes over.
constexpr int kNarrowRounds = 4;
// The smallest heap worth rebuilding once half its channels may have no open flow left.
constexpr std::size_t kRebuildAtLeast = 64;

}  // namespace

void MaxMinSharing::resolve(double restart_Bps, std::size_t added_flows) {
  ++update_serial_;
  const std::size_t narrow_limit = narrow_search_limit_.value_or(
      std::max<std::size_t>(256, static_cast<std::size_t>(active_flows_) / 16));
  // Added flows are all re-solved: with more than the limit, the narrow search cannot win.
  for (int round = added_flows > narrow_limit ? kNarrowRounds : 0;; ++round) {
    narrow_ = round < kNarrowRounds;
    if (!collect_component(restart_Bps, narrow_ ? narrow_limit : flows_.size())) {
      round = kNarrowRounds - 1;  // too wide: the plain search next
      continue;
    }
    // A narrow search that bounded on no channel crossed every channel it reached, as the plain
    // one does: solve it plainly, writing the member lists as it goes instead of staging them (a
    // fresh batch, such as a collective's flows all starting together, is one of these).
    if (narrow_ && bounding_channels_.empty()) {
      narrow_ = false;
      for (topo::ChannelId c : component_channels_) {
        ChannelState& state = channels_[static_cast<std::size_t>(c)];
        state.load_Bps = state.frozen_load_Bps;
      }
    }
    solve_component(restart_Bps);
    if (!narrow_) {
      for (topo::ChannelId c : component_channels_) {
        ChannelState& state = channels_[static_cast<std::size_t>(c)];
        state.member_count = state.written;  // removed flows' entries drop off the end
        state.written = 0;
      }
      break;
    }
    if (!bottleneck_under_kept_flow(restart_Bps)) {
      commit();
      break;
    }
  }
  for (topo::ChannelId c : dirty_channels_) channels_[static_cast<std::size_t>(c)].dirty = false;
  dirty_channels_.clear();
}

// Queues the channel's fair share over its open flows, or, left to one open flow, makes it that
// flow's private cap: on sparse fabrics most channels are, so this keeps the heap to the shared
// channels.
void MaxMinSharing::open(topo::ChannelId channel, std::int32_t open_weight) {
  ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  state.open_count = static_cast<std::uint32_t>(open_flows_.size()) - state.first_open;
  state.unfrozen_weight = open_weight;
  queue_level(channel);
}

void MaxMinSharing::queue_level(topo::ChannelId channel) {
  const ChannelState& state = channels_[static_cast<std::size_t>(channel)];
  if (state.open_count == 0) return;
  const double share = share_Bps(state);
  if (state.open_count == 1) {
    caps_.push_back(Level{share, open_flows_[state.first_open]});
  } else {
    heap_.push_unordered(Level{share, channel});
  }
}

void MaxMinSharing::solve_component(double restart_Bps) {
  // Caps never change during a solve, so they wait in one sorted array and merge with the heap
  // of channel shares, which keeps the heap to the channels.
  std::sort(caps_.begin(), caps_.end(), Lower{});
  std::size_t next_cap = 0;
  heap_.build();
  emptied_ = 0;
  // Levels never fall in exact arithmetic; the floor keeps rounding from breaking the members'
  // rate order.
  double floor_Bps = std::isfinite(restart_Bps) ? restart_Bps : 0.0;
  std::size_t frozen = 0;
  while (frozen < component_flows_.size() && (!heap_.empty() || next_cap < caps_.size())) {
    if (emptied_ * 2 > heap_.size() && heap_.size() >= kRebuildAtLeast) rebuild_heap();
    if (!heap_.empty()) {
      const Level level = heap_.top();
      const ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
      if (state.unfrozen_weight == 0) {  // every flow on it froze elsewhere
        heap_.pop();
        continue;
      }
      const double share = share_Bps(state);
      if (share != level.rate_Bps) {  // stale: the share rose since this entry was pushed
        heap_.replace_top(Level{share, level.key});
        continue;
      }
    }
    if (next_cap < caps_.size() && (heap_.empty() || Lower{}(caps_[next_cap], heap_.top()))) {
      const auto index = static_cast<FlowIndex>(caps_[next_cap].key);
      if (flow_frozen_[static_cast<std::size_t>(index)] != visit_) {
        floor_Bps = std::max(floor_Bps, caps_[next_cap].rate_Bps);
        freeze(index, floor_Bps);
        ++frozen;
      }
      ++next_cap;
      continue;
    }
    const Level level = heap_.top();
    heap_.pop();
    floor_Bps = std::max(floor_Bps, level.rate_Bps);
    // The channel saturates: freeze its open flows.
    const ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
    const FlowIndex* open = open_flows_.data() + state.first_open;
    for (const FlowIndex* end = open + state.open_count; open != end; ++open) {
      if (end - open > 2) prefetch_uses(open[2]);
      if (end - open > 1) prefetch_channels(open[1]);
      if (flow_frozen_[static_cast<std::size_t>(*open)] != visit_) {
        freeze(*open, floor_Bps);
        ++frozen;
      }
    }
  }
  CS_ASSERT(frozen == component_flows_.size(),
            "progressive filling left " + std::to_string(component_flows_.size() - frozen) +
                " flows without a rate");
}

// Drops the entries of channels left without open flows and raises the others to their current
// shares, at once instead of one pop or re-key each. An entry keeps its key where rounding put the
// current share below it, as the lazy re-key would leave it until it came to the top, so the
// channels saturate in the same order as without the rebuild.
void MaxMinSharing::rebuild_heap() {
  std::erase_if(heap_.unordered_items(), [this](Level& level) {
    const ChannelState& state = channels_[static_cast<std::size_t>(level.key)];
    if (state.unfrozen_weight == 0) return true;
    const double share = share_Bps(state);
    level.rate_Bps = std::max(level.rate_Bps, share);
    return false;
  });
  heap_.build();
  emptied_ = 0;
}

// Gives the flow its rate. The plain solve writes it next in each of its channels' member lists
// at once; the narrow one keeps it in the solve scratch until commit(), since a round may be
// dropped.
void MaxMinSharing::freeze(FlowIndex index, double rate_Bps) {
  flow_frozen_[static_cast<std::size_t>(index)] = visit_;
  FlowState& flow = flows_[static_cast<std::size_t>(index)];
  if (narrow_) {
    flow_new_rate_[static_cast<std::size_t>(index)] = rate_Bps;
    freeze_order_.push_back(index);
    const ChannelUse* use = use_pool_.data() + flow.first_use;
    const std::uint32_t* slot = slot_pool_.data() + flow.first_use;
    for (const ChannelUse* end = use + flow.use_count; use != end; ++use, ++slot) {
      if (*slot == kFollowerUse) continue;
      freeze_log_[open_cursor_[static_cast<std::size_t>(use->channel)]++] =
          FrozenUse{index, static_cast<std::uint32_t>(use - use_pool_.data())};
      ChannelState& state = channels_[static_cast<std::size_t>(use->channel)];
      const double load = use->multiplicity * rate_Bps;
      if (std::isfinite(load)) state.frozen_load_Bps += load;
      state.unfrozen_weight -= use->multiplicity;
      if (state.unfrozen_weight == 0) ++emptied_;
    }
    return;
  }
  set_rate(index, rate_Bps);
  for (std::uint32_t u = 0; u < flow.use_count; ++u) {
    if (followers_ > 0 && slot_pool_[flow.first_use + u] == kFollowerUse) continue;
    const ChannelUse use = use_pool_[flow.first_use + u];
    ChannelState& state = channels_[static_cast<std::size_t>(use.channel)];
    const double load = use.multiplicity * rate_Bps;
    if (std::isfinite(load)) state.frozen_load_Bps += load;
    state.load_Bps += load;
    state.unfrozen_weight -= use.multiplicity;
    if (state.unfrozen_weight == 0) ++emptied_;
    const std::uint32_t slot = state.written++;
    state.members[slot] = Member{index, use.multiplicity, state.frozen_load_Bps};
    slot_pool_[flow.first_use + u] = slot;
  }
}

// A flow without a rate yet has infinity: one that gets infinity again counts as changed too.
void MaxMinSharing::set_rate(FlowIndex index, double rate_Bps) {
  double& rate = flow_rate_Bps_[static_cast<std::size_t>(index)];
  if (!all_changed_ && (rate != rate_Bps || std::isinf(rate))) changed_flows_.push_back(index);
  rate = rate_Bps;
}

}  // namespace cs::net
