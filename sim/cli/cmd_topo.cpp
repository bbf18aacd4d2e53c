// `clustersim topo FILE [--json]`: loads a topology, builds its graph and prints the summary a
// person reads (servers, links, per-GPU bandwidth, bisection, GPU matrix), or the same as JSON.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/input/node_counts.hpp"
#include "core/error.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"
#include "topology/summary.hpp"

namespace cs::cli {
namespace {

using nlohmann::json;

// JSON has no infinity: an unbounded figure (a GPU to itself) becomes null.
json bandwidth_json(double bytes_per_s) {
  return std::isinf(bytes_per_s) ? json(nullptr) : json(bytes_per_s);
}

json matrix_json(const topo::Cluster& cluster, const topo::GpuMatrix& matrix) {
  auto rank_of = [&](int node) { return cluster.nodes[static_cast<std::size_t>(node)].rank; };
  json rows = json::array();
  for (std::size_t i = 0; i < matrix.rows.size(); ++i) {
    json cells = json::array();
    for (std::size_t j = 0; j < matrix.columns.size(); ++j) {
      const topo::GpuConnection& c = matrix.cells[i][j];
      cells.push_back({{"rank", rank_of(matrix.columns[j])},
                       {"connection", topo::to_string(c)},
                       {"bandwidth_Bps", bandwidth_json(c.bandwidth_Bps)},
                       {"line_rate_Bps", bandwidth_json(c.line_rate_Bps)},
                       {"latency_ps", c.latency},
                       {"hops", c.hops}});
    }
    rows.push_back({{"rank", rank_of(matrix.rows[i])},
                    {"node", cluster.nodes[static_cast<std::size_t>(matrix.rows[i])].name},
                    {"cells", cells}});
  }
  return {{"title", matrix.title}, {"rows", rows}};
}

json summary_json(const topo::Cluster& cluster, const topo::TopologySummary& s) {
  json out;
  out["name"] = s.name;
  out["file"] = topo::base_name(s.source_file);
  out["gpu_count"] = s.gpu_count;
  out["node_count"] = s.node_count;
  out["network_switches"] = s.fabric_switches;
  if (!cluster.fabric.kind.empty()) {
    const topo::FabricInfo& f = cluster.fabric;
    // Switch counts are totals over every plane.
    out["fabric"] = {{"kind", f.kind},
                     {"planes", f.planes},
                     {"levels", f.levels},
                     {"leaves", f.leaves.size()},
                     {"spines", f.spines.size()},
                     {"cores", f.cores.size()},
                     {"pods", f.pods},
                     {"leaf_ports", f.leaf_ports},
                     {"oversubscription", f.oversubscription},
                     {"spray", f.spray}};
    // Spraying builds one logical spine per plane (topology/expand/fabric.hpp); the physical count,
    // every plane.
    if (f.spray) out["fabric"]["sprayed_spines"] = f.sprayed_spines * f.planes;
  }
  for (const auto& g : s.servers) {
    out["servers"].push_back({{"template", g.template_name},
                              {"count", g.count},
                              {"gpus_per_server", g.gpus_per_server},
                              {"nics_per_server", g.nics_per_server},
                              {"gpu_model", g.gpu_model}});
    if (g.price) {
      out["servers"].back()["price_per_hour"] = {
          {"usd", g.price->usd_per_hour}, {"source", g.price->source}, {"date", g.price->date}};
    }
  }
  for (const auto& m : s.gpu_models) {
    out["gpu_models"].push_back({{"name", m.name},
                                 {"bf16_flops", m.bf16_flops},
                                 {"fp16_flops", m.fp16_flops},
                                 {"fp32_flops", m.fp32_flops},
                                 {"memory_bytes", m.memory_bytes},
                                 {"memory_bandwidth_Bps", m.memory_bandwidth_Bps}});
  }
  for (const auto& l : s.links) {
    out["links_by_type"].push_back({{"kind", topo::to_string(l.kind)},
                                    {"label", l.label},
                                    {"count", l.count},
                                    {"total_bandwidth_Bps", l.bandwidth_Bps}});
  }
  for (const auto& b : s.per_gpu) {
    out["per_gpu_bandwidth"].push_back({{"template", b.template_name},
                                        {"nvlink_Bps", b.nvlink_Bps},
                                        {"pcie_Bps", b.pcie_Bps},
                                        {"network_Bps", b.network_Bps}});
  }
  const topo::Bisection& b = s.bisection;
  out["bisection"] = {{"split", b.split},
                      {"across_servers", b.across_servers},
                      {"gpus_a", b.gpus_a},
                      {"gpus_b", b.gpus_b},
                      {"a_to_b_Bps", b.a_to_b_Bps},
                      {"b_to_a_Bps", b.b_to_a_Bps},
                      {"injection_a_Bps", b.injection_a_Bps},
                      {"injection_b_Bps", b.injection_b_Bps}};
  out["matrix_truncated"] = s.matrix_truncated;
  out["matrices"] = json::array();
  for (const auto& m : s.matrices) out["matrices"].push_back(matrix_json(cluster, m));
  return out;
}

}  // namespace

void add_topo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("topo", "Summarize a topology file");
  auto file = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto nodes = std::make_shared<std::string>();
  cmd->add_option("file", *file, "Topology YAML file")->required();
  add_nodes_option(cmd, *nodes, false);
  cmd->add_flag("--json", *as_json, "Print the summary as JSON");
  cmd->callback([file, as_json, nodes] {
    const std::vector<int> counts = parse_node_counts(*nodes);
    if (counts.size() > 1) throw InputError("--nodes: topo takes one server count");
    const topo::Cluster cluster = topo::load_cluster(*file, {counts.front()});
    const topo::ClusterGraph graph(cluster);
    const topo::TopologySummary summary = topo::summarize(graph);
    if (*as_json) {
      std::cout << summary_json(cluster, summary).dump(2) << "\n";
    } else {
      std::cout << topo::format_summary(summary, cluster);
    }
  });
}

}  // namespace cs::cli
