// Reads a topology YAML file into a Cluster: parse, expand server templates and fabric generators,
// then validate in one pass. yaml-cpp stays in loader.cpp and parse/; this header hands out a
// plain Cluster.
#pragma once

#include <string>
#include <string_view>

#include "topology/cluster/cluster.hpp"

namespace cs::topo {

// What a command line may change in a file as it loads.
struct LoadOptions {
  // --nodes: the server count of the file's one `cluster:` entry (0: as the file says); the
  // fabric generator sizes itself to it. A file of several entries, or several servers and no
  // fabric generator, is refused.
  int servers = 0;
};

// Throws InputError ("file:line: key 'k': what is wrong; what would be valid") on any bad input.
Cluster load_cluster(const std::string& path, const LoadOptions& options = {});
// The same from text; `display_name` stands in for the file name in messages.
Cluster load_cluster_from_string(std::string_view yaml_text, const std::string& display_name,
                                 const LoadOptions& options = {});

}  // namespace cs::topo
