// The network layer's one question: when does a transfer of B bytes along a route finish, given
// everything else in flight? Two fidelities answer it behind this interface: FlowNetwork
// (congestion-aware, max-min fair sharing) and AnalyticalNetwork (no contention).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "topology/graph.hpp"

namespace cs::net {

using FlowId = std::int64_t;

// A flow moves `bytes` across every channel it lists, all at one rate r. A channel listed k times
// carries k * r: that is how one flow stands for a whole ring step (every ring edge moving the
// same chunk at the pace of the slowest edge) without one flow per edge.
struct FlowSpec {
  std::vector<topo::ChannelId> channels;
  double bytes = 0;
  TimePs latency = 0;  // added once to the completion time (propagation, per-step overheads)
  double max_rate_Bps = std::numeric_limits<double>::infinity();  // protocol or endpoint cap
};

class NetworkModel {
 public:
  using Completion = std::function<void(TimePs finished_at)>;
  virtual ~NetworkModel() = default;
  // Starts a flow now; `on_complete` runs (from the event queue) when its last byte has arrived.
  virtual FlowId start(FlowSpec spec, Completion on_complete) = 0;
  virtual std::string_view fidelity() const = 0;
};

}  // namespace cs::net
