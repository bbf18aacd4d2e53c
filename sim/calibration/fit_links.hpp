// Alpha-beta fits of the copy measurements, one per path kind: host <-> device pinned (the PCIe
// DMA path), pageable (the driver's staging pipeline), GPU peer one way and both ways (NVLink),
// and device-local copies (memory bandwidth). All GPUs / pairs of a kind are fitted together; how
// far they scatter at one size is kept as the data's own spread. Device-local copies are the
// exception: a copy that fits in the L2 cache never reaches DRAM, and its time is the fixed cost
// of the copy kernel (about 3.7 us on H100 and H200, flat from 4 KiB to 4 MiB). So d2d's latency
// is the median time of the copies up to the L2 size, and its bandwidth is fitted as
// t - latency = bytes / bandwidth on the copies larger than L2 only.
#pragma once

#include <string>
#include <vector>

#include "calibration/fit_split.hpp"
#include "calibration/measurements.hpp"

namespace cs::cal {

struct CopyFit {
  std::string path;  // h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, peer, peer_bidir, d2d
  // >= 0: a negative intercept is fitted as 0 (fit_links.cpp). For d2d, the host's issue interval
  // of back-to-back copies, which validate uses as a floor (calibration_file_apply.cpp).
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

// The path kind of a copy record (one of the names above).
std::string copy_path(const CopyPoint& copy);

// The ladder gap of copy sizes of a path kind.
int copy_gap(const Measurements& data, const std::string& path);

// One fit per path kind present in the data, in the order listed above.
std::vector<CopyFit> fit_copies(const Measurements& data, const Split& split);

const CopyFit* find_copy_fit(const std::vector<CopyFit>& fits, const std::string& path);

}  // namespace cs::cal
