// DDP as a generator of the step graph (workload/step/): one GPU's step as PyTorch DDP issues it
// from one host thread onto a compute stream and an NCCL stream, with DDP's cross-stream waits
// as events; the executor times it and the result is summed into DDP's breakdown.
#pragma once

#include <string>
#include <vector>

#include "core/units.hpp"
#include "workload/ddp/step_plan.hpp"

namespace cs::workload {

// Where the step's time went, in microseconds. The compute stream's busy times plus its idle
// time add up to the step: step = input_copy + forward + backward + ddp_copies + optimizer +
// kernel_gaps + overlap_slowdown + exposed_communication + host_bound_idle + recompute +
// grad_accumulate. Overlap slows both
// sides: compute beside an NCCL kernel (overlap_slowdown) and the NCCL kernel beside compute
// (communication_slowdown, inside communication).
struct StepBreakdown {
  double step_us = 0;
  double input_copy_us = 0;
  double forward_us = 0;
  double backward_us = 0;
  double ddp_copies_us = 0;
  double optimizer_us = 0;
  double communication_us = 0;           // NCCL stream busy (all-reduces), hidden or not
  double communication_slowdown_us = 0;  // the part of it that compute beside stretched
  double exposed_communication_us = 0;   // compute stream waiting on the NCCL stream
  double host_bound_idle_us = 0;         // compute stream waiting for the host's launches
  double host_busy_us = 0;               // the host thread's launch work
  double kernel_gaps_us = 0;             // the GPU's own time between queued kernels
  double overlap_slowdown_us = 0;        // compute stretched by all-reduces holding SMs
  double recompute_us = 0;               // activation checkpointing: forward again in backward
  double grad_accumulate_us = 0;         // gradients added into the kept ones (accumulation)
  // A pipeline (workload/parallel/): its last rank's waits between its micro-batches' tasks.
  double pipeline_bubble_us = 0;
  // Tensor parallelism: the compute stream waiting on the TP group's collectives, a part of
  // exposed_communication_us without a pipeline, of forward_us + backward_us with one.
  double tp_exposed_us = 0;
};

struct BucketTiming {
  double bytes = 0;
  int tensors = 0;
  std::string label;  // NCCL's algorithm/protocol/channels
  double ready_us = 0, start_us = 0, end_us = 0;
  double alone_us = 0;  // the all-reduce's time alone (the collective model's); end - start is
                        // longer where compute beside it slowed it
};

struct StepResult {
  StepBreakdown breakdown;
  std::vector<BucketTiming> buckets;
  std::vector<std::string> lanes;  // the trace's threads: the host thread, then each stream
  std::vector<Span> spans;         // lane: an index of `lanes`
};

// An executed step summed into the breakdown, the strategy's copies those of `copies` (a
// category of its graph: DDP's "ddp_copy", FSDP's "fsdp_copy").
StepBreakdown breakdown_of(const Execution& x, const std::string& copies);

// The step graph of `plan` (workload/step/): the host thread and two streams, compute and NCCL;
// with each bucket's all-reduce node, in launch order. It refers to the plan's tasks: execute it
// while `plan` lives.
struct DdpStepGraph {
  StepGraph graph;
  std::vector<NodeId> bucket_nodes;
  // The first micro-batch's last forward node and last backward node (-1 for none): where a
  // pipeline stage's forward and backward end.
  NodeId forward_last = -1, backward_last = -1;
};
DdpStepGraph ddp_step_graph(const StepPlan& plan);

// Runs `plan`'s graph once from an idle GPU and host (a step that ends in a synchronize, as
// measured) and sums it into DDP's breakdown.
StepResult simulate_step(const StepPlan& plan);

}  // namespace cs::workload
