// load_cluster: read the file, parse the YAML, expand templates and fabric, validate. The steps
// live in parse/ (loader_parse), expand/ (expand_cluster, fabric) and validate_connectivity.
#include "topology/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>

#include "core/input_file.hpp"
#include "core/memory_limit.hpp"
#include "topology/expand/expand_cluster.hpp"
#include "topology/expand/fabric.hpp"
#include "topology/parse/loader_parse.hpp"
#include "topology/validate_connectivity.hpp"

namespace cs::topo {

namespace {

// --nodes N: the one cluster entry's count becomes N before anything is expanded.
void resize_servers(spec::TopologySpec& topology, int servers) {
  const std::string flag = "--nodes " + std::to_string(servers);
  if (topology.instances.size() != 1) {
    throw InputError(topology.instances[1].loc, "cluster",
                     flag + " sets the count of a cluster of one entry; this file lists " +
                         std::to_string(topology.instances.size()) +
                         " (set each entry's count in the file instead)");
  }
  if (servers > kMaxCount) {
    throw InputError(flag + ": at most " + std::to_string(kMaxCount) + " servers");
  }
  if (servers > 1 && topology.fabric.kind == spec::FabricKind::none) {
    throw InputError(topology.instances[0].loc, "fabric",
                     flag + " needs a fabric generator to join the servers, and " + topology.file +
                         " has none (add e.g. fabric: {kind: fat_tree, leaf_ports: 64, link: "
                         "{type: infiniband, rate: NDR}})");
  }
  topology.instances[0].count = servers;
}

// Refuses, before anything is built, a cluster whose fabric cannot join its servers (counting it
// runs the fabric's checks) or whose estimated size passes the memory it may take.
void check_size(const spec::TopologySpec& topology, const LoadOptions& options) {
  const ClusterSize size = count_cluster(topology);
  const std::uint64_t bytes = size.nodes * kNodeBytes + size.links * kLinkBytes;
  MemoryLimit limit = usable_memory();
  if (options.memory_bytes > 0) limit = {options.memory_bytes, "the memory given"};
  if (bytes <= limit.bytes || topology.instances.empty()) return;
  // The entry with the most servers is the one to shrink.
  const spec::InstanceSpec* largest = &topology.instances.front();
  for (const spec::InstanceSpec& i : topology.instances) {
    if (i.count > largest->count) largest = &i;
  }
  char gb[2][32];
  std::snprintf(gb[0], sizeof gb[0], "%.3g", static_cast<double>(bytes) / 1e9);
  std::snprintf(gb[1], sizeof gb[1], "%.3g", static_cast<double>(limit.bytes) / 1e9);
  throw InputError(largest->loc, "count",
                   "the cluster would take about " + std::string(gb[0]) +
                       " GB to load and route (" + std::to_string(size.nodes) + " nodes, " +
                       std::to_string(size.links) + " links), more than the " + gb[1] + " GB of " +
                       limit.what + "; use fewer servers");
}

}  // namespace

Cluster load_cluster(const std::string& path, const LoadOptions& options) {
  return load_cluster_from_string(read_input_file(path, "topology file"), path, options);
}

Cluster load_cluster_from_string(std::string_view yaml_text, const std::string& display_name,
                                 const LoadOptions& options) {
  check_is_text(yaml_text, display_name, "a topology file is YAML text");
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based; a mark it could not place has line -1.
    throw InputError(SourceLoc{display_name, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "",
                     "malformed YAML: " + e.msg);
  }
  spec::TopologySpec topology = parse_topology(root, display_name);
  if (options.servers > 0) resize_servers(topology, options.servers);

  Cluster cluster;
  // Without `name:`, the file's stem (topologies/foo.yaml -> foo), as output headers show it.
  const std::string stem = std::filesystem::path(display_name).stem().string();
  cluster.name = !topology.name.empty() ? topology.name : stem.empty() ? display_name : stem;
  cluster.source_file = display_name;
  cluster.gpu_models = topology.gpu_models;
  for (const spec::ServerTemplate& t : topology.templates) {
    if (t.price) cluster.prices.push_back(*t.price);
  }
  ClusterBuilder builder(cluster);
  try {
    check_size(topology, options);
    expand_servers(topology, builder);
    build_fabric(topology.fabric, builder);
    expand_top_level(topology, builder);
    check_gpus_connected(cluster);
  } catch (const InputError& e) {
    // A file that loads as written but not resized: say which flag made it fail.
    if (options.servers <= 0) throw;
    throw InputError("with --nodes " + std::to_string(options.servers) + ": " + e.what());
  }
  return cluster;
}

}  // namespace cs::topo
