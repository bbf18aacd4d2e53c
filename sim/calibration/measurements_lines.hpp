// Where each record of a calibration file sits: nlohmann_json keeps no line numbers, so this scan
// finds the 1-based line on which each object of the top-level "measurements" array opens, for
// error messages that point at the bad record.
#pragma once

#include <string_view>
#include <vector>

namespace cs::cal {

// Lines of the objects directly inside the top-level "measurements" array, in order. Tolerates
// text that is not JSON (it is only used to place an error found by the real parser).
std::vector<int> measurement_record_lines(std::string_view text);

}  // namespace cs::cal
