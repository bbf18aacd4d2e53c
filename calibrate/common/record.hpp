// One flat measurement record (string keys, scalar values) and its JSON text. The calibration programs
// run on GPU machines that have no JSON library, so this small writer is their only serializer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cs_cal {

using Scalar = std::variant<std::int64_t, double, std::string, bool>;

// Fields keep insertion order, so the same run writes the same text.
class Record {
 public:
  Record& set(std::string key, Scalar value);
  Record& set(std::string key, int value) { return set(std::move(key), std::int64_t{value}); }
  Record& set(std::string key, const char* value) {
    return set(std::move(key), std::string(value));
  }
  const std::vector<std::pair<std::string, Scalar>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, Scalar>> fields_;
};

// A JSON string literal with quotes and escapes.
std::string json_string(std::string_view text);
// A JSON number with 9 significant digits (enough for any measured figure); null if not finite.
std::string json_number(double value);
// {"key":value,...} on one line.
std::string to_json(const Record& record);

}  // namespace cs_cal
