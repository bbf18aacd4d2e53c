// Routes for collectives at scale: a route between two nodes of one server is computed once per
// server template and translated to every other instance of that template; routes through the
// fabric (NIC to NIC) are cached per pair. Graph queries are the expensive part of planning a
// collective over thousands of GPUs.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "topology/graph.hpp"

namespace cs::coll {

struct CachedRoute {
  std::vector<topo::ChannelId> channels;
  TimePs latency = 0;
};

class RouteCache {
 public:
  explicit RouteCache(const topo::ClusterGraph& graph);

  const topo::ClusterGraph& graph() const { return graph_; }
  // The route from node a to node b; both must exist. Same-server pairs use the template cache.
  // `plane`: the fabric plane a route between servers keeps to (ClusterGraph::route), -1 any.
  CachedRoute route(int a, int b, int plane = -1);

  // The GPU of a NIC's server nearest to it by route latency (ties: the GPU whose local index
  // equals the NIC's, as NIC i serves GPU i, then the first); -1 for a server without GPUs.
  int nearest_gpu(int nic);
  // The NIC of a GPU's server nearest to it (same tie rule); -1 for a server without NICs.
  int nearest_nic(int gpu);

  std::uint64_t graph_queries() const { return graph_queries_; }

 private:
  struct LinkKey {  // a link inside a server, named by its endpoints' local ids
    int local_a = -1;
    int local_b = -1;
    int ordinal = 0;  // among links with the same endpoints, in file order
  };
  static std::uint64_t pack(std::uint64_t server, std::uint64_t x, std::uint64_t y,
                            std::uint64_t z);
  CachedRoute same_server(int server, int a, int b);
  int nearest(int node, bool want_gpu);
  CachedRoute query(int a, int b, int plane = -1);

  const topo::ClusterGraph& graph_;
  std::vector<int> local_id_;        // per node: interned local name, -1 for fabric nodes
  std::vector<int> template_id_;     // per server: interned template name
  std::vector<int> representative_;  // per template: the first server instance
  std::vector<LinkKey> link_key_;    // per link; local_a == -1 when it leaves its server
  std::vector<int> port_index_;      // per node: index in its server's gpus or nics, else -1
  std::unordered_map<std::uint64_t, int> nearest_;        // (template, want_gpu, index) -> index
  std::unordered_map<std::uint64_t, int> node_by_local_;  // (server, local id) -> node
  std::unordered_map<std::uint64_t, int> link_by_key_;    // (server, a, b, ordinal) -> link
  std::unordered_map<std::uint64_t, CachedRoute> template_routes_;  // (template, a, b)
  std::unordered_map<std::uint64_t, CachedRoute> pair_routes_;      // (plane, a, b) across servers
  std::uint64_t graph_queries_ = 0;
};

}  // namespace cs::coll
