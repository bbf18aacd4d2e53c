// The work model of one GPU: how long an op of a model file takes from its work alone (GEMM and
// convolution shapes, attention dimensions, bytes moved), and how an op's work changes with the
// per-GPU batch, the sequence length and the precision. Measured layer times are carried to
// other settings and other GPUs through the ratio of this model's times (ddp/step_plan.cpp).
#pragma once

#include <optional>

#include "topology/cluster/cluster.hpp"
#include "workload/model/model.hpp"
#include "workload/work/overlap.hpp"

namespace cs::workload {

// What a GPU offers the ops, with the efficiencies that turn datasheet peaks into achieved rates.
struct GpuCompute {
  std::string gpu;        // the topology's GPU model name
  double bf16_flops = 0;  // datasheet dense peaks, FLOP/s
  double fp16_flops = 0;
  double tf32_flops = 0;
  double fp32_flops = 0;
  double memory_Bps = 0;             // datasheet HBM bandwidth
  double gemm_efficiency = 0;        // asymptotic achieved / peak of a cuBLAS GEMM
  double gemm_overhead_us = 0;       // fixed cost of one GEMM
  double misaligned_efficiency = 0;  // a GEMM with a dimension not a multiple of 16 bytes
  double misaligned_overhead_us = 0;
  double conv_efficiency = 0;  // cuDNN convolutions, as implicit GEMMs
  double conv_overhead_us = 0;
  double attention_efficiency = 0;  // fused attention forward; backward does 2.5x its FLOPs
  double attention_overhead_us = 0;
  // Memory-bound kernels by access pattern (Access), each with a fixed cost per kernel:
  // elementwise ones and contiguous reductions at an efficiency of the HBM bandwidth, strided
  // reductions at a rate of their own (bound by the SMs, not by HBM; work_model.cpp).
  double memory_efficiency = 0;
  double memory_kernel_us = 0;
  double reduction_efficiency = 0;  // over the contiguous axis
  double reduction_kernel_us = 0;
  double strided_Bps = 0;  // across batch and spatial axes (BatchNorm, NCHW)
  double strided_kernel_us = 0;
  double strided_fp32_Bps = 0;   // the same in fp32, where cuDNN's kernels run
  OverlapSlowdown overlap;       // kernels beside an NCCL kernel (overlap.hpp)
  double kernel_gap_us = 0;      // GPU time between two kernels queued back to back
  const char* gemm_source = "";  // where the GEMM figures came from
};

// The priors for `model` (datasheet peaks from the topology, efficiencies measured on H200;
// work_model.cpp says where each comes from).
GpuCompute gpu_compute_priors(const topo::GpuModel& model);

// A GEMM fit from a calibration (cuBLAS sweep) for one dtype replaces the GEMM prior.
void apply_gemm_fit(GpuCompute& gpu, double efficiency, double overhead_us, const char* source);

// The settings an op's work is wanted at, as factors of the settings it was recorded at.
struct WorkScale {
  double batch = 1;                   // batch / recorded batch
  double seq = 1;                     // seq / recorded seq (1 for models without a sequence)
  std::optional<Precision> from, to;  // a precision change, when they differ
};

// The op at other settings: the dimension that grows with batch (seq) is multiplied by the
// factor; memory bytes by batch^scale_batch * seq^scale_seq; attention's batch and sequences.
// A change from bf16 to fp32 runs GEMMs in fp32 (PyTorch's default: no TF32 for matmul),
// convolutions in TF32 (cuDNN's default), and doubles the bytes of memory-bound kernels; back
// from fp32 to bf16 the reverse. That last part is a coarse stand-in: autocast's casts and
// which tensors stay fp32 are not modelled.
Op scaled(const Op& op, const WorkScale& scale);

// Seconds-free: the op's GPU time in microseconds on `gpu`; `backward` marks ops of the backward
// pass (fused attention's backward recomputes and does 2.5x the forward FLOPs).
double op_time_us(const Op& op, bool backward, const GpuCompute& gpu);

}  // namespace cs::workload
