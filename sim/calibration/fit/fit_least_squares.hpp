// Least squares in relative error, the fitter's one numerical tool: a measured time t is
// predicted as a known part plus a sum of known regressors times unknown non-negative coefficients,
// and the fit minimizes sum(((prediction - t) / t)^2), so a 10 us point weighs as much as a 10 ms
// one.
#pragma once

#include <vector>

namespace cs::cal {

// One measured time and the regressors that multiply the unknowns (same length for every row).
struct FitRow {
  std::vector<double> x;
  double t = 0;
  double weight = 1;  // of this row's squared relative error
  double known = 0;   // a part of the prediction not fitted: prediction = known + sum(coef x)
};

struct LinearFit {
  std::vector<double> coef;  // non-negative; a coefficient clamped to 0 stays 0
  double rms_rel_error = 0;  // sqrt(mean(((prediction - t) / t)^2))
  double max_rel_error = 0;  // worst |prediction - t| / t
  int points = 0;
};

// The non-negative least-squares solution (active set: the most negative coefficient is fixed at
// zero and the rest refitted, until none is negative). Unknowns a row never exercises stay 0.
// Needs at least one row; rows with t <= 0 are a bug in the caller.
LinearFit fit_relative(const std::vector<FitRow>& rows);

// The same coefficients fitted for the median rather than the mean: iteratively reweighted least
// squares towards the least absolute relative error (weights 1 / max(|error|, 0.5%)), so that a
// knee between the latency and the bandwidth regime, which no alpha-beta line follows, bends
// the fit less than it bends a least-squares fit. Reported errors are unweighted.
LinearFit fit_relative_robust(const std::vector<FitRow>& rows);

// The alpha-beta form t = latency + bytes / bandwidth over (bytes, t) pairs: coef[0] = latency,
// coef[1] = 1 / bandwidth, in the caller's units (e.g. us and bytes -> us per byte).
// Fitted robustly (fit_relative_robust).
LinearFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& t);

// Relative error of a prediction: (predicted - measured) / measured.
inline double relative_error(double predicted, double measured) {
  return (predicted - measured) / measured;
}

// Median of |values| (0 for none): a floor's time, a table row's typical error.
double median_abs(std::vector<double> values);

}  // namespace cs::cal
