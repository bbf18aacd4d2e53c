// One flat measurement record (string keys, scalar values) and its JSON text. The calibration
// programs run on GPU machines that have no JSON library, so this small writer is their only
// serializer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace cs_cal {

using Scalar = std::variant<std::int64_t, double, std::string, bool>;

// Fields keep insertion order, so the same run writes the same text.
class Record {
 public:
  // Integers are stored as int64, floating point as double, text as string: every call resolves
  // to exactly one kind (no silent double -> int narrowing through overloads).
  template <typename T>
  Record& set(std::string key, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      return put(std::move(key), Scalar{value});
    } else if constexpr (std::is_integral_v<T>) {
      return put(std::move(key), Scalar{static_cast<std::int64_t>(value)});
    } else if constexpr (std::is_floating_point_v<T>) {
      return put(std::move(key), Scalar{static_cast<double>(value)});
    } else {
      return put(std::move(key), Scalar{std::string(value)});
    }
  }
  const std::vector<std::pair<std::string, Scalar>>& fields() const { return fields_; }

 private:
  Record& put(std::string key, Scalar value);
  std::vector<std::pair<std::string, Scalar>> fields_;
};

// A JSON string literal with quotes and escapes.
std::string json_string(std::string_view text);
// A JSON number with 9 significant digits (enough for any measured figure); null if not finite.
std::string json_number(double value);
// {"key":value,...} on one line.
std::string to_json(const Record& record);

}  // namespace cs_cal
