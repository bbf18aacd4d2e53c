// Value readers of the model-file loader, declared in model_loader_parse.hpp.
#include "workload/model/model_loader_parse.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/units.hpp"

namespace cs::workload::loader {

double parse_number(const std::string& text, const std::string& key, const SourceLoc& loc,
                    Least least) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value)) {
    throw InputError(loc, key, "'" + text + "' is not a number");
  }
  const bool ok = least == Least::zero         ? value >= 0
                  : least == Least::above_zero ? value > 0
                                               : value >= 1;
  if (!ok) {
    const char* valid = least == Least::zero         ? "a number >= 0"
                        : least == Least::above_zero ? "a number > 0"
                                                     : "a number >= 1";
    throw InputError(loc, key, "'" + text + "' is out of range; valid: " + valid);
  }
  return value;
}

double number(const Fields& f, const std::string& key, Least least) {
  return parse_number(f.text(key), key, f.loc(key), least);
}

double size_bytes(const Fields& f, const std::string& key) {
  const std::string text = f.text(key);
  double value = 0;
  try {
    value = units::parse_size_bytes(text);
  } catch (const UnitError& e) {
    f.fail(key, e.what());
  }
  if (value < 0) f.fail(key, "size must not be negative, got '" + text + "'");
  return value;
}

bool boolean(const Fields& f, const std::string& key) {
  const std::string text = f.text(key);
  if (text == "true") return true;
  if (text == "false") return false;
  f.fail(key, "'" + text + "' is not a boolean; valid: true, false");
}

std::string name_text(const Fields& f, const std::string& key) {
  std::string text = f.text(key);
  if (text.empty()) f.fail(key, "must not be empty");
  return text;
}

Fields sub_map(const Fields& parent, const std::string& key, const std::string& what,
               std::vector<std::string> allowed) {
  if (!parent.has(key)) parent.fail(key, "missing in " + parent.what());
  return Fields(parent.node(key), what, key, parent.file(), parent.loc(key), std::move(allowed));
}

Scale default_scale(const ModelContext& ctx) {
  return Scale{1, ctx.has_seq ? 1.0 : 0.0};
}

Scale parse_scale(const Fields& f, const std::string& key, const ModelContext& ctx) {
  Scale scale = default_scale(ctx);
  if (!f.has(key)) return scale;
  const YAML::Node list = f.list(key);
  if (list.size() != 2) {
    f.fail(key, "must be [batch exponent, seq exponent]: 2 numbers, found " +
                    std::to_string(list.size()));
  }
  const auto exponent = [&](std::size_t i) {
    const SourceLoc loc = topo::yaml::loc_of(list[i], f.file(), f.loc(key));
    return parse_number(topo::yaml::scalar_text(list[i], key, loc), key, loc, Least::zero);
  };
  scale.batch = exponent(0);
  scale.seq = exponent(1);
  if (!ctx.has_seq && scale.seq != 0) {
    f.fail(key, "the seq exponent must be 0: the model has no sequence (settings has no seq)");
  }
  return scale;
}

std::string format_count(double value) {
  char buffer[64];
  if (value == std::floor(value) && std::abs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%g", value);
  }
  return buffer;
}

}  // namespace cs::workload::loader
