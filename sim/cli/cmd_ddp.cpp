// `clustersim ddp`: one training step of a model on a topology's GPUs, with PyTorch DDP or
// without it: step time, samples/s and where the time went; --trace writes the host thread and
// the GPU's streams as a Chrome trace.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/input/coll_args.hpp"
#include "cli/input/node_counts.hpp"
#include "cli/output/output_files.hpp"
#include "cli/output/output_guard.hpp"
#include "cli/step/ddp_predict.hpp"
#include "cli/step/ddp_report.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

struct DdpArgs {
  std::string topology;
  std::string model;
  std::string ranks;  // empty: 1, or every GPU with --nodes
  std::string nodes;
  StepFlags step;
  int global_batch = 0;  // --global-batch: the micro-batches derived from it
  int dp = 0;            // --dp: the data-parallel degree, checked against the ranks
  std::string calibration;
  bool csv = false;
  bool json = false;
  std::string trace;
};

// The step's options on `ranks` GPUs: --dp checked against ranks / (TP x PP), and --global-batch
// turned into micro-batches of --batch per data-parallel rank.
workload::TrainingOptions layout_options(const DdpArgs& a, const workload::TrainingOptions& base,
                                         std::size_t ranks) {
  workload::TrainingOptions o = base;
  const int degree = o.parallel.degree();
  const int n = static_cast<int>(ranks);
  if (n % degree != 0) return o;  // predict_ddp names --tp
  const int dp = n / degree;
  if (a.dp > 0 && a.dp != dp) {
    throw InputError("flag '--dp': " + std::to_string(a.dp) + " data-parallel ranks, but " +
                     std::to_string(n) + " ranks / (TP " + std::to_string(o.parallel.tp) +
                     " x PP " + std::to_string(o.parallel.pp) + ") = " + std::to_string(dp));
  }
  if (a.global_batch > 0) {
    if (a.global_batch % (dp * o.batch) != 0) {
      throw InputError("flag '--global-batch': " + std::to_string(a.global_batch) +
                       " does not split into micro-batches of " + std::to_string(o.batch) +
                       " over " + std::to_string(dp) + " data-parallel ranks");
    }
    o.grad_accum = a.global_batch / (dp * o.batch);
  }
  return o;
}

void run_ddp(const DdpArgs& a) {
  refuse_outputs_over_inputs({{"--trace", a.trace}}, {{"--topology file", a.topology},
                                                      {"--model file", a.model},
                                                      {"--calibration file", a.calibration}});
  const std::vector<int> counts = parse_node_counts(a.nodes);
  if (counts.size() > 1 && !a.trace.empty()) {
    throw InputError("--trace: the trace is one step; give --nodes one count");
  }
  const workload::Model model = workload::load_model_file(a.model);
  const workload::TrainingOptions base = step_options(a.step, model);
  if (a.global_batch > 0 && a.step.grad_accum > 1)
    throw InputError("flag '--global-batch': give it or --grad-accum, not both");
  std::optional<cal::Calibration> calibration;
  if (!a.calibration.empty()) calibration = cal::load_calibration(a.calibration);
  // Every count is predicted before anything is printed: a count that fails prints nothing.
  std::string text;
  nlohmann::json json = nlohmann::json::array();
  OutputFiles files;
  for (const int servers : counts) {
    topo::Cluster cluster = topo::load_cluster(a.topology, {servers});
    // With --nodes the step runs on every GPU of the resized cluster unless -n says otherwise.
    const std::string rank_text = !a.ranks.empty() ? a.ranks : servers > 0 ? "" : "1";
    const std::vector<int> ranks = parse_ranks(rank_text, static_cast<int>(cluster.ranks.size()));
    if (calibration) apply_calibration(*calibration, cluster, ranks);
    const workload::TrainingOptions options = layout_options(a, base, ranks.size());
    // The trace shows the busiest link directions of the all-reduces beside the streams.
    constexpr int kTraceLinks = 8;
    const DdpPrediction p =
        predict_ddp(cluster, model, options, ranks, calibration ? &*calibration : nullptr,
                    a.trace.empty() ? 0 : kTraceLinks);
    const DdpReport report{model,
                           cluster,
                           p.gpu,
                           options,
                           p.plan,
                           p.result,
                           p.memory,
                           p.compute,
                           p.ranks,
                           p.servers,
                           &p.busiest_links,
                           static_cast<int>(p.fsdp_plan.units.size()),
                           p.fsdp_plan.options,
                           p.parallel ? &*p.parallel : nullptr};
    files.add("--trace", a.trace, ddp_trace_json(report));
    if (a.json) {
      json.push_back(ddp_json(report));
    } else if (a.csv) {
      const std::string csv = ddp_csv(report);
      text += text.empty() ? csv : csv.substr(csv.find('\n') + 1);  // one header
    } else {
      text += (text.empty() ? "" : "\n") + ddp_text(report);
    }
  }
  files.write_all();
  if (a.json) {
    // One count prints its object, a list of counts an array of them.
    std::cout << (counts.size() == 1 ? json.front() : json).dump(2) << "\n";
  } else {
    std::cout << text;
  }
}

}  // namespace

void add_ddp_command(CLI::App& app) {
  auto args = std::make_shared<DdpArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ddp", "Predict one training step of a model (PyTorch DDP, or --no-ddp) on a topology");
  cmd->add_option("--topology,-t", args->topology, "Topology YAML file")->required();
  cmd->add_option("--model,-m", args->model, "Model file (models/*.yaml)")->required();
  cmd->add_option("--ranks,-n", args->ranks,
                  "Rank count N (0..N-1) or list 0,1,8,9 / 0-7 (default 1; with --nodes, all)");
  add_nodes_option(cmd, args->nodes, true);
  add_step_flags(cmd, args->step);
  cmd->add_option("--global-batch", args->global_batch,
                  "Samples per optimizer step over every data-parallel rank: --grad-accum "
                  "becomes it / (data-parallel ranks x --batch)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--dp", args->dp,
                  "Data-parallel degree, checked: the ranks / (TP x PP) (default: derived)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option(
      "--calibration,-c", args->calibration,
      "Calibration file: its GEMM fit, copy rates and NCCL constants replace the priors");
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV");
  cmd->add_flag("--json", args->json, "Print JSON")->excludes(csv);
  cmd->add_option("--trace", args->trace, "Write a Chrome trace (Perfetto) of the step");
  cmd->callback([args] { run_ddp(*args); });
}

}  // namespace cs::cli
