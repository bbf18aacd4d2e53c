// Tensor, sequence and pipeline parallelism beside data parallelism on a set of ranks: where each
// group's ranks sit (placement), what each pipeline stage does per micro-batch (its TP shard's
// layers with the TP group's collectives, timed by the collective model on the group's links),
// the pipeline's task graph over the stages, and the data-parallel gradient all-reduce after it.
// predict_ddp (ddp_step.hpp) calls it when TrainingOptions::parallel asks for TP or PP.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster/cluster.hpp"
#include "workload/ddp/memory_check.hpp"
#include "workload/parallel/pipeline.hpp"
#include "workload/step/strategy.hpp"

namespace cs::system {

// The groups of the job's first rank, as indices into the job's ranks: its tensor-parallel group,
// its data-parallel group and its pipeline (one rank per pipeline rank, first stage first).
struct ParallelGroups {
  int tp = 1, pp = 1, dp = 1;
  std::vector<int> tp_group, dp_group, pipeline;
  int tp_servers = 1;  // servers the TP group spans
};

// Places tp x dp x pp over `ranks` in `options.order` (innermost first). Throws InputError naming
// the flag when the degrees do not divide the ranks or the order is not a permutation of tp, dp,
// pp.
ParallelGroups place_ranks(const topo::Cluster& cluster, const std::vector<int>& ranks,
                           const workload::ModelParallelOptions& options);

struct StagePrediction {
  int first_layer = 0, end_layer = 0;      // in Model::layers
  double forward_us = 0, backward_us = 0;  // one micro-batch, TP collectives on the way
  double compute_us = 0;                   // of those, the kernels' GPU time alone
  double tp_exposed_us = 0;                // of those, the compute stream waiting on TP collectives
  double recompute_us = 0;                 // of the backward, the recomputed forward's kernels
  double accumulate_us = 0;         // gradient accumulation, once per micro-batch after the first
  double dp_sync_us = 0;            // the stage's gradient all-reduce over the DP group, alone
  double optimizer_us = 0;          // the stage's optimizer step (its TP shard)
  workload::MemoryEstimate memory;  // with the activations of `in_flight` micro-batches
  int in_flight = 1;
};

struct ParallelPrediction {
  ParallelGroups groups;
  workload::PipelineSchedule schedule = workload::PipelineSchedule::one_f_one_b;
  int micro_batches = 1;
  std::vector<StagePrediction> stages;  // pp x virtual stages; one without a pipeline
  std::vector<double> send_us;          // per stage boundary
  workload::PipelineRun pipeline;       // empty without a pipeline
  int tp_collectives = 0;               // per micro-batch, forward and backward, per rank
};

}  // namespace cs::system
