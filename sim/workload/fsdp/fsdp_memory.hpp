// Does an FSDP2 step fit in one GPU's memory? The sharded state, the unsharded units in flight,
// the activations and the gradients' reduce-scatter buffers at the step's peak.
#pragma once

#include "workload/ddp/memory_check.hpp"
#include "workload/fsdp/fsdp_step.hpp"

namespace cs::workload {

// Per rank, over `fsdp`'s units (plan_fsdp): parameters, gradients and optimizer state are
// 1 / shard ranks of the model's; the root and two units are unsharded in param_dtype at once
// (the one computing and the one prefetched); in backward a unit's unsharded gradients
// (param_dtype) and its reduce-scatter input (reduce_dtype) beside the previous unit's input.
// `grads` and `ddp_buckets` of the result hold the sharded gradients and those buffers.
MemoryEstimate estimate_fsdp_memory(const Model& model, const TrainingOptions& options,
                                    const FsdpPlan& fsdp, double capacity_bytes);

}  // namespace cs::workload
