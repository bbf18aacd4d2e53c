// The optimizer's foreach work (bytes and kernel launches of one step) and the reference host:
// the figures plan_step (step_plan.cpp) takes when a measurement does not give them.
#include <algorithm>
#include <cmath>

#include "workload/ddp/step_plan.hpp"

namespace cs::workload {
namespace {

// PyTorch's multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh): a launch takes
// at most depth_to_max_tensors[depth - 1] tensors and 320 blocks of 65536 elements.
constexpr int kMaxTensors[] = {110, 64, 48, 36, 30};
constexpr double kChunkElements = 65536;
constexpr double kMaxBlocks = 320;

// The foreach ops of one step (torch/optim/adamw.py and sgd.py, _multi_tensor_*; fp32 params,
// defaults: AdamW weight_decay 0.01, SGD momentum without weight decay or Nesterov). Each: tensor
// lists it walks (depth) and bytes per element it reads and writes.
struct ForeachOp {
  int depth;
  double bytes;
};
// AdamW: mul_(params) 8, lerp_(exp_avg, grad) 12, mul_(exp_avg_sq) 8, addcmul_(exp_avg_sq, grad,
// grad) 16, sqrt(exp_avg_sq) 8, div_ 8, add_(eps) 8, addcdiv_(params, exp_avg, denom) 16.
constexpr ForeachOp kAdamW[] = {{1, 8}, {2, 12}, {1, 8}, {3, 16}, {2, 8}, {1, 8}, {1, 8}, {3, 16}};
// SGD with momentum (after the first step, when the buffers exist): mul_(bufs) 8,
// add_(bufs, grads) 12, add_(params, bufs) 12.
constexpr ForeachOp kSgd[] = {{1, 8}, {2, 12}, {2, 12}};
// SGD without momentum, PyTorch's default: add_(params, grads, alpha=-lr) 12 (sgd.py,
// _multi_tensor_sgd: no buffers when momentum is 0).
constexpr ForeachOp kSgdPlain[] = {{2, 12}};

template <std::size_t N>
double sum_bytes(const ForeachOp (&ops)[N]) {
  double total = 0;
  for (const ForeachOp& op : ops) total += op.bytes;
  return total;
}

}  // namespace

double optimizer_bytes_per_element(OptimizerKind optimizer, double momentum) {
  if (optimizer == OptimizerKind::adamw) return sum_bytes(kAdamW);
  return momentum > 0 ? sum_bytes(kSgd) : sum_bytes(kSgdPlain);
}

int foreach_launches(int depth, int tensors, double elements) {
  if (tensors == 0) return 0;
  const double chunks = std::ceil(elements / kChunkElements) + tensors;  // a partial chunk each
  const double by_tensors = std::ceil(static_cast<double>(tensors) / kMaxTensors[depth - 1]);
  return static_cast<int>(std::max(by_tensors, std::ceil(chunks / kMaxBlocks)));
}

int optimizer_kernels(OptimizerKind optimizer, double momentum, int tensors, double elements) {
  if (tensors == 0) return 0;
  auto launches = [&](int depth) { return foreach_launches(depth, tensors, elements); };
  int total = 0;
  auto add = [&](const auto& ops) {
    for (const ForeachOp& op : ops) total += launches(op.depth);
  };
  if (optimizer == OptimizerKind::adamw) {
    add(kAdamW);
  } else if (momentum > 0) {
    add(kSgd);
  } else {
    add(kSgdPlain);
  }
  return total;
}

HostProbe reference_host() {
  HostProbe h;
  // launch, elementwise, linear, conv, autograd, foreach (kHostProbeClasses' order).
  h.us = {5.79, 10.09, 97.37, 84.62, 21.5, 11.73};
  h.source = "the reference host (median of 11 probes of the lent H200 VMs)";
  return h;
}

}  // namespace cs::workload
