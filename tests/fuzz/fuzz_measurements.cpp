// Fuzz target: one measurement JSON file of a calibration folder (calibration/measurements.hpp:
// the document, its node and every record, measurement_record.hpp), as `clustersim fit` reads it.
#include <cstddef>
#include <cstdint>

#include "calibration/measurements/measurements.hpp"
#include "core/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    cs::cal::Measurements out;
    cs::cal::read_measurement_text(cs::fuzz::as_text(data, size), "fuzz.json", out);
  } catch (const cs::InputError&) {
  }
  return 0;
}
