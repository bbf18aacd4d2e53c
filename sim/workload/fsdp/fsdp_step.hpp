// PyTorch FSDP2 (torch.distributed.fsdp.fully_shard) as a generator of the step graph
// (workload/step/): each block of the model (Model::blocks) is one fully_shard unit and the rest
// of the model is the root's; per unit an all-gather of its parameters before its forward and
// again before its backward, a reduce-scatter of its gradients after its backward, the copies
// around them, and the optimizer on the local shard. The rules and where each comes from:
// workload/fsdp/README.md.
#pragma once

#include <string>
#include <vector>

#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/model/model.hpp"
#include "workload/step/step_graph.hpp"
#include "workload/step/strategy.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {

// One fully_shard unit: its layers and the bytes of its collectives.
struct FsdpUnit {
  std::string name;                 // the block's, or "root"
  std::vector<int> layers;          // indices in StepPlan::layers, forward order
  double elements = 0;              // parameter elements
  int tensors = 0;                  // parameter tensors
  double all_gather_bytes = 0;      // the unsharded parameters in param_dtype (NCCL's output)
  double reduce_scatter_bytes = 0;  // the unsharded gradients in reduce_dtype (NCCL's input)
  // Timed by the collective model (sim/system): all-gather and reduce-scatter over the shard
  // group, each alone.
  CollectiveKernel all_gather, reduce_scatter;
  // HSDP: the reduced shard (reduce_scatter_bytes / shard ranks) all-reduced over the replicate
  // group, on its own stream after the reduce-scatter.
  CollectiveKernel all_reduce;
  // GPU time of the copies around them: the local shard into the all-gather's input (on the
  // all-gather copy-in stream), the all-gather's output into the parameters (compute stream),
  // and the gradients into the reduce-scatter's input, cast to reduce_dtype (compute stream).
  double copy_in_us = 0, copy_out_us = 0, reduce_copy_in_us = 0;
  // Gradient accumulation without synchronisation (set_requires_gradient_sync(False)), per
  // parameter tensor one kernel on the compute stream after the unit's backward: in the first
  // micro-batch each unsharded gradient cast to reduce_dtype and kept (none when the dtypes
  // agree: autograd keeps it), in later ones the new gradient added into the kept one. With
  // accumulation the reduce-scatter's copy-in reads the kept gradients (reduce_dtype).
  double accumulate_first_us = 0, accumulate_us = 0, reduce_copy_in_accumulated_us = 0;
};

struct FsdpPlan {
  FsdpOptions options;
  std::vector<FsdpUnit> units;     // units[0] is the root; then the blocks in forward order
  std::vector<int> unit_of_layer;  // per StepPlan layer: its unit
  double copy_host_us = 0;         // host cost of launching one of the copies and collectives above
  // FSDP's host work beyond the plain step's, per parameter tensor of a unit: per micro-batch
  // hook_host_us_per_tensor, half in the unit's pre-forward, half in its pre-backward; once a
  // step sync_host_us_per_tensor, in its post-backward when the gradients are reduced.
  double hook_host_us_per_tensor = 0;
  double sync_host_us_per_tensor = 0;
};

// FSDP2's host work per parameter tensor and step, beyond the plain step's: GPT-2 at batch 2
// (host-bound) on one H200, fully_shard per block against the plain step, one process:
// (70.60 - 27.24 ms) over its 148 parameter tensors = 293.0 us, on a host of probe index
// 16.52 us (calibrate/data/h200x2-r7-fsdp, gpt2-b2-n1.json and host_probe-n2.json's one-process
// figures). It holds every host cost FSDP adds (hooks, DTensor views, the copies' and
// collectives' launches): plan_fsdp then charges no launch cost per copy.
inline constexpr double kFsdpHostUsPerTensor = 293.0;
inline constexpr double kFsdpHostProbeIndexUs = 16.52;
// The share of it that runs once a step, when gradients are reduced (the post-backward's
// reduce-scatter path and the optimizer over DTensor shards), not in every micro-batch (the
// unshard and reshard hooks): with D1 and D4 the host time FSDP adds to a step of one and of 4
// micro-batches, (4 D1 - D4) / (3 D1). GPT-2 at batch 8 on one H200, host-bound under FSDP
// (calibrate/data/h200x2-r8-accum, gpt2-n1.json: fsdp 89.3 and fsdp-accum4 275.6 ms of host
// calls, against the plain step's host work as simulated there, 44.4 and 177.5 ms): D1 = 44.9,
// D4 = 98.1 ms, 0.605.
inline constexpr double kFsdpHostSyncShare = 0.605;

// The units of `model` for `plan` (a plan made without DDP) and the copies' GPU times on
// `compute`; the collectives' times are left for the caller (the system layer) to fill.
// `host_index_us`: the target host's probe index; FSDP's host work is carried to it from the
// fitted run's host.
FsdpPlan plan_fsdp(const Model& model, const StepPlan& plan, const FsdpOptions& options,
                   const GpuCompute& compute, double host_index_us);

// The step graph: a compute stream, an all-gather copy-in stream, an all-gather stream and a
// reduce-scatter stream. It refers to the plans' tasks: execute it while they live.
struct FsdpStepGraph {
  StepGraph graph;
  std::vector<NodeId> all_gathers, reduce_scatters, all_reduces;  // in issue order
};
FsdpStepGraph fsdp_step_graph(const StepPlan& plan, const FsdpPlan& fsdp);

// Runs the graph once and sums it into the breakdown (FSDP's copies under ddp_copies_us, the
// strategy's copies; communication is every all-gather and reduce-scatter).
StepResult simulate_fsdp_step(const StepPlan& plan, const FsdpPlan& fsdp);

}  // namespace cs::workload
