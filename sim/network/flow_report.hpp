// The outputs of `clustersim flows`: per-flow completion CSV, per-link utilization CSV, and the
// utilization table a person reads. Pure formatting of a ReplayResult.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "network/flow_replay.hpp"

namespace cs::net {

// id,src,dst,bytes,start_us,finish_us,duration_us,avg_rate_GBps; one row per request, in input
// order. Times are exact to the picosecond (6 decimals of us); the rate is bytes / duration, so
// it includes the latency.
std::string flows_csv(const topo::ClusterGraph& graph, const std::vector<FlowRequest>& requests,
                      const ReplayResult& result);

// One row per channel that carried bytes, by channel id:
// from,to,kind,label,capacity_GBps,bytes,busy_fraction,avg_utilization,peak_utilization.
// Fractions are over the span from the earliest start to the latest finish.
std::string links_csv(const topo::ClusterGraph& graph, const ReplayResult& result);

// A node's full name ("node0/gpu3").
const std::string& node_name(const topo::ClusterGraph& graph, int node);

// The channels that carried bytes, most bytes first (ties: lower channel id first), at most
// `limit` of them.
std::vector<topo::ChannelId> busiest_channels(const ReplayResult& result, std::size_t limit);

// The busiest `limit` channels (most bytes first) as an aligned table with a title line.
std::string links_table(const topo::ClusterGraph& graph, const ReplayResult& result,
                        Fidelity fidelity, std::size_t limit);

}  // namespace cs::net
