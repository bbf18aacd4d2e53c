// The peak of a step, by phase. With zero_grad(set_to_none=True) (PyTorch's default) gradients
// exist only from backward on; activations are freed as backward passes their layer.
#include "workload/ddp/memory_check.hpp"

#include <algorithm>
#include <cmath>

namespace cs::workload {

// calibrate/data/h100x1-models: 804,061,184 bytes with every shipped model (total - free -
// reserved after the timed steps); the H200 run predates the field.
double outside_allocator_prior_bytes() {
  return 804061184.0;
}

MemoryEstimate estimate_memory(const Model& model, const TrainingOptions& options,
                               double capacity_bytes) {
  MemoryEstimate e;
  e.capacity = capacity_bytes;
  e.params = model.param_bytes();
  e.grads = e.params;
  // AdamW: exp_avg and exp_avg_sq; SGD: a momentum buffer when momentum > 0, else nothing.
  const double state_per_param = options.optimizer == OptimizerKind::adamw ? 2.0
                                 : options.momentum > 0                    ? 1.0
                                                                           : 0.0;
  e.optimizer_state = state_per_param * e.params;
  e.ddp_buckets = options.ddp.enabled && !options.ddp.gradient_as_bucket_view ? e.grads : 0.0;
  // With bucket views the gradients live in the buckets: count them once.
  const double fb = static_cast<double>(options.batch) / model.recorded_at.batch;
  const double fs = model.recorded_at.seq && options.seq
                        ? static_cast<double>(*options.seq) / *model.recorded_at.seq
                        : 1.0;
  const double fp = options.precision == model.recorded_at.precision
                        ? 1.0
                        : (options.precision == Precision::fp32 ? 2.0 : 0.5);
  std::vector<double> acts;
  std::vector<double> grads;
  for (const Layer& layer : model.layers) {
    acts.push_back(layer.activation_bytes * std::pow(fb, layer.activation_scale_batch) *
                   std::pow(fs, layer.activation_scale_seq) * fp);
    double g = 0;
    for (const TensorSpec& p : layer.params) g += p.bytes();
    grads.push_back(g);
  }
  for (double a : acts) e.activations += a;
  const double persistent = e.params + e.optimizer_state + e.ddp_buckets;
  // Backward walks the layers in reverse: before layer i's backward frees its activations, the
  // layers below still hold theirs and the layers above have produced their gradients.
  const bool grads_in_buckets = options.ddp.enabled && options.ddp.gradient_as_bucket_view;
  double below = e.activations;
  double produced = 0;
  for (std::size_t i = acts.size(); i-- > 0;) {
    e.peak_backward = std::max(e.peak_backward,
                               persistent + below + (grads_in_buckets ? 0 : produced) + grads[i]);
    below -= acts[i];
    produced += grads[i];
  }
  // AdamW's foreach step allocates sqrt(exp_avg_sq), one parameter-sized list, at its peak.
  const double temporaries = options.optimizer == OptimizerKind::adamw ? e.params : 0.0;
  e.peak_optimizer = persistent + (grads_in_buckets ? 0 : e.grads) + temporaries;
  e.outside = outside_allocator_prior_bytes();
  e.total = std::max(e.peak_backward, e.peak_optimizer) + e.outside;
  return e;
}

int largest_fitting_batch(const Model& model, const TrainingOptions& options,
                          double capacity_bytes) {
  return largest_fitting_batch(
      options, [&](const TrainingOptions& o) { return estimate_memory(model, o, capacity_bytes); });
}

int largest_fitting_batch(const TrainingOptions& options,
                          const std::function<MemoryEstimate(const TrainingOptions&)>& estimate) {
  TrainingOptions o = options;
  auto fits = [&](int batch) {
    o.batch = batch;
    return estimate(o).fits();
  };
  if (!fits(1)) return 0;
  int lo = 1;
  int hi = 2;
  while (hi < (1 << 24) && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {  // fits(lo), !fits(hi)
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace cs::workload
