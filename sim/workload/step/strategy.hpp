// Which data-parallel strategy writes the step graph, and the sharded one's options (DDP's own
// are workload/ddp/buckets.hpp's DdpOptions). Held in TrainingOptions beside the training's.
#pragma once

#include "workload/model/model.hpp"

namespace cs::workload {

enum class Strategy { ddp, fsdp };
const char* to_string(Strategy s);

// fully_shard's options as a step uses them (PyTorch FSDP2).
struct FsdpOptions {
  int shard_ranks = 1;                // the shard group's size (set from the step's ranks)
  bool reshard_after_forward = true;  // fully_shard's default; the root never reshards
  Dtype param_dtype = Dtype::bf16;    // MixedPrecisionPolicy(param_dtype): what is all-gathered
  Dtype reduce_dtype = Dtype::fp32;   // MixedPrecisionPolicy(reduce_dtype): what is reduced
};

}  // namespace cs::workload
