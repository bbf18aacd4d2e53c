// JSON text for Record: escaping, number formatting, object layout.
#include "record.hpp"

#include <cmath>
#include <cstdio>

namespace cs_cal {

Record& Record::put(std::string key, Scalar value) {
  for (auto& field : fields_) {
    if (field.first == key) {
      field.second = std::move(value);
      return *this;
    }
  }
  fields_.emplace_back(std::move(key), std::move(value));
  return *this;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

namespace {
std::string scalar_json(const Scalar& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return json_number(*d);
  if (const auto* s = std::get_if<std::string>(&value)) return json_string(*s);
  return std::get<bool>(value) ? "true" : "false";
}
}  // namespace

std::string to_json(const Record& record) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : record.fields()) {
    if (!first) out += ",";
    first = false;
    out += json_string(key) + ":" + scalar_json(value);
  }
  return out + "}";
}

}  // namespace cs_cal
