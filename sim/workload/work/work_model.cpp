// Op times from work: GEMMs and convolutions at an efficiency of the datasheet peak after a fixed
// cost, fused attention likewise, memory-bound kernels at an efficiency of the HBM bandwidth after
// a fixed cost per kernel.
#include "workload/work/work_model.hpp"

#include <cmath>

#include "core/error.hpp"

namespace cs::workload {
namespace {

// Efficiencies and fixed costs fitted by calibrate/models/fit_work.py to every op that
// calibrate/models/export.py timed on one H200 (calibrate/data/h200x1-models, the six shipped
// models at their default settings, bf16 autocast): time = overhead + work / (efficiency x peak),
// least squares weighted by 1 / time per op class. The
// H100 is predicted with the same efficiencies and its own datasheet peaks (README: "another GPU
// model").
constexpr double kGemmEfficiency = 0.796;
constexpr double kGemmOverheadUs = 5.041;
// GEMMs with a dimension that is not a multiple of 16 bytes (8 bf16 elements) miss cuBLAS's
// tensor-core kernels: GPT-2's LM head (vocabulary 50257) runs at 95-146 TFLOP/s on H200.
constexpr double kMisalignedEfficiency = 0.153;
constexpr double kMisalignedOverheadUs = 1.210;
constexpr double kConvEfficiency = 0.604;
constexpr double kConvOverheadUs = 43.37;
constexpr double kAttentionEfficiency = 0.371;
constexpr double kAttentionOverheadUs = 76.15;
// Memory-bound ops by plain least squares (fit_work.py says why), per access pattern. Elementwise
// ops and contiguous reductions follow the HBM bandwidth: fitted on H100 too, their efficiencies
// agree with H200's (0.985 and 0.736 against 0.970 and 0.699). BatchNorm's strided reductions do
// not: they run at one rate in bytes/s on both (0.503 against 0.518 TB/s), set by the SMs (132 on
// both), so they take that absolute rate on every GPU; one with other SMs would need its own fit.
constexpr double kMemoryEfficiency = 0.970;
constexpr double kMemoryKernelUs = 8.258;
constexpr double kReductionEfficiency = 0.699;
constexpr double kReductionKernelUs = 6.274;
constexpr double kStridedBps = 0.108 * 4.8e12;
constexpr double kStridedKernelUs = 9.381;
// In fp32, BatchNorm runs cuDNN's kernels; under bf16 autocast (bf16 input, fp32 weights) PyTorch
// falls back to its own, the 0.51 TB/s above: ResNet-50 spends 30 of its 54 ms there on H200.
// cuDNN's rate from resnet50-fp32-b64 on H200 (fit_work.py --files resnet50-fp32-b64: 0.265 of
// HBM; the fixed cost came out below zero and is left at 0); on H100 the same fit gives 1.12 TB/s
// against H200's 1.27, so it too is taken as an absolute rate.
constexpr double kStridedFp32Bps = 0.265 * 4.8e12;
// The GPU's own time between two kernels queued back to back on a stream (the front end fetching
// and starting the next grid, the previous one's tail): (measured plain step - the step
// simulated without it) / kernels on the H200 exports: 1.09, 1.87, 3.37 and 1.56 us for
// resnet50, gpt2-medium, llama-1b and gpt2-xl; their median. gpt2 and bert-large, partly
// host-bound there, are left out: their residual mixes in the host's.
constexpr double kKernelGapUs = 1.7;
// FlashAttention-2's backward does 5 matrix products where the forward does 2, so 2.5x the
// forward's FLOPs (Dao 2023, "FlashAttention-2", section 3.1).
constexpr double kAttentionBackwardWork = 2.5;

double& dim_of(Op& op, Dim dim) {
  switch (dim) {
    case Dim::m:
      return op.m;
    case Dim::n:
      return op.n;
    case Dim::k:
      return op.k;
    case Dim::batch:
      return op.batch;
    case Dim::none:
      break;
  }
  CS_ASSERT(false, "dim_of(Dim::none)");
  return op.m;
}

// std::pow, without the call where the base is 1 (a setting left as recorded): pow(1, y) is 1
// for every y (C's Annex F), so the result is the same.
double power(double base, double exponent) {
  return base == 1.0 ? 1.0 : std::pow(base, exponent);
}

// Only tensor-core GEMMs (bf16, fp16, tf32) need 16-byte aligned dimensions; FP32 runs on the
// CUDA cores with no such kernels to miss.
bool tensor_core_aligned(const Op& op) {
  if (op.dtype == Dtype::fp32) return true;
  const double per = 16.0 / dtype_bytes(op.dtype);
  auto multiple = [per](double d) { return std::fmod(d, per) == 0.0; };
  return multiple(op.m) && multiple(op.n) && multiple(op.k);
}

double peak_of(const GpuCompute& gpu, Dtype dtype) {
  switch (dtype) {
    case Dtype::bf16:
      return gpu.bf16_flops;
    case Dtype::fp16:
      return gpu.fp16_flops;
    case Dtype::tf32:
      return gpu.tf32_flops;
    case Dtype::fp32:
      return gpu.fp32_flops;
  }
  return gpu.bf16_flops;
}

}  // namespace

GpuCompute gpu_compute_priors(const topo::GpuModel& model) {
  GpuCompute gpu;
  gpu.gpu = model.name;
  gpu.bf16_flops = model.bf16_flops;
  gpu.fp16_flops = model.fp16_flops > 0 ? model.fp16_flops : model.bf16_flops;
  // TF32 tensor math runs at half the BF16 rate on Ampere and Hopper (A100, H100 and H200
  // datasheets: 156 / 312, 494.7 / 989.4 TFLOP/s dense); topology files give no TF32 figure.
  gpu.tf32_flops = gpu.bf16_flops / 2.0;
  gpu.fp32_flops = model.fp32_flops > 0 ? model.fp32_flops : gpu.bf16_flops / 16.0;
  gpu.memory_Bps = model.memory_bandwidth_Bps;
  gpu.gemm_efficiency = kGemmEfficiency;
  gpu.gemm_overhead_us = kGemmOverheadUs;
  gpu.misaligned_efficiency = kMisalignedEfficiency;
  gpu.misaligned_overhead_us = kMisalignedOverheadUs;
  gpu.conv_efficiency = kConvEfficiency;
  gpu.conv_overhead_us = kConvOverheadUs;
  gpu.attention_efficiency = kAttentionEfficiency;
  gpu.attention_overhead_us = kAttentionOverheadUs;
  gpu.memory_efficiency = kMemoryEfficiency;
  gpu.memory_kernel_us = kMemoryKernelUs;
  gpu.reduction_efficiency = kReductionEfficiency;
  gpu.reduction_kernel_us = kReductionKernelUs;
  gpu.strided_Bps = kStridedBps;
  gpu.strided_kernel_us = kStridedKernelUs;
  gpu.strided_fp32_Bps = kStridedFp32Bps;
  gpu.overlap = overlap_prior();
  gpu.kernel_gap_us = kKernelGapUs;
  gpu.gemm_source = "prior (fitted to the H200 exports)";
  return gpu;
}

void apply_gemm_fit(GpuCompute& gpu, double efficiency, double overhead_us, const char* source) {
  gpu.gemm_efficiency = efficiency;
  gpu.gemm_overhead_us = overhead_us;
  gpu.gemm_source = source;
}

Op scaled(const Op& op, const WorkScale& scale) {
  Op out = op;
  switch (op.kind) {
    case OpKind::gemm:
    case OpKind::conv:
      // Dimensions stay whole: a ratio's rounding must not move a dimension off alignment.
      if (op.grows_batch != Dim::none) {
        dim_of(out, op.grows_batch) = std::round(dim_of(out, op.grows_batch) * scale.batch);
      }
      if (op.grows_seq != Dim::none) {
        dim_of(out, op.grows_seq) = std::round(dim_of(out, op.grows_seq) * scale.seq);
      }
      break;
    case OpKind::attention:
      out.batch *= scale.batch;
      out.seq_q *= scale.seq;
      out.seq_kv *= scale.seq;
      break;
    case OpKind::memory:
      out.bytes *= power(scale.batch, op.scale_batch) * power(scale.seq, op.scale_seq);
      break;
  }
  // A memory op runs at the step's precision (it picks BatchNorm's kernel, op_time_us).
  const Dtype half = scale.to == Precision::fp16 ? Dtype::fp16 : Dtype::bf16;
  if (op.kind == OpKind::memory && scale.to) {
    out.dtype = *scale.to == Precision::fp32 ? Dtype::fp32 : half;
  }
  if (scale.from && scale.to && *scale.from != *scale.to) {
    const bool to_fp32 = *scale.to == Precision::fp32;
    if (op.kind == OpKind::memory) {
      // bf16 <-> fp16 keeps the bytes; fp32 <-> 16-bit doubles or halves them.
      out.bytes *= precision_bytes(*scale.to) / precision_bytes(*scale.from);
    } else if (to_fp32) {
      out.dtype = op.kind == OpKind::conv ? Dtype::tf32 : Dtype::fp32;
    } else {
      out.dtype = half;
    }
  }
  return out;
}

double op_time_us(const Op& op, bool backward, const GpuCompute& gpu) {
  switch (op.kind) {
    case OpKind::gemm:
      if (!tensor_core_aligned(op)) {
        return gpu.misaligned_overhead_us +
               op.flops() / (gpu.misaligned_efficiency * peak_of(gpu, op.dtype)) * 1e6;
      }
      return gpu.gemm_overhead_us +
             op.flops() / (gpu.gemm_efficiency * peak_of(gpu, op.dtype)) * 1e6;
    case OpKind::conv:
      return gpu.conv_overhead_us +
             op.flops() / (gpu.conv_efficiency * peak_of(gpu, op.dtype)) * 1e6;
    case OpKind::attention: {
      const double work = op.flops() * (backward ? kAttentionBackwardWork : 1.0);
      return gpu.attention_overhead_us +
             work / (gpu.attention_efficiency * peak_of(gpu, op.dtype)) * 1e6;
    }
    case OpKind::memory: {
      double fixed = gpu.memory_kernel_us;
      double rate = gpu.memory_efficiency * gpu.memory_Bps;
      if (op.access == Access::reduction) {
        fixed = gpu.reduction_kernel_us;
        rate = gpu.reduction_efficiency * gpu.memory_Bps;
      } else if (op.access == Access::strided_reduction && op.dtype == Dtype::fp32) {
        fixed = 0;
        rate = gpu.strided_fp32_Bps;
      } else if (op.access == Access::strided_reduction) {
        fixed = gpu.strided_kernel_us;
        rate = gpu.strided_Bps;
      }
      return op.kernels * fixed + op.bytes / rate * 1e6;
    }
  }
  return 0;
}

}  // namespace cs::workload
