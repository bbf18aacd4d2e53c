// Max-min fair sharing of channel capacities among flows, by progressive filling, kept
// incrementally: flows come and go, and update() re-solves only flows whose rates the change can
// move, one of two ways: a sweep that replays the last filling and finds the flows that move as it
// goes (maxmin_sweep.cpp; a few changes), or a restart of the filling from the lowest level the
// change can reach, over the flows connected to it at or above that level (maxmin_solve.cpp). A
// pure component: no time, no bytes, no event queue.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "network/maxmin/maxmin_level.hpp"
#include "network/maxmin/quaternary_heap.hpp"
#include "topology/graph.hpp"

namespace cs::net {

// A channel a flow crosses `multiplicity` times: it loads the channel with multiplicity * rate.
struct ChannelUse {
  topo::ChannelId channel = 0;
  std::int32_t multiplicity = 0;
  bool operator==(const ChannelUse&) const = default;
};

// Folds repeated channels into uses, sorted by channel id.
std::vector<ChannelUse> count_channel_uses(std::span<const topo::ChannelId> channels);

// The rate a flow gets alone: min(max_rate, capacity / multiplicity over its channels).
double solo_rate_Bps(std::span<const double> capacity_Bps, std::span<const ChannelUse> uses,
                     double max_rate_Bps);

class MaxMinSharing {
 public:
  using FlowIndex = std::int32_t;

  // Capacities per channel id, in bytes per second (>= 0; infinity allowed).
  explicit MaxMinSharing(std::vector<double> capacity_Bps);

  // Adds a flow over `channels` (repeats allowed) with a private rate cap; its rate is defined
  // after the next update(). Indices of removed flows are reused.
  FlowIndex add(std::span<const topo::ChannelId> channels,
                double max_rate_Bps = std::numeric_limits<double>::infinity());
  void remove(FlowIndex flow);

  // Re-solves the flows whose rates the flows added or removed since the last call can change
  // (every other rate provably stays); returns those flows (their rates may or may not have
  // changed).
  std::span<const FlowIndex> update();
  // Every channel whose load the last update() may have changed (a restart lists every channel
  // the re-solved flows cross; a sweep, those a flow that moved crosses).
  std::span<const topo::ChannelId> updated_channels() const { return component_channels_; }
  // Of those flows, the ones whose rate the last update() changed, and every flow it gave a rate
  // for the first time: the rest kept their rates bit for bit. (With 10k flows on the fat tree and
  // one change, ~1.7k flows, nearly all a sweep re-solves; a restart re-solves ~4.8k.)
  std::span<const FlowIndex> changed_flows() const {
    return all_changed_ ? std::span<const FlowIndex>(component_flows_) : changed_flows_;
  }

  double rate_Bps(FlowIndex flow) const { return flow_rate_Bps_[static_cast<std::size_t>(flow)]; }
  std::span<const ChannelUse> uses(FlowIndex flow) const {
    const FlowState& state = flows_[static_cast<std::size_t>(flow)];
    return {use_pool_.data() + state.first_use, state.use_count};
  }
  // The flows on a channel as of the last update(): flows added since are not listed yet, and
  // flows removed since stay listed with multiplicity 0. In ascending order of rate, with exact
  // prefix loads, where the channel is full; one with room may list them in another order with
  // stale prefix loads (maxmin_sort.cpp). One record per
  // member, not parallel arrays of flows and loads: a freeze writes both at a random place, and
  // one cache line instead of several made a re-solve faster (BM_FlowNetworkChange).
  struct Member {
    FlowIndex flow;  // its rate: rate_Bps(flow)
    std::int32_t multiplicity;
    double prefix_load_Bps;  // finite load of the channel's members up to this one
  };
  std::span<const Member> members(topo::ChannelId channel) const {
    const ChannelState& state = listing(channel);
    return {state.members.get(), state.member_count};
  }
  // Checks, between updates, what both ways of re-solving rely on in every channel's list: no
  // entry of a removed flow and no solve scratch left; sorted by rate with exact prefix loads and
  // the load their last sum, unless flagged unsorted, and then the load the members' sum to
  // rounding. Throws (CS_ASSERT) where one fails: for tests, O(members).
  void check_lists() const;
  // Sum of multiplicity * rate over the flows on the channel, as of the last update() (on a channel
  // with room, summed by differences over at most 32 updates: exact to rounding).
  double load_Bps(topo::ChannelId channel) const { return listing(channel).load_Bps; }
  double capacity_Bps(topo::ChannelId channel) const {
    return channels_[static_cast<std::size_t>(channel)].capacity_Bps;
  }
  int channel_count() const { return static_cast<int>(channels_.size()); }
  int active_flow_count() const { return active_flows_; }
  // Channels that carry the same flows as another one with no more capacity, and are left out of
  // the solve (maxmin_bundles.cpp).
  int follower_count() const { return followers_; }

  // The most flows the narrow search of update() may gather before the plain one takes over
  // (maxmin_solve.cpp); by default max(256, active flows / 16). Tests set 0 or a large number to
  // take one path only; the rates are max-min fair either way.
  void set_narrow_search_limit(std::size_t flows) { narrow_search_limit_ = flows; }
  // The most flows added and removed since the last update() for which update() sweeps the
  // levels (maxmin_sweep.cpp) instead of restarting and searching. By default: at most
  // kSweepChanges, and only while the sweep is expected to re-solve at most 2/3 of the flows the
  // restart would (a sweep costs ~1.5x more per flow re-solved than the restart's plain search:
  // 0.29 against 0.19 us with 10k flows on the fat tree), each from its last few updates; before
  // any restart, half the active flows. After 16 restarts in a row the sweep is tried again. Tests
  // set 0 or a large number to take one path only; the rates are max-min fair either way.
  void set_sweep_limit(std::size_t changes) { sweep_limit_ = changes; }
  // A bound on the batch a sweep takes: with 10k flows on the fat tree the restart already wins
  // at 32 changes (1.6 against 2.1 ms), with 1k flows the sweep still wins 3x there.
  static constexpr std::size_t kSweepChanges = 64;

 private:
  // Hot per-channel figures in one record (one cache line). Its members, sorted by rate so that
  // the flows kept by a restart are a prefix whose load is one stored prefix sum, have an
  // allocation of their own (maxmin_members.cpp): one pool for all of them was one large
  // block, allocated afresh and faulted in page by page on every simulation (a 16k-GPU ring
  // all-reduce: 9k page faults, a third of its time), where small blocks are reused by the
  // allocator.
  struct ChannelState {
    double capacity_Bps = 0;
    double load_Bps = 0;                // sum of multiplicity x rate, as of the last update()
    double frozen_load_Bps = 0;         // solve scratch: finite load of the flows frozen so far
    std::unique_ptr<Member[]> members;  // slots written before they are read
    // Solve scratch: the multiplicity of the flows on it not yet frozen (before the solve, of the
    // flows added since the last update()).
    std::int32_t unfrozen_weight = 0;
    std::uint32_t member_count = 0;  // slots in use, removed flows' included until update()
    // Solve scratch: members in their new order so far (before the solve, flows added since the
    // last update(); 0 between updates).
    std::uint32_t written = 0;
    // Solve scratch: its unfrozen flows, in open_flows_; in a sweep, its first member not yet
    // passed (followed exactly) or its entry of light_ (light).
    std::uint32_t first_open = 0;
    std::uint32_t open_count = 0;
    std::uint32_t cross_mark = 0;  // serial of the last update() whose narrow search must cross it
    // Once `members` is allocated, it has at least 2^slots_log2 slots (exactly, after a growth).
    std::uint8_t slots_log2 = 0;
    bool dirty = false;
    bool crossed = false;  // solve scratch: the search crossed it (else it bounds); sweep: queued
    bool light = false;    // sweep scratch: followed by a bound only (maxmin_sweep.cpp)
    // Its members may be out of rate order and their prefix loads stale: a channel with room that
    // a sweep left as it was (maxmin_sort.cpp); every reader that needs the order or the prefix
    // loads calls sort_members() first, which sorts it and sums them anew.
    bool unsorted = false;
    std::uint8_t lazy_commits = 0;  // sweeps since it was last sorted, its load summed anew
    std::uint32_t slot_count() const { return members ? std::uint32_t{1} << slots_log2 : 0; }
  };
  static_assert(sizeof(ChannelState) <= 64, "a channel's hot figures fit one cache line");
  // A flow's uses and member slots sit in pools, [first_use, first_use + use_count), so a solve
  // walks contiguous memory instead of one allocation per flow.
  struct FlowState {
    double max_rate_Bps = 0;
    std::uint32_t first_use = 0;
    std::uint32_t use_count = 0;
    bool active = false;
    bool listed = false;  // in its channels' members (from the update() after its add())
  };
  using Level = MaxMinLevel;
  using Lower = MaxMinLevelBefore;

  // A channel counts as full when its load is within this fraction of its capacity. Rounding
  // makes a load summed over n members err by about n x 1.1e-16 of it, so a full channel is never
  // taken for one with room (unsafe), and one merely nearly full only widens a search or lowers a
  // restart (safe).
  static constexpr double kFullWithin = 1e-9;
  static bool full(double load_Bps, double capacity_Bps) {
    return load_Bps >= capacity_Bps * (1 - kFullWithin);
  }
  // A channel's fair share in a solve: what its frozen flows leave, over its unfrozen weight.
  static double share_Bps(const ChannelState& state) {
    return std::max(0.0, state.capacity_Bps - state.frozen_load_Bps) /
           static_cast<double>(state.unfrozen_weight);
  }

  // A use of a follower channel (maxmin_bundles.cpp) has this in place of a member slot.
  static constexpr std::uint32_t kFollowerUse = std::numeric_limits<std::uint32_t>::max();
  // leader_ and next_follower_ are allocated when the first bundle forms: a solver that never
  // forms one (a one-shot solve) neither allocates nor reads them.
  bool is_follower(topo::ChannelId channel) const {
    return followers_ > 0 && leader_[static_cast<std::size_t>(channel)] >= 0;
  }
  // The record that lists a channel's members and load: its own, or its leader's.
  const ChannelState& listing(topo::ChannelId channel) const {
    const auto c = static_cast<std::size_t>(channel);
    return channels_[is_follower(channel) ? static_cast<std::size_t>(leader_[c]) : c];
  }
  double member_rate_Bps(const Member& member) const {
    return flow_rate_Bps_[static_cast<std::size_t>(member.flow)];
  }
  void mark_dirty(topo::ChannelId channel);
  void keep_bundles_whole(std::span<const ChannelUse> uses);
  void split(topo::ChannelId follower);
  void drop_dirty_followers();
  void list_updated_followers();
  void form_bundles();
  bool same_list(const ChannelState& x, const ChannelState& y) const;
  void set_use_slots(topo::ChannelId channel, std::span<const Member> members, bool follower);
  void count_added_flows();
  bool fresh_batch() const;
  void solve_fresh_batch();
  void reserve_slots();
  double restart_level_Bps();
  double unmoved_below_Bps(const ChannelState& state) const;
  void list_added_flows();
  void compact_uses();
  void resolve(double restart_Bps, std::size_t added_flows);
  bool collect_component(double restart_Bps, std::size_t flow_limit);
  void reach(topo::ChannelId channel, double restart_Bps);
  void discover(FlowIndex flow);
  void drop_shadowed_channels();
  bool same_open_members(const ChannelState& x, const ChannelState& y) const;
  void prefetch_uses(FlowIndex index) const;
  void prefetch_top_members(topo::ChannelId channel) const;
  void prefetch_uses(const std::vector<FlowIndex>& flows, std::size_t at) const;
  void prefetch_slots(const std::vector<FlowIndex>& flows, std::size_t at) const;
  void prefetch_channels(FlowIndex index) const;
  void prefetch_unvisited_channels(const std::vector<FlowIndex>& flows, std::size_t at) const;
  void bound_channels();
  void bound(topo::ChannelId channel, std::uint32_t first_open, std::uint32_t open_count,
             std::uint32_t first_bounding);
  bool bottleneck_under_kept_flow(double restart_Bps);
  void open(topo::ChannelId channel, std::int32_t open_weight);
  void queue_level(topo::ChannelId channel);
  void solve_component(double restart_Bps);
  void rebuild_heap();
  // The sweep (maxmin_sweep.cpp).
  void sweep(std::span<const FlowIndex> added);
  void touch(topo::ChannelId channel, double level_Bps);
  bool touch_light(topo::ChannelId channel, double level_Bps);
  void check_light(topo::ChannelId channel, double level_Bps);
  void queue_far_light();
  void find_region(ChannelState& state, double touched_at_Bps) const;
  void follow_exactly(topo::ChannelId channel, double level_Bps);
  void pass_below(ChannelState& state, double level_Bps);
  double top_unchanged_Bps(const ChannelState& state) const;
  void consider(topo::ChannelId channel);
  void saturate(topo::ChannelId channel, double level_Bps);
  void settle(FlowIndex flow, double level_Bps);
  enum class Reached { counted, exact, light };
  Reached reach_use(topo::ChannelId channel, double level_Bps);
  void raise(FlowIndex flow, double level_Bps);
  void commit_sweep();
  bool sweep_pays(std::size_t changes) const;
  static void average_in(std::optional<double>& average, double value);
  void sort_region(topo::ChannelId channel);
  void sort_members(topo::ChannelId channel);
  void propose_twins(FlowIndex flow);
  void freeze(FlowIndex flow, double rate_Bps);
  void set_rate(FlowIndex flow, double rate_Bps);
  void commit();
  void write_crossed(topo::ChannelId channel);
  void merge_bounding(topo::ChannelId channel);
  void set_kept_slot(FlowIndex flow, topo::ChannelId channel, std::uint32_t slot);

  std::vector<ChannelState> channels_;
  // Bundles (maxmin_bundles.cpp): per channel, its leader if it is a follower (else -1), and the
  // next channel in its leader's chain of followers (a leader: its first follower; else -1).
  std::vector<topo::ChannelId> leader_;
  std::vector<topo::ChannelId> next_follower_;
  int followers_ = 0;
  // Of the last plain search (shadowed channel, the one that shadowed it), or proposed by the last
  // sweep (maxmin_sort.cpp): pairs to bundle if their lists come out the same.
  std::vector<std::pair<topo::ChannelId, topo::ChannelId>> shadowed_pairs_;
  // Per channel, the stamp of the last search that reached it, apart from ChannelState: the
  // search checks it once per use, and 4 bytes per channel stay in cache where a 64-byte record
  // does not.
  std::vector<std::uint32_t> channel_visit_;
  std::vector<FlowState> flows_;
  // Per flow, apart from FlowState so that the hot loops touch 4 bytes per flow: the stamp of the
  // last update() that reached it, and of the last one that froze it.
  std::vector<std::uint32_t> flow_visit_;
  std::vector<std::uint32_t> flow_frozen_;
  // Per flow, its rate as of the last update(); infinity from its add() to the update() that
  // solves it, so that it sorts last in the member lists, and so does a removed flow's entry whose
  // index a new flow took before the update() that drops the entry. A member's rate is read here
  // rather than stored with it: 16 instead of 24 bytes per member (a 16k-GPU all-reduce lists
  // 1.5M members), and the rates of the few thousand flows of a re-solve stay in cache.
  std::vector<double> flow_rate_Bps_;
  std::vector<double> flow_new_rate_;  // narrow solve scratch: the rate it froze at
  std::vector<ChannelUse> use_pool_;
  std::vector<std::uint32_t> slot_pool_;  // per use: the flow's slot in the channel's members
  std::size_t dead_uses_ = 0;             // pool entries of removed flows
  std::vector<FlowIndex> free_flows_;
  std::vector<topo::ChannelId> dirty_channels_;
  std::vector<FlowIndex> added_flows_;             // since the last update(), with channels
  std::vector<topo::ChannelId> scratch_channels_;  // those with flows added
  // The least cap among the added flows and rate among the removed ones: a ceiling on the restart.
  double restart_cap_Bps_ = std::numeric_limits<double>::infinity();
  std::vector<FlowIndex> added_without_channels_;  // solved trivially: rate = max rate
  std::vector<FlowIndex> component_flows_;
  std::vector<FlowIndex> changed_flows_;
  bool all_changed_ = false;  // a fresh batch: every flow solved is new, changed_flows_ unused
  std::vector<topo::ChannelId> component_channels_;
  std::vector<FlowIndex> open_flows_;  // per reached channel, its unfrozen flows
  // The narrow search's scratch (maxmin_solve.cpp).
  bool narrow_ = false;
  std::optional<std::size_t> narrow_search_limit_;
  std::vector<topo::ChannelId> bounding_channels_;  // reached, not crossed
  std::vector<FlowIndex> freeze_order_;
  // Per reached channel, its open flows in the order they froze, each with its use of the channel
  // (its place in the use pool): entries [first_open, first_open + open_count), like open_flows_,
  // filled at open_cursor_. A narrow commit writes each channel's list from its part alone.
  struct FrozenUse {
    FlowIndex flow;
    std::uint32_t use_at;
  };
  std::vector<FrozenUse> freeze_log_;
  // Per entry of open_flows_ from the first bounding channel's on: the flow's use of the channel.
  std::vector<std::uint32_t> open_uses_;
  // Per channel: in a narrow search, first the bounding channel's count of re-solved uses
  // (kNotBounding on the others), then its next entry of open_flows_ to fill; in a narrow solve,
  // its next entry of freeze_log_. Allocated by the first narrow search and not zeroed (reach()
  // sets a channel's before any read): a one-shot solve has none, a short simulation no memset.
  std::unique_ptr<std::uint32_t[]> open_cursor_;
  static constexpr std::uint32_t kNotBounding = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> old_slots_;  // merge_bounding() scratch
  std::vector<std::uint32_t> kept_from_;  // merge_bounding() scratch
  QuaternaryHeap<Level, Lower> heap_;     // channel shares
  // drop_shadowed_channels() scratch: per queued share of a crossed channel, a hash of the
  // channel's members above the restart level; a table of (hash, share) pairs.
  std::vector<std::uint32_t> shadow_hashes_;
  std::vector<std::uint64_t> shadow_table_;
  std::vector<Level> caps_;  // flow caps, sorted at the start of a solve
  // Channels left without open flows since the heap was last built: a bound on its dead entries.
  std::size_t emptied_ = 0;
  std::uint32_t visit_ = 0;
  std::uint32_t update_serial_ = 0;
  int active_flows_ = 0;
  std::size_t removed_since_update_ = 0;  // flows removed since the last update()
  std::optional<std::size_t> sweep_limit_;
  // What update() chooses its path by (sweep_pays()): flows re-solved per change by the sweeps,
  // and by the restarts (none yet: half the active flows), averaged over the last few; restarts
  // since the last sweep.
  std::optional<double> sweep_flows_per_change_;
  std::optional<double> restart_flows_;
  int restarts_in_a_row_ = 0;
  // The sweep's scratch: the flows added since the last update(), taken before they are listed.
  std::vector<FlowIndex> sweep_added_;
  // Per channel followed by a bound, in the order the sweep touched them (a light channel's
  // first_open indexes its entry: a few thousand entries written in turn stay in cache, where one
  // per channel would be another miss per use): the summed multiplicity x old rate of its open
  // changed flows, the bound it is queued at (infinity: not queued), and the level it was touched
  // at.
  struct LightScratch {
    double open_old_Bps;
    double queued_Bps;
    double touched_at_Bps;
    bool in_heap;  // else in far_light_, if queued
  };
  std::vector<LightScratch> light_;
  LightScratch& light_of(const ChannelState& state) { return light_[state.first_open]; }
  QuaternaryHeap<Level, Lower> light_heap_;
  // Light channels queued but not in light_heap_ yet, and the least of their bounds.
  std::vector<topo::ChannelId> far_light_;
  double far_below_Bps_ = 0;
  std::size_t open_changed_ = 0;  // changed flows not frozen yet
  // A member list region being sorted (maxmin_sort.cpp), with each entry's slot before the sort.
  std::vector<std::pair<Member, std::uint32_t>> sort_scratch_;
};

// One-shot solve: rates of `flows` (each a channel list with repeats) over `capacity_Bps`, with
// optional per-flow caps (empty = none).
std::vector<double> max_min_rates(const std::vector<double>& capacity_Bps,
                                  const std::vector<std::vector<topo::ChannelId>>& flows,
                                  const std::vector<double>& max_rate_Bps = {});

}  // namespace cs::net
