// FSDP2's memory at the step's peak, from the same activations as the DDP check.
#include "workload/fsdp/fsdp_memory.hpp"

#include <algorithm>

namespace cs::workload {

MemoryEstimate estimate_fsdp_memory(const Model& model, const TrainingOptions& options,
                                    const FsdpPlan& fsdp, double capacity_bytes) {
  TrainingOptions plain = options;
  plain.ddp.enabled = false;
  // The unsharded model's estimate gives the activations and the optimizer's state per byte.
  const MemoryEstimate whole = estimate_memory(model, plain, capacity_bytes);
  const auto n = static_cast<double>(fsdp.options.shard_ranks);
  MemoryEstimate e;
  e.capacity = capacity_bytes;
  e.params = whole.params / n;
  e.grads = whole.grads / n;
  e.optimizer_state = whole.optimizer_state / n;
  e.activations = whole.activations;
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
  // A unit's gradients in param_dtype and its reduce-scatter input, the previous input alive.
  const double per_element = dtype_bytes(fsdp.options.param_dtype);
  double reduce = 0;
  for (const FsdpUnit& u : fsdp.units)
    reduce = std::max(reduce, u.elements * per_element + 2 * u.reduce_scatter_bytes);
  e.ddp_buckets = reduce;
  const double persistent = e.params + e.grads + e.optimizer_state;
  e.peak_backward = persistent + e.activations + e.unsharded + reduce;
  // AdamW's foreach temporaries are shard-sized.
  const double temporaries = options.optimizer == OptimizerKind::adamw ? e.params : 0.0;
  e.peak_optimizer = persistent + temporaries;
  e.outside = whole.outside;
  e.total = std::max(e.peak_backward, e.peak_optimizer) + e.outside;
  return e;
}

}  // namespace cs::workload
