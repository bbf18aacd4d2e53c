// Formatting of flow completions and link utilization; numbers printed with fixed precision so
// that the same input prints the same text.
#include "network/flow_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::net {
namespace {

// Whole picoseconds as microseconds with six decimals, exactly (no floating point).
std::string exact_us(TimePs ps) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%lld.%06lld", static_cast<long long>(ps / kPsPerUs),
                static_cast<long long>(ps % kPsPerUs));
  return buffer;
}

std::string number(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string bytes_text(double bytes) {
  return bytes == std::floor(bytes) && bytes < 1e15 ? number("%.0f", bytes)
                                                    : number("%.17g", bytes);
}

double busy_fraction(const ChannelStats& stats, double span_s) {
  return span_s > 0 ? seconds_from_ps(stats.busy_ps) / span_s : 0.0;
}

double avg_utilization(const ChannelStats& stats, double capacity_Bps, double span_s) {
  return span_s > 0 ? stats.bytes / (capacity_Bps * span_s) : 0.0;
}

std::vector<topo::ChannelId> used_channels(const ReplayResult& result) {
  std::vector<topo::ChannelId> used;
  for (std::size_t c = 0; c < result.channels.size(); ++c) {
    if (result.channels[c].bytes > 0) used.push_back(static_cast<topo::ChannelId>(c));
  }
  return used;
}

}  // namespace

const std::string& node_name(const topo::ClusterGraph& graph, int node) {
  return graph.cluster().nodes[static_cast<std::size_t>(node)].name;
}

std::vector<topo::ChannelId> busiest_channels(const ReplayResult& result, std::size_t limit) {
  std::vector<topo::ChannelId> used = used_channels(result);
  std::stable_sort(used.begin(), used.end(), [&](topo::ChannelId x, topo::ChannelId y) {
    return result.channels[static_cast<std::size_t>(x)].bytes >
           result.channels[static_cast<std::size_t>(y)].bytes;
  });
  used.resize(std::min(used.size(), limit));
  return used;
}

std::string flows_csv(const topo::ClusterGraph& graph, const std::vector<FlowRequest>& requests,
                      const ReplayResult& result) {
  std::string out = "id,src,dst,bytes,start_us,finish_us,duration_us,avg_rate_GBps\n";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const FlowRequest& r = requests[i];
    const TimePs duration = result.finish[i] - r.start;
    const double rate_GBps =
        r.bytes == 0 ? 0.0 : r.bytes / seconds_from_ps(duration) / 1e9;  // inf if duration is 0
    out += r.id + "," + node_name(graph, r.src) + "," + node_name(graph, r.dst) + "," +
           bytes_text(r.bytes) + "," + exact_us(r.start) + "," + exact_us(result.finish[i]) + "," +
           exact_us(duration) + "," + number("%.3f", rate_GBps) + "\n";
  }
  return out;
}

std::string links_csv(const topo::ClusterGraph& graph, const ReplayResult& result) {
  const double span_s = seconds_from_ps(result.end - result.begin);
  std::string out =
      "from,to,kind,label,capacity_GBps,bytes,busy_fraction,avg_utilization,peak_utilization\n";
  for (topo::ChannelId c : used_channels(result)) {
    const topo::Channel& channel = graph.channel(c);
    const topo::Link& link = graph.link_of(c);
    const ChannelStats& stats = result.channels[static_cast<std::size_t>(c)];
    out += node_name(graph, channel.from) + "," + node_name(graph, channel.to) + "," +
           topo::to_string(link.kind) + "," + link.label + "," +
           number("%.3f", graph.capacity_Bps(c) / 1e9) + "," + bytes_text(stats.bytes) + "," +
           number("%.6f", busy_fraction(stats, span_s)) + "," +
           number("%.6f", avg_utilization(stats, graph.capacity_Bps(c), span_s)) + "," +
           number("%.6f", stats.peak_utilization) + "\n";
  }
  return out;
}

std::string links_table(const topo::ClusterGraph& graph, const ReplayResult& result,
                        Fidelity fidelity, std::size_t limit) {
  const double span_s = seconds_from_ps(result.end - result.begin);
  const std::size_t carried = used_channels(result).size();
  const std::vector<topo::ChannelId> used = busiest_channels(result, limit);
  std::string out = "Link utilization over " + exact_us(result.begin) + " .. " +
                    exact_us(result.end) + " us (" + std::to_string(carried) +
                    " link directions carried bytes";
  if (carried > limit) out += "; the " + std::to_string(limit) + " busiest shown";
  out += ")\n";
  if (fidelity == Fidelity::analytical) {
    out +=
        "analytical fidelity: busy sums each flow's transfer time (above 1 = flows overlapped "
        "and would have shared), peak is the largest single flow\n";
  }
  std::size_t from_width = 4;
  std::size_t to_width = 2;
  std::size_t label_width = 4;
  for (topo::ChannelId c : used) {
    from_width = std::max(from_width, node_name(graph, graph.channel(c).from).size());
    to_width = std::max(to_width, node_name(graph, graph.channel(c).to).size());
    label_width = std::max(label_width, graph.link_of(c).label.size());
  }
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s  %-*s  %-*s  %12s  %6s  %6s  %6s\n",
                static_cast<int>(from_width), "from", static_cast<int>(to_width), "to",
                static_cast<int>(label_width), "link", "bytes", "busy", "avg", "peak");
  out += line;
  for (topo::ChannelId c : used) {
    const ChannelStats& stats = result.channels[static_cast<std::size_t>(c)];
    std::snprintf(line, sizeof line, "  %-*s  %-*s  %-*s  %12s  %6.3f  %6.3f  %6.3f\n",
                  static_cast<int>(from_width), node_name(graph, graph.channel(c).from).c_str(),
                  static_cast<int>(to_width), node_name(graph, graph.channel(c).to).c_str(),
                  static_cast<int>(label_width), graph.link_of(c).label.c_str(),
                  units::format_size(stats.bytes).c_str(), busy_fraction(stats, span_s),
                  avg_utilization(stats, graph.capacity_Bps(c), span_s), stats.peak_utilization);
    out += line;
  }
  return out;
}

}  // namespace cs::net
