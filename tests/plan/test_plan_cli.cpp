// End-to-end: `clustersim plan` prints exactly its golden outputs (tests/golden/plan/, refreshed by
// tests/golden/plan/refresh.sh, whose cases these are; run from the repository root with relative
// paths, as a candidate that does not fit names its model file), the same bytes twice, a plot
// that is a PNG, and one-line refusals of bad flags with no output.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"
#include "support/version_stamp.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(CLUSTERSIM_SOURCE_DIR);
const std::string kAws =
    "-t topologies/aws-p4d.24xlarge.yaml -t topologies/aws-p5.48xlarge.yaml "
    "-t topologies/aws-g6e.48xlarge.yaml ";

cs::test::CommandResult plan(const std::string& args) {
  return cs::test::run_command("cd '" + kRoot.string() + "' && '" + std::string(CLUSTERSIM_BINARY) +
                               "' plan " + args + " 2>&1");
}

}  // namespace

TEST_CASE("clustersim plan matches its golden outputs") {
  struct Case {
    const char* golden;
    std::string args;
  };
  const Case cases[] = {
      {"gpt2-xl-aws-300b.txt",
       "-m models/gpt2-xl.yaml " + kAws + "--nodes 8,16,32 --tokens 300B --batch 1"},
      {"gpt2-xl-batch4-max-cost.csv",
       "-m models/gpt2-xl.yaml " + kAws +
           "-t topologies/dgx-h100-16node.yaml --nodes 4 --tokens 30B --max-cost 4000 --csv"},
      {"gpt2-dgx-price-global-batch.json",
       "-m models/gpt2.yaml -t topologies/dgx-h100-16node.yaml --price dgx-h100=40 --nodes 1,2 "
       "--global-batch 64 --samples 1M --json"},
      {"llama-3.1-8b-auto-1t.csv",
       "-m models/llama-3.1-8b.yaml -t topologies/aws-p5.48xlarge.yaml "
       "-t topologies/aws-p4d.24xlarge.yaml --nodes 4,16 --tokens 1T --global-batch 512 "
       "--strategy auto --csv"},
      // TP 8 x PP 4 as given: the global batch in micro-batches of --batch 1 per DP rank.
      {"llama-3.1-70b-tp8-pp4.txt",
       "-m models/llama-3.1-70b.yaml -t topologies/dgx-h100-2048node-superpod.yaml --nodes 64 "
       "--tokens 1T --global-batch 1024 --tp 8 --pp 4 --batch 1 --tp-impl megatron "
       "--activation-checkpointing --price dgx-h100=55.04"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.golden);
    const cs::test::CommandResult r = plan(c.args);
    CHECK(r.status == 0);
    CHECK(cs::test::unversioned(r.output) ==
          cs::test::read_text_file((kRoot / "tests/golden/plan" / c.golden).string()));
    CHECK(plan(c.args).output == r.output);  // the same input, the same bytes
  }
}

TEST_CASE("clustersim plan --plot draws a PNG, and nothing on a refusal") {
  const fs::path png = fs::temp_directory_path() / ("cs-plan-" + std::to_string(getpid()) + ".png");
  const cs::test::CommandResult r = plan("-m models/gpt2.yaml " + kAws +
                                         "--nodes 1,2 --steps 1000 --plot '" + png.string() + "'");
  CHECK(r.status == 0);
  const std::string image = cs::test::read_text_file(png.string());
  REQUIRE(image.size() > 8);
  CHECK(image.substr(1, 3) == "PNG");
  fs::remove(png);
  cs::test::check_bad_input(
      plan("-m models/gpt2.yaml " + kAws + "--steps 0 --plot '" + png.string() + "'"),
      "--steps: '0' must be at least 1");
  CHECK_FALSE(fs::exists(png));
}

TEST_CASE("clustersim plan refuses bad flags with one line and exit 2") {
  const std::string base = "-m models/gpt2.yaml -t topologies/aws-p5.48xlarge.yaml ";
  cs::test::check_bad_input(plan(base), "give exactly one of --samples, --tokens, --steps");
  cs::test::check_bad_input(plan(base + "--tokens 1B --steps 10"),
                            "give exactly one of --samples, --tokens, --steps");
  cs::test::check_bad_input(plan(base + "--tokens 0"), "--tokens: '0' must be at least 1");
  cs::test::check_bad_input(plan(base + "--tokens 3X"), "--tokens: '3X' is not a count");
  cs::test::check_bad_input(plan(base + "--steps 10 --price p5.48xlarge=cheap"),
                            "--price: 'p5.48xlarge=cheap' is not TEMPLATE=USD_PER_HOUR");
  cs::test::check_bad_input(plan(base + "--steps 10 --price p5.48xlarge=-3"),
                            "with a price above 0");
  cs::test::check_bad_input(plan(base + "--steps 10 --price p6=3"),
                            "--price: no candidate has a server template 'p6'; templates: "
                            "p5.48xlarge");
  cs::test::check_bad_input(plan(base + "--steps 10 --nodes 0"), "--nodes: '0' is not a server");
  cs::test::check_bad_input(plan(base + "--steps 10 --nodes 2,,4"), "--nodes: '' is not a server");
  cs::test::check_bad_input(plan(base + "--steps 10 --max-hours -1"),
                            "--max-hours: must be above 0");
  cs::test::check_bad_input(plan(base + "--steps 10 --plot out.txt"),
                            "'out.txt' is neither .png nor .svg");
  cs::test::check_bad_input(
      plan("-m models/gpt2.yaml -t topologies/dgx-h100.yaml --steps 10 --nodes 2"),
      "topologies/dgx-h100.yaml:38: key 'fabric': --nodes 2 needs a fabric generator");
}

TEST_CASE("clustersim plan shows the time of a topology without a price, its cost unknown") {
  // dgx-h100-2node.yaml has no price_per_hour: its candidate runs, so it gets steps and hours;
  // only the cost columns are unknown, and the row says why.
  const std::string args =
      "-m models/gpt2.yaml -t topologies/dgx-h100-2node.yaml --nodes 1 "
      "--steps 1000";
  const cs::test::CommandResult text = plan(args);
  REQUIRE(text.status == 0);
  CHECK(text.output.find(" unknown        -        - ") != std::string::npos);
  CHECK(text.output.find("(cost unknown: no price for server template 'dgx-h100'; give --price "
                         "dgx-h100=USD_PER_HOUR)") != std::string::npos);
  const cs::test::CommandResult json = plan(args + " --json");
  REQUIRE(json.status == 0);
  const nlohmann::json c = nlohmann::json::parse(json.output)["candidates"][0];
  CHECK_FALSE(c.contains("why_not"));
  CHECK_FALSE(c.contains("cost_usd"));
  CHECK(c["pareto"] == false);
  CHECK(c["cost_unknown"] ==
        "no price for server template 'dgx-h100'; give --price dgx-h100=USD_PER_HOUR");
  // 1,000 steps of the predicted step: hours = 1,000 x step_ms / 3.6e6.
  CHECK(c["steps"] == 1000);
  CHECK(c["hours"].get<double>() ==
        doctest::Approx(1000 * c["step_ms"].get<double>() / 3.6e6).epsilon(1e-12));
}
