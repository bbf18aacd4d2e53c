// torch.amp.GradScaler's work in an fp16 step (dynamic loss scaling): the kernels it adds to the
// step, and the host's wait on found_inf before optimizer.step. Pure: plan_step fills the tasks,
// the step's generator (step_sim.cpp) places them.
#pragma once

#include <vector>

#include "workload/model/model.hpp"
#include "workload/step/step_graph.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {

// GradScaler's tasks on the compute stream, in the order a training loop issues them
// (torch/amp/grad_scaler.py; the rules and their sources in grad_scaler.cpp).
struct GradScalerTasks {
  bool enabled = false;
  Task scale;    // scaler.scale(loss), after each micro-batch's forward
  Task unscale;  // scaler.step's unscale_, after backward and DDP's wait
  // scaler.step's found_inf .item(): after item_host_us of dispatch the host waits for the
  // compute stream, then a device-to-host copy of item_us; optimizer.step is launched after it.
  double item_us = 0;
  double item_host_us = 0;
  Task update;  // scaler.update(), after optimizer.step
};

// A pageable device-to-host copy of 4 KiB, the smallest size measured: 7.11 us on an H200
// (calibrate/data/h200x1-run2/copy.json; 7.93 us on the H100, calibrate/data/h100x1/copy.json).
// .item() copies 4 bytes into a pageable host scalar (at::_local_scalar_dense) the same way.
inline constexpr double kFoundInfItemUs = 7.11;

// Scalar kernels of unscale_: self._scale.double(), .reciprocal(), .float() (inv_scale, the
// reciprocal in fp64) and torch.full((), 0.0) (found_inf).
inline constexpr int kUnscaleScalarKernels = 4;

// What the step's compute note adds for fp16.
inline constexpr const char* kGradScalerNote =
    "; fp16 as bf16 (no fp16 measurement: bf16's times, FP16 tensor rate = BF16's), plus "
    "GradScaler's kernels and found_inf sync";

// The tasks for gradients of `grad_bytes` and `grad_dtypes` (per parameter tensor), on `compute`,
// launched at `forward_host_us` (scale) and `optimizer_host_us` (the rest) per kernel.
GradScalerTasks grad_scaler_tasks(const std::vector<double>& grad_bytes,
                                  const std::vector<Dtype>& grad_dtypes, const GpuCompute& compute,
                                  double forward_host_us, double optimizer_host_us);

}  // namespace cs::workload
