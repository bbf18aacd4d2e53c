// Typed, range-checked access to one JSON object of a calibration file. Every error is an
// InputError at the key's line (json_lines.hpp) naming the key by its dotted path
// ("nccl_by_op[2].params.max_threads"), so that a hand-edited or corrupted file is refused where
// it is wrong, never as a negative latency or a zero rate deep inside a simulation.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "calibration/measurements/json_lines.hpp"

namespace cs::cal {

// A latency of a second or more is no GPU measurement; one second per step also keeps a
// collective of a million steps inside simulated time (kEndOfTimeSeconds, 9.2e6 s).
inline constexpr double kMaxLatencyUs = 1e6;
// The most ranks, GPUs or channels a file may count: 2^20, past any machine built (the largest
// NCCL jobs run ~1e5 ranks), so a count read from a file is checked for sense before it sizes a
// table or a loop.
inline constexpr int kMaxCount = 1 << 20;

// Parses a whole JSON file's text; text that is not JSON is an InputError at the line where the
// parser stopped ("not valid JSON: ..."), since nlohmann_json reports only a byte offset.
nlohmann::json parse_json(const std::string& text, const std::string& file_name);

class JsonReader {
 public:
  // `pointer` is where `j` sits in the file ("" for the document), `prefix` its dotted name
  // followed by '.' ("" for the document).
  JsonReader(const nlohmann::json& j, const JsonLines& lines, std::string pointer,
             std::string prefix);

  const nlohmann::json& at(const std::string& key) const;  // present, or "missing"
  bool has(const std::string& key) const;
  std::string text(const std::string& key) const;
  double number(const std::string& key) const;  // any finite number
  // A number in [lo, hi]; `what` names the range in the message ("a latency of 0 to 1e6 us").
  double number(const std::string& key, double lo, double hi, const std::string& what) const;
  // The same for `v`, a value held under `key` (an array's element).
  double number_of(const nlohmann::json& v, const std::string& key, double lo, double hi,
                   const std::string& what) const;
  double latency_us(const std::string& key) const;    // 0 .. kMaxLatencyUs
  double non_negative(const std::string& key) const;  // >= 0
  double positive(const std::string& key) const;      // > 0
  int integer(const std::string& key, long long lo, long long hi) const;
  int integer_of(const nlohmann::json& v, const std::string& key, long long lo, long long hi) const;
  const nlohmann::json& array(const std::string& key) const;
  JsonReader child(const std::string& key) const;                   // an object member
  JsonReader element(const std::string& key, std::size_t i) const;  // an object in an array
  // The value under `key` of any type, and item i of this reader's array: each a reader of its
  // own, so that a bad element is named ("key[2][1]") and found at its own line.
  JsonReader value(const std::string& key) const;
  JsonReader item(std::size_t i) const;
  // This reader's own value: an array of exactly n items; a number in [lo, hi] (`what` names
  // the range); an integer in [lo, hi].
  void expect_array(std::size_t n) const;
  std::size_t size() const { return j_.is_array() ? j_.size() : 0; }  // items of an array, else 0
  double as_number(double lo, double hi, const std::string& what) const;
  int as_integer(long long lo, long long hi) const;
  // Refuses any key not in `known`: a misspelt key would otherwise be ignored in silence.
  void only(std::initializer_list<std::string_view> known) const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const JsonLines& lines() const { return lines_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const nlohmann::json& j_;
  const JsonLines& lines_;
  std::string pointer_;
  std::string prefix_;
};

}  // namespace cs::cal
