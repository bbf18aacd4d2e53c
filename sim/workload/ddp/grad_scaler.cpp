// GradScaler's kernels per step, from PyTorch's source (torch/amp/grad_scaler.py and
// aten/src/ATen/native/cuda/AmpKernels.cu, PyTorch 2.x), with the default foreach optimizers:
// - scale(loss): outputs * self._scale, one elementwise kernel on the scalar loss (the scale is
//   already on the loss's device, so its .to() copies nothing).
// - unscale_(optimizer), called by step(): inv_scale = self._scale.double().reciprocal().float()
//   and found_inf = torch.full((), 0.0): four scalar kernels; then _unscale_grads_ groups the
//   gradients by device and dtype and calls torch._amp_foreach_non_finite_check_and_unscale_ once
//   per group: one multi_tensor_apply of depth 1 (UnaryOpFunctor, in place) that reads each
//   gradient element once and writes it once, launching as multi_tensor_apply chunks its tensors
//   (foreach_launches: 110 tensors or 320 blocks of 65536 elements a launch).
// - step(): _maybe_opt_step sums found_inf.item() per device before optimizer.step(): a
//   device-to-host copy the host waits for (one device per process here).
// - update(): torch._amp_update_scale_, one kernel of one thread (amp_update_scale_cuda_kernel).
// Scalar kernels take a small kernel's fixed time (kCopyKernelFixedUs, measured).
#include "workload/ddp/grad_scaler.hpp"

#include <map>
#include <utility>

#include "workload/ddp/step_plan.hpp"

namespace cs::workload {
namespace {

Task scalar_kernels(const char* name, int kernels, double host_us) {
  Task t;
  t.name = name;
  t.kernels = kernels;
  t.gpu_us = kernels * kCopyKernelFixedUs;
  t.host_us_per_kernel = host_us;
  t.memory_bound_default = true;
  return t;
}

}  // namespace

GradScalerTasks grad_scaler_tasks(const std::vector<double>& grad_bytes,
                                  const std::vector<Dtype>& grad_dtypes, const GpuCompute& compute,
                                  double forward_host_us, double optimizer_host_us) {
  GradScalerTasks g;
  g.enabled = true;
  g.scale = scalar_kernels("GradScaler scale(loss)", 1, forward_host_us);
  // One foreach call per gradient dtype (one device per process): its launches, and its bytes
  // read and written once.
  std::map<Dtype, std::pair<int, double>> groups;  // dtype -> tensors, bytes
  for (std::size_t i = 0; i < grad_bytes.size(); ++i) {
    auto& [tensors, bytes] = groups[grad_dtypes[i]];
    ++tensors;
    bytes += grad_bytes[i];
  }
  g.unscale =
      scalar_kernels("GradScaler unscale_ (inf check)", kUnscaleScalarKernels, optimizer_host_us);
  for (const auto& [dtype, group] : groups) {
    Op foreach_op;
    foreach_op.kind = OpKind::memory;
    foreach_op.bytes = 2 * group.second;
    foreach_op.kernels = foreach_launches(1, group.first, group.second / dtype_bytes(dtype));
    g.unscale.kernels += foreach_op.kernels;
    g.unscale.gpu_us += op_time_us(foreach_op, false, compute);
  }
  g.item_us = kFoundInfItemUs;
  g.item_host_us = optimizer_host_us;
  g.update = scalar_kernels("GradScaler update", 1, optimizer_host_us);
  return g;
}

}  // namespace cs::workload
