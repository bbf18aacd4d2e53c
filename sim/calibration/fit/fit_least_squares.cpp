// Normal equations of the relative-error least squares, solved by Gaussian elimination with
// partial pivoting (a handful of unknowns), inside an active-set loop for non-negativity.
#include "calibration/fit/fit_least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace cs::cal {
namespace {

// Solves A c = b in place for the unknowns marked free; returns false when singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& c) {
  const std::size_t n = b.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    if (!(std::fabs(a[pivot][col]) > 1e-300)) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (std::size_t k = col; k < n; ++k) a[r][k] -= f * a[col][k];
      b[r] -= f * b[col];
    }
  }
  c.assign(n, 0.0);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[i][k] * c[k];
    c[i] = s / a[i][i];
  }
  return true;
}

// What of column `col` of the symmetric matrix a the columns `kept` do not explain: the pivot
// a[col][col] - a[col][kept] x (a[kept][kept])^-1 x a[kept][col] of eliminating them first.
double schur_pivot(const std::vector<std::vector<double>>& a, const std::vector<std::size_t>& kept,
                   std::size_t col) {
  if (kept.empty()) return a[col][col];
  std::vector<std::vector<double>> akk(kept.size(), std::vector<double>(kept.size()));
  std::vector<double> akc(kept.size()), x;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    akc[i] = a[kept[i]][col];
    for (std::size_t j = 0; j < kept.size(); ++j) akk[i][j] = a[kept[i]][kept[j]];
  }
  if (!solve(akk, akc, x)) return 0.0;
  double explained = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) explained += akc[i] * x[i];
  return a[col][col] - explained;
}

// Least squares over the free unknowns only; the others are zero.
std::vector<double> fit_free(const std::vector<FitRow>& rows, const std::vector<bool>& free) {
  const std::size_t k = free.size();
  std::vector<std::size_t> idx;
  for (std::size_t j = 0; j < k; ++j) {
    if (free[j]) idx.push_back(j);
  }
  std::vector<double> coef(k, 0.0);
  if (idx.empty()) return coef;
  // Columns are scaled to unit size first: regressors span 1 (latency) to 1e9 (bytes).
  std::vector<double> scale(idx.size(), 0.0);
  for (const FitRow& row : rows) {
    for (std::size_t i = 0; i < idx.size(); ++i)
      scale[i] = std::max(scale[i], std::fabs(row.x[idx[i]] / row.t));
  }
  // A row of weight w enters as sqrt(w) * (its equation).
  for (double& s : scale) s = s > 0 ? s : 1.0;
  std::vector<std::vector<double>> a(idx.size(), std::vector<double>(idx.size(), 0.0));
  std::vector<double> b(idx.size(), 0.0);
  for (const FitRow& row : rows) {
    // Row of the scaled system: sum_j (x_j / t / s_j) c'_j = 1 - known / t.
    const double rhs = 1.0 - row.known / row.t;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      const double xi = row.x[idx[i]] / row.t / scale[i];
      b[i] += row.weight * xi * rhs;
      for (std::size_t j = 0; j < idx.size(); ++j)
        a[i][j] += row.weight * xi * row.x[idx[j]] / row.t / scale[j];
    }
  }
  // Collinear regressors (one rank count makes the latency's hop count a constant, like the
  // base's column): each unknown, in order, is kept only if its column adds something to the
  // ones kept before it, i.e. its normal-matrix pivot after eliminating them is not ~0.
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (a[i][i] > 0 && schur_pivot(a, kept, i) > 1e-9 * a[i][i]) kept.push_back(i);
  }
  std::vector<double> c(idx.size(), 0.0);
  if (!kept.empty()) {
    std::vector<std::vector<double>> ak(kept.size(), std::vector<double>(kept.size()));
    std::vector<double> bk(kept.size()), ck;
    for (std::size_t i = 0; i < kept.size(); ++i) {
      bk[i] = b[kept[i]];
      for (std::size_t j = 0; j < kept.size(); ++j) ak[i][j] = a[kept[i]][kept[j]];
    }
    if (solve(ak, bk, ck)) {
      for (std::size_t i = 0; i < kept.size(); ++i) c[kept[i]] = ck[i];
    }
  }
  for (std::size_t i = 0; i < idx.size(); ++i) coef[idx[i]] = c[i] / scale[i];
  return coef;
}

}  // namespace

LinearFit fit_relative(const std::vector<FitRow>& rows) {
  CS_ASSERT(!rows.empty(), "a fit needs at least one measured point");
  const std::size_t k = rows.front().x.size();
  std::vector<bool> free(k, false);
  for (const FitRow& row : rows) {
    CS_ASSERT(row.x.size() == k, "every row of a fit has the same regressors");
    CS_ASSERT(row.t > 0, "measured times are positive, got " + std::to_string(row.t));
    for (std::size_t j = 0; j < k; ++j) free[j] = free[j] || row.x[j] != 0.0;
  }
  std::vector<double> coef;
  while (true) {
    coef = fit_free(rows, free);
    std::size_t worst = k;
    for (std::size_t j = 0; j < k; ++j) {
      if (free[j] && coef[j] < 0 && (worst == k || coef[j] < coef[worst])) worst = j;
    }
    if (worst == k) break;
    free[worst] = false;
  }
  LinearFit fit;
  fit.coef = coef;
  fit.points = static_cast<int>(rows.size());
  double sum = 0;
  for (const FitRow& row : rows) {
    double p = row.known;
    for (std::size_t j = 0; j < k; ++j) p += coef[j] * row.x[j];
    const double e = relative_error(p, row.t);
    sum += e * e;
    fit.max_rel_error = std::max(fit.max_rel_error, std::fabs(e));
  }
  fit.rms_rel_error = std::sqrt(sum / static_cast<double>(rows.size()));
  return fit;
}

LinearFit fit_relative_robust(const std::vector<FitRow>& rows) {
  std::vector<FitRow> weighted = rows;
  LinearFit fit = fit_relative(weighted);
  for (int iteration = 0; iteration < 30; ++iteration) {
    for (FitRow& row : weighted) {
      double p = row.known;
      for (std::size_t j = 0; j < row.x.size(); ++j) p += fit.coef[j] * row.x[j];
      row.weight = 1.0 / std::max(std::fabs(relative_error(p, row.t)), 0.005);
    }
    fit = fit_relative(weighted);
  }
  // Quality figures of the final coefficients, every row counted alike.
  LinearFit out = fit;
  out.rms_rel_error = 0;
  out.max_rel_error = 0;
  double sum = 0;
  for (const FitRow& row : rows) {
    double p = row.known;
    for (std::size_t j = 0; j < row.x.size(); ++j) p += fit.coef[j] * row.x[j];
    const double e = relative_error(p, row.t);
    sum += e * e;
    out.max_rel_error = std::max(out.max_rel_error, std::fabs(e));
  }
  out.rms_rel_error = std::sqrt(sum / static_cast<double>(rows.size()));
  return out;
}

LinearFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& t) {
  CS_ASSERT(bytes.size() == t.size(), "one time per size");
  std::vector<FitRow> rows;
  for (std::size_t i = 0; i < bytes.size(); ++i) rows.push_back({{1.0, bytes[i]}, t[i]});
  return fit_relative_robust(rows);
}

double median_abs(std::vector<double> values) {
  if (values.empty()) return 0;
  for (double& v : values) v = std::fabs(v);
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace cs::cal
