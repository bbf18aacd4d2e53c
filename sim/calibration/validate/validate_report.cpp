// Text, CSV and JSON of the validation tables.
#include "calibration/validate/validate_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "calibration/calfile/host_floor.hpp"

namespace cs::cal {

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * fraction);
  return b;
}

std::string trimmed(const char* formatted) {
  std::string out = formatted;
  const std::size_t end = out.find_last_not_of(" \n");
  out.erase(end == std::string::npos ? 0 : end + 1);
  return out + "\n";
}

namespace {

std::string format_us(double us) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", us);
  return b;
}

std::string matches(int hits, int points) {
  if (points == 0) return "-";
  char b[48];
  std::snprintf(b, sizeof b, "%d/%d %.0f%%", hits, points, 100.0 * hits / points);
  return b;
}

std::string line(const ErrorRow& r, bool with_ranks) {
  char b[256];
  const std::string ranks = with_ranks ? std::to_string(r.n_ranks) : "all";
  std::snprintf(b, sizeof b, "  %-13s %-5s %-13s %6d %9s %9s %9s %9s  %-12s %-12s\n",
                r.group.c_str(), r.kind == "copy" ? "" : ranks.c_str(), r.config.c_str(), r.points,
                percent(r.prior_median).c_str(), percent(r.prior_worst).c_str(),
                percent(r.calibrated_median).c_str(), percent(r.calibrated_worst).c_str(),
                matches(r.prior_choice_matches, r.choice_points).c_str(),
                matches(r.calibrated_choice_matches, r.choice_points).c_str());
  return trimmed(b);
}

std::string header() {
  char b[256];
  std::snprintf(b, sizeof b, "  %-13s %-5s %-13s %6s %9s %9s %9s %9s  %-12s %-12s\n", "what",
                "ranks", "config", "points", "prior med", "worst", "calib med", "worst",
                "alg/proto/ch", "alg/proto/ch");
  std::string out = trimmed(b);
  std::snprintf(b, sizeof b, "  %-13s %-5s %-13s %6s %9s %9s %9s %9s  %-12s %-12s\n", "", "", "",
                "", "|error|", "|error|", "|error|", "|error|", "prior=NCCL", "calib=NCCL");
  return out + trimmed(b);
}

nlohmann::json row_json(const ErrorRow& r) {
  return {{"kind", r.kind},
          {"group", r.group},
          {"n_ranks", r.n_ranks},
          {"config", r.config},
          {"points", r.points},
          {"prior_median_abs_error", r.prior_median},
          {"prior_worst_abs_error", r.prior_worst},
          {"calibrated_median_abs_error", r.calibrated_median},
          {"calibrated_worst_abs_error", r.calibrated_worst},
          {"choice_points", r.choice_points},
          {"prior_choice_matches", r.prior_choice_matches},
          {"calibrated_choice_matches", r.calibrated_choice_matches}};
}

}  // namespace

std::string validation_text(const Validation& v, const std::string& calibration_name) {
  std::string out =
      "# clustersim validate: measurements of " + v.machine + " on topology " + v.topology + "\n";
  out +=
      "# prior: NCCL's priors on the topology as written; calibrated: " + calibration_name + "\n";
  out += "# " + v.split + "\n";
  if (!v.timing.empty()) out += "# " + v.timing + "\n";
  out += "# |error| = |simulated - measured| / measured over held-out points only\n";
  out +=
      "# host_paced records: max(host floor, simulated GPU time); calibrated, the calibration's\n"
      "# floor for the collective and rank count (the prior's where it fitted none); prior, the\n"
      "# measured prior floor (" +
      format_us(kPriorHostFloorOneRankUs) + " us at one rank, else " +
      format_us(kPriorHostFloorPerRankUs) + " us per rank: calfile/host_floor.hpp)\n";
  out +=
      "# algo/proto: the tuner's choice equal to the one NCCL logged; NCCL chooses with its\n"
      "# built-in model, so the calibrated run keeps the priors' choice and only its time "
      "changes\n\n";
  out += "NCCL as it chooses (default runs), per collective over every rank count:\n" + header();
  for (const ErrorRow& r : v.summary) {
    if (r.kind == "nccl") out += line(r, false);
  }
  out += "\nNCCL per collective, rank count and forced algorithm/protocol:\n" + header();
  for (const ErrorRow& r : v.rows) {
    if (r.kind == "nccl") out += line(r, true);
  }
  out += "\nCopies per path (all GPUs / pairs):\n" + header();
  for (const ErrorRow& r : v.rows) {
    if (r.kind == "copy") out += line(r, false);
  }
  return out;
}

std::string validation_csv(const Validation& v) {
  std::string out =
      "table,kind,what,ranks,config,points,prior_median,prior_worst,calibrated_median,"
      "calibrated_worst,choice_points,prior_choice_matches,calibrated_choice_matches\n";
  auto emit = [&](const char* table, const ErrorRow& r) {
    char b[512];
    std::snprintf(b, sizeof b, "%s,%s,%s,%d,%s,%d,%.6f,%.6f,%.6f,%.6f,%d,%d,%d\n", table,
                  r.kind.c_str(), r.group.c_str(), r.n_ranks, r.config.c_str(), r.points,
                  r.prior_median, r.prior_worst, r.calibrated_median, r.calibrated_worst,
                  r.choice_points, r.prior_choice_matches, r.calibrated_choice_matches);
    out += b;
  };
  for (const ErrorRow& r : v.summary) emit("summary", r);
  for (const ErrorRow& r : v.rows) emit("rows", r);
  return out;
}

std::string validation_json(const Validation& v, const std::string& calibration_name) {
  nlohmann::json j;
  j["machine"] = v.machine;
  j["topology"] = v.topology;
  j["calibration"] = calibration_name;
  j["split"] = v.split;
  j["timing"] = v.timing;
  j["summary"] = nlohmann::json::array();
  for (const ErrorRow& r : v.summary) j["summary"].push_back(row_json(r));
  j["rows"] = nlohmann::json::array();
  for (const ErrorRow& r : v.rows) j["rows"].push_back(row_json(r));
  j["predictions"] = nlohmann::json::array();
  for (const Prediction& p : v.predictions) {
    j["predictions"].push_back({{"kind", p.kind},
                                {"what", p.group},
                                {"n_ranks", p.n_ranks},
                                {"config", p.config},
                                {"bytes", p.bytes},
                                {"held_out", p.held_out},
                                {"measured_us", p.measured_us},
                                {"prior_us", p.prior_us},
                                {"calibrated_us", p.calibrated_us},
                                {"nccl_choice", p.nccl_choice},
                                {"prior_choice", p.prior_choice},
                                {"calibrated_choice", p.calibrated_choice}});
  }
  return j.dump(1) + "\n";
}

}  // namespace cs::cal
