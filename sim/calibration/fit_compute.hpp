// The compute side of a GPU from its measurements: launch overhead and event synchronization
// (medians as measured), memory bandwidth of a copy kernel, and a GEMM model per dtype,
//   t = overhead + flops / (efficiency x peak),
// fitted by relative least squares over the training shapes: achieved / peak then rises with the
// size of the product, flops / (peak x overhead + flops / efficiency), instead of echoing a table.
#pragma once

#include <string>
#include <vector>

#include "calibration/fit_split.hpp"
#include "calibration/measurements.hpp"

namespace cs::cal {

struct GemmFit {
  std::string dtype;       // bf16, fp16, tf32
  double peak_flops = 0;   // datasheet dense peak, FLOP/s (see fit_compute.cpp)
  double efficiency = 0;   // asymptotic achieved / peak
  double overhead_us = 0;  // per-GEMM fixed cost
  int points = 0;          // training shapes
  double rms_rel_error = 0;
  double max_rel_error = 0;

  // The model's time for one m x n x k product, microseconds.
  double time_us(double flops) const {
    return overhead_us + flops / (efficiency * peak_flops) * 1e6;
  }
};

struct ComputeFit {
  double kernel_launch_us = 0;   // device-side spacing of back-to-back launches
  double launch_call_us = 0;     // host cost of one launch call
  double launch_latency_us = 0;  // launch to completion seen by the host
  double event_sync_us = 0;      // event record + synchronize
  double membw_GBps = 0;         // copy kernel, read + write bytes, at the largest size
  std::vector<GemmFit> gemm;
};

// Datasheet dense peak of `dtype` on the GPU named `gpu_name`, FLOP/s; 0 when unknown.
double datasheet_peak_flops(const std::string& gpu_name, const std::string& dtype);

// GEMM shapes are held out by the split's size rule applied to their flops (x2 ladder: the
// shapes double in flops along each family).
ComputeFit fit_compute(const Measurements& data, const Split& split);

}  // namespace cs::cal
