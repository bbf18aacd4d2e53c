// The step's tasks: layer times measured (scaled through the work model) or from work alone,
// host costs per kernel from the measured phases, DDP's buckets, copies and all-reduces.
#include "workload/ddp/step_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/error.hpp"

namespace cs::workload {
namespace {

// Host time per kernel launched when no measurement of the model exists: the medians over the
// shipped models of the measured phase host time / kernels (calibrate/data/h200x1-models,
// fit_work.py). They include PyTorch's dispatch, autocast and autograd, not only the launch.
constexpr double kHostUsPerKernelForward = 35.67;
constexpr double kHostUsPerKernelBackward = 24.38;
constexpr double kHostUsPerKernelOptimizer = 68.79;

WorkScale scale_between(const Model& model, int batch, std::optional<int> seq, Precision from,
                        int to_batch, std::optional<int> to_seq, Precision to) {
  WorkScale s;
  s.batch = static_cast<double>(to_batch) / batch;
  s.seq = model.settings.seq && seq && to_seq ? static_cast<double>(*to_seq) / *seq : 1.0;
  s.from = from;
  s.to = to;
  return s;
}

double work_us(const std::vector<Op>& ops, const WorkScale& s, bool backward,
               const GpuCompute& gpu) {
  double total = 0;
  for (const Op& op : ops) total += op_time_us(scaled(op, s), backward, gpu);
  return total;
}

int op_kernels(const std::vector<Op>& ops) {
  int total = 0;
  for (const Op& op : ops) total += op.kernels;
  return total;
}

// Datasheet figures of the GPU models a measurement may name, for scaling a time measured on
// one of them to another (NVIDIA datasheets, dense: H100 SXM and H200 SXM 989.4 TFLOP/s BF16,
// 67 FP32, 3.35 and 4.8 TB/s; A100 SXM 312 and 19.5, 2.039 TB/s (80 GB) and 1.555 (40 GB);
// L40S 362 and 91.6, 0.864 TB/s; B200 (HGX B200) 2,250 and 75, 8 TB/s).
topo::GpuModel datasheet_of(const std::string& name) {
  topo::GpuModel m;
  m.name = name;
  auto set = [&m](double bf16, double fp32, double bw) {
    m.bf16_flops = bf16;
    m.fp16_flops = bf16;
    m.fp32_flops = fp32;
    m.memory_bandwidth_Bps = bw;
  };
  if (name == "H100-SXM5-80GB") set(989.4e12, 67e12, 3.35e12);
  if (name == "H200-SXM-141GB") set(989.4e12, 67e12, 4.8e12);
  if (name == "A100-SXM4-80GB") set(312e12, 19.5e12, 2.039e12);
  if (name == "A100-SXM4-40GB") set(312e12, 19.5e12, 1.555e12);
  if (name == "L40S") set(362e12, 91.6e12, 0.864e12);
  if (name == "B200-SXM-180GB") set(2250e12, 75e12, 8e12);
  return m;
}

// Each kernel's work-model time (an op's time split evenly over its kernels) and whether it is
// memory-bound.
struct KernelWork {
  std::vector<double> us;
  std::vector<std::uint8_t> memory_bound;
  double total_us = 0;  // the ops' times summed, as work_us gives them
};
KernelWork kernel_times(const std::vector<Op>& ops, const WorkScale& s, bool backward,
                        const GpuCompute& gpu) {
  KernelWork out;
  const auto kernels = static_cast<std::size_t>(std::max(op_kernels(ops), 0));
  out.us.reserve(kernels);
  out.memory_bound.reserve(kernels);
  for (const Op& op : ops) {
    const double t = op_time_us(scaled(op, s), backward, gpu);
    out.total_us += t;
    for (int k = 0; k < op.kernels; ++k) {
      out.us.push_back(t / op.kernels);
      out.memory_bound.push_back(op.kind == OpKind::memory ? 1 : 0);
    }
  }
  return out;
}

void spread(Task& task, KernelWork&& work) {
  double total = 0;
  double memory = 0;
  for (std::size_t i = 0; i < work.us.size(); ++i) {
    total += work.us[i];
    if (work.memory_bound[i] != 0) memory += work.us[i];
  }
  // Where the kernels cannot be matched one to one, the layer's dominant kind stands for all.
  task.memory_bound_default = memory > total / 2;
  if (static_cast<int>(work.us.size()) != task.kernels || !(total > 0)) return;
  for (double& w : work.us) w = task.gpu_us * w / total;
  task.kernel_us = std::move(work.us);
  task.memory_bound = std::move(work.memory_bound);
}

// Host time per kernel launched, per phase.
struct HostCosts {
  double forward = kHostUsPerKernelForward;
  double backward = kHostUsPerKernelBackward;
  double optimizer = kHostUsPerKernelOptimizer;
};

// The measurement's phases over its kernels, else the priors; carried from the export's host
// probe to the target host's (plan.host_scale, plan.host_note).
HostCosts host_costs(const Model& model, const Measurement* m, const TrainingOptions& options,
                     StepPlan& plan) {
  HostCosts h;
  if (m != nullptr) {
    int fwd = 0;
    int bwd = 0;
    for (const Layer& layer : model.layers) {
      auto it = layer.measured.find(m->id);
      if (it == layer.measured.end()) continue;
      fwd += it->second.forward_kernels;
      bwd += it->second.backward_kernels;
    }
    if (fwd > 0) h.forward = m->host_forward_us / fwd;
    if (bwd > 0) h.backward = m->host_backward_us / bwd;
    if (m->optimizer_kernels > 0) h.optimizer = m->host_optimizer_us / m->optimizer_kernels;
  }
  // The host: the measurement's host costs carried from its probe to the target host's.
  const HostProbe target = options.host ? *options.host : reference_host();
  char index[64];
  std::snprintf(index, sizeof index, "index %.2f us", target.index_us());
  if (m != nullptr && m->host) {
    plan.host_scale = host_scale(*m->host, target);
    char factor[96];
    std::snprintf(factor, sizeof factor, "; the export's host %.2f us: host costs x %.3f",
                  m->host->index_us(), plan.host_scale);
    plan.host_note = target.source + ", " + index + factor;
  } else if (m != nullptr) {
    plan.host_note =
        "as measured on the export's host (measurement '" + m->id + "' has no host probe)";
  } else {
    plan.host_note = "priors per kernel (no measurement)";
  }
  h.forward *= plan.host_scale;
  h.backward *= plan.host_scale;
  h.optimizer *= plan.host_scale;
  return h;
}

// Each layer's forward and backward task at the target; returns how many layers had no
// measured time (from work alone).
int layer_tasks(const Model& model, const Measurement* m, const WorkScale& to_target,
                const WorkScale& to_measured, const GpuCompute& compute,
                const GpuCompute& measured_gpu, const HostCosts& host, StepPlan& plan) {
  int work_layers = 0;
  int param_index = 0;
  for (const Layer& layer : model.layers) {
    LayerTasks t;
    t.forward.name = layer.name;
    t.backward.name = layer.name;
    // Each op's time at the target, once: per kernel for the spread, summed for the layer.
    KernelWork fwd_kernels = kernel_times(layer.forward, to_target, false, compute);
    KernelWork bwd_kernels = kernel_times(layer.backward, to_target, true, compute);
    const double fwd_work = fwd_kernels.total_us;
    const double bwd_work = bwd_kernels.total_us;
    auto it = m != nullptr ? layer.measured.find(m->id) : layer.measured.end();
    if (m != nullptr && it != layer.measured.end()) {
      const LayerMeasured& lm = it->second;
      const double fwd_then = work_us(layer.forward, to_measured, false, measured_gpu);
      const double bwd_then = work_us(layer.backward, to_measured, true, measured_gpu);
      t.forward.gpu_us = fwd_then > 0 ? lm.forward_us * fwd_work / fwd_then : lm.forward_us;
      t.backward.gpu_us = bwd_then > 0 ? lm.backward_us * bwd_work / bwd_then : lm.backward_us;
      t.forward.kernels = lm.forward_kernels;
      t.backward.kernels = lm.backward_kernels;
    } else {
      t.forward.gpu_us = fwd_work;
      t.backward.gpu_us = bwd_work;
      t.forward.kernels = op_kernels(layer.forward);
      t.backward.kernels = op_kernels(layer.backward);
      ++work_layers;
    }
    // The layer's time spread over its kernels in proportion to their work-model times, when
    // the counts agree (a measurement on another software stack may launch other kernels).
    spread(t.forward, std::move(fwd_kernels));
    spread(t.backward, std::move(bwd_kernels));
    t.forward.host_us_per_kernel = host.forward;
    t.backward.host_us_per_kernel = host.backward;
    for (const TensorSpec& p : layer.params) {
      t.params.push_back(param_index++);
      plan.grad_bytes.push_back(p.bytes());
      plan.grad_dtypes.push_back(p.dtype);
    }
    plan.layers.push_back(std::move(t));
  }

  return work_layers;
}

// The optimizer step's task; `tensors` parameter tensors.
void optimizer_task(const Model& model, const Measurement* m, const TrainingOptions& options,
                    const GpuCompute& compute, const GpuCompute& measured_gpu,
                    const HostCosts& host, int tensors, StepPlan& plan) {
  // The optimizer: measured where the measurement ran this optimizer, scaled by the memory
  // model between GPUs; else its foreach ops' bytes and kernels.
  const double elements = model.param_count();
  plan.optimizer.name = std::string("optimizer.step (") + to_string(options.optimizer) + ")";
  plan.optimizer.host_us_per_kernel = host.optimizer;
  Op opt_work;
  opt_work.kind = OpKind::memory;
  opt_work.bytes = elements * optimizer_bytes_per_element(options.optimizer, options.momentum);
  opt_work.kernels = optimizer_kernels(options.optimizer, options.momentum, tensors, elements);
  const double opt_now = op_time_us(opt_work, false, compute);
  plan.optimizer.memory_bound_default = true;
  // The work model's time of this update on the measured GPU, to scale a measured time by.
  const double opt_then = m != nullptr ? op_time_us(opt_work, false, measured_gpu) : 0.0;
  // The measured optimizer is reused only for the same update: the same optimizer and, for SGD,
  // momentum on or off alike (the other runs other foreach ops).
  const bool same_update = m != nullptr && m->optimizer == options.optimizer &&
                           (m->momentum > 0) == (options.momentum > 0);
  if (same_update && m->optimizer_kernels > 0 && opt_then > 0) {
    plan.optimizer.gpu_us = m->optimizer_us * opt_now / opt_then;
    plan.optimizer.kernels = m->optimizer_kernels;
  } else {
    plan.optimizer.gpu_us = opt_now;
    plan.optimizer.kernels = opt_work.kernels;
  }
}

// DDP on this GPU: buckets, the gradients' copies, the host costs of find_unused_parameters.
void plan_ddp(const TrainingOptions& options, const GpuCompute& compute, const HostCosts& host,
              StepPlan& plan) {
  // The gradients in model.parameters() order, and in the order backward makes them ready:
  // the layers in reverse, a layer's gradients together, in reverse parameter order.
  std::vector<GradTensor> in_order;
  for (std::size_t i = 0; i < plan.grad_bytes.size(); ++i) {
    in_order.push_back({static_cast<int>(i), plan.grad_bytes[i], plan.grad_dtypes[i]});
  }
  std::vector<GradTensor> ready;
  for (auto layer = plan.layers.rbegin(); layer != plan.layers.rend(); ++layer) {
    for (auto p = layer->params.rbegin(); p != layer->params.rend(); ++p) {
      ready.push_back(in_order[static_cast<std::size_t>(*p)]);
    }
  }
  plan.buckets = ddp_buckets(in_order, ready, options.ddp);
  if (options.ddp.find_unused_parameters) {
    const auto params = static_cast<double>(plan.grad_bytes.size());
    plan.unused_walk_host_us = kUnusedWalkUsPerParam * params;
    plan.unused_hook_host_us = kUnusedHookUsPerParam;
    plan.used_map_bytes = 4 * params;
  }
  // The reducer's hook runs one kernel per gradient: a copy into the bucket scaled by 1 / world
  // size (read its bytes once, write them once), or, with bucket views, that scaling in place
  // (the same traffic); and without views a copy back per gradient after the all-reduce
  // (reducer.cpp, mark_variable_ready_dense and finalize_backward).
  // Each is one plain elementwise kernel (at::mul_out, or copy_): its fixed cost is a single
  // small kernel's, as a device-to-device copy's (1.85 us, calibrate/data/h*x1-onerank;
  // network/copies.cpp), not the work model's per-kernel intercept for the model's own memory
  // ops (8.3 us, fitted to the exports' memory-bound ops); its bytes stream at the memory rate.
  for (double bytes : plan.grad_bytes) {
    const double us = copy_kernel_us(2 * bytes, compute);
    plan.copy_in_us.push_back(us);
    if (!options.ddp.gradient_as_bucket_view) plan.copy_out_us.push_back(us);
  }
  // One rank: DDP all-reduces its bucket in place with a sum (the 1 / world size is applied in
  // the copy into the bucket), and NCCL's one-rank path (ncclLaunchOneRank, src/enqueue.cc)
  // copies only out of place and launches a kernel only for PreMulSum: in place it is a no-op.
  // The GPU time is zero; the call's host cost remains. (`coll -n 1` times nccl-tests'
  // out-of-place call, a device copy.)
  plan.allreduce_us.assign(plan.buckets.size(), 0.0);
  // DDP's copies are ATen ops launched from the reducer's hooks: they pay the dispatcher's cost
  // per op as backward's own ops do (host-bound runs show it: GPT-2 at batch 2 and ResNet-50 at
  // batch 32 take 9-10 ms longer with DDP on the H200 host, ~30 us per gradient each way).
  plan.ddp_host_us_per_kernel = host.backward;
}

}  // namespace

TrainingOptions default_options(const Model& model) {
  TrainingOptions o;
  o.batch = model.settings.batch;
  o.seq = model.settings.seq;
  o.precision = model.settings.precision;
  o.optimizer = model.settings.optimizer;
  o.momentum = model.settings.momentum;
  o.input_pinned = model.settings.input_pinned;
  return o;
}

const Measurement* pick_measurement(const Model& model, const TrainingOptions& options,
                                    const std::string& gpu) {
  if (!options.measurement.empty()) {
    std::string ids;
    for (const Measurement& m : model.measurements) {
      if (m.id == options.measurement) return &m;
      ids += (ids.empty() ? "" : ", ") + m.id;
    }
    throw InputError(model.file + ": no measurement '" + options.measurement +
                     "' (it has: " + (ids.empty() ? "none" : ids) + ")");
  }
  const Measurement* best = nullptr;
  double best_score = 0;
  for (const Measurement& m : model.measurements) {
    if (m.precision != measured_precision(options.precision)) continue;
    // Same GPU first, then the same optimizer, then the nearest batch (log distance).
    const double score = (m.gpu == gpu ? 0.0 : 100.0) +
                         (m.optimizer == options.optimizer ? 0 : 10) +
                         std::abs(std::log(static_cast<double>(m.batch) / options.batch));
    if (best == nullptr || score < best_score) {
      best = &m;
      best_score = score;
    }
  }
  return best;
}

double work_at_measurement(const Model& model, const Measurement& m, const std::vector<Op>& ops,
                           bool backward, const std::string& gpu, const GpuCompute& compute) {
  const RecordedAt& rec = model.recorded_at;
  const WorkScale s =
      scale_between(model, rec.batch, rec.seq, rec.precision, m.batch, m.seq, m.precision);
  return work_us(ops, s, backward,
                 m.gpu == gpu ? compute : gpu_compute_priors(datasheet_of(m.gpu)));
}

std::vector<std::uint8_t> recomputed_layers(const Model& model) {
  std::vector<int> last(model.blocks.size(), -1);  // per block: its last layer saving activations
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& layer = model.layers[i];
    if (layer.block >= 0 && layer.activation_bytes > 0)
      last[static_cast<std::size_t>(layer.block)] = static_cast<int>(i);
  }
  std::vector<std::uint8_t> out(model.layers.size(), 0);
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& layer = model.layers[i];
    if (layer.block < 0) continue;
    const int stop = last[static_cast<std::size_t>(layer.block)];
    const bool gemm = std::any_of(layer.forward.begin(), layer.forward.end(),
                                  [](const Op& op) { return op.kind == OpKind::gemm; });
    const auto at = static_cast<int>(i);
    out[i] = at < stop || (at == stop && !gemm) ? 1 : 0;
  }
  return out;
}

StepPlan plan_step(const Model& model, const TrainingOptions& options,
                   const topo::GpuModel& gpu_model, const GpuCompute& compute,
                   double input_copy_us) {
  StepPlan plan;
  plan.input_bytes = options.batch * model.settings.input_bytes_per_sample;
  plan.input_copy_us = input_copy_us;
  plan.input_pinned = options.input_pinned;

  const RecordedAt& rec = model.recorded_at;
  const WorkScale to_target = scale_between(model, rec.batch, rec.seq, rec.precision, options.batch,
                                            options.seq, options.precision);
  const Measurement* m = options.compute == ComputeSource::measured
                             ? pick_measurement(model, options, gpu_model.name)
                             : nullptr;
  GpuCompute measured_gpu;
  WorkScale to_measured;
  if (m != nullptr) {
    plan.measurement = m->id;
    measured_gpu = m->gpu == gpu_model.name ? compute : gpu_compute_priors(datasheet_of(m->gpu));
    to_measured =
        scale_between(model, rec.batch, rec.seq, rec.precision, m->batch, m->seq, m->precision);
  }

  const HostCosts host = host_costs(model, m, options, plan);
  const int work_layers =
      layer_tasks(model, m, to_target, to_measured, compute, measured_gpu, host, plan);

  optimizer_task(model, m, options, compute, measured_gpu, host,
                 static_cast<int>(plan.grad_bytes.size()), plan);

  if (m == nullptr) {
    plan.compute_note = "from work alone (no measurement at this precision)";
  } else {
    plan.compute_note = "measured '" + m->id + "' (" + m->gpu + ", batch " +
                        std::to_string(m->batch) + ") scaled through the work model";
    if (work_layers > 0) {
      plan.compute_note += "; " + std::to_string(work_layers) + " layers from work alone";
    }
  }
  if (options.compute == ComputeSource::work)
    plan.compute_note = "from work alone (--compute work)";

  for (const Layer& layer : model.layers) {
    for (const TensorSpec& b : layer.buffers) plan.buffer_bytes += b.bytes();
  }
  plan.broadcast = options.ddp.enabled && options.ddp.broadcast_buffers && plan.buffer_bytes > 0;
  plan.kernel_gap_us = compute.kernel_gap_us;
  plan.overlap = compute.overlap;
  if (options.ddp.enabled) plan_ddp(options, compute, host, plan);
  plan.micro_batches = options.grad_accum;
  plan.sync_every_micro = options.sync_every_micro;
  plan.recompute = options.activation_checkpointing;
  plan.layer_block.reserve(model.layers.size());
  for (const Layer& layer : model.layers) plan.layer_block.push_back(layer.block);
  if (plan.recompute) plan.recomputed = recomputed_layers(model);
  if (options.grad_accum > 1) {
    for (double bytes : plan.grad_bytes)
      plan.accumulate_us.push_back(copy_kernel_us(3 * bytes, compute));
    plan.accumulate_host_us = host.backward;
  }
  if (options.precision == Precision::fp16) {
    plan.grad_scaler =
        grad_scaler_tasks(plan.grad_bytes, plan.grad_dtypes, compute, host.forward, host.optimizer);
    plan.compute_note += kGradScalerNote;
  }
  return plan;
}

}  // namespace cs::workload
