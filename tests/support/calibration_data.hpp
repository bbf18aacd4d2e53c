// Test support for the calibration layer: the committed raw data under calibrate/data/, and
// small measurement documents written in the tests themselves.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "calibration/measurements.hpp"
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

}  // namespace cs::test
