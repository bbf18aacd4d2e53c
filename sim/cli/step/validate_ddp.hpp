// `clustersim validate --ddp DIR [--ddp DIR ...]`: every PyTorch DDP step that
// calibrate/ddp/ddp_steps.py measured, predicted as `clustersim ddp` predicts it (predict_ddp, the
// step file's batch, sequence, precision and optimizer; plain = --no-ddp, ddp<cap> =
// --bucket-cap-mb cap) on ranks 0..N-1 of the topology, NVLS as the run set it, with NCCL's priors
// and with --calibration. The tables: calibration/validate/validate_ddp.hpp.
#pragma once

#include <string>
#include <vector>

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

}  // namespace cs::cli
