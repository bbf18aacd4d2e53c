// The cluster as a directed graph: each link becomes two link directions ("channels") with their
// own capacity, and routes between endpoints are lists of channels. Boost.Graph stays inside
// graph.cpp; everything above this layer sees only channel ids and the queries below.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "topology/cluster/cluster.hpp"

namespace cs::topo {

// One direction of a link. Link l has channels 2l (a -> b) and 2l + 1 (b -> a).
using ChannelId = std::int32_t;

struct Channel {
  int link = -1;
  int from = -1;  // node index
  int to = -1;    // node index
};

// A path through the graph as the channels it crosses, in order, with its totals.
struct Route {
  std::vector<ChannelId> channels;
  TimePs latency = 0;         // sum of hop latencies
  double bottleneck_Bps = 0;  // min effective bandwidth along the path; inf for src == dst
  int hops() const { return static_cast<int>(channels.size()); }
};

class ClusterGraph {
 public:
  explicit ClusterGraph(const Cluster& cluster);
  ~ClusterGraph();
  ClusterGraph(const ClusterGraph&) = delete;
  ClusterGraph& operator=(const ClusterGraph&) = delete;

  const Cluster& cluster() const { return cluster_; }
  int channel_count() const { return static_cast<int>(channels_.size()); }
  const Channel& channel(ChannelId id) const { return channels_[static_cast<std::size_t>(id)]; }
  const Link& link_of(ChannelId id) const;
  double capacity_Bps(ChannelId id) const;     // effective bandwidth of the channel's link
  std::vector<double> capacities_Bps() const;  // every channel's, by channel id

  // Shortest path by latency (one extra picosecond per hop prefers fewer hops); ties between
  // equal-cost paths (fat-tree spines) are broken by a hash of (src, dst), so the same pair always
  // takes the same path and different pairs spread evenly. Throws InputError if unreachable.
  // NIC to NIC through a generated three-level fabric, the up-down path is built without a search
  // (fabric_routes.hpp): the same set of shortest paths, spread by the same kind of hash.
  // A route never passes through a GPU, nor through a server other than the endpoints' own
  // (servers do not forward). In a multi-plane fabric (FabricInfo::planes) `plane` >= 0 keeps the
  // route on that plane's switches (taken mod the plane count); -1 lets the tie-break choose.
  // Reuses scratch inside the graph: one thread per graph at a time.
  Route route(int src_node, int dst_node, int plane = -1) const;

  // Whether every GPU can reach every other GPU.
  bool gpus_connected() const;

 private:
  struct Impl;
  Route finish_route(Route route) const;  // latency and bottleneck of route.channels

  const Cluster& cluster_;
  std::vector<Channel> channels_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cs::topo
