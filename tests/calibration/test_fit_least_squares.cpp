// The relative least squares behind every fit, on systems small enough to solve by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "calibration/fit/fit_least_squares.hpp"

using cs::cal::fit_alpha_beta;
using cs::cal::fit_relative;
using cs::cal::FitRow;

TEST_CASE("an exact alpha-beta line is recovered with zero error") {
  // t = 5 us + x / (0.5 byte/us): x = 1, 10, 100 bytes -> 7, 25, 205 us.
  const auto fit = fit_alpha_beta({1, 10, 100}, {7, 25, 205});
  CHECK(fit.coef[0] == doctest::Approx(5.0));
  CHECK(fit.coef[1] == doctest::Approx(2.0));
  CHECK(fit.rms_rel_error == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(fit.points == 3);
}

TEST_CASE("a negative coefficient is clamped to zero and the rest refitted") {
  // t = 2 at x = 1 and t = 1 at x = 2: the unconstrained slope is negative, so the slope is fixed
  // at 0 and a constant c is fitted: minimize (c/2 - 1)^2 + (c/1 - 1)^2,
  // c = (1/2 + 1) / (1/4 + 1) = 1.2, with errors (1.2 - 2)/2 = -0.4 and (1.2 - 1)/1 = 0.2.
  const auto falling = fit_relative({{{1.0, 1.0}, 2.0}, {{1.0, 2.0}, 1.0}});
  CHECK(falling.coef[1] == 0.0);
  CHECK(falling.coef[0] == doctest::Approx(1.2));
  CHECK(falling.max_rel_error == doctest::Approx(0.4));
}

TEST_CASE("relative error weighs a small time as much as a large one") {
  // Two rows of the constant model: t = 10 and t = 1000. Relative least squares gives
  // c = (1/10 + 1/1000) / (1/100 + 1/1000000) = 0.101 / 0.010001 = 10.0990; an absolute fit
  // would give the mean 505.
  const auto fit = fit_relative({{{1.0}, 10.0}, {{1.0}, 1000.0}});
  CHECK(fit.coef[0] == doctest::Approx(0.101 / 0.010001));
}

TEST_CASE("the robust fit follows the majority past an outlier") {
  // Five points on t = 10 + x and one knee point 50% high: least squares is pulled towards the
  // outlier, the robust fit stays on the line the others agree on.
  std::vector<double> x = {0, 10, 100, 1000, 10000, 300};
  std::vector<double> t = {10, 20, 110, 1010, 10010, 310 * 1.5};
  const auto robust = fit_alpha_beta(x, t);
  CHECK(robust.coef[0] == doctest::Approx(10.0).epsilon(0.01));
  CHECK(robust.coef[1] == doctest::Approx(1.0).epsilon(0.01));
  std::vector<FitRow> rows;
  for (std::size_t i = 0; i < x.size(); ++i) rows.push_back({{1.0, x[i]}, t[i]});
  const auto plain = fit_relative(rows);
  CHECK(std::fabs(plain.coef[1] - 1.0) > std::fabs(robust.coef[1] - 1.0));
}

TEST_CASE("a regressor that repeats an earlier one is dropped, the others still fitted") {
  // One rank count: the hop-count column (always 1 here) equals the base's column. The line
  // t = 5 + x / 2 at x = 2, 20, 200 (t = 6, 15, 105) must still give the slope: the base takes
  // the 5 us, the repeated column 0, the bytes 0.5 us per unit.
  const auto fit = fit_relative({{{1.0, 1.0, 2.0}, 6.0},  //
                                 {{1.0, 1.0, 20.0}, 15.0},
                                 {{1.0, 1.0, 200.0}, 105.0}});
  CHECK(fit.coef[0] == doctest::Approx(5.0));
  CHECK(fit.coef[1] == 0.0);
  CHECK(fit.coef[2] == doctest::Approx(0.5));
  CHECK(fit.rms_rel_error == doctest::Approx(0.0).epsilon(1e-9));
}
