// The congestion-aware fidelity: flows share channels by max-min fairness, and rates are re-solved
// (only those the change can move: see maxmin_solve.cpp) whenever a flow starts or drains.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/event_queue.hpp"
#include "network/channel_stats.hpp"
#include "network/drain_heap.hpp"
#include "network/maxmin/maxmin.hpp"
#include "network/network_model.hpp"

namespace cs::net {

class FlowNetwork final : public NetworkModel {
 public:
  // Channel capacities come from the graph: the link's effective bandwidth (line rate x
  // efficiency).
  FlowNetwork(EventQueue& queue, const topo::ClusterGraph& graph);
  // The same over plain channel capacities (bytes/s, > 0), for tests and synthetic fabrics.
  FlowNetwork(EventQueue& queue, std::vector<double> capacity_Bps);

  FlowId start(FlowSpec spec, Completion on_complete) override;
  std::string_view fidelity() const override { return "flow"; }

  // A snapshot of one flow in flight, as of now().
  struct ActiveFlow {
    FlowId id;
    MaxMinSharing::FlowIndex index;  // its index in sharing()
    double rate_Bps;
    double max_rate_Bps;
    double remaining_bytes;
  };
  std::vector<ActiveFlow> active_flows() const;
  const MaxMinSharing& sharing() const { return sharing_; }
  ChannelStats channel_stats(topo::ChannelId channel) const;
  int channel_count() const { return sharing_.channel_count(); }

  // Runs after every re-solve, once the new rates are in place (tests check invariants here).
  void set_rates_observer(std::function<void()> observer) { observer_ = std::move(observer); }
  std::uint64_t rate_updates() const { return rate_updates_; }
  std::uint64_t flows_resolved() const { return flows_resolved_; }  // summed re-solved flows
  std::uint64_t rate_changes() const { return rate_changes_; }      // flows whose rate moved

 private:
  struct Flow {  // indexed by the flow's MaxMinSharing index
    FlowId id = -1;
    double remaining_bytes = 0;  // as of last_update
    TimePs last_update = 0;
    double rate_Bps = 0;
    double max_rate_Bps = 0;
    TimePs latency = 0;
    bool active = false;
    Completion on_complete;
  };
  struct ChannelAccount {
    double load_Bps = 0;  // as of last_change
    TimePs last_change = 0;
    ChannelStats stats;  // up to last_change
  };

  void request_update();
  void apply_update();
  void arm_wakeup();
  void on_wakeup(std::uint64_t version);
  void on_drained(MaxMinSharing::FlowIndex index);
  void finish(Completion on_complete, TimePs at);
  // Adds bytes a flow moved to every channel it crosses (k times for a channel it crosses k times).
  void credit(MaxMinSharing::FlowIndex index, double bytes);
  double moved_since_update(const Flow& flow) const;

  EventQueue& queue_;
  MaxMinSharing sharing_;
  std::vector<Flow> flows_;
  std::vector<ChannelAccount> accounts_;
  DrainHeap drains_;  // every solved flow in flight, by drain time
  bool wakeup_armed_ = false;
  TimePs wakeup_at_ = 0;
  std::uint64_t wakeup_version_ = 0;
  std::function<void()> observer_;
  FlowId next_id_ = 0;
  bool update_pending_ = false;
  std::uint64_t rate_updates_ = 0;
  std::uint64_t flows_resolved_ = 0;
  std::uint64_t rate_changes_ = 0;
};

}  // namespace cs::net
