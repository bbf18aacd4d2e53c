// Why a larger cluster can run a step in less time than a smaller one (`clustersim scale`'s
// efficiency above 100 %), said beside the table from the points' own figures. The mechanism found
// so far (issue 41): within one PCIe server NCCL runs an all-reduce on few channels, each moving
// more than the rate a channel's CTA keeps beside GEMMs (workload/work/overlap.hpp), so compute
// beside it stretches it; across servers NCCL runs more channels, each under that rate, and the
// stretch all but goes, more than the all-reduce's longer time alone gives back.
#pragma once

#include <string>
#include <vector>

#include "system/ddp_step.hpp"

namespace cs::cli {

// A scale point's step, as far as the explanation needs it.
struct StepFigures {
  int gpus = 0;
  double step_ms = 0;
  double efficiency = 0;        // throughput per GPU against the topology's first point
  int channels = 0;             // the largest bucket's all-reduce: NCCL's channels (its CTAs)
  double gbps_per_channel = 0;  // and the bytes each moves per second alone
  double cap_gbps = 0;          // what a channel keeps beside a compute-bound kernel
  double alone_ms = 0;          // all-reduces on the NCCL stream, without compute's stretch
  double stretched_ms = 0;      // what compute beside them added
  double exposed_ms = 0;
};

// The figures of one predicted point (efficiency left for the caller).
StepFigures step_figures(const system::DdpPrediction& p, int gpus);

// Lines (without a leading "# ") saying why points of `topology` pass 100 % efficiency against
// its first point, `points` in the table's order; none when none passes 100.0 % as printed.
std::vector<std::string> efficiency_notes(const std::string& topology,
                                          const std::vector<StepFigures>& points);

}  // namespace cs::cli
