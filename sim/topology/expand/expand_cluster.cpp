// Template instantiation and top-level parts, declared in expand_cluster.hpp.
#include "topology/expand/expand_cluster.hpp"

#include <unordered_set>

#include "topology/expand/fabric.hpp"
#include "topology/parse/loader_parse.hpp"

namespace cs::topo {
namespace {

// A template expanded once with local names and indices; each instance copies it with an offset.
struct LocalTemplate {
  std::vector<Node> nodes;
  std::vector<Link> links;  // a, b are local indices
};

Node make_node(const spec::NodeSpec& s, std::string name) {
  Node node;
  node.name = name;
  node.local_name = std::move(name);
  node.kind = s.kind;
  node.gpu_model = s.gpu_model;
  node.host_memory_bandwidth_Bps = s.host_memory_bandwidth_Bps;
  node.pageable_copy_Bps = s.pageable_copy_Bps;
  node.multicast = s.multicast;
  node.cpu_vendor = s.cpu_vendor;
  node.loc = s.loc;
  return node;
}

LocalTemplate expand_template(const spec::ServerTemplate& tmpl) {
  Cluster local;
  ClusterBuilder builder(local);
  for (const auto& s : tmpl.nodes) {
    if (local.nodes.size() + static_cast<std::size_t>(s.count) >
        static_cast<std::size_t>(kMaxCount)) {
      throw InputError(s.loc, "count",
                       "server template '" + tmpl.name + "' has more than " +
                           std::to_string(kMaxCount) + " nodes");
    }
    if (!s.counted) {
      builder.add_node(make_node(s, s.name));
      continue;
    }
    for (int i = 0; i < s.count; ++i) builder.add_node(make_node(s, s.name + std::to_string(i)));
  }
  NameScope scope = builder.scope();
  scope.description = "server template '" + tmpl.name + "'";
  for (const auto& link : tmpl.links) {
    for (const auto& [a, b] :
         resolve_link_pairs(link, scope, static_cast<std::size_t>(kMaxCount))) {
      builder.add_link(a, b, link.props, link.loc);
    }
    if (local.links.size() > static_cast<std::size_t>(kMaxCount)) {
      throw InputError(link.loc, "links",
                       "server template '" + tmpl.name + "' has more than " +
                           std::to_string(kMaxCount) + " links");
    }
  }
  return {std::move(local.nodes), std::move(local.links)};
}

void check_size(const spec::InstanceSpec& instance, std::size_t existing, std::size_t per_instance,
                const char* what) {
  const std::size_t total = existing + per_instance * static_cast<std::size_t>(instance.count);
  if (total > kMaxClusterElements) {
    throw InputError(instance.loc, "count",
                     std::string("the cluster would have more than ") +
                         std::to_string(kMaxClusterElements) + " " + what);
  }
}

}  // namespace

ClusterSize count_cluster(const spec::TopologySpec& topology) {
  ClusterSize size;
  std::vector<ServerRun> runs;
  std::vector<LocalTemplate> templates;
  templates.reserve(topology.templates.size());
  for (const auto& tmpl : topology.templates) templates.push_back(expand_template(tmpl));
  for (const auto& instance : topology.instances) {
    const auto t = static_cast<std::size_t>(instance.template_index);
    const auto count = static_cast<std::size_t>(instance.count);
    size.nodes += count * templates[t].nodes.size();
    size.links += count * templates[t].links.size();
    std::size_t nics = 0;
    for (const Node& node : templates[t].nodes) nics += node.kind == NodeKind::nic ? 1 : 0;
    runs.push_back({instance.prefix + "0", topology.templates[t].name, instance.count, nics});
  }
  const FabricSize fabric = count_fabric(topology.fabric, runs);
  size.nodes += fabric.switches;
  size.links += fabric.links;
  for (const auto& s : topology.nodes)
    size.nodes += static_cast<std::size_t>(s.counted ? s.count : 1);
  return size;
}

void expand_servers(const spec::TopologySpec& topology, ClusterBuilder& builder) {
  Cluster& cluster = builder.cluster();
  std::vector<LocalTemplate> templates;
  templates.reserve(topology.templates.size());
  for (const auto& tmpl : topology.templates) templates.push_back(expand_template(tmpl));

  std::unordered_set<std::string> instance_names;
  for (const auto& instance : topology.instances) {
    const auto t = static_cast<std::size_t>(instance.template_index);
    const LocalTemplate& local = templates[t];
    check_size(instance, cluster.nodes.size(), local.nodes.size(), "nodes");
    check_size(instance, cluster.links.size(), local.links.size(), "links");
    for (int i = 0; i < instance.count; ++i) {
      Server server;
      server.name = instance.prefix + std::to_string(i);
      server.template_name = topology.templates[t].name;
      if (!instance_names.insert(server.name).second) {
        throw InputError(instance.name_loc, "name",
                         "instance name '" + server.name +
                             "' is used twice; give each cluster entry its own name prefix");
      }
      const int server_index = static_cast<int>(cluster.servers.size());
      const int offset = static_cast<int>(cluster.nodes.size());
      for (const auto& node : local.nodes) {
        Node copy = node;
        copy.name = server.name + "/" + node.local_name;
        copy.server = server_index;
        const int index = builder.add_node(std::move(copy));
        if (node.kind == NodeKind::gpu) server.gpus.push_back(index);
        if (node.kind == NodeKind::nic) server.nics.push_back(index);
      }
      for (const auto& link : local.links) {
        Link copy = link;
        copy.a += offset;
        copy.b += offset;
        cluster.links.push_back(std::move(copy));
      }
      cluster.servers.push_back(std::move(server));
    }
  }

  // Ranks: server by server in instance order, then the GPU's local order (cluster/cluster.hpp).
  for (const auto& server : cluster.servers) {
    for (int gpu : server.gpus) {
      cluster.nodes[static_cast<std::size_t>(gpu)].rank = static_cast<int>(cluster.ranks.size());
      cluster.ranks.push_back(gpu);
    }
  }
}

void expand_top_level(const spec::TopologySpec& topology, ClusterBuilder& builder) {
  for (const auto& s : topology.nodes) {
    if (s.kind == NodeKind::gpu) {
      throw InputError(s.loc, "kind",
                       "GPUs belong in a server template (so that they get a server and a rank); "
                       "top-level nodes may be cpu, pcie_switch, nvswitch, nic or switch");
    }
    const int count = s.counted ? s.count : 1;
    if (builder.cluster().nodes.size() + static_cast<std::size_t>(count) > kMaxClusterElements) {
      throw InputError(
          s.loc, "count",
          "the cluster would have more than " + std::to_string(kMaxClusterElements) + " nodes");
    }
    for (int i = 0; i < count; ++i) {
      builder.add_node(make_node(s, s.counted ? s.name + std::to_string(i) : s.name));
    }
  }
  const NameScope scope = builder.scope();
  for (const auto& link : topology.links) {
    for (const auto& [a, b] : resolve_link_pairs(link, scope, kMaxClusterElements)) {
      builder.add_link(a, b, link.props, link.loc);
    }
  }
}

}  // namespace cs::topo
