// The cluster graph: a Boost adjacency_list with one edge per channel, and the route query
// (Dijkstra by latency with an early exit, scratch reused across queries, equal-cost paths spread
// by a hash of the pair).
#include "topology/graph.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "core/hash_mix.hpp"
#include "topology/fabric_routes.hpp"

namespace cs::topo {
namespace {

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                         boost::no_property, ChannelId>;

constexpr TimePs kUnreached = std::numeric_limits<TimePs>::max();
// transit_server value of a GPU: a GPU is an endpoint, bytes never pass through it.
constexpr int kNeverTransit = -2;
// transit_server value of a fabric node (a switch outside every server): any route may cross it.
constexpr int kFabric = -1;

}  // namespace

struct ClusterGraph::Impl {
  Impl(const Cluster& cluster, std::size_t node_count)
      : graph(node_count), fabric_routes(cluster), dist(node_count, kUnreached) {}

  BoostGraph graph;
  FabricRoutes fabric_routes;        // NIC to NIC through a generated three-level fabric, no search
  std::vector<TimePs> channel_cost;  // link latency + 1 ps, so fewer hops win among equal latencies
  std::vector<int> transit_server;   // per node: kNeverTransit, kFabric or its server index
  std::vector<int> plane_of;         // per node: a generated switch's plane, else -1

  // Scratch of route(): reset through `touched`, so a query costs what it explores, not O(nodes).
  std::vector<TimePs> dist;
  std::vector<int> touched;
  std::vector<std::pair<TimePs, int>> heap;
  std::vector<ChannelId> candidates;

  // Calls visit(channel, w) for every out-channel v -> w that a route to `dst` may take: w is dst,
  // a fabric node (of plane `plane` if that is >= 0 and w is a generated plane's switch), or a
  // non-GPU node of server `src_server` or `dst_server` (-1: none). Servers do not forward for
  // other servers and GPUs forward nothing. Out-edges are stored sorted by their
  // target's transit_server (GPUs, fabric, then server by server), so a leaf switch with hundreds
  // of NIC links finds the few it may take by binary search instead of scanning them all.
  template <class Visit>
  void for_each_crossable(int v, int src_server, int dst_server, int dst, int plane,
                          Visit&& visit) const {
    // Named, not a structured binding: the lambdas below capture them, which clang-tidy 14's
    // parser (clang 14) refuses for bindings though C++20 allows it.
    const auto edges = boost::out_edges(static_cast<std::size_t>(v), graph);
    const auto begin = edges.first;
    const auto end = edges.second;
    auto key = [&](auto it) { return transit_server[boost::target(*it, graph)]; };
    auto bound = [&](int wanted) {  // first edge whose key is >= wanted
      auto lo = begin;
      auto count = end - begin;
      while (count > 0) {
        const auto half = count / 2;
        if (key(lo + half) < wanted) {
          lo += half + 1;
          count -= half + 1;
        } else {
          count = half;
        }
      }
      return lo;
    };
    auto scan = [&](auto from, auto to, bool only_dst) {
      for (auto it = from; it != to; ++it) {
        const auto w = static_cast<int>(boost::target(*it, graph));
        if (only_dst && w != dst) continue;
        const int p = plane < 0 ? -1 : plane_of[static_cast<std::size_t>(w)];
        if (p < 0 || p == plane) visit(graph[*it], w);
      }
    };
    scan(bound(kFabric), bound(kFabric + 1), false);
    if (src_server >= 0) scan(bound(src_server), bound(src_server + 1), false);
    if (dst_server >= 0 && dst_server != src_server) {
      scan(bound(dst_server), bound(dst_server + 1), false);
    }
    const int dst_key = transit_server[static_cast<std::size_t>(dst)];
    if (dst_key != kFabric && dst_key != src_server && dst_key != dst_server) {
      scan(bound(dst_key), bound(dst_key + 1), true);  // dst itself is always a valid target
    }
  }
};

ClusterGraph::ClusterGraph(const Cluster& cluster)
    : cluster_(cluster), impl_(std::make_unique<Impl>(cluster, cluster.nodes.size())) {
  const std::size_t node_count = cluster.nodes.size();
  std::vector<int>& transit_server = impl_->transit_server;
  transit_server.resize(node_count);
  for (std::size_t v = 0; v < node_count; ++v) {
    const Node& node = cluster.nodes[v];
    transit_server[v] = node.kind == NodeKind::gpu ? kNeverTransit
                        : node.server < 0          ? kFabric
                                                   : node.server;
  }
  impl_->plane_of = switch_planes(cluster);
  channels_.reserve(cluster.links.size() * 2);
  impl_->channel_cost.reserve(cluster.links.size() * 2);
  for (std::size_t l = 0; l < cluster.links.size(); ++l) {
    const Link& link = cluster.links[l];
    CS_ASSERT(link.a >= 0 && link.b >= 0 && static_cast<std::size_t>(link.a) < node_count &&
                  static_cast<std::size_t>(link.b) < node_count,
              "link " + std::to_string(l) + " names a node outside the cluster");
    CS_ASSERT(link.latency >= 0, "link " + link.label + " has a negative latency");
    const int link_id = static_cast<int>(l);
    channels_.push_back(Channel{link_id, link.a, link.b});
    channels_.push_back(Channel{link_id, link.b, link.a});
    impl_->channel_cost.insert(impl_->channel_cost.end(), 2, link.latency + 1);
  }
  // Insert edges grouped by source and, within a source, sorted by the target's transit_server
  // (then channel id, so the order is fixed): for_each_crossable() relies on it.
  std::vector<ChannelId> order(channels_.size());
  for (std::size_t c = 0; c < order.size(); ++c) order[c] = static_cast<ChannelId>(c);
  auto sort_key = [&](ChannelId c) {
    const Channel& ch = channels_[static_cast<std::size_t>(c)];
    return std::tuple{ch.from, transit_server[static_cast<std::size_t>(ch.to)], c};
  };
  std::sort(order.begin(), order.end(),
            [&](ChannelId x, ChannelId y) { return sort_key(x) < sort_key(y); });
  for (ChannelId c : order) {
    const Channel& ch = channels_[static_cast<std::size_t>(c)];
    boost::add_edge(static_cast<std::size_t>(ch.from), static_cast<std::size_t>(ch.to), c,
                    impl_->graph);
  }
}

ClusterGraph::~ClusterGraph() = default;

const Link& ClusterGraph::link_of(ChannelId id) const {
  return cluster_.links[static_cast<std::size_t>(channel(id).link)];
}

double ClusterGraph::capacity_Bps(ChannelId id) const {
  return link_of(id).effective_bandwidth_Bps();
}

std::vector<double> ClusterGraph::capacities_Bps() const {
  std::vector<double> capacity(channels_.size());
  for (std::size_t c = 0; c < capacity.size(); ++c) {
    capacity[c] = capacity_Bps(static_cast<ChannelId>(c));
  }
  return capacity;
}

Route ClusterGraph::route(int src_node, int dst_node, int plane) const {
  const int node_count = static_cast<int>(cluster_.nodes.size());
  CS_ASSERT(src_node >= 0 && src_node < node_count && dst_node >= 0 && dst_node < node_count,
            "route(" + std::to_string(src_node) + ", " + std::to_string(dst_node) + ") with " +
                std::to_string(node_count) + " nodes");
  Route result;
  if (src_node == dst_node) {
    result.bottleneck_Bps = std::numeric_limits<double>::infinity();
    return result;
  }
  Impl& s = *impl_;
  for (int v : s.touched) s.dist[static_cast<std::size_t>(v)] = kUnreached;
  s.touched.clear();
  s.heap.clear();

  const Node& src = cluster_.nodes[static_cast<std::size_t>(src_node)];
  const Node& dst = cluster_.nodes[static_cast<std::size_t>(dst_node)];
  // Between servers, a NIC endpoint is reached through its network port only: a route to or from
  // a NIC never detours through that NIC's own host (in by one NIC, out by another), as fabric
  // traffic never re-enters a host. Such an endpoint lends its server's interior to no route.
  const bool across = src.server != dst.server;
  const int planes = cluster_.fabric.planes;
  // A plane asked for in a single-plane fabric, or not asked for: none enforced (the search's
  // tie-break picks one); else plane mod planes.
  const int wanted = planes > 1 && plane >= 0 ? plane % planes : -1;
  if (across && src.kind == NodeKind::nic && dst.kind == NodeKind::nic) {
    const std::uint64_t pair = hash_mix(hash_mix(static_cast<std::uint64_t>(src_node)) ^
                                        (static_cast<std::uint64_t>(dst_node) << 32));
    const int fabric_plane =
        wanted >= 0 ? wanted : static_cast<int>(hash_mix(pair ^ 3) % static_cast<unsigned>(planes));
    if (auto channels = s.fabric_routes.route(src_node, dst_node, pair, fabric_plane)) {
      result.channels = std::move(*channels);
      return finish_route(std::move(result));
    }
  }
  const int src_server = across && src.kind == NodeKind::nic ? kFabric : src.server;
  const int dst_server = across && dst.kind == NodeKind::nic ? kFabric : dst.server;
  const auto by_distance = std::greater<>{};
  s.dist[static_cast<std::size_t>(src_node)] = 0;
  s.touched.push_back(src_node);
  s.heap.emplace_back(0, src_node);
  bool reached = false;
  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), by_distance);
    const TimePs d = s.heap.back().first;  // not bindings: the lambda below captures d (above)
    const int v = s.heap.back().second;
    s.heap.pop_back();
    if (d > s.dist[static_cast<std::size_t>(v)]) continue;  // a stale entry
    if (v == dst_node) {
      reached = true;
      break;  // settled: later pops are no closer
    }
    s.for_each_crossable(v, src_server, dst_server, dst_node, wanted, [&](ChannelId c, int w) {
      const TimePs nd = d + s.channel_cost[static_cast<std::size_t>(c)];
      TimePs& dw = s.dist[static_cast<std::size_t>(w)];
      if (nd < dw) {
        if (dw == kUnreached) s.touched.push_back(w);
        dw = nd;
        s.heap.emplace_back(nd, w);
        std::push_heap(s.heap.begin(), s.heap.end(), by_distance);
      }
    });
  }
  if (!reached) {
    throw InputError(cluster_.source_file + ": no route from '" +
                     cluster_.nodes[static_cast<std::size_t>(src_node)].name + "' to '" +
                     cluster_.nodes[static_cast<std::size_t>(dst_node)].name +
                     "' (routes cross only fabric switches and the two endpoints' servers)");
  }

  // Walk back from dst. The equal-cost predecessors of v are exactly the neighbours u with
  // dist[u] + cost(u -> v) == dist[v]: every cost is >= 1 ps, so such a u was settled before dst
  // and its distance is final; an unsettled or unexplored u has a larger or unreached distance.
  // Reading them off here equals recording them during the search, without per-node lists.
  // Channel c^1 is the reverse of c (links own channels 2l and 2l + 1).
  int v = dst_node;
  for (std::uint64_t hop = 0; v != src_node; ++hop) {
    s.candidates.clear();
    const TimePs dv = s.dist[static_cast<std::size_t>(v)];
    for (const auto& edge : boost::make_iterator_range(boost::out_edges(v, s.graph))) {
      const ChannelId in_channel = s.graph[edge] ^ 1;
      const TimePs du = s.dist[boost::target(edge, s.graph)];
      if (du != kUnreached && du + s.channel_cost[static_cast<std::size_t>(in_channel)] == dv) {
        s.candidates.push_back(in_channel);
      }
    }
    CS_ASSERT(!s.candidates.empty(), "no predecessor on a settled shortest path");
    const std::uint64_t key = hash_mix(hash_mix(static_cast<std::uint64_t>(src_node)) ^
                                       (static_cast<std::uint64_t>(dst_node) << 32) ^ hop);
    const ChannelId chosen = s.candidates[key % s.candidates.size()];
    result.channels.push_back(chosen);
    v = channel(chosen).from;
  }
  std::reverse(result.channels.begin(), result.channels.end());
  return finish_route(std::move(result));
}

Route ClusterGraph::finish_route(Route route) const {
  route.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (ChannelId c : route.channels) {
    const Link& link = link_of(c);
    route.latency += link.latency;
    route.bottleneck_Bps = std::min(route.bottleneck_Bps, link.effective_bandwidth_Bps());
  }
  return route;
}

bool ClusterGraph::gpus_connected() const {
  // Breadth-first from the first GPU; GPUs are endpoints, so the search does not continue through
  // them. Server-to-server forwarding is not excluded here (see route()): no generated fabric
  // needs a third server to join two others.
  int first_gpu = -1;
  int gpu_count = 0;
  for (std::size_t v = 0; v < cluster_.nodes.size(); ++v) {
    if (cluster_.nodes[v].kind != NodeKind::gpu) continue;
    if (first_gpu < 0) first_gpu = static_cast<int>(v);
    ++gpu_count;
  }
  if (gpu_count <= 1) return true;
  std::vector<char> seen(cluster_.nodes.size(), 0);
  std::vector<int> frontier{first_gpu};
  seen[static_cast<std::size_t>(first_gpu)] = 1;
  int gpus_seen = 1;
  while (!frontier.empty()) {
    const int v = frontier.back();
    frontier.pop_back();
    for (const auto& edge : boost::make_iterator_range(boost::out_edges(v, impl_->graph))) {
      const auto w = boost::target(edge, impl_->graph);
      if (seen[w]) continue;
      seen[w] = 1;
      if (cluster_.nodes[w].kind == NodeKind::gpu) {
        ++gpus_seen;
      } else {
        frontier.push_back(static_cast<int>(w));
      }
    }
  }
  return gpus_seen == gpu_count;
}

}  // namespace cs::topo
