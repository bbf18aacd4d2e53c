// Fuzz target: one measurement JSON file of a calibration folder (calibration/measurements.hpp:
// the document, its node and every record, measurement_record.hpp), as `clustersim fit` reads it;
// the same input as a DDP step file (ddp_steps.hpp, validate --ddp) and a parallel step file
// (parallel_steps.hpp, validate --parallel).
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibration/measurements/ddp_steps.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/parallel_steps.hpp"
#include "core/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    cs::cal::Measurements out;
    cs::cal::read_measurement_text(cs::fuzz::as_text(data, size), "fuzz.json", out);
  } catch (const cs::InputError&) {
  }
  const std::string text = cs::fuzz::as_text(data, size);
  try {
    cs::cal::parse_ddp_step_file(text, "fuzz.json");
  } catch (const cs::InputError&) {
  }
  try {
    cs::cal::parse_parallel_step_file(text, "fuzz.json");
  } catch (const cs::InputError&) {
  }
  return 0;
}
