// End-to-end: `clustersim topo` on every shipped topology must print exactly its golden output
// (tests/golden/topo/<name>.txt and .json; tests/golden/refresh.sh regenerates them), and a few
// figures the issue names are checked outright in the golden text.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

using cs::test::CommandResult;
using cs::test::read_text_file;
using cs::test::run_command;

std::string topo_output(const fs::path& topology, bool json) {
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' topo " +
                              (json ? "--json " : "") + "'" + topology.string() + "' 2>&1";
  const CommandResult result = run_command(command);
  INFO(command << "\n" << result.output);
  REQUIRE(result.status == 0);
  return result.output;
}

const fs::path kTopologies = fs::path(CLUSTERSIM_SOURCE_DIR) / "topologies";
const fs::path kGolden = fs::path(CLUSTERSIM_SOURCE_DIR) / "tests" / "golden" / "topo";

}  // namespace

TEST_CASE("clustersim topo matches the golden output of every shipped topology") {
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(kTopologies)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    for (const bool json : {false, true}) {
      const fs::path golden = kGolden / (name + (json ? ".json" : ".txt"));
      INFO("golden file " << golden.string() << " (tests/golden/refresh.sh regenerates it)");
      REQUIRE(fs::exists(golden));
      CHECK(topo_output(entry.path(), json) == read_text_file(golden.string()));
      ++compared;
    }
  }
  CHECK(compared > 0);
}

TEST_CASE("clustersim topo: DGX H100 is NV18 between every pair at 450 GB/s per GPU") {
  const fs::path file = kTopologies / "dgx-h100.yaml";
  REQUIRE(fs::exists(file));
  const auto summary = nlohmann::json::parse(topo_output(file, true));
  // NVLink4: 18 links x 25 GB/s = 450 GB/s per direction per GPU (H100 whitepaper).
  REQUIRE(summary["per_gpu_bandwidth"].size() == 1);
  CHECK(summary["per_gpu_bandwidth"][0]["nvlink_Bps"].get<double>() == doctest::Approx(450e9));
  REQUIRE(summary["matrices"].size() == 1);
  const auto& rows = summary["matrices"][0]["rows"];
  REQUIRE(rows.size() == 8);
  int nv18 = 0;
  for (const auto& row : rows) {
    for (const auto& cell : row["cells"]) {
      if (cell["rank"] == row["rank"]) {
        CHECK(cell["connection"] == "X");
      } else {
        CHECK(cell["connection"] == "NV18");
        nv18 += cell["connection"] == "NV18" ? 1 : 0;
      }
    }
  }
  CHECK(nv18 == 8 * 7);
}

TEST_CASE("clustersim topo: a missing file is an input error, exit status 2") {
  const CommandResult result =
      run_command(std::string("'") + CLUSTERSIM_BINARY + "' topo /nonexistent/none.yaml 2>&1");
  CHECK(result.status == 2);
  CHECK(result.output.find("none.yaml") != std::string::npos);
}
