// Parsing and printing of the unit strings declared in units.hpp.
#include "core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/error.hpp"

namespace cs::units {
namespace {

struct UnitFactor {
  std::string_view suffix;
  double factor;
};

// Splits "400 Gbps" into 400 and "Gbps"; throws when no number leads the text.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view what) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    throw UnitError("'" + std::string(text) + "' is too large or too small a " + std::string(what));
  }
  if (ec != std::errc() || ptr == begin) {
    throw UnitError("'" + std::string(text) + "' is not a " + std::string(what) +
                    ": it must start with a number");
  }
  std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    unit.remove_prefix(1);
  if (!std::isfinite(value)) {
    throw UnitError("'" + std::string(text) + "' is not a finite " + std::string(what));
  }
  return {value, unit};
}

template <std::size_t N>
double parse_with(std::string_view text, std::string_view what,
                  const std::array<UnitFactor, N>& table, std::string_view valid) {
  auto [value, unit] = split_number(text, what);
  for (const auto& entry : table) {
    if (unit != entry.suffix) continue;
    // 1e308TB/s is a finite number of a unit that overflows a double of base units.
    if (!std::isfinite(value * entry.factor)) {
      throw UnitError("'" + std::string(text) + "' is too large a " + std::string(what));
    }
    return value * entry.factor;
  }
  throw UnitError("'" + std::string(text) + "' is not a " + std::string(what) +
                  "; valid units: " + std::string(valid));
}

std::string printf_string(const char* format, double value, const char* unit) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value, unit);
  return buffer;
}

// Picks the largest unit that keeps the value at or above 1 and prints 4 significant digits.
template <std::size_t N>
std::string format_scaled(double value, const std::array<UnitFactor, N>& ascending) {
  const UnitFactor* chosen = &ascending.front();
  for (const auto& entry : ascending) {
    if (std::abs(value) >= entry.factor) chosen = &entry;
  }
  return printf_string("%.4g %s", value / chosen->factor, std::string(chosen->suffix).c_str());
}

}  // namespace

double parse_bandwidth_Bps(std::string_view text) {
  static constexpr std::array<UnitFactor, 17> kTable{{
      {"bps", 1.0 / 8},
      {"Kbps", 1e3 / 8},
      {"Mbps", 1e6 / 8},
      {"Gbps", 1e9 / 8},
      {"Tbps", 1e12 / 8},
      {"Gb/s", 1e9 / 8},
      {"Tb/s", 1e12 / 8},
      {"B/s", 1.0},
      {"KB/s", 1e3},
      {"MB/s", 1e6},
      {"GB/s", 1e9},
      {"TB/s", 1e12},
      {"KiB/s", 1024.0},
      {"MiB/s", 1048576.0},
      {"GiB/s", kGiB},
      {"Mb/s", 1e6 / 8},
      {"Kb/s", 1e3 / 8},
  }};
  return parse_with(text, "bandwidth", kTable,
                    "Kbps Mbps Gbps Tbps (bits/s), B/s KB/s MB/s GB/s TB/s KiB/s MiB/s GiB/s");
}

double parse_time_s(std::string_view text) {
  static constexpr std::array<UnitFactor, 5> kTable{{
      {"ps", 1e-12},
      {"ns", 1e-9},
      {"us", 1e-6},
      {"ms", 1e-3},
      {"s", 1.0},
  }};
  return parse_with(text, "time", kTable, "ps ns us ms s");
}

double parse_size_bytes(std::string_view text) {
  static constexpr std::array<UnitFactor, 10> kTable{{
      {"B", 1.0},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", kGiB},
      {"TiB", kGiB * 1024.0},
      {"", 1.0},
  }};
  return parse_with(text, "size", kTable, "B KB MB GB TB KiB MiB GiB TiB, or a bare byte count");
}

double parse_flops(std::string_view text) {
  static constexpr std::array<UnitFactor, 10> kTable{{
      {"FLOPS", 1.0},
      {"GFLOPS", 1e9},
      {"TFLOPS", 1e12},
      {"PFLOPS", 1e15},
      {"FLOP/s", 1.0},
      {"GFLOP/s", 1e9},
      {"TFLOP/s", 1e12},
      {"PFLOP/s", 1e15},
      {"TF", 1e12},
      {"GF", 1e9},
  }};
  return parse_with(text, "FLOP rate", kTable, "FLOPS GFLOPS TFLOPS PFLOPS (or FLOP/s forms)");
}

std::string format_bandwidth(double bytes_per_s) {
  static constexpr std::array<UnitFactor, 6> kUnits{{
      {"B/s", 1.0},
      {"KB/s", 1e3},
      {"MB/s", 1e6},
      {"GB/s", 1e9},
      {"TB/s", 1e12},
      {"PB/s", 1e15},
  }};
  return format_scaled(bytes_per_s, kUnits);
}

std::string format_time(double seconds) {
  static constexpr std::array<UnitFactor, 5> kUnits{{
      {"ps", 1e-12},
      {"ns", 1e-9},
      {"us", 1e-6},
      {"ms", 1e-3},
      {"s", 1.0},
  }};
  return format_scaled(seconds, kUnits);
}

std::string format_size(double bytes) {
  static constexpr std::array<UnitFactor, 5> kUnits{{
      {"B", 1.0},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", kGiB},
      {"TiB", kGiB * 1024.0},
  }};
  return format_scaled(bytes, kUnits);
}

}  // namespace cs::units
