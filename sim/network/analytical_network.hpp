// The congestion-unaware fidelity: every flow runs as if alone, at
// min(max rate, capacity / multiplicity over its channels), and finishes after latency + bytes /
// rate. Fast, and the cross-check of FlowNetwork wherever no channel is shared.
#pragma once

#include <vector>

#include "core/event_queue.hpp"
#include "network/channel_stats.hpp"
#include "network/network_model.hpp"

namespace cs::net {

class AnalyticalNetwork final : public NetworkModel {
 public:
  AnalyticalNetwork(EventQueue& queue, const topo::ClusterGraph& graph);
  AnalyticalNetwork(EventQueue& queue, std::vector<double> capacity_Bps);

  FlowId start(FlowSpec spec, Completion on_complete) override;
  std::string_view fidelity() const override { return "analytical"; }

  // Without contention, busy_ps sums every flow's transfer time on the channel: above the
  // simulated span it shows how far the no-contention assumption is off. peak_utilization is the
  // highest single flow's load / capacity.
  ChannelStats channel_stats(topo::ChannelId channel) const {
    return stats_[static_cast<std::size_t>(channel)];
  }
  int channel_count() const { return static_cast<int>(capacity_Bps_.size()); }

 private:
  EventQueue& queue_;
  std::vector<double> capacity_Bps_;
  std::vector<ChannelStats> stats_;
  FlowId next_id_ = 0;
};

}  // namespace cs::net
