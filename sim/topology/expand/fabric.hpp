// Fabric generators: switch nodes and links that join the NICs of every server, so that a
// 1,024-node fabric is three lines of a topology file. Kinds (topologies/README.md has the rules):
//  - single_switch: every NIC on one switch;
//  - fat_tree: two levels; NICs fill leaves in server order, leaves' uplinks spread over spines;
//  - rail_optimized: NIC i of every server on the leaves of rail i, rails joined by spines.
// `spray: true` (two levels): the fabric sprays every flow's packets over all equal-cost paths
// (AWS EFA's SRD), so the spines stand as one logical spine, each leaf's uplinks one trunk to
// it; without it each flow keeps to one spine (ECMP), as the route search picks it.
#pragma once

#include "topology/expand/expand_builder.hpp"
#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// Adds the fabric's switches and links and fills Cluster::fabric. Throws InputError at the
// fabric's keys when its parameters do not fit the servers (no NICs, too few spine ports, ...).
void build_fabric(const spec::FabricSpec& fabric, ClusterBuilder& builder);

}  // namespace cs::topo
