// The host index and the factor that carries host costs between two hosts.
#include <doctest/doctest.h>

#include "core/host_probe.hpp"

TEST_CASE("host index: the geometric mean of the six classes, the scale the ratio") {
  cs::HostProbe a;
  a.us = {4, 4, 4, 4, 4, 4};
  cs::HostProbe b;
  // Twice every class but one, which is 4x: (2^5 * 4)^(1/6) = 2^(7/6) = 2.2449 times a's.
  b.us = {8, 8, 8, 8, 8, 16};
  CHECK(a.index_us() == doctest::Approx(4.0));
  CHECK(b.index_us() == doctest::Approx(4.0 * 2.244924).epsilon(1e-6));
  CHECK(cs::host_scale(a, b) == doctest::Approx(2.244924).epsilon(1e-6));
  CHECK(cs::host_scale(b, a) == doctest::Approx(1 / 2.244924).epsilon(1e-6));
}
