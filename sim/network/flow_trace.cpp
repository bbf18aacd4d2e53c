// Chrome trace-event JSON of a flow replay (the format: "Trace Event Format", the async events
// "b"/"e", counters "C" and metadata "M"). nlohmann::json writes it: its objects keep their keys
// sorted, so the same replay gives the same bytes.
#include "network/flow_trace.hpp"

#include <nlohmann/json.hpp>

#include "network/flow_report.hpp"

namespace cs::net {
namespace {

double to_us(TimePs ps) {
  return static_cast<double>(ps) / static_cast<double>(kPsPerUs);
}

nlohmann::json process_name(int pid, const std::string& name) {
  return {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}};
}

}  // namespace

std::string flows_trace_json(const topo::ClusterGraph& graph,
                             const std::vector<FlowRequest>& requests, const ReplayResult& result,
                             std::size_t link_limit) {
  nlohmann::json events = nlohmann::json::array();
  // Source nodes, in node order, named once each.
  std::vector<bool> named(graph.cluster().nodes.size(), false);
  for (const FlowRequest& r : requests) named[static_cast<std::size_t>(r.src)] = true;
  for (std::size_t node = 0; node < named.size(); ++node) {
    if (!named[node]) continue;
    const int pid = static_cast<int>(node);
    events.push_back(process_name(pid, node_name(graph, pid)));
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const FlowRequest& r = requests[i];
    const std::string name = r.id + " -> " + node_name(graph, r.dst);
    const TimePs duration = result.finish[i] - r.start;
    const double rate_GBps =
        r.bytes == 0 || duration == 0 ? 0.0 : r.bytes / seconds_from_ps(duration) / 1e9;
    nlohmann::json begin = {{"ph", "b"},    {"cat", "flow"}, {"name", name},        {"id", i},
                            {"pid", r.src}, {"tid", r.src},  {"ts", to_us(r.start)}};
    begin["args"] = {{"id", r.id},
                     {"dst", node_name(graph, r.dst)},
                     {"bytes", r.bytes},
                     {"avg_rate_GBps", rate_GBps}};
    events.push_back(std::move(begin));
    events.push_back({{"ph", "e"},
                      {"cat", "flow"},
                      {"name", name},
                      {"id", i},
                      {"pid", r.src},
                      {"tid", r.src},
                      {"ts", to_us(result.finish[i])}});
  }
  // Link counters: the busiest link directions, each named by its ends and link label.
  const int links_pid = static_cast<int>(graph.cluster().nodes.size());
  const std::vector<topo::ChannelId> busiest = busiest_channels(result, link_limit);
  std::vector<std::string> counter(result.channels.size());
  for (topo::ChannelId c : busiest) {
    const topo::Channel& channel = graph.channel(c);
    counter[static_cast<std::size_t>(c)] = node_name(graph, channel.from) + " -> " +
                                           node_name(graph, channel.to) + " (" +
                                           graph.link_of(c).label + ")";
  }
  if (!busiest.empty() && !result.loads.empty()) {
    events.push_back(process_name(
        links_pid, "links (utilization, busiest " + std::to_string(busiest.size()) + ")"));
    // Above the nodes' processes.
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", links_pid},
                      {"args", {{"sort_index", -1}}}});
  }
  for (const LoadSample& sample : result.loads) {
    const std::string& name = counter[static_cast<std::size_t>(sample.channel)];
    if (name.empty()) continue;
    events.push_back({{"ph", "C"},
                      {"name", name},
                      {"pid", links_pid},
                      {"ts", to_us(sample.at)},
                      {"args", {{"utilization", sample.utilization}}}});
  }
  const nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  return trace.dump() + "\n";
}

}  // namespace cs::net
