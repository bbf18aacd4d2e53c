// End-to-end: `clustersim topo` on every shipped topology must print exactly its golden output
// (tests/golden/topo/<name>.txt and .json; tests/golden/refresh.sh regenerates them), and a few
// figures the issue names are checked outright in the golden text.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  result.status = pclose(pipe);
  return result;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string topo_output(const fs::path& topology, bool json) {
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' topo " +
                              (json ? "--json " : "") + "'" + topology.string() + "' 2>&1";
  const CommandResult result = run(command);
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
      CHECK(topo_output(entry.path(), json) == read_file(golden));
      ++compared;
    }
  }
  CHECK(compared > 0);
}

TEST_CASE("clustersim topo: DGX H100 is NV18 between every pair at 450 GB/s per GPU") {
  const fs::path file = kTopologies / "dgx-h100.yaml";
  REQUIRE(fs::exists(file));
  const auto summary = nlohmann::json::parse(topo_output(file, true));
  // NVLink4: 18 links x 25 GB/s = 450 GB/s per direction per GPU (hardware.md).
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
      run(std::string("'") + CLUSTERSIM_BINARY + "' topo /nonexistent/none.yaml 2>&1");
  CHECK(WIFEXITED(result.status));
  CHECK(WEXITSTATUS(result.status) == 2);
  CHECK(result.output.find("none.yaml") != std::string::npos);
}
