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

#include "calibration/calfile/copy_fit.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/split.hpp"

namespace cs::cal {

// The path kind of a copy record (one of the names above).
std::string copy_path(const CopyPoint& copy);

// The ladder gap of copy sizes of a path kind.
int copy_gap(const Measurements& data, const std::string& path);

// One fit per path kind present in the data, in the order listed above.
std::vector<CopyFit> fit_copies(const Measurements& data, const Split& split);

}  // namespace cs::cal
