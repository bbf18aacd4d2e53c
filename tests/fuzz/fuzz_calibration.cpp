// Fuzz target: a calibration JSON file (calibration/calibration_file.hpp), the fitter's output
// that `--calibration` reads back.
#include <cstddef>
#include <cstdint>

#include "calibration/calfile/calibration_file.hpp"
#include "core/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    cs::cal::parse_calibration(cs::fuzz::as_text(data, size), "fuzz.json");
  } catch (const cs::InputError&) {
  }
  return 0;
}
