// One NCCL record per measured point: a folder may hold a point twice, timed host-paced and
// gated (calibrate/README.md, field `timing`); fit and validate pick one timing with this.
#pragma once

#include <string>

#include "calibration/measurements/measurements.hpp"

namespace cs::cal {

// What a selection kept, for the header of fit's and validate's output.
struct TimingSelection {
  NcclTiming timing = NcclTiming::host_paced;
  int kept = 0;      // records of `timing` kept
  int fallback = 0;  // gated only: host_paced records kept for points with no gated record
  int dropped = 0;   // records of the other timing left out
  // "timing: gated (462 records; host_paced for 126 points without a gated one; 462 left out)"
  std::string describe() const;
};

// Reduces data.nccl to one record per point (op, rank count, bytes, forced algorithm and
// protocol): the record timed `timing`; with gated, a point without a gated record (the collector
// gates sizes <= 16 MiB only) keeps its host_paced record. Points measured only gated are left out
// of a host_paced selection. Kept records stay in their order. Two records of one point with the
// same timing throw InputError at the second, naming the first.
TimingSelection select_nccl_timing(Measurements& data, NcclTiming timing);

// A --timing value; anything but host_paced or gated throws InputError naming `key`.
NcclTiming nccl_timing_option(const std::string& text, const std::string& key);

}  // namespace cs::cal
