// Tensor parallelism (Megatron-LM's scheme, as PyTorch's ColwiseParallel / RowwiseParallel and
// Megatron-LM run it) on the model as the workload layer sees it: which layers split and how
// (TpRole, the model file's `tp:` or the rule by name), one rank's share of each layer's work,
// parameters and activations (shard_model), and the group's collectives between layers, forward
// and backward, with and without sequence parallelism. The rules and their sources:
// workload/parallel/README.md.
#pragma once

#include <string>
#include <vector>

#include "workload/ddp/step_plan.hpp"
#include "workload/model/model.hpp"
#include "workload/step/step_graph.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {

enum class TpOp { all_reduce, all_gather, reduce_scatter };
const char* to_string(TpOp op);

// One collective of the TP group: its op and the bytes NCCL is handed (all-reduce: the buffer;
// all-gather: the gathered output; reduce-scatter: the input), at the step's batch and sequence.
struct TpCollective {
  TpOp op = TpOp::all_reduce;
  double bytes = 0;
  std::string name;         // "attention output", "MLP input", ... for the trace
  CollectiveKernel kernel;  // timed by the system layer (the group's collective model)
};

// Where a layer's collectives run, as indices into TensorParallel::collectives: before and after
// its forward, before and after its backward.
struct TpLayerCollectives {
  std::vector<int> forward_before, forward_after, backward_before, backward_after;
};

struct TensorParallel {
  int tp = 1;
  bool sequence_parallel = false;
  double hidden = 0;          // the hidden size (the feature size every block Linear shares)
  double vocab = 0;           // the embedding's rows; 0 without a vocab-parallel embedding
  std::vector<TpRole> roles;  // per layer
  std::vector<TpLayerCollectives> layers;  // per layer
  std::vector<TpCollective> collectives;   // each distinct use, in forward order
  // PyTorch's DTensor dispatch, per layer: host time before its forward and its backward.
  std::vector<double> forward_host_us, backward_host_us;
};

// DTensor's host cost per parameter tensor of a split layer (forward; backward), PyTorch's
// parallelize_module with torchtitan's Llama plan: Llama-1B at batch 1 x 2048 on 2 H200s, the
// host's forward and backward calls against the unsharded step's on one GPU, over its 113 split
// parameter tensors (16 blocks x 7 Linears and the embedding; calibrate/data/h200x4-r11-parallel,
// tp-llama-1b-b1-n2.json and plain-llama-1b-b1-n1.json): forward (81.4 - 29.9) ms / 113, backward
// ((199.2 - 81.4) - (72.7 - 29.9)) ms / 113. With sequence parallelism (tp-sp-llama-1b-b1-n2):
// (126.7 - 29.9) / 113 and ((273.7 - 126.7) - 42.8) / 113. Fitted there on the one host of that
// run (no probe was taken with it), checked on the other TP runs of the folder.
inline constexpr double kDtensorForwardUsPerTensor = 455.8;
inline constexpr double kDtensorBackwardUsPerTensor = 663.7;
inline constexpr double kDtensorSpForwardUsPerTensor = 856.6;
inline constexpr double kDtensorSpBackwardUsPerTensor = 922.1;

// The default role of a layer by its module name (workload/parallel/README.md's table), before
// the layers around it are looked at: column, row, vocab or replicated.
TpRole tp_role_by_name(const std::string& name);

// The split of `model` over `tp` ranks at the step's batch and sequence (`options`): every
// layer's role (the file's `tp:`, else the rule by name; a layer between a column and the next
// row layer works on its shard) and the collectives between them. Throws InputError when the
// model has no sequence, no block Linear to split, or heads, KV heads or sizes `tp` does not
// divide (naming --tp).
TensorParallel plan_tensor_parallel(const Model& model, int tp, bool sequence_parallel,
                                    const TrainingOptions& options, bool megatron = false);

// One rank's model: the split layers' GEMMs with the split feature dimension / tp, attention over
// heads / tp, their memory ops, parameters and activations / tp; replicated layers whole, or
// their token-proportional ops and activations / tp with sequence parallelism. A measured layer
// time is carried to its shard by the work model, at the measurement's settings on its GPU
// (`gpu`, `compute`: the target's, for a measurement on it), so that plan_step's scaling from
// the measurement then gives measured x shard's work at the target / whole layer's work then.
Model shard_model(const Model& model, const TensorParallel& tp, const std::string& gpu,
                  const GpuCompute& compute);

}  // namespace cs::workload
