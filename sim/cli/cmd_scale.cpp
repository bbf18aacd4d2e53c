// `clustersim scale`: a model's DDP step at growing GPU counts on one or more topologies, GPUs
// filled server by server (ranks 0..N-1 are numbered that way): step time, samples/s, scaling
// efficiency against one GPU and the exposed communication, as a table, CSV or JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/input/node_counts.hpp"
#include "cli/output/gnuplot.hpp"
#include "cli/output/output_guard.hpp"
#include "cli/output/scale_plot.hpp"
#include "cli/output/version.hpp"
#include "cli/step/ddp_predict.hpp"
#include "cli/step/scale_efficiency.hpp"
#include "cli/step/trust.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

struct ScaleArgs {
  std::string model;
  std::vector<std::string> topologies;
  std::string gpus;
  std::string nodes;
  bool strong = false;
  StepFlags step;
  bool csv = false;
  bool json = false;
  std::string plot;
};

struct Point {
  std::string topology;
  int gpus = 0;
  int servers = 0;
  int batch = 0;  // per GPU
  double step_ms = 0;
  double samples_per_s = 0;
  double efficiency = 0;  // samples/s per GPU against the smallest count's
  double exposed_ms = 0;
  double allreduce_ms = 0;
  std::string host_note;  // the host its host costs are for (StepPlan::host_note)
  StepFigures figures;    // what explains an efficiency above 100 % (scale_efficiency.hpp)
};

// The --gpus counts a topology is too small for: said beside the table rather than dropped.
struct Skipped {
  std::string topology;
  int available = 0;  // the topology's GPUs
  std::vector<int> gpus;
};

// Everything one topology gives: its points, and the counts it had no GPUs for.
struct Scaled {
  std::vector<Point> points;
  Skipped skipped;
};

// "1,2,4,8" -> counts; empty -> powers of two up to the topology's GPUs, and that count.
std::vector<int> gpu_counts(const std::string& text, int available) {
  std::vector<int> out;
  if (text.empty()) {
    for (int n = 1; n < available; n *= 2) out.push_back(n);
    out.push_back(available);
    return out;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > (1 << 24)) {
      throw InputError("key 'gpus': '" + item + "' is not a GPU count (an integer >= 1)");
    }
    out.push_back(static_cast<int>(n));
  }
  return out;
}

// One point: the step on GPUs 0..n-1 of `cluster`.
Point predict_point(const topo::Cluster& cluster, const workload::Model& model,
                    const workload::TrainingOptions& base, int n, bool strong) {
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
  workload::TrainingOptions options = base;
  // Data-parallel ranks: every GPU, or each TP x PP group of them.
  const int replicas = n / base.parallel.degree();
  if (strong) {
    if (base.batch % replicas != 0) {
      throw InputError("key 'gpus': --strong splits the global batch of " +
                       std::to_string(base.batch) + " evenly; " + std::to_string(replicas) +
                       (base.parallel.any() ? " data-parallel ranks" : " GPUs") +
                       " do not divide it");
    }
    options.batch = base.batch / replicas;
  }
  const DdpPrediction p = predict_ddp(cluster, model, options, ranks, nullptr);
  Point pt;
  pt.topology = cluster.name;
  pt.gpus = n;
  pt.servers = p.servers;
  pt.batch = options.batch;
  pt.step_ms = p.result.breakdown.step_us / 1e3;
  pt.samples_per_s = workload::samples_per_step(options) * replicas / (pt.step_ms / 1e3);
  pt.exposed_ms = p.result.breakdown.exposed_communication_us / 1e3;
  pt.allreduce_ms = p.result.breakdown.communication_us / 1e3;
  pt.host_note = p.gpu.name + ": " + p.plan.host_note;
  pt.figures = step_figures(p, n);
  return pt;
}

Scaled scale_one(const std::string& path, const workload::Model& model, const ScaleArgs& a) {
  const workload::TrainingOptions base = step_options(a.step, model);
  const int degree = base.parallel.degree();
  Scaled out;
  std::vector<Point>& points = out.points;
  if (!a.nodes.empty()) {
    // --nodes: the file's cluster resized to each count, every GPU of it.
    std::vector<int> counts = parse_node_counts(a.nodes);
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    for (const int servers : counts) {
      const topo::Cluster cluster = topo::load_cluster(path, {servers});
      points.push_back(
          predict_point(cluster, model, base, static_cast<int>(cluster.ranks.size()), a.strong));
    }
  } else {
    const topo::Cluster cluster = topo::load_cluster(path);
    const int available = static_cast<int>(cluster.ranks.size());
    std::vector<int> counts = gpu_counts(a.gpus, available);
    if (a.gpus.empty()) {
      // The default counts, less those TP x PP does not divide.
      counts.erase(
          std::remove_if(counts.begin(), counts.end(), [degree](int n) { return n % degree != 0; }),
          counts.end());
    }
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    out.skipped = {cluster.name, available, {}};
    for (int n : counts) {
      if (n > available) {  // a topology smaller than the count: no point, but a word
        out.skipped.gpus.push_back(n);
        continue;
      }
      points.push_back(predict_point(cluster, model, base, n, a.strong));
    }
  }
  // Throughput per GPU against the smallest count's (one GPU when the list starts there):
  // speedup / n, for weak and strong scaling alike.
  for (Point& pt : points) {
    const double base_per_gpu = points.front().samples_per_s / points.front().gpus;
    pt.efficiency = base_per_gpu > 0 ? pt.samples_per_s / pt.gpus / base_per_gpu : 0.0;
    pt.figures.efficiency = pt.efficiency;
  }
  return out;
}

std::string joined(const std::vector<int>& counts) {
  std::string text;
  for (int n : counts) text += (text.empty() ? "" : ",") + std::to_string(n);
  return text;
}

// "dgx-h100-2node has 16 GPUs: skipped --gpus 32,64": one line per topology that skipped a count.
std::string skipped_text(const Skipped& s) {
  return s.topology + " has " + std::to_string(s.available) + " GPUs: skipped --gpus " +
         joined(s.gpus) + " (--nodes resizes the file's cluster)";
}

void run_scale(const ScaleArgs& a) {
  std::vector<NamedPath> inputs = {{"--model file", a.model}};
  for (const std::string& t : a.topologies) inputs.push_back({"--topology file", t});
  refuse_outputs_over_inputs({{"--plot", a.plot}}, inputs);
  if (!a.plot.empty()) GnuplotJob::check_target("--plot", a.plot);
  const workload::Model model = workload::load_model_file(a.model);
  std::vector<Point> all;
  std::vector<Skipped> skipped;
  std::vector<std::string> notes;  // why a point passes 100 % efficiency
  for (const std::string& t : a.topologies) {
    Scaled one = scale_one(t, model, a);
    all.insert(all.end(), one.points.begin(), one.points.end());
    if (!one.skipped.gpus.empty()) skipped.push_back(std::move(one.skipped));
    std::vector<StepFigures> figures;
    for (const Point& p : one.points) figures.push_back(p.figures);
    if (!one.points.empty()) {
      for (std::string& line : efficiency_notes(one.points.front().topology, figures)) {
        notes.push_back(std::move(line));
      }
    }
  }
  if (all.empty()) {  // every count was skipped: an empty table would look like a result
    std::string sizes;
    int most = 0;
    for (const Skipped& s : skipped) {
      sizes += (sizes.empty() ? "" : ", ") + s.topology + ": " + std::to_string(s.available);
      most = std::max(most, s.available);
    }
    throw InputError("--gpus " + a.gpus + ": more GPUs than any topology has (" + sizes +
                     "); give counts up to " + std::to_string(most) +
                     ", or server counts with --nodes to resize the file's cluster");
  }
  if (!a.plot.empty()) {
    std::vector<PlotPoint> plot;
    plot.reserve(all.size());
    for (const Point& p : all) plot.push_back({p.topology, p.gpus, p.samples_per_s, p.efficiency});
    plot_scaling(plot, model.name, a.plot);
  }
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Point& p : all) {
      rows.push_back({{"topology", p.topology},
                      {"gpus", p.gpus},
                      {"servers", p.servers},
                      {"batch_per_gpu", p.batch},
                      {"step_ms", p.step_ms},
                      {"samples_per_s", p.samples_per_s},
                      {"efficiency", p.efficiency},
                      {"exposed_communication_ms", p.exposed_ms},
                      {"allreduce_ms", p.allreduce_ms}});
    }
    nlohmann::json doc = {{"clustersim_version", version_text()},
                          {"model", model.name},
                          {"strong", a.strong},
                          {"points", rows}};
    if (!skipped.empty()) {
      doc["skipped"] = nlohmann::json::array();
      for (const Skipped& s : skipped) {
        doc["skipped"].push_back(
            {{"topology", s.topology}, {"available_gpus", s.available}, {"gpus", s.gpus}});
      }
    }
    if (!notes.empty()) doc["notes"] = notes;
    std::cout << doc.dump(2) << "\n";
    return;
  }
  char line[256];
  if (a.csv) {
    // CSV has no comment lines: what was skipped goes to standard error.
    for (const Skipped& s : skipped) std::cerr << "clustersim scale: " << skipped_text(s) << "\n";
    for (const std::string& n : notes) std::cerr << "clustersim scale: " << n << "\n";
    std::cout << "topology,gpus,servers,batch_per_gpu,step_ms,samples_per_s,efficiency,"
                 "exposed_communication_ms,allreduce_ms\n";
  } else {
    std::cout << "# clustersim scale: " << model.name << ", "
              << (a.step.strategy == "fsdp"   ? "FSDP2, "
                  : a.step.strategy == "hsdp" ? "HSDP, "
                                              : "")
              << (a.strong ? "strong" : "weak")
              << " scaling, GPUs filled server by server, efficiency against the smallest count\n";
    int most_gpus = 1;
    int most_servers = 1;
    for (const Point& p : all) {
      most_gpus = std::max(most_gpus, p.gpus);
      most_servers = std::max(most_servers, p.servers);
    }
    const workload::Strategy strategy = a.step.strategy == "fsdp"   ? workload::Strategy::fsdp
                                        : a.step.strategy == "hsdp" ? workload::Strategy::hsdp
                                                                    : workload::Strategy::ddp;
    std::cout << trust_line(strategy, most_gpus, most_servers) << "\n";
    std::vector<std::string> hosts;  // each distinct host line once, in point order
    for (const Point& p : all) {
      if (std::find(hosts.begin(), hosts.end(), p.host_note) == hosts.end())
        hosts.push_back(p.host_note);
    }
    for (const std::string& h : hosts) std::cout << "# host: " << h << "\n";
    for (const Skipped& s : skipped) std::cout << "# " << skipped_text(s) << "\n";
    std::snprintf(line, sizeof line, "%-28s %6s %7s %6s %10s %12s %6s %10s %10s\n", "# topology",
                  "gpus", "servers", "batch", "step ms", "samples/s", "eff", "exposed ms",
                  "allred ms");
    std::cout << line;
  }
  for (const Point& p : all) {
    if (a.csv) {
      std::snprintf(line, sizeof line, "%s,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f\n", p.topology.c_str(),
                    p.gpus, p.servers, p.batch, p.step_ms, p.samples_per_s, p.efficiency,
                    p.exposed_ms, p.allreduce_ms);
    } else {
      std::snprintf(line, sizeof line, "%-28s %6d %7d %6d %10.3f %12.1f %5.1f%% %10.3f %10.3f\n",
                    p.topology.c_str(), p.gpus, p.servers, p.batch, p.step_ms, p.samples_per_s,
                    100 * p.efficiency, p.exposed_ms, p.allreduce_ms);
    }
    std::cout << line;
  }
  if (!a.csv) {
    for (const std::string& n : notes) std::cout << "# " << n << "\n";
  }
}

}  // namespace

void add_scale_command(CLI::App& app) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "scale",
      "A model's DDP step time and throughput against GPU count, per topology: the --gpus counts "
      "(default: powers of two up to every GPU), or every GPU of each --nodes size");
  cmd->add_option("--model,-m", args->model, "Model file (models/*.yaml)")->required();
  cmd->add_option("--topology,-t", args->topologies, "Topology YAML file (repeatable)")->required();
  auto* gpus = cmd->add_option(
      "--gpus", args->gpus,
      "GPU counts, e.g. 1,2,4,8,16 (default: powers of two up to all GPUs); counts past a "
      "topology's GPUs are skipped with a line that says so");
  cmd->add_option("--nodes", args->nodes,
                  "Server counts instead of GPU counts, e.g. 1,2,4,8: the file's cluster resized "
                  "to each (its fabric generator with it), every GPU of it")
      ->excludes(gpus);
  cmd->add_flag("--strong", args->strong,
                "Keep the global batch (the per-GPU batch at one GPU) instead of the per-GPU one");
  add_step_flags(cmd, args->step);
  cmd->add_option("--plot", args->plot,
                  "Draw throughput and efficiency against GPUs into OUT.png or OUT.svg (gnuplot)");
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV");
  cmd->add_flag("--json", args->json, "Print JSON")->excludes(csv);
  cmd->callback([args] { run_scale(*args); });
}

}  // namespace cs::cli
