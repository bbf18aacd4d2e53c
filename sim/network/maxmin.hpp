// Max-min fair sharing of channel capacities among flows, by progressive filling, kept
// incrementally: flows come and go, and update() re-solves only the flows connected through shared
// channels to what changed. A pure component: no time, no bytes, no event queue.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "network/quaternary_heap.hpp"
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

  // Re-solves every flow connected through shared channels to the flows added or removed since
  // the last call; returns those flows (their rates may or may not have changed).
  std::span<const FlowIndex> update();
  // The channels those flows cross, also as of the last update().
  std::span<const topo::ChannelId> updated_channels() const { return component_channels_; }

  double rate_Bps(FlowIndex flow) const { return flows_[static_cast<std::size_t>(flow)].rate_Bps; }
  std::span<const ChannelUse> uses(FlowIndex flow) const {
    const FlowState& state = flows_[static_cast<std::size_t>(flow)];
    return {use_pool_.data() + state.first_use, state.use_count};
  }
  // The flows on a channel, in no particular order.
  struct Member {
    FlowIndex flow;
    std::int32_t multiplicity;
    std::int32_t use_index;  // position of this channel in the flow's uses
  };
  std::span<const Member> members(topo::ChannelId channel) const {
    return members_[static_cast<std::size_t>(channel)];
  }
  // Sum of multiplicity * rate over the flows on the channel, as of the last update().
  double load_Bps(topo::ChannelId channel) const {
    return channels_[static_cast<std::size_t>(channel)].load_Bps;
  }
  double capacity_Bps(topo::ChannelId channel) const {
    return channels_[static_cast<std::size_t>(channel)].capacity_Bps;
  }
  int channel_count() const { return static_cast<int>(channels_.size()); }
  int active_flow_count() const { return active_flows_; }

 private:
  // Hot per-channel figures in one small record; the member lists live apart.
  struct ChannelState {
    double capacity_Bps = 0;
    double remaining_Bps = 0;          // solve scratch: capacity not yet given to frozen flows
    double load_Bps = 0;               // sum of multiplicity x rate, as of the last update()
    std::int32_t total_weight = 0;     // sum of multiplicities of the flows on it
    std::int32_t unfrozen_weight = 0;  // solve scratch: the part of it not yet frozen
    std::int32_t flow_count = 0;       // members, kept here to spare a look at the list
    std::uint32_t visit = 0;           // stamp of the last update() that reached it
    bool dirty = false;
  };
  // A flow's uses and member positions sit in pools, [first_use, first_use + use_count), so a
  // solve walks contiguous memory instead of one allocation per flow.
  struct FlowState {
    double max_rate_Bps = 0;
    double rate_Bps = 0;
    std::uint32_t first_use = 0;
    std::uint32_t use_count = 0;
    bool active = false;
  };
  struct Level {  // a candidate water level: a channel's fair share or a flow's cap
    double rate_Bps;
    std::int64_t key;  // channel id in the heap, flow index among the caps
  };
  // Pop order (rate, key): ties break on the key, so every solve is deterministic. Rates are never
  // negative or NaN, and the bits of a non-negative double order as the double does, so the pair
  // compares as one 128-bit integer, without the branches of two comparisons (the solver's
  // hottest code). The sign bit is cleared so that -0.0 ties with 0.0, as it does for `<`.
  struct Lower {
    __extension__ using Order = unsigned __int128;  // a GCC/Clang extension, on purpose
    static Order order(const Level& x) {
      const auto bits = std::bit_cast<std::uint64_t>(x.rate_Bps) & ~(std::uint64_t{1} << 63);
      return (static_cast<Order>(bits) << 64) | static_cast<std::uint64_t>(x.key);
    }
    bool operator()(const Level& x, const Level& y) const { return order(x) < order(y); }
  };

  void mark_dirty(topo::ChannelId channel);
  void compact_pools();
  void collect_component();
  void solve_component();
  void freeze(FlowIndex flow, double rate_Bps);

  std::vector<ChannelState> channels_;
  std::vector<std::vector<Member>> members_;
  std::vector<FlowState> flows_;
  // Per flow, apart from FlowState so that the hot loops touch 4 bytes per flow: the stamp of the
  // last update() that reached it, and of the last one that froze it.
  std::vector<std::uint32_t> flow_visit_;
  std::vector<std::uint32_t> flow_frozen_;
  std::vector<ChannelUse> use_pool_;
  std::vector<std::int32_t> member_index_pool_;  // per use: position in the channel's members
  std::size_t dead_uses_ = 0;                    // pool entries of removed flows
  std::vector<FlowIndex> free_flows_;
  std::vector<topo::ChannelId> dirty_channels_;
  std::vector<FlowIndex> added_without_channels_;  // solved trivially: rate = max rate
  std::vector<FlowIndex> component_flows_;
  std::vector<topo::ChannelId> component_channels_;
  QuaternaryHeap<Level, Lower> heap_;  // channel shares
  std::vector<Level> caps_;            // flow caps, sorted at the start of a solve
  std::uint32_t visit_ = 0;
  int active_flows_ = 0;
};

// One-shot solve: rates of `flows` (each a channel list with repeats) over `capacity_Bps`, with
// optional per-flow caps (empty = none).
std::vector<double> max_min_rates(const std::vector<double>& capacity_Bps,
                                  const std::vector<std::vector<topo::ChannelId>>& flows,
                                  const std::vector<double>& max_rate_Bps = {});

}  // namespace cs::net
