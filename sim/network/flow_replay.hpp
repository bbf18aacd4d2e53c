// Runs a connection matrix on one network fidelity and collects what `clustersim flows` reports:
// each flow's finish time and each channel's bytes, busy time and peak utilization.
#pragma once

#include <string_view>
#include <vector>

#include "network/channel_stats.hpp"
#include "network/flow_table.hpp"
#include "topology/graph.hpp"

namespace cs::net {

enum class Fidelity { flow, analytical };

// "flow" or "analytical"; InputError naming both otherwise.
Fidelity parse_fidelity(std::string_view text);

// A link direction's utilization (load / capacity) from `at` until its next sample.
struct LoadSample {
  TimePs at = 0;
  topo::ChannelId channel = 0;
  double utilization = 0;
};

struct ReplayResult {
  std::vector<TimePs> finish;          // per request, in input order
  std::vector<ChannelStats> channels;  // per channel id
  TimePs begin = 0;                    // earliest start
  TimePs end = 0;                      // latest finish
  // Every change of a channel's utilization, in order of time, then channel id (one sample per
  // channel and time: the last of the updates at that time). Recorded only when asked, by the flow
  // fidelity only: the analytical one has no shared load to sample.
  std::vector<LoadSample> loads;
};

// Each request becomes a flow at its start time: between two GPUs a peer copy (a GPU to itself:
// a device-local copy, net::device_copy), otherwise the route between the nodes.
// InputError (at the request's CSV line) if there is no route, or if a node other than a GPU is
// its own destination. `record_loads` fills
// ReplayResult::loads (flow fidelity).
ReplayResult replay_flows(const topo::ClusterGraph& graph, const std::vector<FlowRequest>& requests,
                          Fidelity fidelity, bool record_loads = false);

}  // namespace cs::net
