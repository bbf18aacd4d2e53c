// `clustersim validate --topology T --data DATA [--calibration FILE]`: predicts every measured
// NCCL point and copy with NCCL's priors and with the calibration, and prints the error table
// over the held-out points; without --calibration the fit runs in memory on the default split.
// --timing picks one NCCL timing per point (timing_select.hpp). --calibration may come from
// another run's data: the tables are then over this run's points the calibration's split holds out.
// --csv FILE and --json FILE write the same tables (and, in JSON, every prediction) atomically.
// --ddp DIR instead of --data: measured DDP steps against predicted ones (step/validate_ddp.hpp).
#include <iostream>
#include <memory>
#include <utility>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/fit/fit.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "calibration/measurements/timing_select.hpp"
#include "calibration/validate/machine_match.hpp"
#include "calibration/validate/validate.hpp"
#include "calibration/validate/validate_cross.hpp"
#include "calibration/validate/validate_report.hpp"
#include "cli/commands.hpp"
#include "cli/output/output_files.hpp"
#include "cli/output/output_guard.hpp"
#include "cli/output/version.hpp"
#include "cli/step/validate_ddp.hpp"
#include "collectives/comm_layout.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"

namespace cs::cli {
namespace {

struct ValidateArgs {
  std::string topology;
  std::string data;
  std::string calibration;
  std::string csv;
  std::string json;
  std::string timing = "host_paced";
  bool timing_set = false;
  std::vector<std::string> cross;
  std::vector<std::string> ddp;
  std::vector<std::string> parallel;
  bool host_probes = false;
  std::string models = "models";
  bool models_set = false;
};

// --ddp: measured DDP steps against predicted ones (step/validate_ddp.hpp).
void run_ddp_steps(const ValidateArgs& a) {
  if (!a.data.empty() || !a.cross.empty())
    throw InputError("give --ddp or --data / --cross, not both");
  if (a.timing_set) throw InputError("--timing picks NCCL records; --ddp has none");
  run_validate_ddp({a.topology, a.ddp, a.calibration, a.models, a.csv, a.json, a.host_probes});
}

// --cross: each folder fitted whole predicts every other folder of its GPU model.
void run_cross(const ValidateArgs& a) {
  const cal::NcclTiming timing = cal::nccl_timing_option(a.timing, "timing");
  if (!a.calibration.empty())
    throw InputError("--cross fits each run itself; it takes no --calibration");
  if (a.cross.size() < 2) throw InputError("--cross needs two or more data folders");
  const topo::Cluster cluster = topo::load_cluster(a.topology);
  std::vector<cal::NamedRun> runs;
  std::vector<NamedPath> inputs = {{"--topology file", a.topology}};
  for (const std::string& folder : a.cross) {
    cal::NamedRun run{cal::base_name(folder), cal::read_measurements(folder)};
    for (NamedPath& in : measurement_inputs(run.data, FittedFiles::protected_))
      inputs.push_back(std::move(in));
    cal::select_nccl_timing(run.data, timing);
    cal::check_measurements_match(run.data, cluster);
    runs.push_back(std::move(run));
  }
  refuse_outputs_over_inputs({{"--csv", a.csv}, {"--json", a.json}}, inputs);
  const std::string timing_line =
      std::string("timing: ") + cal::to_string(timing) +
      (timing == cal::NcclTiming::gated ? " (host_paced where a size has no gated record)" : "");
  const cal::CrossValidation v = cal::cross_validate(runs, cluster, timing);
  OutputFiles files;
  if (!a.csv.empty()) files.add("--csv", a.csv, cal::cross_validation_csv(v));
  if (!a.json.empty())
    files.add("--json", a.json, with_version(cal::cross_validation_json(v, timing_line)));
  files.write_all();
  std::cout << cal::cross_validation_text(v, timing_line);
}

void run_validate(const ValidateArgs& a) {
  if (!a.parallel.empty()) {
    // --parallel: measured TP and PP steps against predicted ones (step/validate_ddp.hpp).
    if (!a.data.empty() || !a.cross.empty() || !a.ddp.empty())
      throw InputError("give --parallel alone, not with --data, --cross or --ddp");
    if (!a.calibration.empty() || !a.csv.empty() || !a.json.empty() || a.host_probes)
      throw InputError("--parallel takes --topology and --models only");
    run_validate_parallel(a.topology, a.parallel, a.models);
    return;
  }
  if (!a.ddp.empty()) {
    run_ddp_steps(a);
    return;
  }
  if (a.models_set) throw InputError("--models names the model files of --ddp's runs");
  if (!a.cross.empty()) {
    if (!a.data.empty()) throw InputError("give --data or --cross, not both");
    run_cross(a);
    return;
  }
  if (a.data.empty())
    throw InputError("validate needs --data (or --cross with two or more, or --ddp)");
  const cal::NcclTiming timing = cal::nccl_timing_option(a.timing, "timing");
  cal::Measurements data = cal::read_measurements(a.data);
  // The files the flags name first, so that an error names the flag the user gave.
  std::vector<NamedPath> inputs = {{"--topology file", a.topology},
                                   {"--calibration file", a.calibration}};
  for (NamedPath& in : measurement_inputs(data, FittedFiles::protected_))
    inputs.push_back(std::move(in));
  refuse_outputs_over_inputs({{"--csv", a.csv}, {"--json", a.json}}, inputs);
  const cal::TimingSelection selected = cal::select_nccl_timing(data, timing);
  const topo::Cluster cluster = topo::load_cluster(a.topology);
  cal::check_measurements_match(data, cluster);
  cal::Calibration calibration;
  std::string name;
  if (a.calibration.empty()) {
    const topo::ClusterGraph graph(cluster);
    calibration = cal::fit_calibration(data, cal::default_split(cal::nccl_rank_counts(data)), graph,
                                       cal::base_name(a.data), cal::base_name(a.topology));
    calibration.timing = timing;
    name = std::string("fitted in memory from the training points (") + cal::to_string(timing) +
           " records)";
  } else {
    calibration = cal::load_calibration(a.calibration);
    cal::check_calibration_match(calibration, cluster,
                                 coll::first_ranks(static_cast<int>(cluster.ranks.size())));
    name = cal::base_name(a.calibration) + " (" + calibration.machine + ", fitted on " +
           cal::to_string(calibration.timing) + " records)";
  }
  cal::Validation v = cal::validate(data, cluster, calibration);
  v.machine = cal::base_name(a.data);
  v.timing = selected.describe();
  OutputFiles files;
  if (!a.csv.empty()) files.add("--csv", a.csv, cal::validation_csv(v));
  if (!a.json.empty()) files.add("--json", a.json, with_version(cal::validation_json(v, name)));
  files.write_all();
  std::cout << cal::validation_text(v, name);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "validate",
      "Predict measured NCCL runs and copies (or, with --ddp, DDP steps) with and without "
      "calibration");
  auto args = std::make_shared<ValidateArgs>();
  cmd->add_option("--topology,-t", args->topology, "The measured machine's topology YAML")
      ->required();
  cmd->add_option("--data,-d", args->data, "Folder of measurement JSON files");
  cmd->add_option("--cross", args->cross,
                  "Fit on one machine, predict the others: data folders, each fitted on all its "
                  "points and predicting every other folder of its GPU model")
      ->expected(2, -1);
  cmd->add_option("--calibration,-c", args->calibration,
                  "Calibration file from `clustersim fit` (default: fit in memory)");
  cmd->add_option("--csv", args->csv, "Also write the tables as CSV to this file");
  cmd->add_option("--json", args->json, "Also write tables and predictions as JSON to this file");
  cmd->add_option("--timing", args->timing,
                  "NCCL records to predict (and fit, without --calibration): host_paced "
                  "(nccl-tests' convention, the default) or gated (host_paced where a size has no "
                  "gated record)")
      ->each([args](const std::string&) { args->timing_set = true; });
  cmd->add_option("--ddp", args->ddp,
                  "Instead of --data: a folder of DDP step files (calibrate/ddp/ddp_steps.py); "
                  "each measured step predicted as `clustersim ddp` predicts it, with priors and "
                  "with --calibration");
  cmd->add_option("--parallel", args->parallel,
                  "Instead of --data: a folder of tensor- and pipeline-parallel step files "
                  "(calibrate/parallel/); each measured step predicted as `clustersim ddp` "
                  "predicts it with the run's layout");
  cmd->add_option("--models", args->models,
                  "With --ddp: the folder of the step files' <model>.yaml (default: models)")
      ->each([args](const std::string&) { args->models_set = true; });
  cmd->add_flag("--host-probes", args->host_probes,
                "With --ddp: carry host costs to each folder's host_probe-n<N>.json (the measured "
                "node's host) instead of the reference host");
  cmd->callback([args] { run_validate(*args); });
}

}  // namespace cs::cli
