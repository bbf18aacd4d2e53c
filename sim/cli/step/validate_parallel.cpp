// validate --parallel: the parallel step files read, each run predicted by predict_ddp with its
// layout, measured against predicted per run and per variant.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/fit/fit.hpp"
#include "calibration/measurements/parallel_steps.hpp"
#include "cli/input/coll_args.hpp"
#include "cli/step/ddp_predict.hpp"
#include "cli/step/validate_ddp.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

// The flags `clustersim ddp` would be given for one measured run.
StepFlags flags_of(const cal::ParallelStepFile& f) {
  StepFlags flags;
  flags.batch = f.batch;
  flags.seq = f.seq;
  if (f.variant == "plain") {
    flags.ddp.enabled = false;
  } else if (f.pipeline()) {
    flags.pp = f.world_size;
    flags.grad_accum = f.micro_batches;
    flags.schedule = f.variant == "pp-gpipe" ? "gpipe" : "1f1b";
  } else {
    flags.tp = f.world_size;
    flags.sequence_parallel = f.sequence_parallel();
  }
  return flags;
}

}  // namespace

void run_validate_parallel(const std::string& topology, const std::vector<std::string>& folders,
                           const std::string& models) {
  std::vector<cal::ParallelStepFile> runs;
  for (const std::string& folder : folders) {
    std::vector<cal::ParallelStepFile> read = cal::read_parallel_step_folder(folder);
    runs.insert(runs.end(), read.begin(), read.end());
  }
  const topo::Cluster cluster = topo::load_cluster(topology);
  const int cluster_ranks = static_cast<int>(cluster.ranks.size());
  std::map<std::string, workload::Model> loaded;
  std::ostringstream out;
  char line[320];
  out << "# clustersim validate --parallel: " << runs.size() << " measured steps on "
      << cluster.name
      << "; predicted as clustersim ddp with the run's layout (PyTorch's TP), NCCL's priors, the "
         "reference host\n";
  std::snprintf(line, sizeof line, "#%-40s %-9s %5s %5s %6s %12s %12s %8s\n", "file", "variant",
                "GPUs", "batch", "micro", "measured ms", "predicted ms", "error");
  out << line;
  std::map<std::string, std::vector<double>> errors;  // by variant
  for (const cal::ParallelStepFile& f : runs) {
    if (f.world_size > cluster_ranks)
      throw InputError(f.world_size_at, "world_size",
                       std::to_string(f.world_size) + " GPUs measured, but " + cluster.name +
                           " has " + std::to_string(cluster_ranks) +
                           "; give the measured machine's topology");
    if (loaded.count(f.model) == 0) {
      loaded.emplace(f.model,
                     workload::load_model_file(model_file_path(f.model, f.model_at, models)));
    }
    const workload::Model& model = loaded.at(f.model);
    const std::vector<int> ranks = parse_ranks(std::to_string(f.world_size), cluster_ranks);
    double predicted_ms = 0;
    try {
      const workload::TrainingOptions options = step_options(flags_of(f), model);
      predicted_ms =
          predict_ddp(cluster, model, options, ranks, nullptr).result.breakdown.step_us / 1e3;
    } catch (const InputError& e) {
      throw InputError(f.file + ": " + e.what());
    }
    const double error = (predicted_ms - f.step_ms) / f.step_ms;
    errors[f.variant].push_back(std::fabs(error));
    std::snprintf(line, sizeof line, " %-40s %-9s %5d %5d %6d %12.1f %12.1f %+7.1f%%\n",
                  cal::base_name(f.file).c_str(), f.variant.c_str(), f.world_size, f.batch,
                  f.micro_batches, f.step_ms, predicted_ms, 100 * error);
    out << line;
  }
  out << "\n## |predicted - measured| / measured per variant\n";
  for (auto& [variant, e] : errors) {
    std::sort(e.begin(), e.end());
    const std::size_t m = e.size() / 2;
    const double median = e.size() % 2 == 1 ? e[m] : 0.5 * (e[m - 1] + e[m]);
    std::snprintf(line, sizeof line, " %-9s %3zu runs: median %.1f%%, worst %.1f%%\n",
                  variant.c_str(), e.size(), 100 * median, 100 * e.back());
    out << line;
  }
  std::cout << out.str();
}

}  // namespace cs::cli
