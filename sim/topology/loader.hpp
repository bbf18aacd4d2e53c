// Reads a topology YAML file into a Cluster: parse, expand server templates and fabric generators,
// then validate in one pass. yaml-cpp stays in loader.cpp and parse/; this header hands out a
// plain Cluster.
#pragma once

#include <cstdint>
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
  // The memory the loaded cluster and its graph may take; 0: what this process may use
  // (core/memory_limit.hpp). A cluster whose estimate (kNodeBytes, kLinkBytes) is larger is
  // refused before it is built.
  std::uint64_t memory_bytes = 0;
};

// What a node and a link take once loaded and routed (Cluster with its name index, and
// ClusterGraph), for the estimate the loader holds against the memory. Measured: the peak RSS of
// load_cluster and ClusterGraph on 2,000 and 8,000 servers of a template of 202 nodes and 2 links
// and of one of 22 nodes and 192 links gives 425 bytes a node and 283 a link; rounded up so that
// dgx-h100-16384node-roce.yaml (381,952 nodes, 770,048 links: 421 MiB measured) is not
// underestimated (435 MiB).
inline constexpr std::uint64_t kNodeBytes = 550;
inline constexpr std::uint64_t kLinkBytes = 320;

// Throws InputError ("file:line: key 'k': what is wrong; what would be valid") on any bad input.
Cluster load_cluster(const std::string& path, const LoadOptions& options = {});
// The same from text; `display_name` stands in for the file name in messages.
Cluster load_cluster_from_string(std::string_view yaml_text, const std::string& display_name,
                                 const LoadOptions& options = {});

}  // namespace cs::topo
