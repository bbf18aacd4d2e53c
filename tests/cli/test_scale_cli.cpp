// End-to-end: what `clustersim scale` says about counts it cannot run (issue 41: a --gpus list
// past the topology printed an empty table and exit 0).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(CLUSTERSIM_SOURCE_DIR);

// `clustersim scale` with gpt2 on the given topologies (file names under topologies/).
cs::test::CommandResult scale(const std::string& topologies, const std::string& args,
                              const std::string& redirect = " 2>&1") {
  std::string command = "'" + std::string(CLUSTERSIM_BINARY) + "' scale --model '" +
                        (kRoot / "models/gpt2.yaml").string() + "' ";
  std::string rest = topologies;
  for (std::size_t at = 0; at < rest.size();) {
    const std::size_t end = std::min(rest.find(' ', at), rest.size());
    command += "-t '" + (kRoot / "topologies" / rest.substr(at, end - at)).string() + "' ";
    at = end + 1;
  }
  return cs::test::run_command(command + args + redirect);
}

}  // namespace

TEST_CASE("clustersim scale refuses --gpus counts that no topology has, naming the flag") {
  // dgx-h100-2node.yaml is two servers of 8 GPUs: 16 GPUs, so 1,000 leaves nothing to print.
  cs::test::check_bad_input(scale("dgx-h100-2node.yaml", "--gpus 1000"),
                            "--gpus 1000: more GPUs than any topology has (dgx-h100-2node: 16); "
                            "give counts up to 16, or server counts with --nodes");
  cs::test::check_bad_input(scale("dgx-h100-2node.yaml dgx-h100.yaml", "--gpus 64,128 --json"),
                            "(dgx-h100-2node: 16, dgx-h100: 8); give counts up to 16");
}

TEST_CASE("clustersim scale says which --gpus counts a topology was too small for") {
  // 8 and 16 GPUs fit the 16-GPU file; 32 does not. The 8-GPU file takes 8 only.
  const std::string both = "dgx-h100-2node.yaml dgx-h100.yaml";
  const cs::test::CommandResult text = scale(both, "--gpus 8,16,32");
  REQUIRE(text.status == 0);
  CHECK(text.output.find("# dgx-h100-2node has 16 GPUs: skipped --gpus 32 (--nodes resizes") !=
        std::string::npos);
  CHECK(text.output.find("# dgx-h100 has 8 GPUs: skipped --gpus 16,32 (") != std::string::npos);
  // JSON: the three points, and the skipped counts as data.
  const cs::test::CommandResult json = scale(both, "--gpus 8,16,32 --json", "");
  REQUIRE(json.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.output);
  CHECK(doc["points"].size() == 3);
  REQUIRE(doc["skipped"].size() == 2);
  CHECK(doc["skipped"][0]["topology"] == "dgx-h100-2node");
  CHECK(doc["skipped"][0]["available_gpus"] == 16);
  CHECK(doc["skipped"][0]["gpus"] == nlohmann::json::array({32}));
  CHECK(doc["skipped"][1]["gpus"] == nlohmann::json::array({16, 32}));
  // CSV has no comment lines: the same words on standard error, the CSV clean on standard output.
  const cs::test::CommandResult csv = scale(both, "--gpus 8,16,32 --csv", " 2>/dev/null");
  REQUIRE(csv.status == 0);
  CHECK(csv.output.find("skipped") == std::string::npos);
  CHECK(std::count(csv.output.begin(), csv.output.end(), '\n') == 4);  // header + 3 points
  const cs::test::CommandResult csv_err = scale(both, "--gpus 8,16,32 --csv", " 2>&1 >/dev/null");
  CHECK(csv_err.output ==
        "clustersim scale: dgx-h100-2node has 16 GPUs: skipped --gpus 32 (--nodes resizes the "
        "file's cluster)\nclustersim scale: dgx-h100 has 8 GPUs: skipped --gpus 16,32 (--nodes "
        "resizes the file's cluster)\n");
}
