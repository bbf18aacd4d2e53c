// How fast a host dispatches PyTorch work, as calibrate/host/host_probe.py measures it (schema
// clustersim-host-probe/1): microseconds per call of six classes of op, timed on a host that
// never waits on its GPU. A model file's measurement carries the probe of the host it was
// exported on; a calibration carries the probe of the node it measured. Host costs move from one
// to the other by the ratio of their indices (models/README.md, "Host costs").
#pragma once

#include <array>
#include <string>

namespace cs {

inline constexpr const char* kHostProbeSchema = "clustersim-host-probe/1";

// The classes the index averages, in the probe's order (host_probe.py's docstring says what each
// times). The probe's `nccl` class is kept apart: it needs every rank.
inline constexpr std::array<const char*, 6> kHostProbeClasses = {
    "launch", "elementwise", "linear", "conv", "autograd", "foreach"};

struct HostProbe {
  std::array<double, kHostProbeClasses.size()> us{};  // per class of kHostProbeClasses, > 0
  double nccl_us = 0;                                 // 0: not measured
  std::string source;                                 // where the figures come from, for headers

  // The host's speed as one figure: the geometric mean of the classes' times. One class alone
  // moves 15-25 % between two probes minutes apart on one VM; the mean of six moves less, and
  // tracks a whole step's host time (calibrate/README.md, "The host probe").
  double index_us() const;
};

// Host costs measured on `from` carried to `to`: to.index / from.index.
double host_scale(const HostProbe& from, const HostProbe& to);

}  // namespace cs
