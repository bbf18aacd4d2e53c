// End-to-end: `clustersim coll` must print exactly its golden outputs (tests/golden/coll/,
// refreshed by tests/golden/coll/refresh.sh, whose cases these are), and bad flags exit 2 with a
// message.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_run.hpp"
#include "support/version_stamp.hpp"

namespace {

namespace fs = std::filesystem;

using cs::test::CommandResult;

// `env` is prepended: NCCL_* variables of the caller's shell must not steer the runs, and a test
// may set its own.
CommandResult run(const std::string& args, const std::string& env = "") {
  const std::string command = "env -u NCCL_ALGO -u NCCL_PROTO -u NCCL_NVLS_ENABLE " + env + " '" +
                              std::string(CLUSTERSIM_BINARY) + "' coll " + args + " 2>&1";
  return cs::test::run_command(command);
}

const fs::path kTopologies = fs::path(CLUSTERSIM_SOURCE_DIR) / "topologies";
const fs::path kGolden = fs::path(CLUSTERSIM_SOURCE_DIR) / "tests" / "golden" / "coll";

std::string topo(const char* name) {
  return "--topology '" + (kTopologies / name).string() + "' ";
}

}  // namespace

TEST_CASE("clustersim coll matches its golden outputs") {
  struct Case {
    const char* golden;
    std::string args;
  };
  const Case cases[] = {
      {"dgx-h100-allreduce.txt", topo("dgx-h100.yaml") + "--op allreduce -b 8 -e 1G -f 2"},
      {"dgx-h100-allgather.csv", topo("dgx-h100.yaml") + "--op allgather -b 1K -e 1G -f 4 --csv"},
      {"dgx-h100-4gpu-ring-simple.json",
       topo("dgx-h100.yaml") +
           "--op allreduce --ranks 0,1,2,3 -b 1M -e 1G -f 8 --algo ring --proto simple --json"},
      {"dgx-h100-2node-allreduce.txt",
       topo("dgx-h100-2node.yaml") + "--op allreduce -b 8 -e 1G -f 2"},
      {"dgx-h100-16node-allreduce.txt",
       topo("dgx-h100-16node.yaml") + "--op allreduce -b 8 -e 1G -f 2"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.golden);
    const CommandResult r = run(c.args);
    REQUIRE(r.status == 0);
    CHECK(cs::test::unversioned(r.output) ==
          cs::test::read_text_file((kGolden / c.golden).string()));
  }
}

TEST_CASE("clustersim compare matches its golden output on the published sets") {
  const std::string command = "cd '" + std::string(CLUSTERSIM_SOURCE_DIR) + "' && '" +
                              std::string(CLUSTERSIM_BINARY) +
                              "' compare calibrate/published/multinode.yaml 2>&1";
  const CommandResult r = cs::test::run_command(command);
  REQUIRE(r.status == 0);
  CHECK(r.output == cs::test::read_text_file((kGolden / "compare-multinode.txt").string()));
}

TEST_CASE("clustersim compare rejects a bad sets file with file:line:key and exit 2") {
  const fs::path dir = fs::temp_directory_path() / ("cs-compare-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "sets.yaml";
  {
    std::ofstream out(file);
    out << "sets:\n  - name: x\n    role: guess\n    source: s\n    topology: t.yaml\n"
           "    nodes: 2\n    op: allreduce\n    time_us: \"8 1.0\"\n";
  }
  const CommandResult r = cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) +
                                                "' compare '" + file.string() + "' 2>&1");
  CHECK(r.status == 2);
  CHECK(r.output.find("sets.yaml:3") != std::string::npos);
  CHECK(r.output.find("'role'") != std::string::npos);
  CHECK(r.output.find("valid: fit, check") != std::string::npos);
  fs::remove_all(dir);
}

// Found by fuzz_published (tests/fuzz/README.md): a topology name longer than a file name may be
// made the lookup throw filesystem_error, an internal error (exit 3) instead of a refusal.
TEST_CASE("clustersim compare refuses a topology path too long to look up with file:line:key") {
  const fs::path file =
      fs::path(CLUSTERSIM_TEST_DATA) / "fuzz" / "fuzz_published" / "long_topology_path.yaml";
  const CommandResult r = cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) +
                                                "' compare '" + file.string() + "' 2>&1");
  CHECK(r.status == 2);
  CHECK(r.output.find("long_topology_path.yaml:7: key 'topology': no topology file") !=
        std::string::npos);
}

TEST_CASE("clustersim coll: the DGX H100 figures the issue names") {
  const CommandResult r =
      run(topo("dgx-h100.yaml") + "--op allreduce -b 1G -e 1G --csv --nvls off");
  REQUIRE(r.status == 0);
  // size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto,channels
  std::istringstream lines(r.output);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  std::vector<std::string> cols;
  std::istringstream cells(row);
  for (std::string cell; std::getline(cells, cell, ',');) cols.push_back(cell);
  REQUIRE(cols.size() == 11);
  // Ring Simple on 12 channels x 30 GB/s = 360 GB/s; 1 GiB x 14/8 / 360 GB/s = 5219.58 us, times
  // (14 + 0.47) / 14 for the receive-only pass of each loop (14 link steps, Hopper prior 0.47)
  // = 5394.81 us, + 56 us latency = 5450.81 us -> busbw 1 GiB x 14/8 / 5450.81 us = 344.73 GB/s.
  CHECK(cols[8] == "RING");
  CHECK(cols[9] == "SIMPLE");
  CHECK(std::stod(cols[7]) == doctest::Approx(344.73).epsilon(1e-4));
}

TEST_CASE("clustersim coll rejects bad input with exit status 2") {
  const std::string dgx = topo("dgx-h100.yaml");
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {dgx + "--op allshuffle", "unknown collective 'allshuffle'"},
      {dgx + "--ranks 0,9", "rank 9 does not exist"},
      {dgx + "--ranks 3-1", "runs backwards"},
      {dgx + "--algo ring,bogus", "unknown algorithm 'bogus'"},
      {dgx + "--proto LL256", "unknown protocol 'LL256'"},
      {dgx + "--dtype complex", "unknown type 'complex'"},
      {dgx + "-b 1G -e 1K", "key 'maxbytes': -e must be >= -b"},
      {dgx + "-b 8 -e 1x", "maxbytes"},
      {dgx + "--fidelity packet", "unknown fidelity 'packet'"},
      {dgx + "--op allgather --algo tree", "no algorithm/protocol available"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const CommandResult r = run(c.args);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.message) != std::string::npos);
  }
}

TEST_CASE("clustersim coll honours NCCL_ALGO / NCCL_PROTO / NCCL_NVLS_ENABLE, flags win") {
  const std::string args = topo("dgx-h100.yaml") + "-b 1G -e 1G --csv";
  auto algo_proto = [](const std::string& csv) {
    const std::string row = csv.substr(csv.find('\n') + 1);
    std::vector<std::string> cols;
    std::istringstream cells(row);
    for (std::string cell; std::getline(cells, cell, ',');) cols.push_back(cell);
    REQUIRE(cols.size() == 11);
    return cols[8] + "/" + cols[9];
  };
  // NCCL's default on an H100 NVSwitch (multicast): NVLS at 1 GiB; off, Ring.
  CHECK(algo_proto(run(args).output) == "NVLS/SIMPLE");
  CHECK(algo_proto(run(args, "NCCL_NVLS_ENABLE=0").output) == "RING/SIMPLE");
  CHECK(algo_proto(run(args + " --nvls on", "NCCL_NVLS_ENABLE=0").output) == "NVLS/SIMPLE");
  CHECK(algo_proto(run(args + " --nvls off", "NCCL_NVLS_ENABLE=1").output) == "RING/SIMPLE");
  CHECK(algo_proto(run(args, "NCCL_ALGO=tree").output) == "TREE/SIMPLE");
  CHECK(algo_proto(run(args, "NCCL_PROTO=LL").output) == "RING/LL");
  CHECK(algo_proto(run(args + " --algo ring", "NCCL_ALGO=tree").output) == "RING/SIMPLE");
  const CommandResult bad = run(args, "NCCL_ALGO=bogus");
  CHECK(bad.status == 2);
  CHECK(bad.output.find("NCCL_ALGO") != std::string::npos);
  const CommandResult bad_nvls = run(args + " --nvls maybe");
  CHECK(bad_nvls.status == 2);
  CHECK(bad_nvls.output.find("key 'nvls'") != std::string::npos);
}

namespace {

// --host-paced: every row takes max(host floor, the GPUs' time). `args` sweep 8 B - 64 MiB.
void check_host_paced(const std::string& args, double floor) {
  const CommandResult gpu = run(args);
  const CommandResult paced = run(args + " --host-paced");
  REQUIRE(gpu.status == 0);
  REQUIRE(paced.status == 0);
  const auto paced_json = nlohmann::json::parse(paced.output);
  CHECK(paced_json["host_floor_us"].get<double>() == doctest::Approx(floor));
  const auto gpu_rows = nlohmann::json::parse(gpu.output)["rows"];
  const auto paced_rows = paced_json["rows"];
  REQUIRE(gpu_rows.size() == paced_rows.size());
  int floored = 0;
  for (std::size_t i = 0; i < gpu_rows.size(); ++i) {
    const double t = gpu_rows[i]["time_us"];
    CHECK(paced_rows[i]["time_us"].get<double>() == doctest::Approx(std::max(floor, t)));
    CHECK(paced_rows[i]["busbw_GBps"].get<double>() <= gpu_rows[i]["busbw_GBps"].get<double>());
    floored += t < floor;
  }
  // Both regimes occur: small calls on the floor, 64 MiB on the GPUs.
  CHECK(floored > 0);
  CHECK(paced_rows.back()["time_us"].get<double>() == gpu_rows.back()["time_us"].get<double>());
}

}  // namespace

// With a calibration, the floor is read here from the calibration file itself: the default runs'
// all-reduce floor at 2 ranks, and at 3 ranks halfway between the fitted 2- and 4-rank floors.
TEST_CASE("clustersim coll --host-paced times each call as max(calibrated host floor, GPU time)") {
  const std::string cal =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x4/calibration.json";
  const nlohmann::json file = nlohmann::json::parse(cs::test::read_text_file(cal));
  double floor2 = 0;
  double floor4 = 0;
  for (const auto& fit : file["nccl_by_op"]) {
    if (fit["op"] != "allreduce") continue;
    for (const auto& f : fit["host_floors"]) {
      if (f["config"] != "default") continue;
      if (f["n_ranks"] == 2) floor2 = f["floor_us"];
      if (f["n_ranks"] == 4) floor4 = f["floor_us"];
    }
  }
  REQUIRE(floor2 > 0);
  REQUIRE(floor4 > floor2);
  for (const int n : {2, 3}) {
    CAPTURE(n);
    check_host_paced(topo("h200-4gpu.yaml") + "--op allreduce -n " + std::to_string(n) +
                         " -b 8 -e 64M -f 8 --json --calibration '" + cal + "'",
                     n == 2 ? floor2 : 0.5 * (floor2 + floor4));
  }
}

// Without one, the prior floor (calibration/calfile/host_floor.hpp): 6.9 us per rank, 4.8 us for
// one rank alone.
TEST_CASE("clustersim coll --host-paced without a fitted floor takes the measured prior floor") {
  const struct {
    int n;
    double floor_us;
  } cases[] = {{1, 4.8}, {2, 2 * 6.9}, {4, 4 * 6.9}, {8, 8 * 6.9}};
  for (const auto& c : cases) {
    CAPTURE(c.n);
    check_host_paced(topo("dgx-h100.yaml") + "--op allreduce -n " + std::to_string(c.n) +
                         " -b 8 -e 64M -f 8 --json",
                     c.floor_us);
  }
  CHECK(run(topo("dgx-h100.yaml") + "-n 4 -b 8 -e 8 --host-paced")
            .output.find("host floor 27.6 us (prior), the GPUs' time") != std::string::npos);
  // A calibration that fitted no floor for the collective leaves the prior: h200x4 measured no
  // reduce, so its every-op fit answers for it, with no floors: 4 x 6.9 us.
  const std::string cal =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x4/calibration.json";
  check_host_paced(topo("h200-4gpu.yaml") +
                       "--op reduce -n 4 -b 8 -e 64M -f 8 --json "
                       "--calibration '" +
                       cal + "'",
                   4 * 6.9);
  // Nor does a floor fitted at one rank only set one for two: h100x1-run3 (one H100) has
  // one-rank floors, and at 2 ranks the prior's 2 x 6.9 us stands.
  const fs::path one_rank =
      fs::temp_directory_path() / ("clustersim-onerank-" + std::to_string(::getpid()) + ".json");
  const CommandResult fit =
      cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' fit '" +
                            CLUSTERSIM_SOURCE_DIR + "/calibrate/data/h100x1-run3' " +
                            topo("dgx-h100.yaml") + "-o '" + one_rank.string() + "' 2>&1");
  REQUIRE(fit.status == 0);
  const std::string two_ranks =
      topo("dgx-h100.yaml") + "-n 2 -b 8 -e 64M -f 8 --calibration '" + one_rank.string() + "'";
  check_host_paced(two_ranks + " --json", 2 * 6.9);
  CHECK(
      run(two_ranks + " --host-paced")
          .output.find(
              "host floor 13.8 us (prior: the calibration fitted none for allreduce at 2 ranks)") !=
      std::string::npos);
  fs::remove(one_rank);
}
