// Second loader step: server templates become instances ("node2/gpu3"), GPUs get their ranks, and
// the hand-written top-level nodes and links join them.
#pragma once

#include "topology/expand/expand_builder.hpp"
#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// Largest number of nodes (and of links) a cluster may expand to. 16,384 GPUs in DGX servers is
// about 50,000 nodes; a thousand times that is a typo, not a cluster.
inline constexpr std::size_t kMaxClusterElements = 50'000'000;

// What a cluster holds once expanded.
struct ClusterSize {
  std::size_t nodes = 0;
  std::size_t links = 0;
};

// The nodes and links of the servers, their fabric and the top-level nodes, counted from the spec
// before anything is expanded (top-level links, resolved only against the built cluster, are left
// out). The fabric's arithmetic runs here (fabric.hpp, count_fabric), so a fabric that cannot join
// the servers is refused in time of the order of its links, whatever the server count.
ClusterSize count_cluster(const spec::TopologySpec& topology);

// Instantiates every `cluster:` entry in order, fills Server::gpus/nics and Cluster::ranks.
void expand_servers(const spec::TopologySpec& topology, ClusterBuilder& builder);

// Adds the top-level `nodes:` (no GPUs: those belong to servers) and `links:` over global names.
void expand_top_level(const spec::TopologySpec& topology, ClusterBuilder& builder);

}  // namespace cs::topo
