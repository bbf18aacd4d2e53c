// Megatron-LM's tensor-parallel split on the model's layers (rules: workload/parallel/README.md).
#include "workload/parallel/tensor_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "core/error.hpp"

namespace cs::workload {
namespace {

// The dimension of a GEMM that grows with the tokens (the sequence, else the batch); none for a
// GEMM over weights alone.
Dim token_dim(const Op& op) {
  return op.grows_seq != Dim::none ? op.grows_seq : op.grows_batch;
}

double& dim_of(Op& op, Dim d) {
  return d == Dim::m ? op.m : d == Dim::n ? op.n : op.k;
}

// The two feature dimensions of a GEMM (those not growing with the tokens), in m, n, k order;
// false for one whose tokens are not in m, n or k.
bool feature_dims(const Op& op, Dim& a, Dim& b) {
  const Dim t = token_dim(op);
  if (t != Dim::m && t != Dim::n && t != Dim::k) return false;
  a = t == Dim::m ? Dim::n : Dim::m;
  b = t == Dim::k ? Dim::n : Dim::k;
  return true;
}

// One rank's share of a GEMM of a split layer: the feature dimension that is not the hidden
// size / tp (both hidden, as a square projection: the second; neither: the larger); a GEMM over
// weights alone: its largest dimension.
void split_gemm(Op& op, double hidden, int tp) {
  Dim a = Dim::m, b = Dim::n;
  if (!feature_dims(op, a, b)) {
    double* largest = &op.m;
    for (double* d : {&op.n, &op.k}) {
      if (*d > *largest) largest = d;
    }
    *largest /= tp;
    return;
  }
  const double va = dim_of(op, a), vb = dim_of(op, b);
  Dim split = b;
  if (vb == hidden && va != hidden) split = a;
  if (va != hidden && vb != hidden && va > vb) split = a;
  dim_of(op, split) /= tp;
}

bool tokens_scale(const Op& op) {
  return op.scale_batch > 0 || op.scale_seq > 0;
}

// `ops` as one rank runs them: `whole` ops untouched, split ones divided; `sequence`: only the
// memory ops that grow with the tokens (a replicated layer under sequence parallelism).
std::vector<Op> shard_ops(const std::vector<Op>& ops, double hidden, int tp, bool sequence) {
  std::vector<Op> out = ops;
  for (Op& op : out) {
    if (sequence) {
      if (op.kind == OpKind::memory && tokens_scale(op)) op.bytes /= tp;
      continue;
    }
    switch (op.kind) {
      case OpKind::gemm:
        split_gemm(op, hidden, tp);
        break;
      case OpKind::attention:
        op.heads /= tp;
        break;
      case OpKind::memory:
        op.bytes /= tp;
        break;
      case OpKind::conv:
        op.n /= tp;
        break;
    }
  }
  return out;
}

// The feature size every Linear of the blocks shares: the most frequent feature dimension of the
// forward GEMMs of column and row layers; 0 without any.
double hidden_size(const Model& model, const std::vector<TpRole>& roles) {
  std::map<double, int> count;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (model.layers[i].block < 0) continue;
    if (roles[i] != TpRole::column && roles[i] != TpRole::row) continue;
    for (const Op& op : model.layers[i].forward) {
      Dim a = Dim::m, b = Dim::n;
      if (op.kind != OpKind::gemm || !feature_dims(op, a, b)) continue;
      Op copy = op;
      ++count[dim_of(copy, a)];
      if (dim_of(copy, b) != dim_of(copy, a)) ++count[dim_of(copy, b)];
    }
  }
  double best = 0;
  int most = 0;
  for (const auto& [size, n] : count) {
    if (n > most) {
      best = size;
      most = n;
    }
  }
  return best;
}

std::string tp_flag_error(const Model& model, int tp, const std::string& what) {
  return "flag '--tp': " + std::to_string(tp) + " " + what + " (" + model.file + ")";
}

}  // namespace

TensorParallel plan_tensor_parallel(const Model& model, int tp, bool sequence_parallel,
                                    const TrainingOptions& options, bool megatron) {
  TensorParallel out;
  out.tp = tp;
  out.sequence_parallel = sequence_parallel;
  const std::size_t n = model.layers.size();
  out.layers.resize(n);
  out.roles.reserve(n);
  for (const Layer& layer : model.layers)
    out.roles.push_back(layer.tp ? *layer.tp : tp_role_by_name(layer.name));
  if (tp <= 1) {
    std::fill(out.roles.begin(), out.roles.end(), TpRole::replicated);
    return out;
  }
  if (!model.settings.seq || !options.seq) {
    throw InputError(tp_flag_error(
        model, tp,
        "splits a transformer's layers; " + model.name + " has no sequence to split them over"));
  }
  out.hidden = hidden_size(model, out.roles);
  if (!(out.hidden > 0)) {
    throw InputError(tp_flag_error(
        model, tp,
        "has nothing to split: " + model.name +
            "'s blocks hold no Linear the rule by name splits (q_proj, c_fc, o_proj, ...); give "
            "layers a `tp:` role (models/README.md)"));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (out.roles[i] == TpRole::vocab) {
      for (const TensorSpec& p : model.layers[i].params)
        out.vocab = std::max(out.vocab, static_cast<double>(p.elements) / out.hidden);
    }
  }
  // A tied head: the root's GEMM over the vocabulary is a column layer (the embedding's rows).
  for (std::size_t i = 0; i < n && out.vocab > 0; ++i) {
    const Layer& layer = model.layers[i];
    if (layer.block >= 0 || layer.tp || out.roles[i] != TpRole::replicated) continue;
    for (const Op& op : layer.forward) {
      if (op.kind == OpKind::gemm && (op.m == out.vocab || op.n == out.vocab || op.k == out.vocab))
        out.roles[i] = TpRole::column;
    }
  }
  // Heads must split evenly.
  for (std::size_t i = 0; i < n; ++i) {
    for (const Op& op : model.layers[i].forward) {
      if (op.kind == OpKind::attention && std::fmod(op.heads, tp) != 0) {
        throw InputError(tp_flag_error(model, tp,
                                       "does not divide the " +
                                           std::to_string(static_cast<long long>(op.heads)) +
                                           " attention heads of " + model.layers[i].name));
      }
    }
  }
  const double tokens = static_cast<double>(options.batch) * *options.seq;
  const double act = options.precision == Precision::fp32 ? 4.0 : 2.0;
  const double activation = tokens * out.hidden * act;
  // Under PyTorch's autocast the residual stream is fp32: the embedding's output, the norms'
  // outputs a column region gathers (sequence parallelism) and the gradients flowing into the
  // stream (the column layers' input gradients); Megatron's are bf16. (The counts and dtypes of
  // calibrate/data/h200x4-r11-parallel's profiles.)
  const double stream = megatron ? activation : tokens * out.hidden * 4.0;
  const auto add = [&out](TpOp op, double bytes, std::string name) {
    TpCollective c;
    c.op = op;
    c.bytes = bytes;
    c.name = std::move(name);
    c.kernel.name = std::string("TP ") + to_string(op) + " (" + c.name + ")";
    c.kernel.category = "tp";
    out.collectives.push_back(std::move(c));
    return static_cast<int>(out.collectives.size()) - 1;
  };
  const bool sp = sequence_parallel;
  bool in_region = false;
  int last_split = -1;
  for (std::size_t i = 0; i < n; ++i) {
    TpRole& role = out.roles[i];
    TpLayerCollectives& c = out.layers[i];
    const std::string& name = model.layers[i].name;
    switch (role) {
      case TpRole::column:
        // Megatron's f: identity forward, all-reduce of the input's gradient, once per region
        // (its fused layers); PyTorch's ColwiseParallel reduces each Linear's own input gradient
        // (with sequence parallelism the region's input is gathered once: one reduce-scatter).
        if (!in_region) {
          if (sp) c.forward_before.push_back(add(TpOp::all_gather, stream, name + " input"));
          c.backward_after.push_back(
              add(sp ? TpOp::reduce_scatter : TpOp::all_reduce, stream, name + " input gradient"));
          in_region = true;
        } else if (!sp && !megatron) {
          c.backward_after.push_back(add(TpOp::all_reduce, stream, name + " input gradient"));
        }
        last_split = static_cast<int>(i);
        break;
      case TpRole::row:  // Megatron's g: all-reduce of the output, identity backward
        c.forward_after.push_back(
            add(sp ? TpOp::reduce_scatter : TpOp::all_reduce, activation, name + " output"));
        // (its output's gradient arrives in the dtype of the output: bf16 under autocast)
        if (sp) c.backward_before.push_back(add(TpOp::all_gather, activation, name + " gradient"));
        in_region = false;
        break;
      case TpRole::vocab:  // the vocabulary-parallel embedding: partial rows summed
        c.forward_after.push_back(
            add(sp ? TpOp::reduce_scatter : TpOp::all_reduce, stream, name + " output"));
        if (sp) c.backward_before.push_back(add(TpOp::all_gather, stream, name + " gradient"));
        break;
      case TpRole::replicated:
        if (in_region && !model.layers[i].tp) role = TpRole::split;
        if (role == TpRole::split) last_split = static_cast<int>(i);
        break;
      case TpRole::split:
        last_split = static_cast<int>(i);
        break;
    }
  }
  // PyTorch's DTensor dispatch before each split layer's forward and backward, per parameter
  // tensor it holds.
  out.forward_host_us.assign(n, 0.0);
  out.backward_host_us.assign(n, 0.0);
  if (!megatron) {
    for (std::size_t i = 0; i < n; ++i) {
      if (out.roles[i] == TpRole::replicated) continue;
      const auto tensors = static_cast<double>(model.layers[i].params.size());
      out.forward_host_us[i] =
          tensors * (sp ? kDtensorSpForwardUsPerTensor : kDtensorForwardUsPerTensor);
      out.backward_host_us[i] =
          tensors * (sp ? kDtensorSpBackwardUsPerTensor : kDtensorBackwardUsPerTensor);
    }
  }
  // A region open at the end: the head's logits stay split over the vocabulary and the loss is
  // vocabulary-parallel (Megatron's vocab_parallel_cross_entropy, PyTorch's loss_parallel): an
  // all-reduce of each token's maximum logit, of its target's logit and of its sum of exps,
  // fp32 per token.
  if (in_region && last_split >= 0) {
    TpLayerCollectives& c = out.layers[static_cast<std::size_t>(last_split)];
    for (const char* what : {"loss: max logit", "loss: target logit", "loss: sum of exps"})
      c.forward_after.push_back(add(TpOp::all_reduce, tokens * 4.0, what));
  }
  return out;
}

Model shard_model(const Model& model, const TensorParallel& tp, const std::string& gpu,
                  const GpuCompute& compute) {
  Model out = model;
  if (tp.tp <= 1) return out;
  const double before = model.param_count();
  for (std::size_t i = 0; i < out.layers.size(); ++i) {
    Layer& layer = out.layers[i];
    const TpRole role = tp.roles[i];
    const bool split = role == TpRole::column || role == TpRole::row || role == TpRole::split;
    const bool sequence = role == TpRole::replicated && tp.sequence_parallel;
    if (!split && !sequence && role != TpRole::vocab) continue;
    std::vector<Op> forward = layer.forward, backward = layer.backward;
    if (split || sequence) {
      forward = shard_ops(layer.forward, tp.hidden, tp.tp, sequence);
      backward = shard_ops(layer.backward, tp.hidden, tp.tp, sequence);
      layer.activation_bytes /= tp.tp;
    } else {  // vocab: every rank looks up all tokens; the weight's gradient is its rows' only
      backward = shard_ops(layer.backward, tp.hidden, tp.tp, false);
    }
    if (split || role == TpRole::vocab) {
      for (TensorSpec& p : layer.params)
        p.elements = (p.elements + tp.tp - 1) / tp.tp;  // Megatron pads to a multiple
    }
    for (auto& entry : layer.measured) {
      const std::string& id = entry.first;
      auto& measured = entry.second;
      const auto m = std::find_if(model.measurements.begin(), model.measurements.end(),
                                  [&id](const Measurement& x) { return x.id == id; });
      if (m == model.measurements.end()) continue;
      const auto carry = [&](double& us, const std::vector<Op>& whole, const std::vector<Op>& part,
                             bool backward_pass) {
        const double then = work_at_measurement(model, *m, whole, backward_pass, gpu, compute);
        if (then > 0)
          us *= work_at_measurement(model, *m, part, backward_pass, gpu, compute) / then;
      };
      carry(measured.forward_us, layer.forward, forward, false);
      carry(measured.backward_us, layer.backward, backward, true);
    }
    layer.forward = std::move(forward);
    layer.backward = std::move(backward);
  }
  // The optimizer's measured time over the rank's share of the parameters.
  const double after = out.param_count();
  if (before > 0) {
    for (Measurement& m : out.measurements) m.optimizer_us *= after / before;
  }
  return out;
}

}  // namespace cs::workload
