// Fuzz target: a model YAML file (workload/model/model_loader.hpp, format in models/README.md).
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz_input.hpp"
#include "workload/model/model_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    cs::workload::parse_model_text(cs::fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const cs::InputError&) {
  }
  return 0;
}
