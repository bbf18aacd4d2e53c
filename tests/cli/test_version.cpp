// `clustersim --version` and the JSON outputs name the clustersim that wrote them: the version of
// the top-level CMakeLists.txt's project(), the git commit the build was configured at (or
// "unknown") and the build type. Text headers do not (golden files and README examples compare
// them byte for byte). And every command's --help says which GPUs it runs on by default.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

cs::test::CommandResult run(const std::string& arguments) {
  return cs::test::run_command("cd '" + kRoot + "' && '" + std::string(CLUSTERSIM_BINARY) + "' " +
                               arguments + " 2>&1");
}

// "0.1" from `project(clustersim VERSION 0.1 ...)`.
std::string project_version() {
  const std::string cmake = cs::test::read_text_file(kRoot + "/CMakeLists.txt");
  std::smatch m;
  REQUIRE(std::regex_search(cmake, m, std::regex(R"(project\(clustersim VERSION ([0-9.]+))")));
  return m[1];
}

}  // namespace

TEST_CASE("clustersim --version names the version, the commit and the build type") {
  const cs::test::CommandResult r = run("--version");
  REQUIRE(r.status == 0);
  std::smatch m;
  REQUIRE(std::regex_match(
      r.output, m, std::regex(R"(clustersim (\S+) \(git ([0-9a-f]{12}|unknown), (\w+)\)\n)")));
  CHECK(m[1] == project_version());
  const std::string commit = m[2];
  // A commit of this checkout (HEAD may have moved since the build was configured), where git is.
  if (commit != "unknown" && run("command -v git").status == 0) {
    CHECK(cs::test::run_command("git -C '" + kRoot + "' cat-file -e " + commit + "^{commit} 2>&1")
              .status == 0);
  }
}

TEST_CASE("the JSON outputs carry the version --version prints") {
  const std::string version = run("--version").output;
  const std::string expected = version.substr(
      std::string("clustersim ").size(), version.size() - 1 - std::string("clustersim ").size());
  const std::string dgx = "-t topologies/dgx-h100.yaml ";
  const std::string runs[] = {
      "coll " + dgx + "-b 1M -e 1M --json", "scale -m models/gpt2.yaml " + dgx + "--gpus 1 --json",
      "plan -m models/gpt2.yaml -t topologies/aws-p5.48xlarge.yaml --steps 10 --json"};
  for (const std::string& args : runs) {
    CAPTURE(args);
    const cs::test::CommandResult r = run(args);
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.output)["clustersim_version"] == expected);
  }
  const fs::path json = cs::test::scratch_path("cs-version") += ".json";
  REQUIRE(run("validate -t topologies/h200-4gpu.yaml --data calibrate/data/h200x4 --json '" +
              json.string() + "'")
              .status == 0);
  CHECK(nlohmann::json::parse(cs::test::read_text_file(json.string()))["clustersim_version"] ==
        expected);
  REQUIRE(run("validate -t topologies/h200-4gpu.yaml --ddp calibrate/data/h200x2-r2-ddp --json '" +
              json.string() + "'")
              .status == 0);
  CHECK(nlohmann::json::parse(cs::test::read_text_file(json.string()))["clustersim_version"] ==
        expected);
  fs::remove(json);
}

TEST_CASE("every command that picks GPUs says in --help which it runs on by default") {
  // One rule: every GPU of the topology (or of each --nodes size), unless a flag picks fewer;
  // ddp alone keeps one GPU by default (its golden outputs and README example run that way).
  CHECK(run("--help").output.find(
            "Which GPUs: every command takes every GPU of the topology file, or of the cluster "
            "--nodes resizes it to, unless a flag picks fewer (coll -n, scale --gpus); except ddp, "
            "which runs on one GPU unless -n or --nodes says otherwise.") != std::string::npos);
  CHECK(run("coll --help")
            .output.find("(default: every rank of the topology, or of each --nodes "
                         "size)") != std::string::npos);
  CHECK(run("scale --help")
            .output.find("(default: powers of two up to every GPU), or every GPU "
                         "of each --nodes size") != std::string::npos);
  CHECK(run("plan --help")
            .output.find("each candidate runs on every GPU of the topology, or of "
                         "each --nodes size") != std::string::npos);
  CHECK(run("sweep --help").output.find("every point on every GPU of its cluster") !=
        std::string::npos);
  CHECK(run("ddp --help").output.find("(default 1; with --nodes, all)") != std::string::npos);
}
