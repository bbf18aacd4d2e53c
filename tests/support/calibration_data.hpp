// Test support for the calibration layer: the committed raw data under calibrate/data/, and
// small measurement documents written in the tests themselves.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "calibration/measurements/measurements.hpp"
#include "core/error.hpp"
#include "support/cli_run.hpp"

namespace cs::test {

// A committed file of calibrate/data/, e.g. "h200x4/topo-m.txt"; the test fails if it is absent.
inline std::string read_calibration_data(const std::string& relative) {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/" + relative;
  REQUIRE(std::filesystem::exists(path));
  return read_text_file(path);
}

// The opening of a measurement document; a test appends records and the closing "]}".
inline constexpr const char* kMeasurementsHead =
    "{\"schema\":\"clustersim-calibration-v1\",\n\"measurements\":[\n";

// The InputError message that reading `text` (named bad.json) gives, or "" when it reads.
inline std::string measurement_error(const std::string& text) {
  cal::Measurements m;
  try {
    cal::read_measurement_text(text, "bad.json", m);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// An HGX-like half board: GPUs 0-1 and NIC0 behind one PCIe switch on socket 0, GPUs 2-3 and NIC1
// behind another on socket 1.
inline constexpr const char* kTwoSocketSmiText =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tPIX\tSYS\t0-47\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tPIX\tSYS\t0-47\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX\t48-95\t1\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\tPIX\t48-95\t1\t\tN/A\n"
    "NIC0\tPIX\tPIX\tSYS\tSYS\t X \tSYS\n"
    "NIC1\tSYS\tSYS\tPIX\tPIX\tSYS\t X \n"
    "\nLegend:\n\n  X    = Self\n  PIX  = Connection traversing at most a single PCIe bridge\n"
    "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n";

}  // namespace cs::test
