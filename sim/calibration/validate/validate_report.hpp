// The renderings of a Validation: the table a person reads, CSV rows and a JSON document.
#pragma once

#include <string>

#include "calibration/validate/validate.hpp"

namespace cs::cal {

// `calibration_name` says where the calibrated figures came from (a file, or "fitted in memory").
std::string validation_text(const Validation& v, const std::string& calibration_name);
// One line per row (summary rows first, table "summary"; then "rows").
std::string validation_csv(const Validation& v);
// Everything, predictions included.
std::string validation_json(const Validation& v, const std::string& calibration_name);

// A fraction as a percentage with one decimal ("3.4%").
std::string percent(double fraction);
// A table line without the padding of its last column, so that no line ends in spaces.
std::string trimmed(const char* formatted);

}  // namespace cs::cal
