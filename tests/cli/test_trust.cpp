// The "# trust:" line's figures are what validate --ddp and compare print over the committed
// runs: rerun both and compare, so that the statement cannot drift from its tables.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/step/trust.hpp"
#include "support/cli_run.hpp"

namespace {

using cs::cli::TrustFigure;

std::string run_in_source(const std::string& args) {
  const cs::test::CommandResult r = cs::test::run_command(
      "cd '" + std::string(CLUSTERSIM_SOURCE_DIR) + "' && '" + CLUSTERSIM_BINARY + "' " + args);
  REQUIRE(r.status == 0);
  return r.output;
}

// The summary row `what` / `gpus` of validate --ddp's JSON, as the text prints it (one decimal).
TrustFigure summary(const nlohmann::json& doc, const std::string& what, const std::string& gpus) {
  for (const nlohmann::json& s : doc["summary"]) {
    if (s["what"] == what && s["gpus"] == gpus) {
      return {std::round(1000 * s["prior_median_abs_error"].get<double>()) / 10,
              s["points"].get<int>()};
    }
  }
  FAIL("no summary row " << what << " " << gpus);
  return {};
}

void check(const TrustFigure& committed, const TrustFigure& printed, const char* what) {
  CAPTURE(what);
  CHECK(committed.median_percent == doctest::Approx(printed.median_percent));
  CHECK(committed.points == printed.points);
}

}  // namespace

TEST_CASE("trust: the header's figures are what validate --ddp and compare print now") {
  const cs::cli::TrustFigures& f = cs::cli::trust_figures();
  const std::string json = cs::test::scratch_path("cs-trust-validate").string() + ".json";
  run_in_source(std::string(cs::cli::kTrustValidateCommand) + " --json '" + json + "'");
  const nlohmann::json doc = nlohmann::json::parse(cs::test::read_text_file(json));
  std::filesystem::remove(json);
  check(f.ddp_one_gpu, summary(doc, "ddp step", "1"), "ddp step 1");
  check(f.ddp_several, summary(doc, "ddp step", ">=2"), "ddp step >=2");
  check(f.fsdp_one_gpu, summary(doc, "fsdp step", "1"), "fsdp step 1");
  check(f.fsdp_several, summary(doc, "fsdp step", ">=2"), "fsdp step >=2");
  check(f.ddp_memory, summary(doc, "ddp memory", "all"), "ddp memory");
  check(f.fsdp_memory, summary(doc, "fsdp memory", "all"), "fsdp memory");
  int most = 0;
  for (const nlohmann::json& r : doc["rows"]) most = std::max(most, r["gpus"].get<int>());
  CHECK(f.most_gpus_measured == most);

  // compare's last line: " all check sets  check  >= 1 MiB  POINTS  MEDIAN%  WORST% ...".
  std::istringstream lines(run_in_source(cs::cli::kTrustCompareCommand));
  TrustFigure collectives;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(" all check sets", 0) != 0 || line.find(">= 1 MiB") == std::string::npos)
      continue;
    std::istringstream fields(line.substr(line.find(">= 1 MiB") + 8));
    std::string median;
    fields >> collectives.points >> median;
    collectives.median_percent = std::stod(median);
  }
  check(f.collectives_across_servers, collectives, "compare >= 1 MiB");
}

TEST_CASE("trust: the line says what was checked for the step at hand") {
  // One GPU, DDP; 16 GPUs on 2 servers, FSDP: the across-servers caveat with the collectives'.
  const std::string one = cs::cli::trust_line(cs::workload::Strategy::ddp, 1, 1);
  CHECK(one.rfind("# trust: one-GPU DDP steps 1.9 % median error over 36 measured runs", 0) == 0);
  CHECK(one.find("across servers") == std::string::npos);
  const std::string many = cs::cli::trust_line(cs::workload::Strategy::fsdp, 16, 2);
  CHECK(many.find("FSDP steps within a server 4.3 % median error over 37 measured runs, on at "
                  "most 4 GPUs") != std::string::npos);
  CHECK(many.find("across servers never checked against a measured step (its collectives: "
                  "8.7 %") != std::string::npos);
}
