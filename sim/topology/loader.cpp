// load_cluster: read the file, parse the YAML, expand templates and fabric, validate. The steps
// live in loader_parse, expand_cluster, fabric and validate_connectivity.
#include "topology/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "core/input_file.hpp"
#include "topology/expand_cluster.hpp"
#include "topology/fabric.hpp"
#include "topology/loader_parse.hpp"
#include "topology/validate_connectivity.hpp"

namespace cs::topo {

Cluster load_cluster(const std::string& path) {
  return load_cluster_from_string(read_input_file(path, "topology file"), path);
}

Cluster load_cluster_from_string(std::string_view yaml_text, const std::string& display_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based; a mark it could not place has line -1.
    throw InputError(SourceLoc{display_name, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "",
                     "malformed YAML: " + e.msg);
  }
  const spec::TopologySpec topology = parse_topology(root, display_name);

  Cluster cluster;
  // Without `name:`, the file's stem (topologies/foo.yaml -> foo), as output headers show it.
  const std::string stem = std::filesystem::path(display_name).stem().string();
  cluster.name = !topology.name.empty() ? topology.name : stem.empty() ? display_name : stem;
  cluster.source_file = display_name;
  cluster.gpu_models = topology.gpu_models;
  ClusterBuilder builder(cluster);
  expand_servers(topology, builder);
  build_fabric(topology.fabric, builder);
  expand_top_level(topology, builder);
  check_gpus_connected(cluster);
  return cluster;
}

}  // namespace cs::topo
