// `clustersim compare SETS.yaml`: predicts published nccl-tests results (calibrate/published/) and
// prints, per set and point, the published and predicted times, the error and NCCL's choice here;
// then the median and worst absolute error per set and size band, and per role (fit / check).
// A file of training runs (sets with `runs`) goes to compare_runs.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "cli/input/published_sets.hpp"
#include "cli/step/published_runs.hpp"
#include "core/error.hpp"

namespace cs::cli {
namespace {

struct CompareArgs {
  std::string file;
  bool csv = false;
  bool json = false;
};

std::string algo_of(const coll::TunerChoice& c) {
  return c.p2p ? "P2P" : coll::to_string(c.estimate.algo);
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Band {
  const char* name;
  bool large;  // from 1 MiB up
};
constexpr Band kBands[] = {{"< 1 MiB", false}, {">= 1 MiB", true}};

bool in_band(const ComparedPoint& p, const Band& b) {
  return (p.published.bytes >= kBandBytes) == b.large;
}

// Median and worst |error| of the points in a band, with the worst point.
struct BandStats {
  int points = 0;
  double median_abs = NAN;
  const ComparedPoint* worst = nullptr;
};

BandStats band_stats(const std::vector<const ComparedPoint*>& points, const Band& b) {
  BandStats s;
  std::vector<double> abs_errors;
  for (const ComparedPoint* p : points) {
    if (!in_band(*p, b)) continue;
    ++s.points;
    abs_errors.push_back(std::fabs(p->error));
    if (s.worst == nullptr || std::fabs(p->error) > std::fabs(s.worst->error)) s.worst = p;
  }
  s.median_abs = median(abs_errors);
  return s;
}

std::vector<const ComparedPoint*> points_of(const ComparedSet& c) {
  std::vector<const ComparedPoint*> out;
  for (const ComparedPoint& p : c.points) out.push_back(&p);
  return out;
}

std::string percent(double x) {
  if (std::isnan(x)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * x);
  return text;
}

std::string render_text(const std::string& file, const std::vector<ComparedSet>& sets) {
  std::ostringstream out;
  char line[256];
  out << "# clustersim compare: " << file << ", " << sets.size()
      << " published sets; predicted = the GPUs' time of one call, flow fidelity, NCCL priors\n";
  for (const ComparedSet& c : sets) {
    const PublishedSet& s = *c.set;
    out << "\n## " << s.name << " (" << s.role << "): " << s.op << " on " << c.cluster << " x "
        << s.nodes << ", " << c.ranks << " ranks, " << (s.in_place ? "in place" : "out of place")
        << ", NVLS " << (s.nvls ? "on" : "off") << " in the run\n";
    out << "#  source: " << s.source << "\n";
    if (!c.unmodelled_env.empty()) {
      out << "#  set in the run, not modelled here:";
      for (const std::string& e : c.unmodelled_env) out << " " << e;
      out << "\n";
    }
    std::snprintf(line, sizeof line, "#%12s %12s %12s %8s  %-6s %-6s %8s\n", "size (B)",
                  "published", "predicted", "error", "algo", "proto", "channels");
    out << line;
    for (const ComparedPoint& p : c.points) {
      std::snprintf(line, sizeof line, " %12.0f %10.2f%s %12.2f %8s  %-6s %-6s %8d\n",
                    p.published.bytes, p.published.time_us,
                    p.published.busbw_GBps > 0 ? "*u" : "us", p.predicted_us,
                    percent(p.error).c_str(), algo_of(p.choice).c_str(),
                    coll::to_string(p.choice.estimate.proto), p.choice.n_channels);
      out << line;
    }
  }
  out << "\n# * the source printed busbw; its time is S x nccl-tests' busbw factor / busbw\n";
  out << "\n## summary: |predicted - published| / published\n";
  std::snprintf(line, sizeof line, "#%-30s %-6s %-9s %6s %8s %8s %14s\n", "set", "role", "band",
                "points", "median", "worst", "at size (B)");
  out << line;
  for (const ComparedSet& c : sets) {
    for (const Band& b : kBands) {
      const BandStats st = band_stats(points_of(c), b);
      if (st.points == 0) continue;
      std::snprintf(line, sizeof line, " %-30s %-6s %-9s %6d %8s %8s %14.0f\n", c.set->name.c_str(),
                    c.set->role.c_str(), b.name, st.points, percent(st.median_abs).c_str(),
                    percent(st.worst->error).c_str(), st.worst->published.bytes);
      out << line;
    }
  }
  for (const char* role : {"fit", "check"}) {
    std::vector<const ComparedPoint*> all;
    for (const ComparedSet& c : sets) {
      if (c.set->role != role) continue;
      for (const ComparedPoint& p : c.points) all.push_back(&p);
    }
    if (all.empty()) continue;
    for (const Band& b : kBands) {
      const BandStats st = band_stats(all, b);
      if (st.points == 0) continue;
      std::snprintf(line, sizeof line, " %-30s %-6s %-9s %6d %8s %8s %14.0f\n",
                    (std::string("all ") + role + " sets").c_str(), role, b.name, st.points,
                    percent(st.median_abs).c_str(), percent(st.worst->error).c_str(),
                    st.worst->published.bytes);
      out << line;
    }
  }
  return out.str();
}

std::string render_csv(const std::vector<ComparedSet>& sets) {
  std::ostringstream out;
  out << "set,role,op,topology,nodes,ranks,size,published_us,published_busbw_GBps,predicted_us,"
         "error,algo,proto,channels\n";
  char line[256];
  for (const ComparedSet& c : sets) {
    for (const ComparedPoint& p : c.points) {
      out << c.set->name << "," << c.set->role << "," << c.set->op << "," << c.cluster << ","
          << c.set->nodes << "," << c.ranks << ",";
      std::snprintf(line, sizeof line, "%.0f,%.3f,", p.published.bytes, p.published.time_us);
      out << line;
      if (p.published.busbw_GBps > 0) {
        std::snprintf(line, sizeof line, "%.3f", p.published.busbw_GBps);
        out << line;
      }
      std::snprintf(line, sizeof line, ",%.3f,%.4f,%s,%s,%d\n", p.predicted_us, p.error,
                    algo_of(p.choice).c_str(), coll::to_string(p.choice.estimate.proto),
                    p.choice.n_channels);
      out << line;
    }
  }
  return out.str();
}

nlohmann::json render_json(const std::vector<ComparedSet>& sets) {
  nlohmann::json out = nlohmann::json::array();
  for (const ComparedSet& c : sets) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ComparedPoint& p : c.points) {
      nlohmann::json row = {
          {"size_bytes", p.published.bytes}, {"published_us", p.published.time_us},
          {"predicted_us", p.predicted_us},  {"error", p.error},
          {"algo", algo_of(p.choice)},       {"proto", coll::to_string(p.choice.estimate.proto)},
          {"channels", p.choice.n_channels}};
      if (p.published.busbw_GBps > 0) row["published_busbw_GBps"] = p.published.busbw_GBps;
      rows.push_back(row);
    }
    out.push_back({{"set", c.set->name},
                   {"role", c.set->role},
                   {"source", c.set->source},
                   {"op", c.set->op},
                   {"topology", c.cluster},
                   {"nodes", c.set->nodes},
                   {"ranks", c.ranks},
                   {"in_place", c.set->in_place},
                   {"nvls", c.set->nvls},
                   {"unmodelled_env", c.unmodelled_env},
                   {"rows", rows}});
  }
  return out;
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Predict published nccl-tests results or training runs (calibrate/published/*.yaml) and "
      "report the error per set and size band, or per run");
  auto args = std::make_shared<CompareArgs>();
  cmd->add_option("sets", args->file, "Published sets file")->required();
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV, one row per point");
  auto* json = cmd->add_flag("--json", args->json, "Print JSON");
  csv->excludes(json);
  cmd->callback([args] {
    if (holds_training_runs(args->file)) {
      run_compare_runs(args->file, args->csv, args->json);
      return;
    }
    const std::vector<PublishedSet> sets = load_published_sets(args->file);
    const std::vector<ComparedSet> compared = predict_sets(sets);
    if (args->csv) {
      std::cout << render_csv(compared);
    } else if (args->json) {
      std::cout << render_json(compared).dump(2) << "\n";
    } else {
      std::cout << render_text(args->file, compared);
    }
  });
}

}  // namespace cs::cli
