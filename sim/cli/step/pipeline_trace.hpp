// A pipeline's schedule in the Chrome trace of `clustersim ddp`: one thread per pipeline rank,
// each forward and backward of each micro-batch (and model chunk) as it ran in the pipeline's task
// graph, then the rank's data-parallel all-reduce and optimizer step.
#pragma once

#include <nlohmann/json.hpp>

#include "system/model_parallel.hpp"

namespace cs::cli {

// Appends process `pid`'s events ("pipeline") to `events`; nothing without a pipeline.
void add_pipeline_events(nlohmann::json& events, const system::ParallelPrediction& p, int pid);

}  // namespace cs::cli
