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

// Per layer at the step's batch, sequence and precision: the bytes it saves for backward (acts),
// autocast's bf16 copies of its fp32 weights among them (casts), its parameters' gradients
// (grads, fp32 as the parameters), the transient of its backward (two thirds of its largest
// elementwise backward op's bytes: the gradients of that op's output and input), its block.
struct LayerMemory {
  double acts = 0, casts = 0, grads = 0, transient = 0;
  int block = -1;
  bool first_of_block = false;  // under checkpointing the block's input is what it saves
};
std::vector<LayerMemory> layer_memory(const Model& model, const TrainingOptions& options);

// The walk through backward, layer by layer in reverse, of what one strategy holds.
struct BackwardWalk {
  double persistent = 0;         // parameters, optimizer state, buckets
  double held_grads = 0;         // gradients held from backward's start (accumulation)
  double grads_scale = 1;        // the share of a layer's gradients its backward allocates
  double produced_scale = 1;     // the share of them kept after it
  double in_flight = 0;          // FSDP's gathered units
  std::vector<double> at_layer;  // per layer, empty for none: bytes alive during its backward
  bool checkpointing = false;
  bool drop_casts = false;  // no autocast weight copies saved (FSDP's bf16 parameters)
};
double backward_peak(const std::vector<LayerMemory>& layers, const BackwardWalk& walk);

MemoryEstimate estimate_memory(const Model& model, const TrainingOptions& options,
                               double capacity_bytes);

// The largest per-GPU batch whose step fits (0 when not even one sample does).
int largest_fitting_batch(const Model& model, const TrainingOptions& options,
                          double capacity_bytes);
// The same for any strategy's check: `estimate` at `options` with another batch.
int largest_fitting_batch(const TrainingOptions& options,
                          const std::function<MemoryEstimate(const TrainingOptions&)>& estimate);

}  // namespace cs::workload
