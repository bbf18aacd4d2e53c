// A model as the workload layer sees it: layers in forward order, each with its parameters, the
// activations it saves for backward and the GPU ops of its forward and backward passes, plus the
// settings they were recorded at and optional measured times. Plain structs, filled by
// model_loader from a model file (format: models/README.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/host_probe.hpp"

namespace cs::workload {

// fp16 is autocast to float16 with torch.amp.GradScaler (a command-line precision only: model
// files record and measure fp32 and bf16; an fp16 step's times are carried from bf16's).
enum class Precision { fp32, bf16, fp16 };
enum class OptimizerKind { sgd, adamw };
enum class Dtype { fp32, tf32, bf16, fp16 };

// Bytes of one element; tf32 is a math mode on fp32 storage.
inline double dtype_bytes(Dtype d) {
  return d == Dtype::bf16 || d == Dtype::fp16 ? 2.0 : 4.0;
}

// The spellings of the model file.
inline const char* to_string(Precision p) {
  return p == Precision::fp32 ? "fp32" : (p == Precision::fp16 ? "fp16" : "bf16");
}
// Bytes of an activation or a memory op's element at a precision: 16-bit autocast halves fp32's.
inline double precision_bytes(Precision p) {
  return p == Precision::fp32 ? 4.0 : 2.0;
}
// The precision whose measurements a step at `p` scales from: fp16 has none of its own and
// takes bf16's (the same 16-bit autocast; FP16 tensor rate = BF16's on every datasheet here).
inline Precision measured_precision(Precision p) {
  return p == Precision::fp16 ? Precision::bf16 : p;
}
inline const char* to_string(OptimizerKind o) {
  return o == OptimizerKind::sgd ? "sgd" : "adamw";
}
inline const char* to_string(Dtype d) {
  switch (d) {
    case Dtype::fp32:
      return "fp32";
    case Dtype::tf32:
      return "tf32";
    case Dtype::bf16:
      return "bf16";
    case Dtype::fp16:
      return "fp16";
  }
  return "?";
}

// A parameter or buffer: one tensor of the PyTorch module.
struct TensorSpec {
  std::string name;
  std::int64_t elements = 0;
  Dtype dtype = Dtype::fp32;
  double bytes() const { return static_cast<double>(elements) * dtype_bytes(dtype); }
};

// Which dimension of a gemm/conv is proportional to the per-GPU batch or to the sequence length.
enum class Dim { none, m, n, k, batch };
enum class OpKind { gemm, conv, attention, memory };
// How a memory-bound op walks its bytes: elementwise (each element read and written once, in
// order); a reduction over the contiguous axis (LayerNorm, softmax, sums, losses); a strided
// reduction across the batch and spatial axes (BatchNorm on NCHW tensors: per channel, over
// elements a channel-plane apart). Each reaches its own share of the memory bandwidth.
enum class Access { elementwise, reduction, strided_reduction };
inline const char* to_string(Access a) {
  switch (a) {
    case Access::elementwise:
      return "elementwise";
    case Access::reduction:
      return "reduction";
    case Access::strided_reduction:
      return "strided_reduction";
  }
  return "?";
}

inline const char* to_string(Dim d) {
  switch (d) {
    case Dim::none:
      return "none";
    case Dim::m:
      return "m";
    case Dim::n:
      return "n";
    case Dim::k:
      return "k";
    case Dim::batch:
      return "batch";
  }
  return "?";
}
inline const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::gemm:
      return "gemm";
    case OpKind::conv:
      return "conv";
    case OpKind::attention:
      return "attention";
    case OpKind::memory:
      return "memory";
  }
  return "?";
}

// One GPU op (one or more kernels) at the model's recorded_at settings.
struct Op {
  OpKind kind = OpKind::memory;
  double m = 0, n = 0, k = 0, batch = 1;  // gemm/conv; attention uses batch too
  Dtype dtype = Dtype::bf16;
  Dim grows_batch = Dim::none, grows_seq = Dim::none;     // gemm/conv
  double heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;  // attention
  bool causal = false;                                    // attention
  double bytes = 0, scale_batch = 1, scale_seq = 0;       // memory
  Access access = Access::elementwise;                    // memory
  int kernels = 1;
  int weight = -1;  // gemm/conv: the layer's param it multiplies (`weight:`), -1 if unnamed

  // Arithmetic of the op. gemm/conv: 2*m*n*k*batch. attention, forward convention: QK^T and PV
  // are two gemms of 2*seq_q*seq_kv*head_dim each per (batch, head), halved when causal masks
  // half the scores. memory: 0.
  double flops() const {
    switch (kind) {
      case OpKind::gemm:
      case OpKind::conv:
        return 2.0 * m * n * k * batch;
      case OpKind::attention:
        return 4.0 * batch * heads * seq_q * seq_kv * head_dim * (causal ? 0.5 : 1.0);
      case OpKind::memory:
        return 0.0;
    }
    return 0.0;
  }
};

// How tensor parallelism (Megatron-LM's scheme) splits a layer over a TP group: a column-parallel
// Linear splits its output features (its input gathered: the group's all-reduce in backward), a
// row-parallel one its input features (an all-reduce of its output in forward); what runs between
// a column and the next row layer (attention's core, the MLP's activation) works on its shard;
// a vocab-parallel embedding splits the vocabulary (an all-reduce of its output); replicated
// layers (norms, residual adds, dropout) run whole on every rank, or on 1 / TP of the sequence
// with sequence parallelism. `split` names a layer that works on its shard with no collective of
// its own. workload/parallel/README.md gives the default rule by name.
enum class TpRole { replicated, column, row, split, vocab };
inline const char* to_string(TpRole r) {
  switch (r) {
    case TpRole::replicated:
      return "replicated";
    case TpRole::column:
      return "column";
    case TpRole::row:
      return "row";
    case TpRole::split:
      return "split";
    case TpRole::vocab:
      return "vocab";
  }
  return "?";
}

// Measured GPU time of one layer (sums of its kernels' times) under one Measurement.
struct LayerMeasured {
  double forward_us = 0, backward_us = 0;
  int forward_kernels = 0, backward_kernels = 0;
};

struct Layer {
  std::string name;
  std::vector<TensorSpec> params, buffers;  // in model.parameters() / model.buffers() order
  // Bytes saved for backward at recorded_at; they scale as batch^scale_batch * seq^scale_seq.
  double activation_bytes = 0, activation_scale_batch = 1, activation_scale_seq = 0;
  std::vector<Op> forward, backward;
  std::map<std::string, LayerMeasured> measured;  // by measurement id
  int block = -1;  // the index in Model::blocks of the block it belongs to; -1: the root's
  std::optional<TpRole> tp;  // the model file's `tp:`; absent: the default rule by name
};

// A unit of the model that a parallelism wraps or splits whole (a transformer block, a ResNet
// bottleneck), its layers contiguous in forward order. FSDP's fully_shard per block, tensor
// parallelism's split of a block, a pipeline stage's cut between blocks all work on these; the
// layers of no block are the root's. From the model file: each iteration of a repeat block; in a
// file without repeat blocks (an export), each run of layers whose module path shares its prefix
// up to the first integer index (`transformer.h.4.mlp.c_fc` -> `transformer.h.4`, a ModuleList
// or Sequential entry).
struct Block {
  std::string name;   // the module path prefix; in a repeat block, its first layer's name
  int repeat = -1;    // which repeat block of the file (0 for the first); -1: from names
  int iteration = 0;  // which iteration of it
  int first_layer = 0, layer_count = 0;  // in Model::layers
};

// Training defaults; command-line flags override each.
struct Settings {
  int batch = 1;           // per-GPU samples
  std::optional<int> seq;  // absent for models without a sequence
  Precision precision = Precision::bf16;
  OptimizerKind optimizer = OptimizerKind::adamw;
  double momentum = 0;  // SGD's momentum (PyTorch's default 0: no momentum buffers)
  double input_bytes_per_sample = 0;
  bool input_pinned = true;
};

// The settings the layers' ops and activations were recorded at.
struct RecordedAt {
  int batch = 1;
  std::optional<int> seq;
  Precision precision = Precision::bf16;
};

// One profiled run of the model on one GPU model.
struct Measurement {
  std::string id, gpu;
  int batch = 1;
  std::optional<int> seq;
  Precision precision = Precision::bf16;
  OptimizerKind optimizer = OptimizerKind::adamw;
  double momentum = 0;      // SGD's momentum of the measured run
  double optimizer_us = 0;  // GPU time of optimizer.step()'s kernels
  int optimizer_kernels = 0;
  double host_forward_us = 0, host_backward_us = 0, host_optimizer_us = 0;  // CPU time per phase
  // The probe of the host the phases were timed on (`host:`); absent in files exported before
  // the probe existed, whose host times then stay as measured.
  std::optional<HostProbe> host;
  std::string source;
};

struct Model {
  std::string name, source, file;
  Settings settings;
  RecordedAt recorded_at;
  std::vector<Measurement> measurements;
  std::vector<Layer> layers;  // repeats expanded, in forward order
  std::vector<Block> blocks;  // each iteration of each repeat block, in forward order

  // Sums over every layer's params (buffers excluded).
  double param_count() const {
    double count = 0;
    for (const auto& layer : layers) {
      for (const auto& p : layer.params) count += static_cast<double>(p.elements);
    }
    return count;
  }
  double param_bytes() const {
    double bytes = 0;
    for (const auto& layer : layers) {
      for (const auto& p : layer.params) bytes += p.bytes();
    }
    return bytes;
  }
};

}  // namespace cs::workload
