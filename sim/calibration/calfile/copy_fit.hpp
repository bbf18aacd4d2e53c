// What the copy fits learned (calibration/fit/fit_links.hpp fits them): one alpha-beta line per
// path kind of copy, how well it fits and how far the measured GPUs / pairs scatter.
#pragma once

#include <string>
#include <vector>

namespace cs::cal {

struct CopyFit {
  std::string path;  // h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, peer, peer_bidir, d2d
  // >= 0: a negative intercept is fitted as 0 (fit/fit_links.cpp). For d2d, the host's issue
  // interval of back-to-back copies, which validate uses as a floor (calibration_file_apply.cpp).
  double latency_us = 0;
  // d2d only: the copy's fixed cost on the GPU, the median of the gated one-rank NCCL calls of at
  // most 4 KiB (NCCL's copy, timed on the GPU); 0 where the data has none (the prior then).
  double gpu_latency_us = 0;
  double bandwidth_GBps = 0;  // per direction
  int points = 0;             // training points
  double rms_rel_error = 0;   // of the fit on its training points
  double max_rel_error = 0;
  // The data's spread: over training sizes, the median of max |t - median(t)| / median(t) across
  // the GPUs / pairs measured at that size.
  double spread_rel = 0;
};

// The fit of path kind `path` (h2d_pinned, peer, d2d, ...); nullptr when none was fitted.
const CopyFit* find_copy_fit(const std::vector<CopyFit>& fits, const std::string& path);

}  // namespace cs::cal
