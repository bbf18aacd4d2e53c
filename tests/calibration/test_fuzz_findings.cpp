// What fuzz_calibration and fuzz_measurements found (tests/fuzz/README.md), kept as data files
// under tests/data/fuzz/<target>/: each is refused with an InputError at its file and line, where
// it once escaped as another exception and ended the program.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/measurements.hpp"
#include "core/error.hpp"
#include "support/cli_run.hpp"

namespace {

const std::string kFuzzData = std::string(CLUSTERSIM_TEST_DATA) + "/fuzz/";

// The InputError message of `read`, or "no error".
std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// nlohmann_json throws out_of_range, not parse_error, for a number a double cannot hold.
TEST_CASE("fuzz_calibration: a number past a double's range is refused at its line") {
  const std::string file = kFuzzData + "fuzz_calibration/number_overflow.json";
  const std::string e =
      error_of([&] { cs::cal::parse_calibration(cs::test::read_text_file(file), file); });
  CHECK(e.rfind(file + ":4: not valid JSON: ", 0) == 0);
  CHECK(e.find("number overflow parsing '1e400'") != std::string::npos);
}

TEST_CASE("fuzz_measurements: a number past a double's range is refused at its record's line") {
  const std::string file = kFuzzData + "fuzz_measurements/number_overflow.json";
  cs::cal::Measurements out;
  const std::string e =
      error_of([&] { cs::cal::read_measurement_text(cs::test::read_text_file(file), file, out); });
  CHECK(e.rfind(file + ":4: not valid JSON: ", 0) == 0);
  CHECK(e.find("number overflow parsing '1e388'") != std::string::npos);
}
