// Fuzz target: a sweep YAML file (plan/sweep_file.hpp), read and numbered point by point as
// `clustersim sweep` does: the first, the last and one in between.
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz_input.hpp"
#include "plan/sweep_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const cs::plan::SweepFile sweep =
        cs::plan::parse_sweep(cs::fuzz::as_text(data, size), "fuzz.yaml");
    const std::size_t points = cs::plan::point_count(sweep);
    if (points > 0) {
      cs::plan::point_coordinates(sweep, 0);
      cs::plan::point_coordinates(sweep, points / 2);
      cs::plan::point_coordinates(sweep, points - 1);
    }
  } catch (const cs::InputError&) {
  }
  return 0;
}
