// `clustersim compare RUNS.yaml` on published training runs: per run the published and predicted
// iteration time and TFLOP/s per GPU, the error, and what the prediction spends beyond compute
// (pipeline bubble, TP waits, exposed DP all-reduce); then the median and worst |error| per role.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/step/published_runs.hpp"

namespace cs::cli {
namespace {

std::string percent(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100.0 * x);
  return text;
}

std::string render_text(const std::string& file, const std::vector<ComparedRunSet>& sets) {
  std::ostringstream out;
  char line[320];
  out << "# clustersim compare: " << file << ", " << sets.size()
      << (sets.size() == 1 ? " set" : " sets")
      << " of published training runs; time = the iteration; published time = the source's FLOPs "
         "/ (its TFLOP/s per GPU x GPUs)\n";
  for (const ComparedRunSet& c : sets) {
    const PublishedRunSet& s = *c.set;
    out << "\n## " << s.name << ": on " << c.cluster << ", seq " << s.seq << ", " << s.precision
        << ", " << s.optimizer << ", TP " << s.tp_impl
        << (s.activation_checkpointing ? ", activation checkpointing" : "") << ", pipelines "
        << s.schedule << (s.virtual_stages > 1 ? " x" + std::to_string(s.virtual_stages) : "")
        << "; FLOPs: " << s.flops << "\n";
    out << "#  source: " << s.source << "\n";
    std::snprintf(line, sizeof line,
                  "#%8s %4s %4s %6s %6s %5s %9s %9s %8s %8s %8s %8s %8s %8s  %s\n", "params B",
                  "TP", "PP", "GPUs", "batch", "micro", "pub s", "pred s", "error", "pub TF",
                  "pred TF", "bubble s", "TP s", "DP s", "role");
    out << line;
    for (const ComparedRun& r : c.runs) {
      const PublishedRun& p = *r.run;
      if (!r.skipped.empty()) {
        std::snprintf(line, sizeof line, " %8.1f %4d %4d %6d %6d %5d %9.2f %9s %8s %8.0f",
                      p.params_b, p.tp, p.pp, p.gpus, p.global_batch, r.micro_batches,
                      r.published_s, "-", "-", p.tflops_per_gpu);
        out << line << "  (" << p.role << "; not predicted: " << r.skipped << ")\n";
        continue;
      }
      std::snprintf(
          line, sizeof line,
          " %8.1f %4d %4d %6d %6d %5d %9.2f %9.2f %8s %8.0f %8.1f %8.2f %8.2f %8.2f  %s\n",
          p.params_b, p.tp, p.pp, p.gpus, p.global_batch, r.micro_batches, r.published_s,
          r.predicted_s, percent(r.error).c_str(), p.tflops_per_gpu, r.predicted_tflops, r.bubble_s,
          r.tp_exposed_s, r.dp_exposed_s, p.role.c_str());
      out << line;
    }
  }
  out << "\n# micro: micro-batches per data-parallel rank; bubble, TP, DP: the predicted pipeline "
         "bubble, TP waits and exposed data-parallel all-reduce of the iteration\n";
  out << "\n## summary: |predicted - published| / published, iteration time\n";
  for (const char* role : {"fit", "check"}) {
    std::vector<double> errors;
    const ComparedRun* worst = nullptr;
    for (const ComparedRunSet& c : sets) {
      for (const ComparedRun& r : c.runs) {
        if (r.run->role != role || !r.skipped.empty()) continue;
        errors.push_back(std::fabs(r.error));
        if (worst == nullptr || std::fabs(r.error) > std::fabs(worst->error)) worst = &r;
      }
    }
    if (errors.empty()) continue;
    std::sort(errors.begin(), errors.end());
    const std::size_t m = errors.size() / 2;
    const double median = errors.size() % 2 == 1 ? errors[m] : 0.5 * (errors[m - 1] + errors[m]);
    std::snprintf(line, sizeof line,
                  " %-6s %2zu runs: median %.1f%%, worst %s (%.1fB on %d GPUs)\n", role,
                  errors.size(), 100 * median, percent(worst->error).c_str(), worst->run->params_b,
                  worst->run->gpus);
    out << line;
  }
  return out.str();
}

std::string render_csv(const std::vector<ComparedRunSet>& sets) {
  std::ostringstream out;
  out << "set,role,params_b,tp,pp,gpus,global_batch,micro_batch,micro_batches,flops,published_s,"
         "published_tflops_per_gpu,predicted_s,predicted_tflops_per_gpu,error,bubble_s,"
         "tp_exposed_s,dp_exposed_s,skipped\n";
  char line[320];
  for (const ComparedRunSet& c : sets) {
    for (const ComparedRun& r : c.runs) {
      const PublishedRun& p = *r.run;
      std::snprintf(line, sizeof line, "%s,%s,%.1f,%d,%d,%d,%d,%d,%d,%.6e,%.4f,%.1f,",
                    c.set->name.c_str(), p.role.c_str(), p.params_b, p.tp, p.pp, p.gpus,
                    p.global_batch, p.micro_batch, r.micro_batches, r.flops, r.published_s,
                    p.tflops_per_gpu);
      out << line;
      if (r.skipped.empty()) {
        std::snprintf(line, sizeof line, "%.4f,%.2f,%.4f,%.4f,%.4f,%.4f,", r.predicted_s,
                      r.predicted_tflops, r.error, r.bubble_s, r.tp_exposed_s, r.dp_exposed_s);
        out << line << "\n";
      } else {
        out << ",,,,,,\"" << r.skipped << "\"\n";
      }
    }
  }
  return out.str();
}

nlohmann::json render_json(const std::vector<ComparedRunSet>& sets) {
  nlohmann::json out = nlohmann::json::array();
  for (const ComparedRunSet& c : sets) {
    nlohmann::json runs = nlohmann::json::array();
    for (const ComparedRun& r : c.runs) {
      const PublishedRun& p = *r.run;
      nlohmann::json row = {{"role", p.role},
                            {"params_b", p.params_b},
                            {"tp", p.tp},
                            {"pp", p.pp},
                            {"gpus", p.gpus},
                            {"global_batch", p.global_batch},
                            {"micro_batch", p.micro_batch},
                            {"micro_batches", r.micro_batches},
                            {"flops", r.flops},
                            {"published_s", r.published_s},
                            {"published_tflops_per_gpu", p.tflops_per_gpu}};
      if (r.skipped.empty()) {
        row["predicted_s"] = r.predicted_s;
        row["predicted_tflops_per_gpu"] = r.predicted_tflops;
        row["error"] = r.error;
        row["bubble_s"] = r.bubble_s;
        row["tp_exposed_s"] = r.tp_exposed_s;
        row["dp_exposed_s"] = r.dp_exposed_s;
      } else {
        row["skipped"] = r.skipped;
      }
      runs.push_back(row);
    }
    out.push_back({{"set", c.set->name},
                   {"source", c.set->source},
                   {"topology", c.cluster},
                   {"seq", c.set->seq},
                   {"tp_impl", c.set->tp_impl},
                   {"schedule", c.set->schedule},
                   {"runs", runs}});
  }
  return out;
}

}  // namespace

void run_compare_runs(const std::string& file, bool csv, bool json) {
  const std::vector<PublishedRunSet> sets = load_published_runs(file);
  const std::vector<ComparedRunSet> compared = predict_runs(sets);
  if (csv) {
    std::cout << render_csv(compared);
  } else if (json) {
    std::cout << render_json(compared).dump(2) << "\n";
  } else {
    std::cout << render_text(file, compared);
  }
}

}  // namespace cs::cli
