// The committed accuracy figures and the header line built from them.
#include "cli/step/trust.hpp"

#include <cstdio>

namespace cs::cli {

// Printed by kTrustValidateCommand and kTrustCompareCommand on 2026-11-28 (test_trust.cpp reruns
// them).
const TrustFigures& trust_figures() {
  static const TrustFigures f = {{1.9, 36}, {2.2, 50}, {13.1, 11}, {4.3, 37},
                                 {6.7, 98}, {1.9, 82}, {8.7, 377}, 4};
  return f;
}

const char* const kTrustValidateCommand =
    "validate --topology topologies/h200-4gpu.yaml --ddp calibrate/data/h200x2-r2-ddp --ddp "
    "calibrate/data/h200x2-r4-ddp --ddp calibrate/data/h200x2-r6-ddp --ddp "
    "calibrate/data/h200x2-r7-fsdp --ddp calibrate/data/h200x2-r7-fsdp-run2 --ddp "
    "calibrate/data/h200x2-r8-accum --ddp calibrate/data/h200x4-r9-fsdp --host-probes";
const char* const kTrustCompareCommand = "compare calibrate/published/multinode.yaml";

namespace {

std::string figure(const TrustFigure& f) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f %% median error over %d measured runs", f.median_percent,
                f.points);
  return text;
}

}  // namespace

std::string trust_line(workload::Strategy strategy, int gpus, int servers) {
  const TrustFigures& f = trust_figures();
  const bool sharded = workload::sharded(strategy);
  const char* name = sharded ? "FSDP" : "DDP";
  std::string s = "# trust: ";
  if (gpus == 1) {
    s += std::string("one-GPU ") + name + " steps " +
         figure(sharded ? f.fsdp_one_gpu : f.ddp_one_gpu);
  } else {
    s += std::string(name) + " steps within a server " +
         figure(sharded ? f.fsdp_several : f.ddp_several) + ", on at most " +
         std::to_string(f.most_gpus_measured) + " GPUs";
  }
  char memory[64];
  std::snprintf(memory, sizeof memory, "; memory %.1f %%",
                (sharded ? f.fsdp_memory : f.ddp_memory).median_percent);
  s += std::string(memory) + " (clustersim validate --ddp)";
  if (servers > 1) {
    char coll[160];
    std::snprintf(coll, sizeof coll,
                  "; across servers never checked against a measured step (its collectives: "
                  "%.1f %% median error against published nccl-tests, clustersim compare)",
                  f.collectives_across_servers.median_percent);
    s += coll;
  }
  return s;
}

}  // namespace cs::cli
