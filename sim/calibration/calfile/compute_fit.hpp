// What the compute fit learned (calibration/fit/fit_compute.hpp fits it): launch and
// synchronization costs, the copy kernel's memory bandwidth and one GEMM model per dtype.
#pragma once

#include <string>
#include <vector>

namespace cs::cal {

struct GemmFit {
  std::string dtype;       // bf16, fp16, tf32
  double peak_flops = 0;   // datasheet dense peak, FLOP/s (fit/fit_compute.cpp)
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

}  // namespace cs::cal
