// Fabric generators: switch nodes and links that join the NICs of every server, so that a
// 1,024-node fabric is three lines of a topology file. Kinds (topologies/README.md has the rules):
//  - single_switch: every NIC on one switch;
//  - fat_tree: two levels; NICs fill leaves in server order, leaves' uplinks spread over spines;
//  - rail_optimized: NIC i of every server on the leaves of rail i, rails joined by spines.
// `spray: true` (two levels): the fabric sprays every flow's packets over all equal-cost paths
// (AWS EFA's SRD), so the spines stand as one logical spine, each leaf's uplinks one trunk to
// it; without it each flow keeps to one spine (ECMP), as the route search picks it.
// The generators' arithmetic also runs alone (count_fabric), so that the loader refuses a fabric
// that cannot join the servers before it builds any of them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topology/expand/expand_builder.hpp"
#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// Adds the fabric's switches and links and fills Cluster::fabric. Throws InputError at the
// fabric's keys when its parameters do not fit the servers (no NICs, too few spine ports, ...).
void build_fabric(const spec::FabricSpec& fabric, ClusterBuilder& builder);

// Servers of one template in a row, as a fabric sees them: a `cluster:` entry before expansion.
struct ServerRun {
  std::string first_name;  // the first server's instance name ("node0"), for messages
  std::string template_name;
  long long count = 0;
  std::size_t nics = 0;  // per server
};

// What a fabric adds to a cluster.
struct FabricSize {
  std::size_t switches = 0;
  std::size_t links = 0;
};

// The switches and links build_fabric would add for `servers` (in cluster order), counted without
// building them, with the same InputErrors: time of the order of the fabric's links, memory of
// its switches, nothing per server.
FabricSize count_fabric(const spec::FabricSpec& fabric, const std::vector<ServerRun>& servers);

}  // namespace cs::topo
