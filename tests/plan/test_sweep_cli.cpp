// End-to-end: `clustersim sweep` writes the same bytes on 1 and 2 threads, under `mpirun -n 2`
// (where this build has MPI, as .ci/setup gives it) and as two shards merged; its rows follow the
// commands they run; bad input is one line, exit 2 and no output file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(CLUSTERSIM_SOURCE_DIR);
const std::string kBin = std::string("'") + CLUSTERSIM_BINARY + "'";
const std::string kSweep = "'" + (kRoot / "tests/data/sweep/ddp-small.yaml").string() + "'";

cs::test::CommandResult sh(const std::string& command) {
  return cs::test::run_command(command + " 2>&1");
}

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("cs-sweep-" + std::to_string(getpid()) + "-" + name);
}

}  // namespace

TEST_CASE("clustersim sweep: threads, shards and MPI ranks write the same bytes") {
  const cs::test::CommandResult one = sh(kBin + " sweep -q --threads 1 " + kSweep);
  REQUIRE(one.status == 0);
  // A header and 2 x 3 x 2 = 12 rows, first axis slowest: nodes 1 for the first 6 rows.
  CHECK(std::count(one.output.begin(), one.output.end(), '\n') == 13);
  CHECK(one.output.find("topology,nodes,model,bucket_cap_mb,gpus,servers,") == 0);
  CHECK(one.output.find("\n../../../topologies/dgx-h100-16node.yaml,1,../../../models/gpt2.yaml,5,"
                        "8,1,") != std::string::npos);
  CHECK(sh(kBin + " sweep -q --threads 2 " + kSweep).output == one.output);

  const fs::path s0 = temp("s0.json");
  const fs::path s1 = temp("s1.json");
  const fs::path merged = temp("merged.csv");
  REQUIRE(sh(kBin + " sweep -q --shard 0/2 -o '" + s0.string() + "' " + kSweep).status == 0);
  REQUIRE(sh(kBin + " sweep -q --shard 1/2 -o '" + s1.string() + "' " + kSweep).status == 0);
  // Shards in either order; the merge writes what one run writes.
  REQUIRE(sh(kBin + " sweep --merge '" + s1.string() + "' '" + s0.string() + "' -o '" +
             merged.string() + "'")
              .status == 0);
  CHECK(cs::test::read_text_file(merged.string()) == one.output);
  // A shard missing, or given twice, is refused.
  cs::test::check_bad_input(sh(kBin + " sweep --merge '" + s0.string() + "'"),
                            "--merge: shard 1/2 is missing");
  cs::test::check_bad_input(sh(kBin + " sweep --merge '" + s0.string() + "' '" + s0.string() + "'"),
                            "shard 0/2 is also in");
  fs::remove(s0);
  fs::remove(s1);
  fs::remove(merged);

#ifndef CLUSTERSIM_HAVE_MPI
  MESSAGE(
      "clustersim was built without MPI (CLUSTERSIM_MPI=OFF or no OpenMPI): the MPI run is "
      "not checked here");
  return;
#endif
  if (sh("command -v mpirun").status != 0) {
    MESSAGE("mpirun is not installed: the MPI run is not checked here (.ci/setup installs it)");
    return;
  }
  const cs::test::CommandResult mpi = cs::test::run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "
      "--oversubscribe -n 2 " +
      kBin + " sweep -q " + kSweep);
  CHECK(mpi.status == 0);
  CHECK(mpi.output == one.output);
}

TEST_CASE("clustersim sweep: JSON rows carry the CSV's cells, numbers as numbers") {
  const cs::test::CommandResult r = sh("cd '" + kRoot.string() + "' && " + kBin +
                                       " sweep -q --json sim/plan/examples/allreduce-nodes.yaml");
  REQUIRE(r.status == 0);
  CHECK(r.output.find("{\"topology\": \"../../../topologies/dgx-h100-16node.yaml\", \"nodes\": 1, "
                      "\"op\": \"allreduce\", \"size\": \"1M\", \"ranks\": 8, \"servers\": 1, "
                      "\"size_bytes\": 1048576.000000,") != std::string::npos);
}

TEST_CASE("clustersim sweep: a point that cannot run says why in its row") {
  const fs::path file = temp("nofit.yaml");
  {
    std::ofstream out(file);
    out << "command: ddp\naxes:\n  topology: '"
        << (kRoot / "topologies/aws-p4d.24xlarge.yaml").string()
        << "'\n  nodes: [1, 80]\n  model: '" << (kRoot / "models/gpt2-xl.yaml").string()
        << "'\n  batch: [1, 4]\n";
  }
  const cs::test::CommandResult r = sh(kBin + " sweep -q '" + file.string() + "'");
  CHECK(r.status == 0);
  // Batch 4 does not fit an A100 40GB; 80 instances of 4 NICs fill 10 leaves, which fit, so both
  // batch-1 points run.
  CHECK(r.output.find("the largest batch that fits is 1") != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 5);
  fs::remove(file);
}

TEST_CASE("clustersim sweep refuses bad input with one line, exit 2, no output file") {
  const fs::path out = temp("out.csv");
  const fs::path bad = temp("bad.yaml");
  const auto run_bad = [&](const std::string& text) {
    std::ofstream(bad) << text;
    return sh(kBin + " sweep -q -o '" + out.string() + "' '" + bad.string() + "'");
  };
  cs::test::check_bad_input(run_bad("command: ddp\naxes: {topology: nowhere.yaml, model: m}\n"),
                            "nowhere.yaml");
  cs::test::check_bad_input(
      run_bad("command: coll\naxes:\n  topology: '" +
              (kRoot / "topologies/dgx-h100.yaml").string() + "'\n  op: allreduse\n  size: 1M\n"),
      ":4: key 'op': unknown collective 'allreduse'");
  cs::test::check_bad_input(
      run_bad("command: coll\naxes:\n  topology: '" +
              (kRoot / "topologies/dgx-h100.yaml").string() + "'\n  size: [1M, lots]\n"),
      ":4: key 'size'");
  cs::test::check_bad_input(run_bad("command: ddp\naxes: {topology: t, model: m, gpus: [8]}\n"),
                            "key 'gpus'");
  CHECK_FALSE(fs::exists(out));
  cs::test::check_bad_input(sh(kBin + " sweep --shard 2/2 " + kSweep),
                            "--shard: '2/2' is not K/N with 0 <= K < N");
  cs::test::check_bad_input(sh(kBin + " sweep --merge '" + bad.string() + "'"),
                            "not a sweep shard file");
  fs::remove(bad);
}
