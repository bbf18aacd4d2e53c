// Units of the simulator: time is an integer count of picoseconds, bytes and rates are doubles
// with their unit in the name. Text such as "400Gbps", "50GB/s" or "1.5us" becomes a number here
// and nowhere else.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace cs {

// Simulated time in picoseconds. One picosecond resolves a byte on a 1 TB/s link (1 ps/B), so
// rounding never reorders events that a faster link would order; int64 still spans 106 days.
using TimePs = std::int64_t;

inline constexpr TimePs kPsPerNs = 1'000;
inline constexpr TimePs kPsPerUs = 1'000'000;
inline constexpr TimePs kPsPerMs = 1'000'000'000;
inline constexpr TimePs kPsPerS = 1'000'000'000'000;
// Where simulated time ends: the largest TimePs, about 9.22e6 s (107 days).
inline constexpr double kEndOfTimeSeconds =
    static_cast<double>(std::numeric_limits<TimePs>::max()) / static_cast<double>(kPsPerS);

inline TimePs ps_from_seconds(double seconds) {
  return static_cast<TimePs>(std::llround(seconds * static_cast<double>(kPsPerS)));
}
inline constexpr double seconds_from_ps(TimePs t) {
  return static_cast<double>(t) / static_cast<double>(kPsPerS);
}
inline constexpr double us_from_ps(TimePs t) {
  return static_cast<double>(t) / static_cast<double>(kPsPerUs);
}

// Decimal prefixes as the hardware world uses them: 1 GB = 1e9 bytes, 1 Gbps = 1e9 bits/s.
inline constexpr double kGB = 1e9;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace cs

namespace cs::units {

// Each parser accepts a number followed by a unit (spaces allowed between them) and throws
// UnitError, whose message lists the units that would be valid.
// Bandwidth -> bytes per second: bps Kbps Mbps Gbps Tbps (bits), B/s KB/s MB/s GB/s TB/s,
// KiB/s MiB/s GiB/s (bytes).
double parse_bandwidth_Bps(std::string_view text);
// Time -> seconds: ps ns us ms s.
double parse_time_s(std::string_view text);
// Size -> bytes: B KB MB GB TB (decimal) KiB MiB GiB TiB (binary); a bare integer is bytes.
double parse_size_bytes(std::string_view text);
// Arithmetic rate -> FLOP/s: FLOPS GFLOPS TFLOPS PFLOPS (also written FLOP/s, TFLOP/s, ...).
double parse_flops(std::string_view text);

// A compact human rendering, e.g. "450 GB/s", "1.5 us", "80 GB", "1 GiB" for tables.
std::string format_bandwidth(double bytes_per_s);
std::string format_time(double seconds);
std::string format_size(double bytes);

}  // namespace cs::units
