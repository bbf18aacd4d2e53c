// validate --ddp: the step files read, each variant predicted by predict_ddp, the tables written.
#include "cli/step/validate_ddp.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/fit/fit.hpp"
#include "calibration/measurements/ddp_steps.hpp"
#include "calibration/validate/validate_ddp.hpp"
#include "calibration/validate/validate_ddp_report.hpp"
#include "cli/input/coll_args.hpp"
#include "cli/output/output_files.hpp"
#include "cli/output/output_guard.hpp"
#include "cli/output/version.hpp"
#include "cli/step/ddp_predict.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

namespace fs = std::filesystem;

// NCCL_NVLS_ENABLE while one run is predicted, put back after: predict_ddp reads NCCL's switches
// from the environment, as `clustersim ddp` takes them from a job's, ahead of a calibration's.
class ScopedNvlsEnable {
 public:
  explicit ScopedNvlsEnable(bool on) {
    if (const char* old = std::getenv(kName)) old_ = old;
    ::setenv(kName, on ? "1" : "0", 1);
  }
  ~ScopedNvlsEnable() { old_ ? ::setenv(kName, old_->c_str(), 1) : ::unsetenv(kName); }
  ScopedNvlsEnable(const ScopedNvlsEnable&) = delete;
  ScopedNvlsEnable& operator=(const ScopedNvlsEnable&) = delete;

 private:
  static constexpr const char* kName = "NCCL_NVLS_ENABLE";
  std::optional<std::string> old_;
};

// The flags `clustersim ddp` would be given for one variant of a run.
StepFlags flags_of(const cal::DdpStepFile& f, const cal::DdpVariant& v) {
  StepFlags flags;
  flags.batch = f.batch;
  flags.seq = f.seq.value_or(0);
  flags.precision = f.precision;
  flags.optimizer = f.optimizer;
  if (f.optimizer == "sgd") flags.momentum = f.momentum.value_or(0);
  flags.grad_accum = v.grad_accum;
  flags.activation_checkpointing = v.activation_checkpointing;
  if (v.fsdp) {
    flags.strategy = "fsdp";
    flags.reshard_after_forward = v.reshard_after_forward ? "true" : "false";
    return flags;
  }
  flags.ddp.enabled = !v.plain();
  if (!v.plain()) {
    flags.ddp.bucket_cap_mb = v.bucket_cap_mb;
    flags.ddp.bucket_cap_set = true;
  }
  return flags;
}

// The folder's host probe of `gpus` processes (calibrate/ddp/run_ddp.sh writes one per GPU count
// it ran): the node's host, as --host-probe takes it.
std::string host_probe_of(const std::string& folder, int gpus) {
  std::string path = folder + "/host_probe-n" + std::to_string(gpus) + ".json";
  if (std::filesystem::exists(path)) return path;
  // A run that probed its host at one process count only (calibrate/fsdp/run_fsdp.sh): that
  // probe, whose one-process figures serve a one-GPU run.
  for (int n = 1; n <= 64; ++n) {
    path = folder + "/host_probe-n" + std::to_string(n) + ".json";
    if (std::filesystem::exists(path)) return path;
  }
  throw InputError(SourceLoc{folder, 0}, "",
                   "--host-probes: no host_probe-n" + std::to_string(gpus) +
                       ".json in this folder (calibrate/ddp/run_ddp.sh writes one)");
}

// One variant's step in ms and its peak in PyTorch's allocator, as `clustersim ddp` predicts
// them.
struct Predicted {
  double step_ms = 0;
  double peak_bytes = 0;
};
Predicted predicted(const topo::Cluster& cluster, const workload::Model& model,
                    const workload::TrainingOptions& options, const std::vector<int>& ranks,
                    const cal::Calibration* calibration) {
  const DdpPrediction p = predict_ddp(cluster, model, options, ranks, calibration);
  return {p.result.breakdown.step_us / 1e3, p.memory.total - p.memory.outside};
}

// How NCCL was set for the predictions, for the header.
std::string nccl_line(const std::vector<cal::DdpStepFolder>& folders) {
  int runs = 0;
  int on = 0;
  int unrecorded = 0;
  for (const cal::DdpStepFolder& folder : folders) {
    for (const cal::DdpStepFile& f : folder.steps) {
      ++runs;
      on += f.nvls.value_or(false) ? 1 : 0;
      unrecorded += f.nvls ? 0 : 1;
    }
  }
  if (on == 0 && unrecorded == 0) return "NVLS off, as every run set NCCL_NVLS_ENABLE=0";
  return "NVLS as each run set NCCL_NVLS_ENABLE: on in " + std::to_string(on) + " of " +
         std::to_string(runs) + " runs (off in the " + std::to_string(unrecorded) +
         " that do not record it, as calibrate/ddp/run_ddp.sh sets 0)";
}

}  // namespace

std::string model_file_path(const std::string& model, const SourceLoc& at,
                            const std::string& models) {
  std::string path = (fs::path(models) / (model + ".yaml")).string();
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(models, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError(
      at, "model",
      "no model file '" + path + "' (--models " + models + "); " +
          (names.empty() ? "no *.yaml model files there" : "model files there: " + list));
}

void run_validate_ddp(const ValidateDdpArgs& a) {
  std::vector<cal::DdpStepFolder> folders;
  std::vector<NamedPath> inputs = {{"--topology file", a.topology},
                                   {"--calibration file", a.calibration}};
  for (const std::string& folder : a.folders) {
    for (const cal::DdpStepFolder& earlier : folders) {
      std::error_code ec;
      if (fs::equivalent(earlier.folder, folder, ec))
        throw InputError("key '--ddp': '" + folder + "' is given twice");
    }
    folders.push_back(cal::read_ddp_step_folder(folder));
    for (const std::string& file : folders.back().files) inputs.push_back({"--ddp file", file});
  }
  const std::vector<NamedPath> outputs = {{"--csv", a.csv}, {"--json", a.json}};
  refuse_outputs_over_inputs(outputs, inputs);
  std::map<std::string, std::string> model_files;  // model name -> path
  for (const cal::DdpStepFolder& folder : folders) {
    for (const cal::DdpStepFile& f : folder.steps) {
      if (model_files.count(f.model) == 0)
        model_files[f.model] = model_file_path(f.model, f.model_at, a.models);
    }
  }
  std::vector<NamedPath> models_read;
  models_read.reserve(model_files.size());
  for (const auto& [name, path] : model_files) models_read.push_back({"model file", path});
  refuse_outputs_over_inputs(outputs, models_read);

  const topo::Cluster cluster = topo::load_cluster(a.topology);
  const int cluster_ranks = static_cast<int>(cluster.ranks.size());
  std::optional<cal::Calibration> calibration;
  if (!a.calibration.empty()) calibration = cal::load_calibration(a.calibration);
  std::map<std::string, workload::Model> models;
  for (const auto& [name, path] : model_files)
    models.emplace(name, workload::load_model_file(path));
  std::map<int, topo::Cluster> calibrated_clusters;  // by GPU count: the calibration applied

  std::vector<cal::DdpStepRow> rows;
  for (const cal::DdpStepFolder& folder : folders) {
    for (const cal::DdpStepFile& f : folder.steps) {
      if (f.world_size > cluster_ranks)
        throw InputError(f.world_size_at, "world_size",
                         std::to_string(f.world_size) + " GPUs measured, but " + cluster.name +
                             " has " + std::to_string(cluster_ranks) +
                             "; give the measured machine's topology");
      const std::vector<int> ranks = parse_ranks(std::to_string(f.world_size), cluster_ranks);
      if (calibration && calibrated_clusters.count(f.world_size) == 0) {
        topo::Cluster c = cluster;
        apply_calibration(*calibration, c, ranks);
        calibrated_clusters.emplace(f.world_size, std::move(c));
      }
      const ScopedNvlsEnable nvls(f.nvls.value_or(false));
      const workload::Model& model = models.at(f.model);
      for (const cal::DdpVariant& v : f.variants) {
        if (!v.simulated) continue;
        cal::DdpStepRow row = cal::measured_row(cal::base_name(folder.folder), f, v);
        try {
          StepFlags flags = flags_of(f, v);
          if (a.host_probes) flags.host_probe = host_probe_of(folder.folder, f.world_size);
          const workload::TrainingOptions options = step_options(flags, model);
          const Predicted prior = predicted(cluster, model, options, ranks, nullptr);
          row.prior_ms = prior.step_ms;
          row.predicted_peak_bytes = prior.peak_bytes;
          if (calibration)
            row.calibrated_ms = predicted(calibrated_clusters.at(f.world_size), model, options,
                                          ranks, &*calibration)
                                    .step_ms;
        } catch (const InputError& e) {
          throw InputError(f.file + ": variant '" + v.name + "': " + e.what());
        }
        rows.push_back(std::move(row));
      }
    }
  }

  cal::DdpValidation v = cal::validate_ddp_steps(std::move(rows), calibration.has_value());
  for (const std::string& folder : a.folders) v.data.push_back(cal::base_name(folder));
  v.topology = cluster.name;
  if (calibration)
    v.calibration = cal::base_name(a.calibration) + " (" + calibration->machine + ", fitted on " +
                    cal::to_string(calibration->timing) + " records)";
  v.nccl = nccl_line(folders);
  v.host = a.host_probes ? "each folder's host_probe-n<N>.json (the node's host, --host-probes)"
                         : "the reference host (models/README.md, \"Host costs\")";
  OutputFiles files;
  files.add("--csv", a.csv, cal::ddp_validation_csv(v));
  if (!a.json.empty()) files.add("--json", a.json, with_version(cal::ddp_validation_json(v)));
  files.write_all();
  std::cout << cal::ddp_validation_text(v);
}

}  // namespace cs::cli
