// Does a training step fit in one GPU's memory? Parameters, gradients, optimizer state, DDP's
// buckets, the activations saved for backward, the optimizer's temporaries and what the GPU holds
// outside PyTorch's allocator, at the step's peak.
#pragma once

#include <functional>

#include "workload/ddp/step_plan.hpp"
#include "workload/model/model.hpp"

namespace cs::workload {

struct MemoryEstimate {
  double params = 0;
  double grads = 0;
  double optimizer_state = 0;
  double ddp_buckets = 0;     // DDP's buckets; FSDP's gradient and reduce-scatter buffers
  double unsharded = 0;       // FSDP's gathered parameters in flight (0 for DDP)
  double activations = 0;     // saved for backward, at the step's batch and sequence
  double peak_backward = 0;   // persistent + the most of activations and gradients held at once
  double peak_optimizer = 0;  // persistent + gradients + the optimizer's foreach temporaries
  double outside = 0;         // CUDA context and library workspaces
  double total = 0;           // the larger peak + outside
  double capacity = 0;        // the GPU's memory
  bool fits() const { return total <= capacity; }
};

// Held outside PyTorch's allocator (CUDA context, cuBLAS/cuDNN workspaces and handles): the
// what calibrate/models/export.py read on H100 (outside_allocator_bytes).
double outside_allocator_prior_bytes();

MemoryEstimate estimate_memory(const Model& model, const TrainingOptions& options,
                               double capacity_bytes);

// The largest per-GPU batch whose step fits (0 when not even one sample does).
int largest_fitting_batch(const Model& model, const TrainingOptions& options,
                          double capacity_bytes);
// The same for any strategy's check: `estimate` at `options` with another batch.
int largest_fitting_batch(const TrainingOptions& options,
                          const std::function<MemoryEstimate(const TrainingOptions&)>& estimate);

}  // namespace cs::workload
