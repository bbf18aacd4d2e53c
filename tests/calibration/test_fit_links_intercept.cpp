// The copy fitter never writes a negative latency, which the calibration loader refuses
// (latencies are 0..1 s): points on a line through a negative intercept are fitted with the
// latency fixed at 0 and the bandwidth alone, and the result loads.
#include <doctest/doctest.h>

#include <string>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/fit/fit_links.hpp"
#include "core/error.hpp"
#include "support/calibration_data.hpp"

namespace {

using cs::cal::CopyDirection;
using cs::cal::CopyPoint;

// Pinned host-to-GPU copies on t = -10 us + bytes / (25 GB/s): 1 MB in 30 us, 2 MB in 70 us.
cs::cal::Measurements below_zero() {
  cs::cal::Measurements data;
  for (const auto& [bytes, time_us] : {std::pair{1e6, 30.0}, std::pair{2e6, 70.0}}) {
    CopyPoint c;
    c.direction = CopyDirection::h2d;
    c.memory = "pinned";
    c.dst = 0;
    c.bytes = bytes;
    c.time_us = time_us;
    data.copies.push_back(c);
  }
  return data;
}

// The h2d_pinned fit of those points, nothing held out.
cs::cal::CopyFit fitted() {
  cs::cal::Split split;
  split.sizes = cs::cal::SizeHoldout::none;
  const std::vector<cs::cal::CopyFit> fits = cs::cal::fit_copies(below_zero(), split);
  const cs::cal::CopyFit* f = cs::cal::find_copy_fit(fits, "h2d_pinned");
  REQUIRE(f != nullptr);
  return *f;
}

}  // namespace

TEST_CASE("copies on a line through a negative intercept: latency 0, the bandwidth refitted") {
  // Unconstrained, both points lie on the line: latency -10 us, 25 GB/s. With the latency fixed
  // at 0, t = c x bytes and the relative errors are e_i = c a_i - 1, a_i = bytes_i / t_i:
  // a_1 = 1e6 / 30, a_2 = 2e6 / 70 = (6/7) a_1. The robust fit (fit_least_squares.hpp) settles
  // where its weights 1 / max(|e_i|, 0.005) make sum w_i a_i e_i = 0. With e_1 small and e_2 < 0:
  // a_1 e_1 / 0.005 = a_2, so e_1 = 0.005 x 6/7 = 0.0042857 (under 0.005, as assumed) and
  // c = (1 + 0.0042857) / a_1 = 30.128571e-6 us per byte: 1 / c = 33.1911 GB/s.
  // Then e_2 = c a_2 - 1 = 0.860816 - 1 = -0.139184, the fit's worst error.
  const cs::cal::CopyFit f = fitted();
  CHECK(f.latency_us == 0.0);
  CHECK(f.bandwidth_GBps == doctest::Approx(1.0 / (1.0 + 0.005 * 6 / 7) / 30e-6 / 1e3));
  CHECK(f.bandwidth_GBps == doctest::Approx(33.1911).epsilon(1e-5));
  CHECK(f.max_rel_error == doctest::Approx(0.139184).epsilon(1e-5));
  CHECK(f.points == 2);
}

TEST_CASE("the clamped copy fit is a calibration file that loads, the negative one would not") {
  // A committed calibration with its h2d_pinned fit replaced, written and read back.
  cs::cal::Calibration c = cs::cal::parse_calibration(
      cs::test::read_calibration_data("h100x1/calibration.json"), "calibration.json");
  cs::cal::CopyFit* pinned = nullptr;
  for (cs::cal::CopyFit& f : c.copies) {
    if (f.path == "h2d_pinned") pinned = &f;
  }
  REQUIRE(pinned != nullptr);
  *pinned = fitted();
  const cs::cal::Calibration back =
      cs::cal::parse_calibration(cs::cal::calibration_json(c), "fitted.json");
  CHECK(cs::cal::find_copy_fit(back.copies, "h2d_pinned")->latency_us == 0.0);
  // The unconstrained line's -10 us is what the loader refuses.
  pinned->latency_us = -10;
  CHECK_THROWS_WITH_AS(cs::cal::parse_calibration(cs::cal::calibration_json(c), "fitted.json"),
                       doctest::Contains("latency_us"), cs::InputError);
}
