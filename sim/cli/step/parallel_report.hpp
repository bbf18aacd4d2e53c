// What `clustersim ddp` prints of a tensor- or pipeline-parallel step beside the breakdown: the
// layout line, and the pipeline's schedule in the Chrome trace.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "system/model_parallel.hpp"
#include "workload/step/strategy.hpp"

namespace cs::cli {

// The `# layout:` line: degrees, order, where the TP group sits, the schedule.
std::string layout_line(const system::ParallelPrediction& p,
                        const workload::ModelParallelOptions& options);

// One thread per pipeline rank: each forward and backward of each micro-batch (and model chunk)
// as it ran in the pipeline's task graph, then the rank's data-parallel all-reduce and optimizer.
// Appends process `pid`'s events ("pipeline") to `events`; nothing without a pipeline.
void add_pipeline_events(nlohmann::json& events, const system::ParallelPrediction& p, int pid);

}  // namespace cs::cli
