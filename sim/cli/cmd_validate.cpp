// `clustersim validate --topology T --data DATA [--calibration FILE]`: predicts every measured
// NCCL point and copy with NCCL's priors and with the calibration, and prints the error table
// over the held-out points; without --calibration the fit runs in memory on the default split.
// --timing picks one NCCL timing per point (timing_select.hpp). --calibration may come from
// another run's data: the tables are then over this run's points the calibration's split holds out.
// --csv FILE and --json FILE write the same tables (and, in JSON, every prediction) atomically.
#include <iostream>
#include <memory>
#include <utility>

#include "calibration/calibration_file.hpp"
#include "calibration/fit.hpp"
#include "calibration/machine_match.hpp"
#include "calibration/timing_select.hpp"
#include "calibration/validate.hpp"
#include "calibration/validate_report.hpp"
#include "cli/commands.hpp"
#include "cli/output_files.hpp"
#include "cli/output_guard.hpp"
#include "collectives/comm_layout.hpp"
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
};

void run_validate(const ValidateArgs& a) {
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
  if (!a.json.empty()) files.add("--json", a.json, cal::validation_json(v, name));
  files.write_all();
  std::cout << cal::validation_text(v, name);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "validate", "Predict measured NCCL runs and copies with and without calibration");
  auto args = std::make_shared<ValidateArgs>();
  cmd->add_option("--topology,-t", args->topology, "The measured machine's topology YAML")
      ->required();
  cmd->add_option("--data,-d", args->data, "Folder of measurement JSON files")->required();
  cmd->add_option("--calibration,-c", args->calibration,
                  "Calibration file from `clustersim fit` (default: fit in memory)");
  cmd->add_option("--csv", args->csv, "Also write the tables as CSV to this file");
  cmd->add_option("--json", args->json, "Also write tables and predictions as JSON to this file");
  cmd->add_option("--timing", args->timing,
                  "NCCL records to predict (and fit, without --calibration): host_paced "
                  "(nccl-tests' convention, the default) or gated (host_paced where a size has no "
                  "gated record)");
  cmd->callback([args] { run_validate(*args); });
}

}  // namespace cs::cli
