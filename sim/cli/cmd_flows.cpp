// `clustersim flows --topology T --flows F.csv`: replays a connection matrix on the network model
// and prints each flow's completion (CSV) and the per-link utilization table.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/output/output_files.hpp"
#include "cli/output/output_guard.hpp"
#include "network/flow_report.hpp"
#include "network/flow_trace.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace cs::cli {
namespace {

struct FlowsOptions {
  std::string topology;
  std::string flows;
  std::string fidelity = "flow";
  std::string csv_out;
  std::string links_csv_out;
  std::string trace_out;
  std::size_t top = 20;
};

void run_flows(const FlowsOptions& options) {
  refuse_outputs_over_inputs(
      {{"--csv", options.csv_out},
       {"--links-csv", options.links_csv_out},
       {"--trace", options.trace_out}},
      {{"--topology file", options.topology}, {"--flows file", options.flows}});
  const topo::Cluster cluster = topo::load_cluster(options.topology);
  const topo::ClusterGraph graph(cluster);
  const auto requests = net::load_flow_table(options.flows, cluster);
  const net::Fidelity fidelity = net::parse_fidelity(options.fidelity);
  const net::ReplayResult result =
      net::replay_flows(graph, requests, fidelity, !options.trace_out.empty());
  const std::string flows = net::flows_csv(graph, requests, result);
  // Every file is written before anything is printed, and all of them or none.
  OutputFiles files;
  files.add("--csv", options.csv_out, flows);
  if (!options.links_csv_out.empty())
    files.add("--links-csv", options.links_csv_out, net::links_csv(graph, result));
  if (!options.trace_out.empty()) {
    files.add("--trace", options.trace_out,
              net::flows_trace_json(graph, requests, result, options.top));
  }
  files.write_all();
  if (options.csv_out.empty()) std::cout << flows << "\n";
  std::cout << net::links_table(graph, result, fidelity, options.top);
}

}  // namespace

void add_flows_command(CLI::App& app) {
  auto options = std::make_shared<FlowsOptions>();
  auto* cmd = app.add_subcommand(
      "flows", "Replay a connection matrix (CSV: id,src,dst,bytes,start) on the network model");
  cmd->add_option("--topology,-t", options->topology, "Topology YAML file")->required();
  cmd->add_option("--flows", options->flows, "Flows CSV: id,src,dst,bytes,start")->required();
  cmd->add_option("--fidelity", options->fidelity,
                  "flow (max-min sharing, default) or analytical (no contention)")
      ->check(CLI::IsMember({"flow", "analytical"}));
  cmd->add_option("--csv", options->csv_out,
                  "Write the per-flow CSV to this file instead of standard output");
  cmd->add_option("--links-csv", options->links_csv_out, "Write per-link utilization CSV here");
  cmd->add_option("--trace", options->trace_out,
                  "Write a Chrome trace (JSON for Perfetto): flows per source node, and the "
                  "utilization of the --top busiest link directions over time (flow fidelity)");
  cmd->add_option("--top", options->top, "Link directions shown in the table (default 20)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            return !text.empty() && text.size() <= 9 &&
                           text.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "takes a count of 0 or more, got '" + text + "'";
          },
          "COUNT"));
  cmd->callback([options] { run_flows(*options); });
}

}  // namespace cs::cli
