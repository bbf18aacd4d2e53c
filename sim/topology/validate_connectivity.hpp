// Last loader check: every GPU must reach every other GPU over some chain of links, or no
// collective could ever run. Union-find over the links, linear in the cluster's size.
#pragma once

#include "topology/cluster/cluster.hpp"

namespace cs::topo {

// Throws InputError at the first GPU (in rank order) cut off from rank 0's GPU, naming both.
void check_gpus_connected(const Cluster& cluster);

}  // namespace cs::topo
