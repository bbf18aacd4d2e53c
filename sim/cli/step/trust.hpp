// How far to trust a predicted step (issue 41): which of its parts were checked against what,
// and the error there. The figures are the summaries `clustersim validate --ddp` and
// `clustersim compare` print over the committed runs (kTrustSources); tests/cli/test_trust.cpp
// reruns both and fails when a figure here no longer matches what they print.
#pragma once

#include <string>

#include "workload/step/strategy.hpp"

namespace cs::cli {

// Median |error| (percent, as printed) and the points behind it.
struct TrustFigure {
  double median_percent = 0;
  int points = 0;
};

struct TrustFigures {
  TrustFigure ddp_one_gpu, ddp_several;    // validate --ddp: "ddp step", gpus 1 and >=2
  TrustFigure fsdp_one_gpu, fsdp_several;  // "fsdp step", 1 and >=2
  TrustFigure ddp_memory, fsdp_memory;     // "ddp memory", "fsdp memory", all
  TrustFigure collectives_across_servers;  // compare: all check sets, >= 1 MiB
  int most_gpus_measured = 0;              // the largest GPU count of a measured step
};

// The committed figures, and the commands that print them (for the test and the README).
const TrustFigures& trust_figures();
extern const char* const kTrustValidateCommand;
extern const char* const kTrustCompareCommand;

// One header line: "# trust: ..." for a step of `strategy` on `gpus` GPUs over `servers`.
std::string trust_line(workload::Strategy strategy, int gpus, int servers);

// Tensor and pipeline parallelism: the commands that check them, rather than a figure that could
// drift from what they print.
inline constexpr const char* kModelParallelTrust =
    "# trust: tensor and pipeline parallelism checked against TP and PP steps measured on 4 "
    "H200s (clustersim validate --parallel calibrate/data/h200x4-r11-parallel) and Megatron-LM's "
    "published runs (clustersim compare calibrate/published/training.yaml)";

}  // namespace cs::cli
