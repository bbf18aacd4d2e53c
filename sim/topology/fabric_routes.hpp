// Routes through a generated three-level fabric (expand/fabric.hpp, `levels: 3`) without a graph
// search: NIC -> leaf -> (pod spine -> (core -> pod spine)) -> leaf -> NIC in the plane asked for
// (one unless the fabric has `planes`), the equal-cost choices of spine and core spread by a hash
// of the pair as the graph's search spreads them. A Dijkstra search through 5,000 switches costs
// milliseconds; a 131,072-GPU ring or all-to-all needs millions of NIC-to-NIC routes. Used only
// where the generator built every switch link (nothing a file added by hand joins the fabric), so
// that these paths are exactly the shortest ones.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "topology/cluster/cluster.hpp"

namespace cs::topo {

// Per node: the plane of each generated switch (fabric lists hold plane 0's switches first, then
// plane 1's, the same count per plane: expand/fabric.cpp), -1 for every other node.
std::vector<int> switch_planes(const Cluster& cluster);

class FabricRoutes {
 public:
  // Empty (`usable()` false) unless the cluster's fabric has three levels, and only generated
  // links.
  explicit FabricRoutes(const Cluster& cluster);

  bool usable() const { return usable_; }
  // The channels (link l: 2l from a to b, 2l + 1 back) from NIC `src` to NIC `dst` of another
  // server through plane `plane` (0 .. planes - 1), choices drawn from `hash`; nullopt when
  // either is not a NIC on a generated leaf.
  std::optional<std::vector<std::int32_t>> route(int src, int dst, std::uint64_t hash,
                                                 int plane) const;

 private:
  struct Hop {
    int node = -1;           // the switch at the far end
    std::int32_t up = -1;    // channel towards it
    std::int32_t down = -1;  // channel back
  };
  bool usable_ = false;
  int planes_ = 1;
  std::vector<int> pod_;       // per node: pod of a leaf or spine within its plane, else -1
  std::vector<Hop> nic_leaf_;  // per (node, plane), node * planes + plane: a NIC's leaf
  std::vector<std::vector<Hop>> above_;  // per node: leaf -> its spines, spine -> its cores
  std::vector<std::vector<Hop>> below_;  // per core: its spines, one per pod (indexed by pod)
};

}  // namespace cs::topo
