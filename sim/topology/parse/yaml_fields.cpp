// Strict typed access to a YAML map, declared in yaml_fields.hpp.
#include "topology/parse/yaml_fields.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "core/units.hpp"
#include "topology/parse/loader_names.hpp"

namespace cs::topo::yaml {
namespace {

const char* type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "empty";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Undefined:
      return "missing";
  }
  return "?";
}

}  // namespace

SourceLoc loc_of(const YAML::Node& node, const std::string& file, const SourceLoc& fallback) {
  if (!node.IsDefined()) return fallback;
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return fallback;
  return SourceLoc{file, mark.line + 1};
}

std::string scalar_text(const YAML::Node& node, const std::string& key, const SourceLoc& loc) {
  if (!node.IsScalar()) {
    throw InputError(loc, key, std::string("expected a single value, found ") + type_name(node));
  }
  return node.Scalar();
}

long long parse_integer(const std::string& text, const std::string& key, const SourceLoc& loc,
                        long long min, long long max) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && ptr == end && (value < min || value > max))) {
    throw InputError(loc, key,
                     "'" + text + "' is out of range; valid: an integer from " +
                         std::to_string(min) + " to " + std::to_string(max));
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    throw InputError(loc, key, "'" + text + "' is not an integer");
  }
  return value;
}

Fields::Fields(const YAML::Node& node, std::string what, const std::string& key,
               const std::string& file, const SourceLoc& where, std::vector<std::string> allowed)
    : map_(node), what_(std::move(what)), file_(file), loc_(loc_of(node, file, where)) {
  if (!node.IsMap()) {
    throw InputError(loc_, key,
                     what_ + " must be a map of keys to values, found " + type_name(node));
  }
  std::unordered_set<std::string> seen;
  for (const auto& entry : node) {
    const SourceLoc key_loc = loc_of(entry.first, file_, loc_);
    if (!entry.first.IsScalar()) {
      throw InputError(key_loc, key, "a key of " + what_ + " must be a plain name");
    }
    const std::string& name = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string valid;
      for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
      const std::string guess = names::closest(name, allowed);
      throw InputError(key_loc, name,
                       "unknown key in " + what_ +
                           (guess.empty() ? "." : "; did you mean '" + guess + "'?") +
                           " Valid keys: " + valid);
    }
    if (!seen.insert(name).second) {
      throw InputError(key_loc, name, "given twice in " + what_);
    }
  }
}

SourceLoc Fields::loc(const std::string& key) const {
  return loc_of(map_[key], file_, loc_);
}

bool Fields::has(const std::string& key) const {
  return map_[key].IsDefined();
}

YAML::Node Fields::node(const std::string& key) const {
  return map_[key];
}

void Fields::fail(const std::string& key, const std::string& message) const {
  throw InputError(has(key) ? loc(key) : loc_, key, message);
}

void Fields::forbid(std::initializer_list<std::string_view> keys, const std::string& context,
                    const std::string& valid) const {
  for (auto key : keys) {
    const std::string k(key);
    if (has(k)) fail(k, "does not apply to " + context + "; they take: " + valid);
  }
}

YAML::Node Fields::list(const std::string& key) const {
  const YAML::Node node = map_[key];
  if (!node.IsSequence()) fail(key, "must be a list of entries (lines starting with '-')");
  return node;
}

std::string Fields::text(const std::string& key) const {
  if (!has(key)) fail(key, "missing in " + what_);
  return scalar_text(map_[key], key, loc(key));
}

std::optional<std::string> Fields::optional_text(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return scalar_text(map_[key], key, loc(key));
}

long long Fields::integer(const std::string& key, long long min, long long max) const {
  return parse_integer(text(key), key, loc(key), min, max);
}

std::optional<long long> Fields::optional_integer(const std::string& key, long long min,
                                                  long long max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

std::optional<bool> Fields::optional_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string t = text(key);
  if (t == "true") return true;
  if (t == "false") return false;
  fail(key, "'" + t + "' is not true or false");
}

std::optional<double> Fields::optional_number(const std::string& key, double exclusive_min,
                                              double inclusive_max) const {
  if (!has(key)) return std::nullopt;
  const std::string t = text(key);
  double value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc() || ptr != t.data() + t.size() || t.empty() || !std::isfinite(value)) {
    fail(key, "'" + t + "' is not a number");
  }
  if (!(value > exclusive_min && value <= inclusive_max)) {
    char range[96];
    std::snprintf(range, sizeof range, "valid: greater than %g and at most %g", exclusive_min,
                  inclusive_max);
    fail(key, "'" + t + "' is out of range; " + range);
  }
  return value;
}

namespace {

template <typename Parse>
double parse_unit(const Fields& fields, const std::string& key, Parse parse) {
  const std::string t = fields.text(key);
  try {
    return parse(t);
  } catch (const UnitError& e) {
    fields.fail(key, e.what());
  }
}

}  // namespace

double Fields::bandwidth_Bps(const std::string& key) const {
  const double value = parse_unit(*this, key, units::parse_bandwidth_Bps);
  if (!(value > 0)) fail(key, "bandwidth must be positive, got '" + text(key) + "'");
  return value;
}

std::optional<double> Fields::optional_bandwidth_Bps(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return bandwidth_Bps(key);
}

std::optional<double> Fields::optional_latency_s(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const double value = parse_unit(*this, key, units::parse_time_s);
  if (value < 0) fail(key, "latency must not be negative, got '" + text(key) + "'");
  return value;
}

double Fields::flops(const std::string& key) const {
  const double value = parse_unit(*this, key, units::parse_flops);
  if (!(value > 0)) fail(key, "FLOP rate must be positive, got '" + text(key) + "'");
  return value;
}

double Fields::size_bytes(const std::string& key) const {
  const double value = parse_unit(*this, key, units::parse_size_bytes);
  if (!(value > 0)) fail(key, "size must be positive, got '" + text(key) + "'");
  return value;
}

}  // namespace cs::topo::yaml
