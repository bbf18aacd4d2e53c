// What `clustersim ddp` prints and writes: a text summary, JSON, CSV and a Chrome trace of one
// simulated step.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/step/ddp_predict.hpp"
#include "topology/cluster/cluster.hpp"
#include "workload/ddp/memory_check.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/model/model.hpp"
#include "workload/work/work_model.hpp"

namespace cs::cli {

struct DdpReport {
  const workload::Model& model;
  const topo::Cluster& cluster;
  const topo::GpuModel& gpu;
  const workload::TrainingOptions& options;
  const workload::StepPlan& plan;
  const workload::StepResult& result;
  const workload::MemoryEstimate& memory;
  const workload::GpuCompute& compute;
  int ranks = 1;
  int servers = 1;
  const std::vector<LinkLoad>* links = nullptr;  // the busiest links, for the trace
  int fsdp_units = 0;  // FSDP2's units (the root and the blocks), with --strategy fsdp
  workload::FsdpOptions fsdp_options;  // as the step ran them (shard group, replicas)
  const system::ParallelPrediction* parallel = nullptr;  // with --tp or --pp
};

std::string ddp_text(const DdpReport& r);
nlohmann::json ddp_json(const DdpReport& r);
std::string ddp_csv(const DdpReport& r);
// Chrome trace JSON (Perfetto opens it): the simulated rank's host thread and streams as threads
// of one process, spans as complete events in microseconds; with links, a second process of
// counters, one per busiest link direction: its utilization (bytes / capacity / duration) while
// each bucket's all-reduce runs.
std::string ddp_trace_json(const DdpReport& r);

}  // namespace cs::cli
