// Which data-parallel strategy writes the step graph, and the sharded one's options (DDP's own
// are workload/ddp/buckets.hpp's DdpOptions). Held in TrainingOptions beside the training's.
#pragma once

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

}  // namespace cs::workload
