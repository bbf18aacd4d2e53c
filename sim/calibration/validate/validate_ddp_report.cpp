// Text, CSV and JSON of `clustersim validate --ddp`.
#include "calibration/validate/validate_ddp_report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "calibration/validate/validate_report.hpp"

namespace cs::cal {
namespace {

std::string fixed(const char* format, double value) {
  char b[48];
  std::snprintf(b, sizeof b, format, value);
  return b;
}

std::string ms(const std::optional<double>& v) {
  return v ? fixed("%.3f", *v) : "-";
}

std::string signed_percent(const std::optional<double>& v) {
  return v ? fixed("%+.1f%%", 100.0 * *v) : "-";
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// One line of a table: each cell right-aligned to its width, or left-aligned where the width is
// negative, cells one space apart, two spaces in, no trailing spaces.
std::string table_line(const std::vector<std::pair<int, std::string>>& cells) {
  std::string out = " ";
  for (const auto& [width, text] : cells) {
    char b[96];
    std::snprintf(b, sizeof b, " %*s", width, text.c_str());
    out += b;
  }
  return trimmed(out.c_str());
}

std::string step_header(bool calibrated, int variant_width) {
  std::vector<std::pair<int, std::string>> c = {
      {-12, "model"},  {5, "batch"}, {4, "gpus"}, {-variant_width, "variant"},
      {9, "measured"}, {9, "prior"}, {8, "error"}};
  if (calibrated) c.insert(c.end(), {{9, "calib"}, {8, "error"}});
  c.insert(c.end(), {{10, "ovh meas"}, {9, "ovh prior"}, {8, "error"}});
  if (calibrated) c.insert(c.end(), {{9, "ovh calib"}, {8, "error"}});
  return table_line(c);
}

std::string step_line(const DdpStepRow& r, bool calibrated, int variant_width) {
  std::vector<std::pair<int, std::string>> c = {{-12, r.model},
                                                {5, std::to_string(r.batch)},
                                                {4, std::to_string(r.gpus)},
                                                {-variant_width, r.variant},
                                                {9, ms(r.measured_ms)},
                                                {9, ms(r.prior_ms)},
                                                {8, signed_percent(r.prior_error)}};
  if (calibrated)
    c.insert(c.end(), {{9, ms(r.calibrated_ms)}, {8, signed_percent(r.calibrated_error)}});
  const DdpOverhead none{};
  const DdpOverhead& o = r.overhead ? *r.overhead : none;
  const auto when = [&r](double v) { return r.overhead ? std::optional<double>(v) : std::nullopt; };
  c.insert(c.end(), {{10, ms(when(o.measured_ms))},
                     {9, ms(when(o.prior_ms))},
                     {8, signed_percent(o.prior_error)}});
  if (calibrated)
    c.insert(c.end(), {{9, ms(o.calibrated_ms)}, {8, signed_percent(o.calibrated_error)}});
  return table_line(c);
}

std::string memory_line(const DdpStepRow& r, int variant_width) {
  return table_line({{-12, r.model},
                     {5, std::to_string(r.batch)},
                     {4, std::to_string(r.gpus)},
                     {-variant_width, r.variant},
                     {9, fixed("%.2f", *r.measured_peak_bytes / (1024.0 * 1024.0 * 1024.0))},
                     {9, fixed("%.2f", r.predicted_peak_bytes / (1024.0 * 1024.0 * 1024.0))},
                     {8, signed_percent(r.memory_error)}});
}

std::string percent_or_dash(const std::optional<double>& v, int points) {
  return v && points > 0 ? percent(*v) : "-";
}

std::string summary_lines(const DdpValidation& v) {
  std::vector<std::pair<int, std::string>> head = {
      {-13, "what"}, {-4, "gpus"}, {6, "points"}, {9, "prior med"}, {9, "worst"}};
  std::vector<std::pair<int, std::string>> unit = {
      {-13, ""}, {-4, ""}, {6, ""}, {9, "|error|"}, {9, "|error|"}};
  if (v.calibrated()) {
    head.insert(head.end(), {{9, "calib med"}, {9, "worst"}});
    unit.insert(unit.end(), {{9, "|error|"}, {9, "|error|"}});
  }
  std::string out = table_line(head) + table_line(unit);
  for (const DdpSummaryRow& s : v.summary) {
    std::vector<std::pair<int, std::string>> c = {{-13, s.what},
                                                  {-4, s.gpus},
                                                  {6, std::to_string(s.points)},
                                                  {9, percent_or_dash(s.prior_median, s.points)},
                                                  {9, percent_or_dash(s.prior_worst, s.points)}};
    if (v.calibrated())
      c.insert(c.end(), {{9, percent_or_dash(s.calibrated_median, s.points)},
                         {9, percent_or_dash(s.calibrated_worst, s.points)}});
    out += table_line(c);
  }
  return out;
}

nlohmann::json or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string csv_field(const std::optional<double>& v) {
  return v ? fixed("%.6f", *v) : "";
}

}  // namespace

std::string ddp_validation_text(const DdpValidation& v) {
  std::string names;
  for (const std::string& d : v.data) names += (names.empty() ? "" : ", ") + d;
  std::string out = "# clustersim validate --ddp: measured DDP steps of " + names +
                    " on topology " + v.topology + "\n";
  out += "# prior: the model files' layer times and NCCL's priors; calibrated: " +
         (v.calibrated() ? v.calibration : std::string("none (no --calibration)")) + "\n";
  out += "# NCCL: " + v.nccl + "; ranks 0..N-1 of the topology\n";
  out += "# host: " + v.host + "\n";
  out +=
      "# measured: step_ms_median, the median over steps of the slowest rank's step "
      "(calibrate/ddp/ddp_steps.py);\n"
      "# plain: no DDP wrapper; ddp<cap>: DDP with a <cap> MiB bucket cap\n"
      "# error = (predicted - measured) / measured; ovh: the DDP overhead, step(ddp<cap>) - "
      "step(plain)\n"
      "# of the same run, its error = (predicted - measured) / |measured overhead|\n";
  std::vector<std::string> sections;  // one per name: folders of one name share a table
  for (const std::string& data : v.data) {
    if (std::find(sections.begin(), sections.end(), data) != sections.end()) continue;
    sections.push_back(data);
    // The variant column: as wide as its longest name (8 for plain and ddp<cap>).
    int width = 8;
    for (const DdpStepRow& r : v.rows) width = std::max(width, static_cast<int>(r.variant.size()));
    out += "\nSteps of " + data + ", ms:\n" + step_header(v.calibrated(), width);
    for (const DdpStepRow& r : v.rows) {
      if (r.data == data) out += step_line(r, v.calibrated(), width);
    }
    if (std::none_of(v.rows.begin(), v.rows.end(), [&data](const DdpStepRow& r) {
          return r.data == data && r.measured_peak_bytes;
        }))
      continue;
    out += "\nPeak memory of " + data +
           ", GiB (measured: the largest rank's max_memory_allocated; predicted: the memory "
           "check's peak less what lies outside PyTorch's allocator):\n" +
           table_line({{-12, "model"},
                       {5, "batch"},
                       {4, "gpus"},
                       {-width, "variant"},
                       {9, "measured"},
                       {9, "predicted"},
                       {8, "error"}});
    for (const DdpStepRow& r : v.rows) {
      if (r.data == data && r.measured_peak_bytes) out += memory_line(r, width);
    }
  }
  out +=
      "\nSummary over the runs, per GPU count (ddp step: every ddp<cap> row):\n" + summary_lines(v);
  return out;
}

std::string ddp_validation_csv(const DdpValidation& v) {
  std::string out =
      "data,file,model,batch,gpus,variant,measured_ms,prior_ms,prior_error,calibrated_ms,"
      "calibrated_error,measured_overhead_ms,prior_overhead_ms,prior_overhead_error,"
      "calibrated_overhead_ms,calibrated_overhead_error,measured_peak_bytes,predicted_peak_bytes,"
      "memory_error\n";
  for (const DdpStepRow& r : v.rows) {
    const auto when = [&r](double x) {
      return r.overhead ? std::optional<double>(x) : std::nullopt;
    };
    const DdpOverhead none{};
    const DdpOverhead& o = r.overhead ? *r.overhead : none;
    out += r.data + "," + file_name(r.file) + "," + r.model + "," + std::to_string(r.batch) + "," +
           std::to_string(r.gpus) + "," + r.variant + "," + csv_field(r.measured_ms) + "," +
           csv_field(r.prior_ms) + "," + csv_field(r.prior_error) + "," +
           csv_field(r.calibrated_ms) + "," + csv_field(r.calibrated_error) + "," +
           csv_field(when(o.measured_ms)) + "," + csv_field(when(o.prior_ms)) + "," +
           csv_field(o.prior_error) + "," + csv_field(o.calibrated_ms) + "," +
           csv_field(o.calibrated_error) + "," + csv_field(r.measured_peak_bytes) + "," +
           csv_field(r.predicted_peak_bytes) + "," + csv_field(r.memory_error) + "\n";
  }
  return out;
}

std::string ddp_validation_json(const DdpValidation& v) {
  nlohmann::json j;
  j["data"] = v.data;
  j["topology"] = v.topology;
  j["calibration"] = v.calibrated() ? nlohmann::json(v.calibration) : nlohmann::json(nullptr);
  j["nccl"] = v.nccl;
  j["host"] = v.host;
  j["summary"] = nlohmann::json::array();
  for (const DdpSummaryRow& s : v.summary) {
    const bool any = s.points > 0;
    j["summary"].push_back(
        {{"what", s.what},
         {"gpus", s.gpus},
         {"points", s.points},
         {"prior_median_abs_error", any ? nlohmann::json(s.prior_median) : nullptr},
         {"prior_worst_abs_error", any ? nlohmann::json(s.prior_worst) : nullptr},
         {"calibrated_median_abs_error", or_null(s.calibrated_median)},
         {"calibrated_worst_abs_error", or_null(s.calibrated_worst)}});
  }
  j["rows"] = nlohmann::json::array();
  for (const DdpStepRow& r : v.rows) {
    nlohmann::json overhead = nullptr;
    if (r.overhead) {
      const DdpOverhead& o = *r.overhead;
      overhead = {{"measured_ms", o.measured_ms},
                  {"prior_ms", o.prior_ms},
                  {"prior_error", or_null(o.prior_error)},
                  {"calibrated_ms", or_null(o.calibrated_ms)},
                  {"calibrated_error", or_null(o.calibrated_error)}};
    }
    j["rows"].push_back({{"data", r.data},
                         {"file", file_name(r.file)},
                         {"model", r.model},
                         {"batch", r.batch},
                         {"gpus", r.gpus},
                         {"variant", r.variant},
                         {"measured_ms", r.measured_ms},
                         {"prior_ms", r.prior_ms},
                         {"prior_error", r.prior_error},
                         {"calibrated_ms", or_null(r.calibrated_ms)},
                         {"calibrated_error", or_null(r.calibrated_error)},
                         {"overhead", overhead},
                         {"measured_peak_bytes", or_null(r.measured_peak_bytes)},
                         {"predicted_peak_bytes", r.predicted_peak_bytes},
                         {"memory_error", or_null(r.memory_error)}});
  }
  return j.dump(1) + "\n";
}

}  // namespace cs::cal
