// One DDP step predicted on a set of ranks of a topology: the memory check, the layer times, the
// step written as a graph by the DDP generator, its buckets' all-reduces and the buffers'
// broadcast timed by the collective model (collective_timer.hpp), the graph executed. What
// `clustersim ddp`, `scale`, `plan`, `sweep` and `validate --ddp` call; they parse and print.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/node_host.hpp"
#include "system/collective_timer.hpp"
#include "system/model_parallel.hpp"
#include "topology/cluster/cluster.hpp"
#include "workload/ddp/memory_check.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/fsdp/fsdp_step.hpp"
#include "workload/model/model.hpp"
#include "workload/work/work_model.hpp"

namespace cs::system {

// A link direction among the busiest of the step's all-reduces, for the trace: its name, its
// capacity, and the bytes each bucket's all-reduce moves over it (the collective alone on the
// flow network; the same bytes whatever compute stretches it to).
struct LinkLoad {
  std::string name;  // "from -> to (kind label)"
  double capacity_Bps = 0;
  std::vector<double> bucket_bytes;  // per bucket
};

struct DdpPrediction {
  topo::GpuModel gpu;
  workload::GpuCompute compute;
  workload::StepPlan plan;
  workload::StepResult result;
  workload::MemoryEstimate memory;
  int ranks = 1;
  int servers = 1;                      // distinct servers the ranks run on
  std::vector<LinkLoad> busiest_links;  // filled when asked (predict_ddp's `links`), busiest first
  bool fsdp = false;                    // the step ran FSDP2 (fsdp_plan) instead of DDP
  workload::FsdpPlan fsdp_plan;
  // With tensor or pipeline parallelism (options.parallel): groups, stages and the pipeline;
  // `plan` is then the first stage's and `memory` the fullest stage's.
  std::optional<ParallelPrediction> parallel;
};

// One step of `model` on `ranks` of `cluster` (a calibration, when given, already applied to the
// cluster's links by the caller). Throws InputError when the ranks run on several GPU models or
// the step does not fit in a GPU's memory (with the largest batch). `links` > 0 also fills
// busiest_links with that many link directions (it re-runs each distinct bucket size once on
// the flow network: only for the trace).
// With options.strategy fsdp, the step is FSDP2's over the ranks (one shard group;
// options.ddp is ignored): the units' all-gathers and reduce-scatters timed by the collective
// model, the memory check FSDP's (workload/fsdp/fsdp_memory.hpp).
DdpPrediction predict_ddp(const topo::Cluster& cluster, const workload::Model& model,
                          const workload::TrainingOptions& options, const std::vector<int>& ranks,
                          const cal::Calibration* calibration, int links = 0);

// The inputs a step's prediction shares, whatever its parallelism.
struct StepContext {
  const topo::Cluster& cluster;
  const topo::ClusterGraph& graph;
  const workload::Model& model;
  const workload::TrainingOptions& options;  // its host set to the node's
  const std::vector<int>& ranks;
  coll::NcclParams nccl;
  coll::TunerOptions nccl_options;
  double input_copy_us = 0;
};

// Tensor and pipeline parallelism (model_parallel.cpp): fills p's plan, result, memory and
// parallel; throws InputError for a layout the ranks, layers or heads do not allow, or a stage
// that does not fit.
void predict_model_parallel(const StepContext& c, DdpPrediction& p);

// The step's collectives from the collective model: each bucket's all-reduce (time alone, CTAs,
// per-CTA rate, NCCL's label), the used-parameter map's all-reduce and the buffers' broadcast.
// DDP runs one NCCL stream per rank, so a rank's collectives never overlap one another, and
// with every rank alike they all start together: each is timed alone.
void time_ddp_collectives(workload::StepPlan& plan, CollectiveTimer& timer);

// FSDP's all-gathers and reduce-scatters from the collective model, each alone: per unit, its
// time, CTAs and per-CTA rate; with HSDP's replicate group (`replicas`), each unit's reduced
// shard all-reduced over it.
void time_fsdp_collectives(workload::FsdpPlan& plan, CollectiveTimer& timer,
                           CollectiveTimer* replicas = nullptr);

// The step's host from a node's probe: one process alone, and every process at once where the
// probe timed that; `label` names where the probe comes from ("host probe FILE").
void set_host(workload::TrainingOptions& o, const cal::NodeHost& h, const std::string& label);

}  // namespace cs::system
