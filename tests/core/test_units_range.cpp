// The unit parsers at the edges of a double: a number that does not fit one, and a finite number
// whose unit takes it past the largest double, are UnitErrors that say so.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "core/units.hpp"

TEST_CASE("numbers past a double, before or after their unit, are refused") {
  using cs::UnitError;
  // Said "it must start with a number".
  CHECK_THROWS_WITH_AS(cs::units::parse_size_bytes("1e400"),
                       "'1e400' is too large or too small a size", UnitError);
  CHECK_THROWS_WITH_AS(cs::units::parse_time_s("1e-400s"),
                       "'1e-400s' is too large or too small a time", UnitError);
  // 1e308 is a double; 1e308 x 1e12 B/s is not. Was an infinite bandwidth.
  CHECK_THROWS_WITH_AS(cs::units::parse_bandwidth_Bps("1e308TB/s"),
                       "'1e308TB/s' is too large a bandwidth", UnitError);
  CHECK(cs::units::parse_bandwidth_Bps("1e296TB/s") == doctest::Approx(1e308));
}
