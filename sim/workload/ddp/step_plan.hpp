// What one GPU does in a training step, as tasks with GPU times, kernel counts and host costs:
// the input copy, each layer's forward and backward, DDP's gradient copies and bucket
// all-reduces, the optimizer step. Pure: no event queue; step_sim.cpp runs the plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/cluster/cluster.hpp"
#include "workload/ddp/buckets.hpp"
#include "workload/ddp/grad_scaler.hpp"
#include "workload/model/model.hpp"
#include "workload/step/step_graph.hpp"
#include "workload/step/strategy.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {

enum class ComputeSource { measured, work };

// The training's options, whatever the parallelism; the strategy's own beside them (`ddp`).
struct TrainingOptions {
  int batch = 1;
  std::optional<int> seq;
  Precision precision = Precision::bf16;
  OptimizerKind optimizer = OptimizerKind::adamw;
  double momentum = 0;  // SGD's; > 0 keeps a momentum buffer per parameter
  bool input_pinned = true;
  Strategy strategy = Strategy::ddp;
  DdpOptions ddp;                 // DDP's own options (with Strategy::ddp)
  FsdpOptions fsdp;               // FSDP2's (with Strategy::fsdp)
  ModelParallelOptions parallel;  // tensor and pipeline parallelism beside it
  // Gradient accumulation: micro-batches of `batch` per optimizer step, the gradients
  // synchronised in the last (DDP's no_sync(), FSDP2's set_requires_gradient_sync(False)).
  int grad_accum = 1;
  // Synchronise the gradients in every micro-batch instead (DDP without no_sync; FSDP2 without
  // set_requires_gradient_sync(False): each micro-batch's reduce-scatter, no unsharded gradients
  // kept between them).
  bool sync_every_micro = false;
  // Each block (Model::blocks) in checkpoint_wrapper: its forward runs again in backward.
  bool activation_checkpointing = false;
  ComputeSource compute = ComputeSource::measured;  // measured falls back to work where absent
  std::string measurement;  // a measurement id to scale from; "" picks one (pick_measurement)
  // The host the step runs on (a calibration's probe); absent: kReferenceHost. A measurement's
  // host costs are carried from its own probe to this one (core/host_probe.hpp).
  std::optional<HostProbe> host;
  // The same host's probe with every GPU's process at once: predict_ddp (sim/cli) puts it in
  // `host` when the step runs several processes on a server.
  std::optional<HostProbe> host_all;
};

// Samples one GPU trains on per optimizer step: the batch times the micro-batches.
inline int samples_per_step(const TrainingOptions& o) {
  return o.batch * o.grad_accum;
}

// The reference host: the median per class of the 11 probes taken on the lent H200 VMs on
// 2026-11-28 (calibrate/data/h200x2-r2-ddp/host_probe-*.json and the 8 exports of
// calibrate/data/h200x2r3-models/), index 22.25 us. Predictions without a calibration's host are
// for a host this fast.
HostProbe reference_host();

// The model's defaults as options.
TrainingOptions default_options(const Model& model);

struct LayerTasks {
  Task forward, backward;
  std::vector<int> params;  // indices in model.parameters() order
};

// Collectives inside the model's computation (tensor parallelism's, workload/parallel/), around
// one layer: each on the in-layer stream after the compute stream's work so far, the compute
// stream's next kernel waiting for it (on the critical path).
struct LayerCollectives {
  std::vector<CollectiveKernel> forward_before, forward_after, backward_before, backward_after;
  double forward_host_us = 0, backward_host_us = 0;  // host work before its forward / backward
};

struct StepPlan {
  std::string measurement;   // the id scaled from; "" when every time came from work
  std::string compute_note;  // one line: where the times came from
  std::string host_note;     // one line: the host the host costs are for, and the factor applied
  double host_scale = 1;     // measured host costs x this
  double input_bytes = 0;
  double input_copy_us = 0;  // host to device, pinned or pageable as options say
  bool input_pinned = true;
  std::vector<LayerTasks> layers;  // forward order
  Task optimizer;
  std::vector<double> grad_bytes;  // per parameter
  std::vector<Dtype> grad_dtypes;  // per parameter
  std::vector<Bucket> buckets;     // empty without DDP
  // DDP on this GPU: a copy kernel per gradient into its bucket and back, unless buckets are
  // views; per bucket, the one-rank all-reduce (NCCL copies the buffer once on the GPU).
  std::vector<double> copy_in_us;    // per parameter; empty without copies
  std::vector<double> copy_out_us;   // per parameter; empty without copies
  std::vector<double> allreduce_us;  // per bucket
  // Per bucket, the CTAs of the all-reduce's kernel (NCCL's channels, one CTA each): kernels
  // overlapping it slow by `overlap`'s factor for that count.
  std::vector<int> allreduce_ctas;
  // Per bucket, the bytes each CTA moves per second when the all-reduce runs alone (bus bytes,
  // 2 (n - 1) / n of the bucket, over time and channels): beside compute it slows by
  // overlap.comm_factor of this rate.
  std::vector<double> allreduce_rate_gbps;
  // find_unused_parameters=True: host time after forward (the graph walk), host time added to
  // each gradient's hook, and the all-reduce of the used-parameter map (an int32 per parameter)
  // after the last bucket; finalize waits for it.
  double unused_walk_host_us = 0;
  double unused_hook_host_us = 0;
  double used_map_bytes = 0;  // 0: no used-parameter map
  double used_map_allreduce_us = 0;
  // DDP's broadcast of the module buffers (BatchNorm statistics) from rank 0 before each
  // forward, on the NCCL stream; forward waits for it. 0 us with one rank (in place: nothing).
  double buffer_bytes = 0;
  double broadcast_us = 0;
  bool broadcast = false;
  OverlapSlowdown overlap;
  std::vector<std::string> allreduce_label;  // per bucket: NCCL's algorithm/protocol/channels
  double ddp_host_us_per_kernel = 0;
  // The GPU's own time between two queued kernels of a stream (GpuCompute::kernel_gap_us).
  double kernel_gap_us = 0;
  // Forward and backward run micro_batches times per step (TrainingOptions::grad_accum).
  int micro_batches = 1;
  bool sync_every_micro = false;  // TrainingOptions::sync_every_micro
  // Activation checkpointing: each block's forward again before its backward, the layers
  // `recomputed` marks (recomputed_layers()).
  bool recompute = false;
  std::vector<int> layer_block;          // per layer: its block in Model::blocks, -1 outside any
  std::vector<std::uint8_t> recomputed;  // per layer: 1 if checkpointing runs its forward again
  // From the second micro-batch on, autograd's AccumulateGrad adds each new gradient into the
  // one kept: per parameter a kernel reading both and writing one (grad_bytes each), launched
  // from backward at accumulate_host_us.
  std::vector<double> accumulate_us;
  double accumulate_host_us = 0;
  // Per layer, empty for none: the collectives around it (LayerCollectives), each launched after
  // layer_collective_host_us of host work.
  std::vector<LayerCollectives> layer_collectives;
  double layer_collective_host_us = 0;
  // --precision fp16: torch.amp.GradScaler's tasks (grad_scaler.hpp); not enabled otherwise.
  GradScalerTasks grad_scaler;
};

// Which layers non-reentrant activation checkpointing runs again in backward, per layer of
// `model`: torch.utils.checkpoint stops the recomputation once every tensor the block saved for
// backward has been produced again (early stop, its default). So a block's layers run up to its
// last layer that saves activations; that layer's own forward runs only if it holds no GEMM (a
// Linear saves its input and its weight's cast, both produced before its GEMM), and the layers
// after it (residual adds) do not run.
std::vector<std::uint8_t> recomputed_layers(const Model& model);

// The measurement to scale from: the id asked for, else one on this GPU model at the wanted
// precision (the same optimizer first, then the nearest batch), else one on another GPU model at
// that precision, else none. Throws InputError for an id the model does not have.
const Measurement* pick_measurement(const Model& model, const TrainingOptions& options,
                                    const std::string& gpu);

// The work model's time of `ops` as measurement `m` ran them: at its batch, sequence and precision
// on its GPU (`compute` when that is `gpu`, else the GPU's datasheet priors). What a measured
// layer time is scaled from when the layer's work changes (a tensor-parallel shard).
double work_at_measurement(const Model& model, const Measurement& m, const std::vector<Op>& ops,
                           bool backward, const std::string& gpu, const GpuCompute& compute);

// The step's tasks on one GPU of `gpu_model`, with the input copy time given by the caller (it
// depends on where the GPU sits in the topology).
StepPlan plan_step(const Model& model, const TrainingOptions& options,
                   const topo::GpuModel& gpu_model, const GpuCompute& compute,
                   double input_copy_us);

// find_unused_parameters=True's host costs per parameter tensor, measured on the H200 host
// (calibrate/models/ddp_options.py, calibrate/data/h200x1-overlap/ddp_options.json): DDP
// wrappers with it off and on, stepped in turn at batch 1 (host-bound). The forward call returns
// 1.26, 1.29 and 1.80 us per parameter later (GPT-2, ResNet-50, BERT-large: the walk), the
// rest of the step 4.2, 8.4 and 9.4 us per parameter later (the hooks); medians.
inline constexpr double kUnusedWalkUsPerParam = 1.29;
inline constexpr double kUnusedHookUsPerParam = 8.37;

// The GPU's fixed time of one small elementwise kernel (a copy a strategy adds: DDP's into its
// buckets, FSDP's around its collectives): a gated device-to-device copy of 8 B - 4 KiB takes
// 1.65-1.68 us on an H200 and 2.01-2.12 us on an H100 (calibrate/data/h*x1-onerank).
inline constexpr double kCopyKernelFixedUs = 1.85;

// One copy kernel that reads and writes `bytes` in all: the fixed time, then the bytes at the
// GPU's memory rate.
inline double copy_kernel_us(double bytes, const GpuCompute& compute) {
  return kCopyKernelFixedUs + bytes / (compute.memory_efficiency * compute.memory_Bps) * 1e6;
}

// Optimizer work from PyTorch's default multi-tensor (foreach) implementations on fp32
// parameters: bytes read and written per parameter element in one step.
double optimizer_bytes_per_element(OptimizerKind optimizer, double momentum);
// Launches of one foreach op of `depth` tensor lists over `tensors` tensors of `elements` in all.
int foreach_launches(int depth, int tensors, double elements);
// Kernels the foreach ops of one step launch for `tensors` parameters of `elements` in all.
int optimizer_kernels(OptimizerKind optimizer, double momentum, int tensors, double elements);

}  // namespace cs::workload
