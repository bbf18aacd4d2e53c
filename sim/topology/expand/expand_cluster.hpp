// Second loader step: server templates become instances ("node2/gpu3"), GPUs get their ranks, and
// the hand-written top-level nodes and links join them.
#pragma once

#include "topology/expand/expand_builder.hpp"
#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// Largest number of nodes (and of links) a cluster may expand to. 16,384 GPUs in DGX servers is
// about 50,000 nodes; a thousand times that is a typo, not a cluster.
inline constexpr std::size_t kMaxClusterElements = 50'000'000;

// Instantiates every `cluster:` entry in order, fills Server::gpus/nics and Cluster::ranks.
void expand_servers(const spec::TopologySpec& topology, ClusterBuilder& builder);

// Adds the top-level `nodes:` (no GPUs: those belong to servers) and `links:` over global names.
void expand_top_level(const spec::TopologySpec& topology, ClusterBuilder& builder);

}  // namespace cs::topo
