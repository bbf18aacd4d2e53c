// JsonReader: every accessor checks presence, type and range before it converts, and fails at the
// line of the key (or of the object that lacks it).
#include "calibration/measurements/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/error.hpp"

namespace cs::cal {

using nlohmann::json;

json parse_json(const std::string& text, const std::string& file_name) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is 1-based; count the lines up to it.
    const std::size_t upto = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + upto, '\n'));
    throw InputError(SourceLoc{file_name, line}, "", std::string("not valid JSON: ") + e.what());
  } catch (const json::out_of_range& e) {
    // A number past the range of a double ("1e400"). nlohmann_json names only its text, quoted in
    // the message: its line is that of the text's first occurrence.
    const std::string what = e.what();
    const std::size_t open = what.find('\'');
    const std::string number = what.substr(open + 1, what.rfind('\'') - open - 1);
    const std::size_t at = std::min(text.find(number), text.size());
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    throw InputError(SourceLoc{file_name, line}, "",
                     std::string("not valid JSON: ") + e.what() +
                         "; numbers must be finite doubles (at most 1.8e308)");
  }
}

JsonReader::JsonReader(const json& j, const JsonLines& lines, std::string pointer,
                       std::string prefix)
    : j_(j), lines_(lines), pointer_(std::move(pointer)), prefix_(std::move(prefix)) {}

const json& JsonReader::at(const std::string& key) const {
  if (!j_.is_object()) fail("", "expected an object, got " + j_.dump());
  if (!j_.contains(key)) fail(key, "missing");
  return j_.at(key);
}

bool JsonReader::has(const std::string& key) const {
  return j_.is_object() && j_.contains(key);
}

std::string JsonReader::text(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
  return v.get<std::string>();
}

double JsonReader::number(const std::string& key) const {
  const double huge = std::numeric_limits<double>::max();
  return number(key, -huge, huge, "a number");
}

double JsonReader::number(const std::string& key, double lo, double hi,
                          const std::string& what) const {
  return number_of(at(key), key, lo, hi, what);
}

double JsonReader::number_of(const json& v, const std::string& key, double lo, double hi,
                             const std::string& what) const {
  if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
    fail(key, "expected " + what + ", got " + v.dump());
  return v.get<double>();
}

double JsonReader::latency_us(const std::string& key) const {
  return number(key, 0, kMaxLatencyUs, "a latency of 0 to 1e6 us");
}

double JsonReader::non_negative(const std::string& key) const {
  return number(key, 0, std::numeric_limits<double>::max(), "a number of 0 or more");
}

double JsonReader::positive(const std::string& key) const {
  const double v = number(key);
  if (!(v > 0)) fail(key, "expected a number above 0, got " + at(key).dump());
  return v;
}

int JsonReader::integer(const std::string& key, long long lo, long long hi) const {
  return integer_of(at(key), key, lo, hi);
}

int JsonReader::integer_of(const json& v, const std::string& key, long long lo,
                           long long hi) const {
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
    fail(key, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                  ", got " + v.dump());
  return static_cast<int>(v.get<long long>());
}

const json& JsonReader::array(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_array()) fail(key, "expected an array, got " + v.dump());
  return v;
}

JsonReader JsonReader::child(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_object()) fail(key, "expected an object, got " + v.dump());
  return JsonReader(v, lines_, pointer_ + pointer_step(key), prefix_ + key + ".");
}

JsonReader JsonReader::element(const std::string& key, std::size_t i) const {
  const json& v = array(key).at(i);
  const std::string index = std::to_string(i);
  JsonReader r(v, lines_, pointer_ + pointer_step(key) + "/" + index,
               prefix_ + key + "[" + index + "].");
  if (!v.is_object()) r.fail("", "expected an object, got " + v.dump());
  return r;
}

JsonReader JsonReader::value(const std::string& key) const {
  return JsonReader(at(key), lines_, pointer_ + pointer_step(key), prefix_ + key + ".");
}

JsonReader JsonReader::item(std::size_t i) const {
  const std::string name = prefix_.empty() ? std::string() : prefix_.substr(0, prefix_.size() - 1);
  return JsonReader(j_.at(i), lines_, pointer_ + "/" + std::to_string(i),
                    name + "[" + std::to_string(i) + "].");
}

void JsonReader::expect_array(std::size_t n) const {
  if (!j_.is_array() || j_.size() != n)
    fail("", "expected an array of " + std::to_string(n) + ", got " + j_.dump());
}

double JsonReader::as_number(double lo, double hi, const std::string& what) const {
  return number_of(j_, "", lo, hi, what);
}

int JsonReader::as_integer(long long lo, long long hi) const {
  return integer_of(j_, "", lo, hi);
}

void JsonReader::only(std::initializer_list<std::string_view> known) const {
  for (const auto& [key, value] : j_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const std::string_view k : known) list.append(list.empty() ? "" : ", ").append(k);
    fail(key, "unknown key; valid here: " + list);
  }
}

void JsonReader::fail(const std::string& key, const std::string& message) const {
  // The object itself (key "") is named by its prefix without the trailing '.'.
  const std::string name = !key.empty()      ? prefix_ + key
                           : prefix_.empty() ? std::string()
                                             : prefix_.substr(0, prefix_.size() - 1);
  throw InputError(lines_.at(key.empty() ? pointer_ : pointer_ + pointer_step(key)), name, message);
}

}  // namespace cs::cal
