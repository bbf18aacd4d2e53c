// Copy fits: group, drop held-out sizes, relative least squares on t = latency + bytes / bw.
#include "calibration/fit/fit_links.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "network/copies.hpp"

namespace cs::cal {
namespace {

const char* const kPaths[] = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable",
                              "peer",       "peer_bidir", "d2d"};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median gated one-rank NCCL call of at most 4 KiB among the training sizes (0 if none): a
// device-to-device copy's own cost on the GPU (calibrate/data/h200x1-onerank).
double gpu_copy_cost_us(const Measurements& data, const Split& split) {
  constexpr double kSmallBytes = 4096;
  std::vector<double> times;
  for (const NcclPoint& p : data.nccl) {
    if (p.n_ranks != 1 || p.timing != NcclTiming::gated || p.bytes > kSmallBytes) continue;
    if (split.size_held_out(p.bytes, nccl_curve_gap(data, p))) continue;
    times.push_back(p.time_us);
  }
  return times.empty() ? 0.0 : median(times);
}

}  // namespace

std::string copy_path(const CopyPoint& c) {
  switch (c.direction) {
    case CopyDirection::h2d:
      return "h2d_" + c.memory;
    case CopyDirection::d2h:
      return "d2h_" + c.memory;
    case CopyDirection::d2d:
      return "d2d";
    case CopyDirection::peer:
      return c.bidirectional ? "peer_bidir" : "peer";
  }
  return "?";
}

int copy_gap(const Measurements& data, const std::string& path) {
  std::vector<double> sizes;
  for (const CopyPoint& c : data.copies) {
    if (copy_path(c) == path) sizes.push_back(c.bytes);
  }
  return ladder_gap(sizes);
}

std::vector<CopyFit> fit_copies(const Measurements& data, const Split& split) {
  std::vector<CopyFit> out;
  const double gpu_cost_us = gpu_copy_cost_us(data, split);
  for (const char* path : kPaths) {
    const int gap = copy_gap(data, path);
    std::vector<double> bytes;
    std::vector<double> times;
    std::map<double, std::vector<double>> by_size;
    const bool device = std::string(path) == "d2d";
    // Device copies up to the L2 size: their median is the interval at which the copy program's
    // one host thread issues copies back to back (calibration_file_apply.cpp), not the GPU's cost.
    std::vector<double> in_cache;
    for (const CopyPoint& c : data.copies) {
      if (copy_path(c) != path || split.size_held_out(c.bytes, gap)) continue;
      if (device && c.bytes <= data.node.l2_cache_bytes) {
        in_cache.push_back(c.time_us);
        continue;
      }
      bytes.push_back(c.bytes);
      times.push_back(c.time_us);
      by_size[c.bytes].push_back(c.time_us);
    }
    if (by_size.size() < (device ? 1u : 2u)) continue;  // alpha-beta needs two sizes
    LinearFit f;
    if (device) {
      // The rate above L2, on the time after the copy's own fixed cost on the GPU (the one the
      // simulator adds back: measured, else its prior), not after the host's interval: that would
      // make the rate too fast by the difference over every size.
      const double fixed_us =
          gpu_cost_us > 0 ? gpu_cost_us : us_from_ps(net::device_copy_prior_latency());
      std::vector<FitRow> rows;
      for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (times[i] > fixed_us) rows.push_back({{0.0, bytes[i]}, times[i] - fixed_us});
      }
      if (rows.empty()) continue;
      f = fit_relative_robust(rows);
      f.coef[0] = in_cache.empty() ? 0.0 : median(in_cache);
    } else {
      // The latency is constrained to >= 0, as the calibration loader requires (0..1 s): where
      // the unconstrained intercept is negative, fit_relative's active set fixes the latency at
      // 0 and refits the bandwidth alone with the same weights (test_fit_links_intercept.cpp).
      f = fit_alpha_beta(bytes, times);
    }
    CopyFit fit;
    fit.path = path;
    fit.latency_us = f.coef[0];
    if (device) fit.gpu_latency_us = gpu_cost_us;
    fit.bandwidth_GBps = f.coef[1] > 0 ? 1.0 / f.coef[1] / 1e3 : 0.0;  // bytes/us -> GB/s
    fit.points = f.points;
    fit.rms_rel_error = f.rms_rel_error;
    fit.max_rel_error = f.max_rel_error;
    std::vector<double> spreads;
    for (const auto& [size, ts] : by_size) {
      const double m = median(ts);
      double worst = 0;
      for (double t : ts) worst = std::max(worst, std::fabs(t - m) / m);
      spreads.push_back(worst);
    }
    fit.spread_rel = median(spreads);
    out.push_back(fit);
  }
  return out;
}

}  // namespace cs::cal
