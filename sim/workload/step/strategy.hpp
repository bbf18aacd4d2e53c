// Which data-parallel strategy writes the step graph, and the sharded one's options (DDP's own
// are workload/ddp/buckets.hpp's DdpOptions). Held in TrainingOptions beside the training's.
#pragma once

#include <string>
#include <vector>

#include "workload/model/model.hpp"

namespace cs::workload {

// HSDP is FSDP2 on a 2-D mesh: sharded within a server, replicated across servers.
enum class Strategy { ddp, fsdp, hsdp };
const char* to_string(Strategy s);
inline bool sharded(Strategy s) {
  return s != Strategy::ddp;
}

// fully_shard's options as a step uses them (PyTorch FSDP2).
struct FsdpOptions {
  int shard_ranks = 1;   // the shard group's size (set from the step's ranks)
  int replicas = 1;      // HSDP: the replicate groups' size; 1 for FSDP
  int shard_degree = 0;  // HSDP: GPUs a shard group spans (--shard-degree); 0: one server's
  bool reshard_after_forward = true;  // fully_shard's default; the root never reshards
  Dtype param_dtype = Dtype::bf16;    // MixedPrecisionPolicy(param_dtype): what is all-gathered
  Dtype reduce_dtype = Dtype::fp32;   // MixedPrecisionPolicy(reduce_dtype): what is reduced
};

// Pipeline schedules (workload/parallel/pipeline.hpp runs them).
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };
const char* to_string(PipelineSchedule s);

// Megatron-style model parallelism beside the data-parallel strategy: tensor parallelism over
// `tp` ranks (sequence parallelism optional), a pipeline of `pp` stages; the data-parallel
// degree is what the ranks leave. `order` places them on the ranks, innermost first (Megatron's
// default: tensor, data, pipeline).
struct ModelParallelOptions {
  int tp = 1;
  int pp = 1;
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;             // model chunks per pipeline rank (interleaved 1F1B)
  std::vector<int> blocks_per_stage;  // --pp-blocks; empty: the blocks split evenly
  std::string order = "tp,dp,pp";
  // Whose tensor parallelism: PyTorch's (parallelize_module over DTensors: each column Linear
  // reduces its own input gradient, in the autocast dtype of the residual stream, and DTensor's
  // dispatch costs host time per op) or Megatron-LM's (fused layers, bf16 activations, no
  // DTensor). workload/parallel/README.md.
  bool megatron = false;
  bool any() const { return tp > 1 || pp > 1; }
  int degree() const { return tp * pp; }  // GPUs per data-parallel rank
  // Predicted by system/model_parallel: a TP or PP layout, or Megatron-LM's data parallelism
  // (its gradient all-reduce after the last backward, its mixed-precision buffers).
  bool model_parallel_step() const { return any() || megatron; }
  // The data-parallel all-reduce after the last backward (a pipeline's flush, or Megatron-LM's
  // train_step) rather than overlapped with it; the TP waits then inside forward and backward.
  bool reduce_after_backward() const { return pp > 1 || megatron; }
};

}  // namespace cs::workload
