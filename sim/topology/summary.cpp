// Computes the TopologySummary of a cluster: counts and groups from the plain structs, bandwidth
// sums per GPU, the bisection by max flow, and the connection matrix from routes.
#include "topology/summary.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace cs::topo {
namespace {

std::vector<ServerGroup> group_servers(const Cluster& cluster) {
  std::vector<ServerGroup> groups;
  for (const Server& server : cluster.servers) {
    auto found = std::find_if(groups.begin(), groups.end(), [&](const ServerGroup& g) {
      return g.template_name == server.template_name;
    });
    if (found != groups.end()) {
      ++found->count;
      continue;
    }
    ServerGroup group;
    group.template_name = server.template_name;
    group.count = 1;
    group.gpus_per_server = static_cast<int>(server.gpus.size());
    group.nics_per_server = static_cast<int>(server.nics.size());
    if (const ServerPrice* price = cluster.price_of(server.template_name)) group.price = *price;
    if (!server.gpus.empty()) {
      const int model = cluster.nodes[static_cast<std::size_t>(server.gpus.front())].gpu_model;
      if (model >= 0) group.gpu_model = cluster.gpu_models[static_cast<std::size_t>(model)].name;
    }
    groups.push_back(group);
  }
  return groups;
}

std::vector<LinkGroup> group_links(const Cluster& cluster) {
  std::map<std::pair<int, std::string>, LinkGroup> by_type;
  for (const Link& link : cluster.links) {
    LinkGroup& group = by_type[{static_cast<int>(link.kind), link.label}];
    group.kind = link.kind;
    group.label = link.label;
    ++group.count;
    group.bandwidth_Bps += link.bandwidth_Bps;
  }
  std::vector<LinkGroup> groups;
  groups.reserve(by_type.size());
  for (auto& entry : by_type) groups.push_back(entry.second);
  return groups;
}

std::vector<GpuBandwidth> per_gpu_bandwidth(const Cluster& cluster) {
  std::vector<std::vector<int>> incident(cluster.nodes.size());
  for (std::size_t l = 0; l < cluster.links.size(); ++l) {
    incident[static_cast<std::size_t>(cluster.links[l].a)].push_back(static_cast<int>(l));
    incident[static_cast<std::size_t>(cluster.links[l].b)].push_back(static_cast<int>(l));
  }
  auto sum_of = [&](int node, auto&& wanted) {
    double sum = 0;
    for (int l : incident[static_cast<std::size_t>(node)]) {
      const Link& link = cluster.links[static_cast<std::size_t>(l)];
      if (wanted(link.kind)) sum += link.bandwidth_Bps;
    }
    return sum;
  };
  std::vector<GpuBandwidth> result;
  for (const Server& server : cluster.servers) {  // the first instance stands for its template
    if (server.gpus.empty()) continue;
    const bool seen = std::any_of(result.begin(), result.end(), [&](const GpuBandwidth& b) {
      return b.template_name == server.template_name;
    });
    if (seen) continue;
    GpuBandwidth bandwidth;
    bandwidth.template_name = server.template_name;
    bandwidth.nvlink_Bps = std::numeric_limits<double>::infinity();
    bandwidth.pcie_Bps = std::numeric_limits<double>::infinity();
    for (int gpu : server.gpus) {
      bandwidth.nvlink_Bps = std::min(
          bandwidth.nvlink_Bps, sum_of(gpu, [](LinkKind k) { return k == LinkKind::nvlink; }));
      bandwidth.pcie_Bps =
          std::min(bandwidth.pcie_Bps, sum_of(gpu, [](LinkKind k) { return k == LinkKind::pcie; }));
    }
    double network_Bps = 0;
    for (int nic : server.nics) network_Bps += sum_of(nic, is_network_link);
    bandwidth.network_Bps = network_Bps / static_cast<double>(server.gpus.size());
    result.push_back(bandwidth);
  }
  return result;
}

GpuMatrix matrix_of(const ClusterGraph& graph, std::string title, std::vector<int> rows,
                    std::vector<int> columns) {
  GpuMatrix matrix{std::move(title), std::move(rows), std::move(columns), {}};
  for (int a : matrix.rows) {
    auto& cells = matrix.cells.emplace_back();
    for (int b : matrix.columns) cells.push_back(classify_connection(graph, a, b));
  }
  return matrix;
}

}  // namespace

TopologySummary summarize(const ClusterGraph& graph) {
  const Cluster& cluster = graph.cluster();
  TopologySummary summary;
  summary.name = cluster.name;
  summary.source_file = cluster.source_file;
  summary.gpu_count = static_cast<int>(cluster.ranks.size());
  summary.node_count = static_cast<int>(cluster.nodes.size());
  summary.servers = group_servers(cluster);
  std::vector<char> model_used(cluster.gpu_models.size(), 0);
  for (const Node& node : cluster.nodes) {
    if (node.kind == NodeKind::gpu && node.gpu_model >= 0) {
      model_used[static_cast<std::size_t>(node.gpu_model)] = 1;
    }
    if (node.kind == NodeKind::network_switch) ++summary.fabric_switches;
  }
  for (std::size_t m = 0; m < cluster.gpu_models.size(); ++m) {
    if (model_used[m]) summary.gpu_models.push_back(cluster.gpu_models[m]);
  }
  summary.links = group_links(cluster);
  summary.per_gpu = per_gpu_bandwidth(cluster);
  summary.bisection = compute_bisection(cluster);

  if (summary.gpu_count <= kFullMatrixMaxGpus || cluster.servers.size() < 2) {
    summary.matrices.push_back(matrix_of(graph, "all GPUs", cluster.ranks, cluster.ranks));
  } else {
    summary.matrix_truncated = true;
    const Server& first = cluster.servers.front();
    const Server& last = cluster.servers.back();
    summary.matrices.push_back(matrix_of(graph, "GPUs of " + first.name, first.gpus, first.gpus));
    summary.matrices.push_back(
        matrix_of(graph, "rank 0 to the GPUs of " + last.name, {cluster.ranks.front()}, last.gpus));
  }
  return summary;
}

}  // namespace cs::topo
