// Launch medians, copy-kernel bandwidth and the per-dtype GEMM fits.
#include "calibration/fit/fit_compute.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "calibration/fit/fit_least_squares.hpp"

namespace cs::cal {
namespace {

bool contains(const std::string& text, const char* part) {
  std::string upper;
  for (char c : text)
    upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return upper.find(part) != std::string::npos;
}

}  // namespace

double datasheet_peak_flops(const std::string& gpu_name, const std::string& dtype) {
  // NVIDIA H100 and H200 SXM datasheets, dense (half the "with sparsity" figures): BF16 and FP16
  // tensor 989.4 TFLOP/s, TF32 tensor 494.7 TFLOP/s (topologies/README.md, "Sources": 989 BF16).
  // The H100 PCIe board is slower (756 / 378 TFLOP/s, H100 PCIe datasheet).
  const bool pcie = contains(gpu_name, "PCIE");
  if (contains(gpu_name, "H100") || contains(gpu_name, "H200") || contains(gpu_name, "H800")) {
    if (dtype == "bf16" || dtype == "fp16") return pcie ? 756e12 : 989.4e12;
    if (dtype == "tf32") return pcie ? 378e12 : 494.7e12;
  }
  if (contains(gpu_name, "A100") || contains(gpu_name, "A800")) {
    // A100 datasheet, dense: BF16 / FP16 312, TF32 156 TFLOP/s.
    if (dtype == "bf16" || dtype == "fp16") return 312e12;
    if (dtype == "tf32") return 156e12;
  }
  return 0;
}

ComputeFit fit_compute(const Measurements& data, const Split& split) {
  ComputeFit out;
  for (const LaunchPoint& l : data.launches) {
    if (l.what == "kernel_launch") out.kernel_launch_us = l.time_us;
    if (l.what == "launch_call") out.launch_call_us = l.time_us;
    if (l.what == "launch_latency") out.launch_latency_us = l.time_us;
    if (l.what == "event_sync") out.event_sync_us = l.time_us;
  }
  double largest = 0;
  for (const MembwPoint& m : data.membw) {
    if (m.bytes >= largest) {
      largest = m.bytes;
      out.membw_GBps = 2.0 * m.bytes / m.time_us / 1e3;
    }
  }
  std::map<std::string, std::vector<const GemmPoint*>> by_dtype;
  for (const GemmPoint& g : data.gemms) by_dtype[g.dtype].push_back(&g);
  for (const auto& [dtype, points] : by_dtype) {
    std::vector<double> flops;
    std::vector<double> times;
    for (const GemmPoint* g : points) {
      if (split.size_held_out(g->flops(), 1)) continue;
      flops.push_back(g->flops());
      times.push_back(g->time_us);
    }
    if (flops.size() < 2) continue;
    const LinearFit f = fit_alpha_beta(flops, times);
    GemmFit fit;
    fit.dtype = dtype;
    fit.peak_flops = datasheet_peak_flops(data.node.gpu_name, dtype);
    double achieved = f.coef[1] > 0 ? 1e6 / f.coef[1] : 0.0;  // us per flop -> FLOP/s
    if (!(fit.peak_flops > 0)) fit.peak_flops = achieved;     // unknown GPU: relative to itself
    fit.efficiency = fit.peak_flops > 0 ? achieved / fit.peak_flops : 0.0;
    fit.overhead_us = f.coef[0];
    fit.points = f.points;
    fit.rms_rel_error = f.rms_rel_error;
    fit.max_rel_error = f.max_rel_error;
    out.gemm.push_back(fit);
  }
  return out;
}

}  // namespace cs::cal
