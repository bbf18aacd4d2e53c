// Bisection bandwidth by maximum flow (Boost push-relabel) between two halves of the GPUs, with a
// super source feeding half A's GPUs and a super sink draining half B's.
#include "topology/bisection.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

namespace cs::topo {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, std::int64_t,
        boost::property<boost::edge_residual_capacity_t, std::int64_t,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

// Capacities are whole bytes per second: integer arithmetic keeps push-relabel exact.
std::int64_t to_capacity(double bytes_per_s) {
  return std::llround(bytes_per_s);
}

void add_arc(FlowGraph& g, std::size_t from, std::size_t to, std::int64_t capacity) {
  auto forward = boost::add_edge(from, to, g).first;
  auto backward = boost::add_edge(to, from, g).first;
  boost::put(boost::edge_capacity, g, forward, capacity);
  boost::put(boost::edge_capacity, g, backward, 0);
  boost::put(boost::edge_reverse, g, forward, backward);
  boost::put(boost::edge_reverse, g, backward, forward);
}

// side[v]: 0 for a GPU of half A, 1 for one of half B, -1 otherwise.
double max_flow_Bps(const Cluster& cluster, const std::vector<int>& side, int from_side) {
  const std::size_t n = cluster.nodes.size();
  const std::size_t source = n;
  const std::size_t sink = n + 1;
  FlowGraph g(n + 2);
  // A GPU's arc from the source (to the sink) carries at most what its own links do, so their
  // sum is never the bottleneck. A bound per GPU, not one above every link together: with
  // 131,072 GPUs the total passes 2^63 B/s, and push-relabel adds arcs' flows into one excess.
  std::vector<std::int64_t> own_links(n, 1);
  for (const Link& link : cluster.links) {
    const std::int64_t capacity = to_capacity(link.bandwidth_Bps);
    own_links[static_cast<std::size_t>(link.a)] += capacity;
    own_links[static_cast<std::size_t>(link.b)] += capacity;
    add_arc(g, static_cast<std::size_t>(link.a), static_cast<std::size_t>(link.b), capacity);
    add_arc(g, static_cast<std::size_t>(link.b), static_cast<std::size_t>(link.a), capacity);
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (side[v] == from_side) add_arc(g, source, v, own_links[v]);
    if (side[v] == 1 - from_side) add_arc(g, v, sink, own_links[v]);
  }
  return static_cast<double>(boost::push_relabel_max_flow(g, source, sink));
}

// "servers 0-3", or "server 0" for a range of one.
std::string range_text(const char* plural, const char* singular, int first, int last) {
  std::string text = last > first ? plural : singular;
  text.append(" ").append(std::to_string(first));
  if (last > first) text.append("-").append(std::to_string(last));
  return text;
}

}  // namespace

bool is_network_link(LinkKind kind) {
  return kind == LinkKind::infiniband || kind == LinkKind::ethernet || kind == LinkKind::efa;
}

Bisection compute_bisection(const Cluster& cluster) {
  Bisection result;
  std::vector<int> side(cluster.nodes.size(), -1);
  const int servers = static_cast<int>(cluster.servers.size());
  if (servers >= 2) {
    const int half = servers / 2;
    result.across_servers = true;
    result.split = range_text("servers", "server", 0, half - 1) + " | " +
                   range_text("servers", "server", half, servers - 1);
    for (int s = 0; s < servers; ++s) {
      const Server& server = cluster.servers[static_cast<std::size_t>(s)];
      const int half_of_server = s < half ? 0 : 1;
      for (int gpu : server.gpus) side[static_cast<std::size_t>(gpu)] = half_of_server;
      (half_of_server == 0 ? result.gpus_a : result.gpus_b) += static_cast<int>(server.gpus.size());
    }
    for (const Link& link : cluster.links) {
      if (!is_network_link(link.kind)) continue;
      for (int end : {link.a, link.b}) {
        const Node& node = cluster.nodes[static_cast<std::size_t>(end)];
        if (node.kind != NodeKind::nic || node.server < 0) continue;
        (node.server < half ? result.injection_a_Bps : result.injection_b_Bps) +=
            link.bandwidth_Bps;
      }
    }
  } else if (servers == 1) {
    const std::vector<int>& gpus = cluster.servers.front().gpus;
    const int count = static_cast<int>(gpus.size());
    const int half = count / 2;
    result.split = cluster.servers.front().name + ": " + range_text("GPUs", "GPU", 0, half - 1) +
                   " | " + range_text("GPUs", "GPU", half, count - 1);
    for (int i = 0; i < count; ++i)
      side[static_cast<std::size_t>(gpus[static_cast<std::size_t>(i)])] = i < half ? 0 : 1;
    result.gpus_a = half;
    result.gpus_b = count - half;
  }
  if (result.gpus_a == 0 || result.gpus_b == 0) return result;
  result.a_to_b_Bps = max_flow_Bps(cluster, side, 0);
  result.b_to_a_Bps = max_flow_Bps(cluster, side, 1);
  return result;
}

}  // namespace cs::topo
