// Cross-machine validation: each run fitted whole, every other run of its GPU model predicted.
#include "calibration/validate/validate_cross.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "calibration/fit/fit.hpp"
#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/validate/validate.hpp"
#include "calibration/validate/validate_report.hpp"

namespace cs::cal {
namespace {

struct CrossPoint {
  Prediction p;
  std::string pair;  // "fitted -> predicted"
};

CrossRow row_of(const std::vector<const CrossPoint*>& points) {
  CrossRow row;
  const Prediction& first = points.front()->p;
  row.op = first.group;
  row.n_ranks = first.n_ranks;
  row.large = first.bytes >= kLargeBandBytes;
  std::vector<double> prior;
  std::vector<double> calibrated;
  std::set<std::string> pairs;
  double worst = -1;
  for (const CrossPoint* c : points) {
    pairs.insert(c->pair);
    prior.push_back(relative_error(c->p.prior_us, c->p.measured_us));
    calibrated.push_back(relative_error(c->p.calibrated_us, c->p.measured_us));
    row.prior_worst = std::max(row.prior_worst, std::fabs(prior.back()));
    if (std::fabs(calibrated.back()) > worst) {
      worst = std::fabs(calibrated.back());
      char b[160];
      std::snprintf(b, sizeof b, "%s, %d ranks, %.0f B", c->pair.c_str(), c->p.n_ranks, c->p.bytes);
      row.worst = b;
    }
  }
  row.calibrated_worst = std::max(worst, 0.0);
  row.pairs = static_cast<int>(pairs.size());
  row.points = static_cast<int>(points.size());
  row.prior_median = median_abs(prior);
  row.calibrated_median = median_abs(calibrated);
  return row;
}

const char* band_name(bool large) {
  return large ? ">= 1 MiB" : "< 1 MiB";
}

std::string ranks_text(int n_ranks) {
  return n_ranks == 0 ? "all" : std::to_string(n_ranks);
}

std::string text_line(const CrossRow& r, bool with_worst) {
  char b[512];
  std::snprintf(b, sizeof b, "  %-13s %-5s %-9s %5d %6d %9s %9s %9s %9s  %s\n", r.op.c_str(),
                ranks_text(r.n_ranks).c_str(), band_name(r.large), r.pairs, r.points,
                percent(r.prior_median).c_str(), percent(r.prior_worst).c_str(),
                percent(r.calibrated_median).c_str(), percent(r.calibrated_worst).c_str(),
                with_worst ? r.worst.c_str() : "");
  return trimmed(b);
}

std::string text_header(bool with_worst) {
  char b[256];
  std::snprintf(b, sizeof b, "  %-13s %-5s %-9s %5s %6s %9s %9s %9s %9s  %s\n", "what", "ranks",
                "band", "pairs", "points", "prior med", "worst", "calib med", "worst",
                with_worst ? "calibrated worst at (fitted -> predicted)" : "");
  return trimmed(b);
}

nlohmann::ordered_json row_json(const CrossRow& r) {
  nlohmann::ordered_json j;
  j["what"] = r.op;
  j["ranks"] = r.n_ranks;
  j["band"] = band_name(r.large);
  j["pairs"] = r.pairs;
  j["points"] = r.points;
  j["prior_median"] = r.prior_median;
  j["prior_worst"] = r.prior_worst;
  j["calibrated_median"] = r.calibrated_median;
  j["calibrated_worst"] = r.calibrated_worst;
  j["worst"] = r.worst;
  return j;
}

std::string csv_quoted(const std::string& text) {
  return "\"" + text + "\"";  // the worst-point text holds commas, never quotes
}

}  // namespace

CrossValidation cross_validate(const std::vector<NamedRun>& runs, const topo::Cluster& cluster,
                               NcclTiming timing) {
  CrossValidation v;
  v.topology = cluster.name;
  const topo::ClusterGraph graph(cluster);
  std::vector<std::optional<Calibration>> fits;
  for (const NamedRun& run : runs) {
    v.runs.push_back(run.name);
    const bool fittable = std::any_of(run.data.nccl.begin(), run.data.nccl.end(),
                                      [](const NcclPoint& p) { return p.n_ranks >= 2; });
    if (!fittable) {
      v.skipped.push_back(run.name + ": no NCCL records of two or more ranks to fit");
      fits.emplace_back();
      continue;
    }
    // Every point trains: the runs it predicts are the held-out data.
    fits.emplace_back(
        fit_calibration(run.data, Split{{}, SizeHoldout::none}, graph, run.name, cluster.name));
    fits.back()->timing = timing;
  }
  std::vector<CrossPoint> points;
  for (std::size_t a = 0; a < runs.size(); ++a) {
    if (!fits[a]) continue;
    for (std::size_t b = 0; b < runs.size(); ++b) {
      if (a == b) continue;
      const std::string pair = runs[a].name + " -> " + runs[b].name;
      if (runs[a].data.node.gpu_name != runs[b].data.node.gpu_name) {
        v.skipped.push_back(pair + ": other GPU model (" + runs[b].data.node.gpu_name + ")");
        continue;
      }
      const Validation predicted = validate(runs[b].data, cluster, *fits[a]);
      ++v.pairs;
      for (const Prediction& p : predicted.predictions) {
        if (p.kind != "nccl" || p.config != "default") continue;
        points.push_back({p, pair});
        if (p.nccl_choice.empty()) continue;
        ++v.choice_points;
        v.prior_choice_matches += p.prior_choice == p.nccl_choice;
        v.calibrated_choice_matches += p.calibrated_choice == p.nccl_choice;
      }
    }
  }
  std::map<std::tuple<std::string, int, bool>, std::vector<const CrossPoint*>> rows;
  std::map<std::tuple<std::string, bool>, std::vector<const CrossPoint*>> summary;
  for (const CrossPoint& c : points) {
    const bool large = c.p.bytes >= kLargeBandBytes;
    rows[{c.p.group, c.p.n_ranks, large}].push_back(&c);
    if (c.p.n_ranks >= 2) summary[{c.p.group, large}].push_back(&c);
  }
  for (const auto& [key, members] : rows) v.rows.push_back(row_of(members));
  for (const auto& [key, members] : summary) {
    CrossRow r = row_of(members);
    r.n_ranks = 0;
    v.summary.push_back(r);
  }
  return v;
}

std::string cross_validation_text(const CrossValidation& v, const std::string& timing_line) {
  std::string out =
      "# clustersim validate --cross: each run fitted on all its points predicts every other run "
      "of its GPU model\n";
  out += "# topology " + v.topology + "; " + timing_line + "\n# runs:";
  for (const std::string& r : v.runs) out += " " + r;
  out += "\n# " + std::to_string(v.pairs) + " ordered pairs fitted -> predicted";
  for (const std::string& s : v.skipped) out += "\n# skipped " + s;
  out +=
      "\n# |error| = |simulated - measured| / measured over every default-run point of the "
      "predicted run\n# (NCCL's own choice); prior: NCCL's priors, counted once per pair; "
      "calibrated: the fitted run's constants\n";
  char b[160];
  std::snprintf(
      b, sizeof b,
      "# algorithm, protocol and channels equal to NCCL's logged choice: prior %d/%d, calibrated "
      "%d/%d\n",
      v.prior_choice_matches, v.choice_points, v.calibrated_choice_matches, v.choice_points);
  out += b;
  out += "\nPer collective and size band, every rank count of two or more:\n" + text_header(false);
  for (const CrossRow& r : v.summary) out += text_line(r, false);
  out += "\nPer collective, rank count and size band:\n" + text_header(true);
  for (const CrossRow& r : v.rows) out += text_line(r, true);
  return out;
}

std::string cross_validation_csv(const CrossValidation& v) {
  std::string out =
      "table,what,ranks,band,pairs,points,prior_median,prior_worst,calibrated_median,"
      "calibrated_worst,worst\n";
  auto add = [&out](const char* table, const CrossRow& r) {
    char b[256];
    std::snprintf(b, sizeof b, "%s,%s,%d,%s,%d,%d,%.6g,%.6g,%.6g,%.6g,", table, r.op.c_str(),
                  r.n_ranks, band_name(r.large), r.pairs, r.points, r.prior_median, r.prior_worst,
                  r.calibrated_median, r.calibrated_worst);
    out += b + csv_quoted(r.worst) + "\n";
  };
  for (const CrossRow& r : v.summary) add("summary", r);
  for (const CrossRow& r : v.rows) add("rows", r);
  return out;
}

std::string cross_validation_json(const CrossValidation& v, const std::string& timing_line) {
  nlohmann::ordered_json j;
  j["topology"] = v.topology;
  j["timing"] = timing_line;
  j["runs"] = v.runs;
  j["pairs"] = v.pairs;
  j["skipped"] = v.skipped;
  j["choice_points"] = v.choice_points;
  j["prior_choice_matches"] = v.prior_choice_matches;
  j["calibrated_choice_matches"] = v.calibrated_choice_matches;
  j["summary"] = nlohmann::ordered_json::array();
  for (const CrossRow& r : v.summary) j["summary"].push_back(row_json(r));
  j["rows"] = nlohmann::ordered_json::array();
  for (const CrossRow& r : v.rows) j["rows"].push_back(row_json(r));
  return j.dump(2) + "\n";
}

}  // namespace cs::cal
