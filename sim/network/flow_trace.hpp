// The timeline of `clustersim flows --trace`: Chrome trace-event JSON that Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Pure formatting of a ReplayResult.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "network/flow_replay.hpp"

namespace cs::net {

// One process per source node ("node0/gpu3"), holding each of its flows as an async slice from
// its start to its completion (latency included), with the flow's id, destination, bytes and
// average rate as arguments; and a process "links" with a utilization counter (load / capacity,
// 0..1) per link direction, for the `link_limit` busiest ones (most bytes first), from the load
// samples of the replay (ReplayResult::loads: flow fidelity). Times in microseconds.
std::string flows_trace_json(const topo::ClusterGraph& graph,
                             const std::vector<FlowRequest>& requests, const ReplayResult& result,
                             std::size_t link_limit);

}  // namespace cs::net
