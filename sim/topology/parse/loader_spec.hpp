// A topology file as read, before expansion: server templates, instances, fabric parameters and
// hand-written parts, with every unit already a number and every value's source line kept so that
// the expansion steps can still point at the spot that is wrong. No yaml-cpp here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::topo::spec {

// Everything a link entry says about the link itself, resolved from its type and overrides.
struct LinkProps {
  LinkKind kind = LinkKind::pcie;
  std::string label;
  int generation = 0;
  int lanes = 0;
  double bandwidth_Bps = 0;
  double efficiency = 1.0;
  TimePs latency = 0;
  TimePs step_latency = 0;
};

// A `from:` / `to:` / `mesh:` value: one or more name patterns such as "gpu[0-7]".
struct NamePatterns {
  std::vector<std::string> patterns;
  std::string key;  // "from", "to" or "mesh", for messages
  SourceLoc loc;
};

struct LinkSpec {
  bool mesh = false;  // `mesh:` links every pair of `from`; `to` is unused
  NamePatterns from;
  NamePatterns to;
  LinkProps props;
  SourceLoc loc;
};

struct NodeSpec {
  std::string name;
  bool counted = false;  // `count:` given: creates name0 .. name<count-1>
  int count = 1;
  NodeKind kind = NodeKind::gpu;
  int gpu_model = -1;
  double host_memory_bandwidth_Bps = 0;
  double pageable_copy_Bps = 0;
  bool multicast = true;             // nvswitch nodes: `multicast`
  std::string cpu_vendor = "intel";  // cpu nodes: `vendor`
  SourceLoc loc;
};

struct ServerTemplate {
  std::string name;
  std::vector<NodeSpec> nodes;
  std::vector<LinkSpec> links;
  std::optional<ServerPrice> price;
  SourceLoc loc;
};

// One `cluster:` entry: `count` instances of a template named prefix0 .. prefix<count-1>.
struct InstanceSpec {
  int template_index = -1;
  int count = 1;
  std::string prefix;
  SourceLoc loc;
  SourceLoc name_loc;
};

enum class FabricKind { none, single_switch, fat_tree, rail_optimized };

struct FabricSpec {
  FabricKind kind = FabricKind::none;
  LinkProps port;               // every switch port's link (NIC-leaf and leaf-spine)
  int leaf_ports = 0;           // switch radix
  double oversubscription = 1;  // leaf down:up ratio
  int spines = 0;               // 0: as many as the uplinks need (per pod with 3 levels)
  int levels = 2;               // switch levels: 2 (leaf, spine) or 3 (leaf, pod spine, core)
  int pod_leaves = 0;           // 3 levels: leaves per pod; 0: leaf_ports / 2
  int planes = 1;               // identical switch fabrics; every NIC has one port on each
  // Per-packet spraying over every equal-cost path (EFA's SRD): the switches above the leaves
  // act as one logical switch per level, each lower switch's uplinks one trunk to it.
  bool spray = false;
  // In-network reduction (SHARP on NVIDIA Quantum InfiniBand switches): NCCL's CollNet can reduce
  // in the switches, where the NCCL_COLLNET_ENABLE option turns it on.
  bool sharp = false;
  SourceLoc loc;
  SourceLoc leaf_ports_loc;
  SourceLoc oversubscription_loc;
  SourceLoc spines_loc;
  SourceLoc levels_loc;
  SourceLoc pod_leaves_loc;
  SourceLoc planes_loc;
};

struct TopologySpec {
  std::string name;
  std::string file;
  std::vector<GpuModel> gpu_models;
  std::vector<ServerTemplate> templates;
  std::vector<InstanceSpec> instances;
  FabricSpec fabric;
  std::vector<NodeSpec> nodes;  // top level: global names, no server
  std::vector<LinkSpec> links;  // top level: patterns over global names
};

}  // namespace cs::topo::spec
