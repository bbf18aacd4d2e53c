// Each flow is scheduled once, at start, for latency + bytes / solo rate.
#include "network/analytical_network.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "network/maxmin/maxmin.hpp"
#include "network/transfer_time.hpp"

namespace cs::net {

AnalyticalNetwork::AnalyticalNetwork(EventQueue& queue, const topo::ClusterGraph& graph)
    : queue_(queue), capacity_Bps_(graph.capacities_Bps()) {
  stats_.resize(capacity_Bps_.size());
}

AnalyticalNetwork::AnalyticalNetwork(EventQueue& queue, std::vector<double> capacity_Bps)
    : queue_(queue), capacity_Bps_(std::move(capacity_Bps)) {
  stats_.resize(capacity_Bps_.size());
}

FlowId AnalyticalNetwork::start(FlowSpec spec, Completion on_complete) {
  CS_ASSERT(std::isfinite(spec.bytes) && spec.bytes >= 0,
            "flow of " + std::to_string(spec.bytes) + " bytes");
  CS_ASSERT(spec.max_rate_Bps > 0, "flow capped at a rate of " + std::to_string(spec.max_rate_Bps));
  const auto uses = count_channel_uses(spec.channels);
  for (const ChannelUse& use : uses) {
    CS_ASSERT(use.channel >= 0 && use.channel < channel_count(),
              "channel id " + std::to_string(use.channel) + " out of range");
  }
  const double rate = solo_rate_Bps(capacity_Bps_, uses, spec.max_rate_Bps);
  const TimePs transfer = transfer_time_ps(spec.bytes, rate);
  if (spec.bytes > 0) {
    for (const ChannelUse& use : uses) {
      ChannelStats& stats = stats_[static_cast<std::size_t>(use.channel)];
      stats.bytes += use.multiplicity * spec.bytes;
      stats.busy_ps += transfer;
      stats.peak_utilization =
          std::max(stats.peak_utilization,
                   use.multiplicity * rate / capacity_Bps_[static_cast<std::size_t>(use.channel)]);
    }
  }
  const TimePs at = queue_.now() + transfer + spec.latency;
  queue_.schedule(at, [callback = std::move(on_complete), at] {
    if (callback) callback(at);
  });
  return next_id_++;
}

}  // namespace cs::net
