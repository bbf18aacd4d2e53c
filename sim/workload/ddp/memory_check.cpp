// The peak of a step, by phase. With zero_grad(set_to_none=True) (PyTorch's default) gradients
// exist only from backward on; activations are freed as backward passes their layer.
#include "workload/ddp/memory_check.hpp"

#include <algorithm>
#include <cmath>

namespace cs::workload {
namespace {

double scaled(double bytes, double fb, double fs, double exp_batch, double exp_seq) {
  return bytes * std::pow(fb, exp_batch) * std::pow(fs, exp_seq);
}

}  // namespace

// calibrate/data/h100x1-models: 804,061,184 bytes with every shipped model (total - free -
// reserved after the timed steps); the H200 run predates the field.
double outside_allocator_prior_bytes() {
  return 804061184.0;
}

std::vector<LayerMemory> layer_memory(const Model& model, const TrainingOptions& options) {
  const double fb = static_cast<double>(options.batch) / model.recorded_at.batch;
  const double fs = model.recorded_at.seq && options.seq
                        ? static_cast<double>(*options.seq) / *model.recorded_at.seq
                        : 1.0;
  const double fp =
      precision_bytes(options.precision) / precision_bytes(model.recorded_at.precision);
  // Autocast's bf16 copies of fp32 weights, saved by their GEMMs (recorded in bf16 only; fp16
  // autocast keeps fp16 copies of the same size). GradScaler's own tensors (scale, growth
  // tracker, found_inf: a few bytes) are not counted.
  const bool casts = model.recorded_at.precision == Precision::bf16;
  const bool half = options.precision != Precision::fp32;
  std::vector<int> first_of_block(model.blocks.size(), -1);
  std::vector<LayerMemory> out(model.layers.size());
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& layer = model.layers[i];
    LayerMemory& m = out[i];
    m.block = layer.block;
    m.acts = scaled(layer.activation_bytes, fb, fs, layer.activation_scale_batch,
                    layer.activation_scale_seq) *
             fp;
    for (const TensorSpec& p : layer.params) m.grads += p.bytes();
    for (const Op& op : layer.forward) {
      if (casts && op.weight >= 0 && half) {
        const TensorSpec& w = layer.params[static_cast<std::size_t>(op.weight)];
        if (w.dtype == Dtype::fp32) m.casts += static_cast<double>(w.elements) * 2;
      }
    }
    m.casts = std::min(m.casts, m.acts);
    // A backward elementwise op reads the gradient of its output and a saved tensor and writes
    // the gradient of its input, all of one size: two of its three tensors are transient (the
    // saved one is in acts). The largest such op sets the layer's transient: for a loss over a
    // vocabulary, the logits' gradient in fp32, twice.
    for (const Op& op : layer.backward) {
      if (op.kind != OpKind::memory) continue;
      m.transient =
          std::max(m.transient, 2.0 / 3.0 * scaled(op.bytes, fb, fs, op.scale_batch, op.scale_seq));
    }
    // Checkpointing keeps a block's input alone: what its first layer saves.
    if (layer.block >= 0 && first_of_block[static_cast<std::size_t>(layer.block)] < 0)
      first_of_block[static_cast<std::size_t>(layer.block)] = static_cast<int>(i);
    m.first_of_block = layer.block >= 0 &&
                       first_of_block[static_cast<std::size_t>(layer.block)] == static_cast<int>(i);
  }
  return out;
}

double backward_peak(const std::vector<LayerMemory>& layers, const BackwardWalk& w) {
  // What each layer holds after forward: everything it saved, or under checkpointing a block's
  // input alone (its first layer's); without autocast's weight copies where the strategy keeps
  // none (FSDP's bf16 parameters).
  const auto saved = [&w](const LayerMemory& m) { return m.acts - (w.drop_casts ? m.casts : 0.0); };
  const auto kept = [&](const LayerMemory& m) {
    return !w.checkpointing || m.block < 0 || m.first_of_block ? saved(m) : 0.0;
  };
  double below = 0;
  for (const LayerMemory& m : layers) below += kept(m);
  double produced = w.held_grads;
  double peak = 0;
  double recomputed = 0;  // the current block's recomputed activations still alive
  int block = -1;
  for (std::size_t i = layers.size(); i-- > 0;) {
    const LayerMemory& m = layers[i];
    if (w.checkpointing && m.block != block) {
      block = m.block;
      recomputed = 0;
      if (block >= 0) {
        for (std::size_t j = 0; j <= i; ++j)
          if (layers[j].block == block) recomputed += saved(layers[j]) - kept(layers[j]);
      }
    }
    const double extra = w.at_layer.empty() ? 0.0 : w.at_layer[i];
    peak = std::max(peak, w.persistent + below + recomputed + produced + m.grads * w.grads_scale +
                              m.transient + w.in_flight + extra);
    below -= kept(m);
    if (w.checkpointing && m.block >= 0) recomputed -= saved(m) - kept(m);
    produced += m.grads * w.produced_scale;
  }
  return peak;
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
  const bool grads_in_buckets = options.ddp.enabled && options.ddp.gradient_as_bucket_view;
  const std::vector<LayerMemory> layers = layer_memory(model, options);
  BackwardWalk w;
  w.persistent = e.params + e.optimizer_state + e.ddp_buckets;
  w.checkpointing = options.activation_checkpointing;
  // Backward walks the layers in reverse: before layer i's backward frees its activations, the
  // layers below still hold theirs and the layers above have produced their gradients; with
  // accumulation every gradient is held from the second micro-batch on, each new one added.
  w.grads_scale = grads_in_buckets ? 0.0 : 1.0;
  w.produced_scale = grads_in_buckets || options.grad_accum > 1 ? 0.0 : 1.0;
  w.held_grads = options.grad_accum > 1 && !grads_in_buckets ? e.grads : 0.0;
  for (const LayerMemory& m : layers)
    e.activations += !w.checkpointing || m.block < 0 || m.first_of_block ? m.acts : 0.0;
  e.peak_backward = backward_peak(layers, w);
  // AdamW's foreach step allocates sqrt(exp_avg_sq), one parameter-sized list, at its peak.
  const double temporaries = options.optimizer == OptimizerKind::adamw ? e.params : 0.0;
  e.peak_optimizer = w.persistent + (grads_in_buckets ? 0 : e.grads) + temporaries;
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
