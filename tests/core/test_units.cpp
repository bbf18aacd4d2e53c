// The unit parsers of core/units.hpp: every unit family, spacing, and the errors that list what
// would be valid.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/units.hpp"

using namespace cs;
using namespace cs::units;

namespace {

// The message a parser throws for `text`, or "" when it parses.
template <typename Parse>
std::string error_of(Parse parse, const char* text) {
  try {
    parse(text);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("bandwidth: bits per second divide by 8, bytes per second do not") {
  // 400 Gb/s = 400e9 bits / 8 = 50e9 bytes per second.
  CHECK(parse_bandwidth_Bps("400Gbps") == doctest::Approx(50e9));
  CHECK(parse_bandwidth_Bps("400Gb/s") == doctest::Approx(50e9));
  CHECK(parse_bandwidth_Bps("100 Mbps") == doctest::Approx(12.5e6));
  CHECK(parse_bandwidth_Bps("8Kbps") == doctest::Approx(1e3));
  CHECK(parse_bandwidth_Bps("1.6Tbps") == doctest::Approx(200e9));
  CHECK(parse_bandwidth_Bps("8bps") == doctest::Approx(1.0));
  CHECK(parse_bandwidth_Bps("50GB/s") == doctest::Approx(50e9));
  CHECK(parse_bandwidth_Bps("3.35TB/s") == doctest::Approx(3.35e12));
  CHECK(parse_bandwidth_Bps("25 MB/s") == doctest::Approx(25e6));
  CHECK(parse_bandwidth_Bps("2KB/s") == doctest::Approx(2e3));
  CHECK(parse_bandwidth_Bps("7B/s") == doctest::Approx(7.0));
  // Binary prefixes: 1 GiB/s = 2^30 bytes per second.
  CHECK(parse_bandwidth_Bps("1GiB/s") == doctest::Approx(1073741824.0));
  CHECK(parse_bandwidth_Bps("1 MiB/s") == doctest::Approx(1048576.0));
  CHECK(parse_bandwidth_Bps("1KiB/s") == doctest::Approx(1024.0));
}

TEST_CASE("time: ps ns us ms s, with or without a space") {
  CHECK(parse_time_s("1.5us") == doctest::Approx(1.5e-6));
  CHECK(parse_time_s("1.5 us") == doctest::Approx(1.5e-6));
  CHECK(parse_time_s("300ns") == doctest::Approx(300e-9));
  CHECK(parse_time_s("20ps") == doctest::Approx(20e-12));
  CHECK(parse_time_s("2ms") == doctest::Approx(2e-3));
  CHECK(parse_time_s("3s") == doctest::Approx(3.0));
  // The loader turns seconds into picoseconds: 1.35 us = 1,350,000 ps exactly after rounding.
  CHECK(ps_from_seconds(parse_time_s("1.35us")) == 1'350'000);
}

TEST_CASE("size: decimal and binary prefixes, bare byte counts") {
  CHECK(parse_size_bytes("80GB") == doctest::Approx(80e9));
  CHECK(parse_size_bytes("141 GB") == doctest::Approx(141e9));
  CHECK(parse_size_bytes("1TB") == doctest::Approx(1e12));
  CHECK(parse_size_bytes("4MB") == doctest::Approx(4e6));
  CHECK(parse_size_bytes("3KB") == doctest::Approx(3e3));
  CHECK(parse_size_bytes("5B") == doctest::Approx(5.0));
  CHECK(parse_size_bytes("4MiB") == doctest::Approx(4.0 * 1048576));
  CHECK(parse_size_bytes("1GiB") == doctest::Approx(1073741824.0));
  CHECK(parse_size_bytes("2KiB") == doctest::Approx(2048.0));
  CHECK(parse_size_bytes("1TiB") == doctest::Approx(1099511627776.0));
  CHECK(parse_size_bytes("4096") == doctest::Approx(4096.0));
}

TEST_CASE("FLOP rates: TFLOPS and the FLOP/s spellings") {
  CHECK(parse_flops("989TFLOPS") == doctest::Approx(989e12));
  CHECK(parse_flops("989 TFLOP/s") == doctest::Approx(989e12));
  CHECK(parse_flops("19.5TFLOPS") == doctest::Approx(19.5e12));
  CHECK(parse_flops("2PFLOPS") == doctest::Approx(2e15));
  CHECK(parse_flops("500GFLOPS") == doctest::Approx(500e9));
  CHECK(parse_flops("7FLOPS") == doctest::Approx(7.0));
  CHECK(parse_flops("1.5PFLOP/s") == doctest::Approx(1.5e15));
}

TEST_CASE("a wrong or missing unit names the valid units") {
  const std::string bad_unit = error_of(parse_bandwidth_Bps, "400Gbit");
  CHECK(bad_unit.find("'400Gbit'") != std::string::npos);
  CHECK(bad_unit.find("Gbps") != std::string::npos);
  CHECK(bad_unit.find("GB/s") != std::string::npos);

  // A bandwidth without a unit is ambiguous (bits or bytes?) and is refused.
  CHECK(error_of(parse_bandwidth_Bps, "400").find("valid units") != std::string::npos);
  CHECK(error_of(parse_time_s, "5 minutes").find("ps ns us ms s") != std::string::npos);
  CHECK(error_of(parse_size_bytes, "80 GBs").find("KiB") != std::string::npos);
  CHECK(error_of(parse_flops, "989 TOPS").find("TFLOPS") != std::string::npos);
}

TEST_CASE("text that does not start with a number is refused") {
  CHECK(error_of(parse_bandwidth_Bps, "fast").find("must start with a number") !=
        std::string::npos);
  CHECK(error_of(parse_time_s, "").find("must start with a number") != std::string::npos);
  CHECK(error_of(parse_size_bytes, "GB").find("must start with a number") != std::string::npos);
  CHECK(error_of(parse_flops, "inf TFLOPS") != "");
}

TEST_CASE("formatting picks the largest unit that keeps the value at or above 1") {
  CHECK(format_bandwidth(450e9) == "450 GB/s");
  CHECK(format_bandwidth(63.015e9) == "63.02 GB/s");
  CHECK(format_time(1.5e-6) == "1.5 us");
  CHECK(format_size(80.0 * kGiB) == "80 GiB");
}
