// Appends nodes and links to a Cluster while keeping a name -> index map, so that lookups stay
// O(1) at 16k GPUs and a name taken twice is reported where the second one was written.
#pragma once

#include <string>
#include <unordered_map>

#include "topology/cluster/cluster.hpp"
#include "topology/expand/expand_links.hpp"
#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

class ClusterBuilder {
 public:
  explicit ClusterBuilder(Cluster& cluster) : cluster_(cluster) {}

  Cluster& cluster() { return cluster_; }
  const Cluster& cluster() const { return cluster_; }

  // Adds a node; a name already taken throws InputError at `node.loc` under `key`.
  int add_node(Node node, const std::string& key = "name");
  void add_link(int a, int b, const spec::LinkProps& props, const SourceLoc& loc);
  int find(const std::string& name) const;  // -1 when absent

  // Every node of the cluster so far, for resolving top-level link patterns.
  NameScope scope() const;

 private:
  Cluster& cluster_;
  std::unordered_map<std::string, int> index_;
};

}  // namespace cs::topo
