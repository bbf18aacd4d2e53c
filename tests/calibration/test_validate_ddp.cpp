// clustersim validate --ddp: the step-file reader on a made-up run, the error, overhead and summary
// arithmetic derived by hand, the renderings, and the end-to-end output on the 2 x H200 DDP runs
// against its golden file (tests/golden/validate/refresh.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/measurements/ddp_steps.hpp"
#include "calibration/validate/validate_ddp.hpp"
#include "calibration/validate/validate_ddp_report.hpp"
#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

using namespace cs::cal;
namespace fs = std::filesystem;

// A row of one run ("d", file "f", 2 GPUs) with its measured and predicted step.
DdpStepRow row(const char* variant, double measured_ms, double prior_ms) {
  DdpStepRow r;
  r.data = "d";
  r.file = "f";
  r.gpus = 2;
  r.variant = variant;
  r.measured_ms = measured_ms;
  r.prior_ms = prior_ms;
  return r;
}

// The "all GPUs" summary row `what` of `v`.
DdpSummaryRow summary_all(const DdpValidation& v, const std::string& what) {
  for (const DdpSummaryRow& s : v.summary)
    if (s.what == what && s.gpus == "all") return s;
  return DdpSummaryRow{};
}

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;
const std::string kToy = std::string(CLUSTERSIM_TEST_DATA) + "/ddp_steps/toy";

// The toy runs' rows with made-up predictions (ms):
//   toy-n1 (1 GPU):  plain measured 100, prior  90,   calibrated 105
//                    ddp25 measured 110, prior 121,   calibrated 110
//   toy-n2 (2 GPUs): plain measured 100, prior 100,   calibrated 100
//                    ddp25 measured 120, prior 126,   calibrated 120
//                    ddp100 measured 95, prior 104.5, calibrated  95
std::vector<DdpStepRow> toy_rows() {
  // In the reader's order: n1 plain, ddp25; n2 plain, ddp25, ddp100.
  const std::vector<double> prior = {90, 121, 100, 126, 104.5};
  const std::vector<double> calib = {105, 110, 100, 120, 95};
  std::vector<DdpStepRow> rows;
  std::size_t i = 0;
  for (const DdpStepFile& f : read_ddp_step_folder(kToy).steps) {
    for (const DdpVariant& v : f.variants) {
      DdpStepRow r = measured_row("toy", f, v);
      r.prior_ms = prior.at(i);
      r.calibrated_ms = calib.at(i);
      rows.push_back(r);
      ++i;
    }
  }
  return rows;
}

const DdpSummaryRow& summary_of(const DdpValidation& v, const std::string& what,
                                const std::string& gpus) {
  const auto at = std::find_if(v.summary.begin(), v.summary.end(), [&](const DdpSummaryRow& s) {
    return s.what == what && s.gpus == gpus;
  });
  REQUIRE(at != v.summary.end());
  return *at;
}

std::string binary() {
  return std::string("'") + CLUSTERSIM_BINARY + "'";
}

}  // namespace

TEST_CASE("the step reader keeps the step files of a folder, their variants in cap order") {
  const DdpStepFolder folder = read_ddp_step_folder(kToy);
  CHECK(folder.files.size() == 3);  // host_probe-n2.json is read, and is no step file
  REQUIRE(folder.steps.size() == 2);
  const DdpStepFile& n1 = folder.steps[0];
  CHECK(n1.model == "toy");
  CHECK(n1.world_size == 1);
  CHECK_FALSE(n1.seq);
  CHECK(n1.optimizer == "sgd");
  CHECK(n1.momentum == 0.9);
  CHECK(n1.nvls == false);
  const DdpStepFile& n2 = folder.steps[1];
  CHECK(n2.seq == 128);
  CHECK(n2.precision == "fp32");
  CHECK_FALSE(n2.momentum);
  CHECK_FALSE(n2.nvls);  // not recorded
  // JSON's key order is ddp100, ddp25, plain; the reader's is plain first, then by cap.
  REQUIRE(n2.variants.size() == 3);
  CHECK(n2.variants[0].name == "plain");
  CHECK(n2.variants[0].plain());
  CHECK(n2.variants[1].name == "ddp25");
  CHECK(n2.variants[1].bucket_cap_mb == 25);
  CHECK(n2.variants[2].name == "ddp100");
  CHECK(n2.variants[2].step_ms == 95);
}

TEST_CASE("errors, DDP overheads and the summary medians of the toy runs, derived by hand") {
  const DdpValidation v = validate_ddp_steps(toy_rows(), true);
  REQUIRE(v.rows.size() == 5);
  // Step errors, (predicted - measured) / measured:
  //   n1 plain  prior (90 - 100) / 100 = -0.10,    calibrated (105 - 100) / 100 = +0.05
  //   n1 ddp25  prior (121 - 110) / 110 = +0.10,   calibrated 0
  //   n2 plain  0 and 0; n2 ddp25 prior (126 - 120) / 120 = +0.05, calibrated 0
  //   n2 ddp100 prior (104.5 - 95) / 95 = +0.10,   calibrated 0
  CHECK(v.rows[0].prior_error == doctest::Approx(-0.10));
  CHECK(*v.rows[0].calibrated_error == doctest::Approx(0.05));
  CHECK(v.rows[1].prior_error == doctest::Approx(0.10));
  CHECK(v.rows[3].prior_error == doctest::Approx(0.05));
  CHECK(v.rows[4].prior_error == doctest::Approx(0.10));
  // Overheads, step(ddp) - step(plain) of the same run, errors over |measured overhead|:
  //   n1 ddp25  measured 110 - 100 = 10, prior 121 - 90 = 31: (31 - 10) / 10 = +2.1;
  //             calibrated 110 - 105 = 5: (5 - 10) / 10 = -0.5
  //   n2 ddp25  measured 20, prior 26: +0.3; calibrated 20: 0
  //   n2 ddp100 measured 95 - 100 = -5 (DDP measured faster), prior 4.5: (4.5 + 5) / 5 = +1.9;
  //             calibrated -5: 0
  CHECK_FALSE(v.rows[0].overhead);
  CHECK_FALSE(v.rows[2].overhead);
  REQUIRE(v.rows[1].overhead);
  CHECK(v.rows[1].overhead->measured_ms == doctest::Approx(10));
  CHECK(v.rows[1].overhead->prior_ms == doctest::Approx(31));
  CHECK(*v.rows[1].overhead->prior_error == doctest::Approx(2.1));
  CHECK(*v.rows[1].overhead->calibrated_error == doctest::Approx(-0.5));
  REQUIRE(v.rows[4].overhead);
  CHECK(v.rows[4].overhead->measured_ms == doctest::Approx(-5));
  CHECK(*v.rows[4].overhead->prior_error == doctest::Approx(1.9));
  CHECK(*v.rows[4].overhead->calibrated_error == doctest::Approx(0).epsilon(1e-12));
  CHECK(*v.rows[3].overhead->prior_error == doctest::Approx(0.3));
  // Summary, |error| over each group (a median of two is their mean):
  //   ddp step  1: {0.10} -> 0.10;  >=2: {0.05, 0.10} -> 0.075, worst 0.10;
  //             all: {0.05, 0.10, 0.10} -> 0.10; calibrated 0 throughout
  //   plain step all: prior {0.10, 0} -> 0.05, worst 0.10; calibrated {0.05, 0} -> 0.025
  //   ddp overhead >=2: prior {0.3, 1.9} -> 1.1, worst 1.9; all: {2.1, 0.3, 1.9} -> 1.9,
  //             worst 2.1; calibrated all {0.5, 0, 0} -> 0, worst 0.5
  CHECK(v.summary.size() == 9);
  CHECK(summary_of(v, "ddp step", "1").points == 1);
  CHECK(summary_of(v, "ddp step", "1").prior_median == doctest::Approx(0.10));
  CHECK(summary_of(v, "ddp step", ">=2").prior_median == doctest::Approx(0.075));
  CHECK(summary_of(v, "ddp step", ">=2").prior_worst == doctest::Approx(0.10));
  CHECK(summary_of(v, "ddp step", "all").points == 3);
  CHECK(summary_of(v, "ddp step", "all").prior_median == doctest::Approx(0.10));
  CHECK(*summary_of(v, "ddp step", "all").calibrated_worst == doctest::Approx(0).epsilon(1e-12));
  CHECK(summary_of(v, "plain step", "all").prior_median == doctest::Approx(0.05));
  CHECK(*summary_of(v, "plain step", "all").calibrated_median == doctest::Approx(0.025));
  CHECK(summary_of(v, "ddp overhead", ">=2").prior_median == doctest::Approx(1.1));
  CHECK(summary_of(v, "ddp overhead", ">=2").prior_worst == doctest::Approx(1.9));
  CHECK(summary_of(v, "ddp overhead", "all").prior_median == doctest::Approx(1.9));
  CHECK(summary_of(v, "ddp overhead", "all").prior_worst == doctest::Approx(2.1));
  CHECK(*summary_of(v, "ddp overhead", "all").calibrated_median ==
        doctest::Approx(0).epsilon(1e-12));
  CHECK(*summary_of(v, "ddp overhead", "all").calibrated_worst == doctest::Approx(0.5));
}

TEST_CASE("the toy runs' renderings: signed errors in the rows, |error| in the summary") {
  std::vector<DdpStepRow> rows = toy_rows();
  for (DdpStepRow& r : rows) r.calibrated_ms.reset();
  DdpValidation v = validate_ddp_steps(rows, false);
  v.data = {"toy"};
  v.topology = "two-gpus";
  v.nccl = "NVLS off";
  const std::string text = ddp_validation_text(v);
  CHECK(text.find("calibrated: none (no --calibration)") != std::string::npos);
  CHECK(text.find("  toy              4    2 ddp100      95.000   104.500   +10.0%     -5.000"
                  "     4.500  +190.0%\n") != std::string::npos);
  CHECK(text.find("  ddp overhead  >=2       2    110.0%    190.0%\n") != std::string::npos);
  CHECK(text.find("calib med") == std::string::npos);
  const std::string csv = ddp_validation_csv(v);
  CHECK(csv.find("toy,toy-n2.json,toy,4,2,ddp100,95.000000,104.500000,0.100000,,,-5.000000,"
                 "4.500000,1.900000,,,,0.000000,\n") != std::string::npos);
  // No peak measured in the toy runs: the memory columns hold the prediction alone (none here).
  CHECK(csv.find("toy,toy-n1.json,toy,4,1,plain,100.000000,90.000000,-0.100000,,,,,,,,,0.000000,"
                 "\n") != std::string::npos);
}

TEST_CASE("clustersim validate --ddp on the 2 x H200 DDP runs matches its golden output") {
  // Run from the source tree as the README's command is, so that --models' default finds models/.
  const std::string command = "cd '" + kRoot + "' && " + binary() +
                              " validate -t topologies/h200-4gpu.yaml --ddp "
                              "calibrate/data/h200x2-r2-ddp 2>&1";
  const cs::test::CommandResult first = cs::test::run_command(command);
  REQUIRE(first.status == 0);
  CHECK(first.output ==
        cs::test::read_text_file(kRoot + "/tests/golden/validate/ddp-h200x2-r2.txt"));
  CHECK(cs::test::run_command(command).output == first.output);  // the same bytes every run
}

TEST_CASE("validate --ddp with a calibration fills the calibrated columns of every row") {
  const fs::path csv = cs::test::scratch_path("clustersim-validate-ddp.csv");
  const std::string command =
      binary() + " validate -t '" + kRoot + "/topologies/h200-4gpu.yaml' --ddp '" + kRoot +
      "/calibrate/data/h200x2-r2-ddp' --models '" + kRoot + "/models' --calibration '" + kRoot +
      "/calibrate/data/h200x4-run5/calibration.json' --csv '" + csv.string() + "'";
  const cs::test::CommandResult r = cs::test::run_command(command);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("calibrated: calibration.json (h200x4-run5, fitted on gated records)") !=
        std::string::npos);
  std::istringstream lines(cs::test::read_text_file(csv.string()));
  fs::remove(csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line.find(",calibrated_ms,calibrated_error,") != std::string::npos);
  int rows = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    REQUIRE(fields.size() >= 11);
    CHECK(!fields[9].empty());   // calibrated_ms
    CHECK(!fields[10].empty());  // calibrated_error
    ++rows;
  }
  CHECK(rows == 48);  // 16 runs x 3 variants
}

TEST_CASE("validate --ddp refuses --data beside it and an output over a step file") {
  // A copy of the toy runs, so that a refusal that failed would write over nothing committed.
  const fs::path toy = cs::test::scratch_path("clustersim-validate-ddp-toy");
  fs::remove_all(toy);
  fs::copy(kToy, toy);
  const std::string base = binary() + " validate -t '" + kRoot + "/topologies/h200-4gpu.yaml'" +
                           " --ddp '" + toy.string() + "'";
  cs::test::check_bad_input(
      cs::test::run_command(base + " --data '" + kRoot + "/calibrate/data/h200x4' 2>&1"),
      "clustersim: error: give --ddp or --data / --cross, not both");
  cs::test::check_bad_input(cs::test::run_command(base + " --timing gated 2>&1"),
                            "--timing picks NCCL records; --ddp has none");
  const std::string step_file = (toy / "toy-n1.json").string();
  const std::string before = cs::test::read_text_file(step_file);
  cs::test::check_bad_input(cs::test::run_command(base + " --csv '" + step_file + "' 2>&1"),
                            "key '--csv': '" + step_file + "' is the --ddp file");
  CHECK(cs::test::read_text_file(step_file) == before);
  fs::remove_all(toy);
}

TEST_CASE("FSDP2 step files: their variants read as FSDP, their modifiers marked") {
  // A 2 x H200 run of calibrate/fsdp/fsdp_steps.py (schema clustersim-fsdp-steps/1).
  const DdpStepFolder folder =
      read_ddp_step_folder(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x2-r7-fsdp");
  const auto gpt2 = std::find_if(
      folder.steps.begin(), folder.steps.end(),
      [](const DdpStepFile& f) { return f.model == "gpt2" && f.batch == 8 && f.world_size == 2; });
  REQUIRE(gpt2 != folder.steps.end());
  std::vector<std::string> names;
  for (const DdpVariant& v : gpt2->variants) names.push_back(v.name);
  // Plain and DDP first, then FSDP's by name.
  CHECK(names ==
        std::vector<std::string>{"plain", "ddp25", "fsdp", "fsdp#2", "fsdp-ac", "fsdp-noreshard"});
  CHECK(gpt2->variants[0].plain());
  CHECK_FALSE(gpt2->variants[2].plain());
  CHECK(gpt2->variants[2].fsdp);
  CHECK(gpt2->variants[2].reshard_after_forward);
  CHECK(gpt2->variants[4].activation_checkpointing);  // fsdp-ac
  CHECK(gpt2->variants[4].grad_accum == 1);
  CHECK(gpt2->variants[4].modifiers() == "-ac");
  CHECK_FALSE(gpt2->variants[5].reshard_after_forward);
  // FSDP rows are summed apart from DDP's. One run: plain 9 ms (predicted 9); ddp25 10 ms
  // predicted 11 (+10 %, its overhead 2 against 1: +100 %); fsdp 20 ms predicted 24 (+20 %, its
  // overhead 15 against 11: +4 / 11).
  std::vector<DdpStepRow> rows = {row("plain", 9, 9), row("ddp25", 10, 11), row("fsdp", 20, 24)};
  rows[0].plain = true;
  rows[2].fsdp = true;
  const DdpValidation v = validate_ddp_steps(rows, false);
  const auto summary = [&v](const std::string& what) { return summary_all(v, what); };
  CHECK(summary("ddp step").points == 1);
  CHECK(summary("ddp step").prior_median == doctest::Approx(0.10));
  CHECK(summary("fsdp step").points == 1);
  CHECK(summary("fsdp step").prior_median == doctest::Approx(0.20));
  CHECK(summary("ddp overhead").prior_median == doctest::Approx(1.0));
  CHECK(summary("fsdp overhead").prior_median == doctest::Approx(4.0 / 11.0));
}

TEST_CASE("FSDP2 step files: -ac and -accumK on every base, each summed apart") {
  // The 2 x H200 run with accumulation and checkpointing (calibrate/data/h200x2-r8-accum).
  const DdpStepFolder folder =
      read_ddp_step_folder(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x2-r8-accum");
  const auto gpt2 =
      std::find_if(folder.steps.begin(), folder.steps.end(),
                   [](const DdpStepFile& f) { return f.model == "gpt2" && f.world_size == 2; });
  REQUIRE(gpt2 != folder.steps.end());
  std::map<std::string, DdpVariant> by_name;
  for (const DdpVariant& v : gpt2->variants) by_name[v.name] = v;
  REQUIRE(by_name.count("ddp25-accum4") == 1);
  CHECK(by_name["ddp25-accum4"].bucket_cap_mb == 25);
  CHECK(by_name["ddp25-accum4"].grad_accum == 4);
  CHECK_FALSE(by_name["ddp25-accum4"].activation_checkpointing);
  CHECK(by_name["plain-ac"].plain());
  CHECK(by_name["plain-ac"].activation_checkpointing);
  CHECK(by_name["fsdp-ac-accum4"].fsdp);
  CHECK(by_name["fsdp-ac-accum4"].modifiers() == "-ac-accum4");
  // Overheads pair variants with the same modifiers: ddp25-accum4 (30 ms, predicted 33) against
  // plain-accum4 (20, predicted 22): 10 against 11, +10 %; plain (5 ms) is not its plain step.
  // The accumulated steps are summed as "accum step" (+10 % and +10 %), not as ddp or plain
  // steps.
  std::vector<DdpStepRow> rows = {row("plain", 5, 5), row("plain-accum4", 20, 22),
                                  row("ddp25-accum4", 30, 33)};
  rows[0].plain = true;
  rows[1].plain = true;
  for (DdpStepRow& r : {std::ref(rows[1]), std::ref(rows[2])}) {
    r.modifiers = "-accum4";
    r.grad_accum = 4;
  }
  const DdpValidation v = validate_ddp_steps(rows, false);
  REQUIRE(v.rows[2].overhead);
  CHECK(v.rows[2].overhead->measured_ms == doctest::Approx(10));
  CHECK(v.rows[2].overhead->prior_error == doctest::Approx(0.1));
  const auto summary = [&v](const std::string& what) { return summary_all(v, what); };
  CHECK(summary("plain step").points == 1);
  CHECK(summary("ddp step").points == 0);
  CHECK(summary("accum step").points == 2);
  CHECK(summary("accum step").prior_median == doctest::Approx(0.1));
  CHECK(summary("ac step").points == 0);  // no checkpointed run: no group
  CHECK(summary("ddp overhead").points == 0);
}
