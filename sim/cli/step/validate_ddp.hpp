// `clustersim validate --ddp DIR [--ddp DIR ...]`: every PyTorch DDP step that
// calibrate/ddp/ddp_steps.py measured, predicted as `clustersim ddp` predicts it (predict_ddp, the
// step file's batch, sequence, precision and optimizer; plain = --no-ddp, ddp<cap> =
// --bucket-cap-mb cap) on ranks 0..N-1 of the topology, NVLS as the run set it, with NCCL's priors
// and with --calibration. The tables: calibration/validate/validate_ddp.hpp.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"

namespace cs::cli {

struct ValidateDdpArgs {
  std::string topology;
  std::vector<std::string> folders;  // --ddp
  std::string calibration;           // "" for priors alone
  std::string models = "models";     // where <model>.yaml of each step file is
  std::string csv;
  std::string json;
  // Each run's host as its folder's probe of that GPU count (host_probe-n<N>.json) measured it,
  // instead of the reference host (models/README.md, "Host costs").
  bool host_probes = false;
};

// Prints the tables and writes --csv / --json; throws InputError on bad input.
void run_validate_ddp(const ValidateDdpArgs& a);

// The model file a step file names (`model`, at `at`) under `models`; an error at the step file's
// `model` key lists the model files there.
std::string model_file_path(const std::string& model, const SourceLoc& at,
                            const std::string& models);

// `clustersim validate --parallel DIR [--parallel DIR ...]`: every TP, TP + SP and PP step that
// calibrate/parallel/ measured (and the unsharded model beside them), predicted as `clustersim
// ddp` predicts it on ranks 0..N-1 of the topology (--tp N [--sequence-parallel] --batch B; --pp N
// --grad-accum M --schedule S --batch B; plain: --no-ddp), PyTorch's TP, NCCL's priors. Prints
// each run's measured and predicted step and the median error per variant.
void run_validate_parallel(const std::string& topology, const std::vector<std::string>& folders,
                           const std::string& models);

}  // namespace cs::cli
