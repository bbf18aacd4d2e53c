// FSDP2's memory at the step's peak, walked through backward as the DDP check is.
#include "workload/fsdp/fsdp_memory.hpp"

#include <algorithm>

namespace cs::workload {

MemoryEstimate estimate_fsdp_memory(const Model& model, const TrainingOptions& options,
                                    const FsdpPlan& fsdp, double capacity_bytes) {
  TrainingOptions plain = options;
  plain.ddp.enabled = false;
  // The unsharded model's estimate gives the optimizer's state per byte.
  const MemoryEstimate whole = estimate_memory(model, plain, capacity_bytes);
  const auto n = static_cast<double>(fsdp.options.shard_ranks);
  MemoryEstimate e;
  e.capacity = capacity_bytes;
  e.params = whole.params / n;
  e.grads = whole.grads / n;
  e.optimizer_state = whole.optimizer_state / n;
  double largest = 0, second = 0;
  for (std::size_t u = 1; u < fsdp.units.size(); ++u) {
    const double b = fsdp.units[u].all_gather_bytes;
    if (b > largest) {
      second = largest;
      largest = b;
    } else {
      second = std::max(second, b);
    }
  }
  e.unsharded = fsdp.units.front().all_gather_bytes + largest + second;
  // When a unit's backward ends (at its first layer): its gradients in param_dtype and its
  // reduce-scatter input, the previous unit's input still alive.
  const double per_element = dtype_bytes(fsdp.options.param_dtype);
  double reduce = 0;
  double elements = 0;
  const std::vector<LayerMemory> layers = layer_memory(model, options);
  BackwardWalk w;
  w.at_layer.assign(layers.size(), 0.0);
  for (const FsdpUnit& u : fsdp.units) {
    const double buffers = u.elements * per_element + 2 * u.reduce_scatter_bytes;
    reduce = std::max(reduce, buffers);
    elements += u.elements;
    if (!u.layers.empty()) w.at_layer[static_cast<std::size_t>(u.layers.front())] += buffers;
  }
  e.ddp_buckets = reduce;
  w.persistent = e.params + e.optimizer_state;
  w.checkpointing = options.activation_checkpointing;
  // The parameters are param_dtype already: autocast saves no copies of them (with bf16).
  w.drop_casts = fsdp.options.param_dtype == Dtype::bf16;
  // A unit's gradients arrive unsharded in param_dtype (in `reduce`) and leave sharded.
  w.grads_scale = 0;
  w.produced_scale = 1 / n;
  // Accumulation keeps every unit's unsharded gradients in reduce_dtype between micro-batches
  // (FSDPParam.unsharded_accumulated_grad).
  // Reduced in every micro-batch instead, the sharded gradients are what is held.
  if (options.grad_accum > 1) {
    w.held_grads =
        options.sync_every_micro ? e.grads : elements * dtype_bytes(fsdp.options.reduce_dtype);
  }
  w.in_flight = e.unsharded;
  for (const LayerMemory& m : layers) {
    const bool kept = !w.checkpointing || m.block < 0 || m.first_of_block;
    e.activations += kept ? m.acts - (w.drop_casts ? m.casts : 0.0) : 0.0;
  }
  e.peak_backward = backward_peak(layers, w);
  // AdamW's foreach temporaries are shard-sized.
  const double temporaries = options.optimizer == OptimizerKind::adamw ? e.params : 0.0;
  e.peak_optimizer = w.persistent + e.grads + temporaries;
  e.outside = whole.outside;
  e.total = std::max(e.peak_backward, e.peak_optimizer) + e.outside;
  return e;
}

}  // namespace cs::workload
