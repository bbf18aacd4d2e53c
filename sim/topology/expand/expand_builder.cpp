// Name-indexed appending to a Cluster, declared in expand_builder.hpp.
#include "topology/expand/expand_builder.hpp"

namespace cs::topo {

int ClusterBuilder::add_node(Node node, const std::string& key) {
  const int index = static_cast<int>(cluster_.nodes.size());
  auto [it, inserted] = index_.emplace(node.name, index);
  if (!inserted) {
    const Node& first = cluster_.nodes[static_cast<std::size_t>(it->second)];
    throw InputError(node.loc, key,
                     "duplicate node name '" + node.name + "'; already defined at " +
                         first.loc.file + ":" + std::to_string(first.loc.line));
  }
  cluster_.nodes.push_back(std::move(node));
  return index;
}

void ClusterBuilder::add_link(int a, int b, const spec::LinkProps& props, const SourceLoc& loc) {
  Link link;
  link.a = a;
  link.b = b;
  link.kind = props.kind;
  link.label = props.label;
  link.generation = props.generation;
  link.lanes = props.lanes;
  link.bandwidth_Bps = props.bandwidth_Bps;
  link.efficiency = props.efficiency;
  link.latency = props.latency;
  link.step_latency = props.step_latency;
  link.loc = loc;
  cluster_.links.push_back(std::move(link));
}

int ClusterBuilder::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

NameScope ClusterBuilder::scope() const {
  NameScope scope;
  scope.index = &index_;
  scope.known = [this] {
    std::vector<std::string> names;
    names.reserve(cluster_.nodes.size());
    for (const auto& node : cluster_.nodes) names.push_back(node.name);
    return names;
  };
  scope.description = "the cluster";
  return scope;
}

}  // namespace cs::topo
