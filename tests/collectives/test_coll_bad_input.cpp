// `clustersim coll` and the program's own usage errors against hostile flags: each is exit 2 with
// one line on standard error that names the flag; the cases that crashed or passed in silence
// before the bad-input audit are marked.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

using cs::test::CommandResult;

const std::string kTopologies = std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/";

// Standard error only (standard output to /dev/null), so that its lines can be counted.
CommandResult clustersim_stderr(const std::string& args) {
  return cs::test::run_command("env -u NCCL_ALGO -u NCCL_PROTO -u NCCL_NVLS_ENABLE '" +
                               std::string(CLUSTERSIM_BINARY) + "' " + args + " 2>&1 >/dev/null");
}

TEST_CASE("bad coll flags: exit 2 and one line naming the flag") {
  const std::string dgx = "coll --topology " + kTopologies + "dgx-h100.yaml ";
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      // Was exit 3 (std::stod threw out of the size parser).
      {dgx + "-b .K", "key 'minbytes': '.K' is not a size"},
      // Was read as 1K.
      {dgx + "-b 1..2K", "key 'minbytes': '1..2K' is not a size"},
      // Was one row, the ladder stopping at once.
      {dgx + "-f inf", "key 'stepfactor': -f must be a finite number above 1"},
      // floor(8 x 1.0000001) = 8: was one row where 8..128M was asked for.
      {dgx + "-b 8 -f 1.0000001", "-f 1.0000001 does not grow 8 bytes"},
      // Was ignored in silence.
      {dgx + "-i -5", "key 'stepbytes': -i must be a size of 0 or more"},
      // dgx-h100.yaml: 80 GB per GPU. nccl-tests (data check on, its default) keeps three
      // buffers of at most (80e9 - 2^30) / 3 = 26,308,752,725 bytes: -b 25G = 26,843,545,600
      // cannot run at all (24G = 25,769,803,776 can, below).
      {dgx + "-b 25G -e 25G", "key 'minbytes': 25G (25 GiB) is past nccl-tests' memory rule"},
      // Was JSON, the --csv dropped in silence.
      {dgx + "--csv --json", "--csv excludes --json"},
      // Was a list of 10^8 ranks built before the first was checked.
      {dgx + "-n 0-99999999", "rank 99999999 does not exist"},
      // Said "asks for more ranks than the cluster has".
      {dgx + "-n 0", "key 'ranks': '0' asks for no ranks"},
      {"coll --topology " + kTopologies, "cannot open the topology file: it is a folder"},
      // The ladder's own checks name the flags' long forms (they said 'sizes' and 'factor').
      {dgx + "-b 1K -e 8", "key 'maxbytes': -e must be >= -b"},
      // 1, 2, 3, ... 5000 by -i 1: over the ladder's 4096 rows.
      {dgx + "-b 1 -e 5000 -i 1", "key 'maxbytes': more than 4096 sizes from -b to -e"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const CommandResult r = clustersim_stderr(c.args);
    cs::test::check_bad_input(r, c.message);
  }
  const CommandResult fits = clustersim_stderr(dgx + "-b 24G -e 24G");
  CHECK(fits.status == 0);
  CHECK(fits.output.empty());
}

TEST_CASE("past the GPUs' memory -e is lowered, as nccl-tests does, and the output says so") {
  // -e 1e30 was exit 3 (an assertion in the flow model: "never finish"); 64G does not fit
  // either. Both come down to 26,308,752,725 bytes (the case above): the ladder from 16G by 2
  // ends at 16G, since 32G is past it.
  const std::string dgx = "coll --topology " + kTopologies + "dgx-h100.yaml -b 16G ";
  for (const std::string e : {"-e 64G", "-e 1e30"}) {
    CAPTURE(e);
    const CommandResult csv = clustersim_stderr(dgx + e + " --csv");
    CHECK(csv.status == 0);
    CHECK(csv.output.starts_with(
        "clustersim: note: Reducing maxBytes to 26308752725 due to memory limitation"));
  }
  const CommandResult table =
      cs::test::run_command("env -u NCCL_ALGO -u NCCL_PROTO '" + std::string(CLUSTERSIM_BINARY) +
                            "' " + dgx + "-e 64G 2>/dev/null");
  CHECK(table.status == 0);
  CHECK(table.output.find("\n# Reducing maxBytes to 26308752725 due to memory limitation") !=
        std::string::npos);
  CHECK(table.output.find(" 17179869184 ") != std::string::npos);  // 16 GiB, the one row
  CHECK(table.output.find(" 34359738368 ") == std::string::npos);  // 32 GiB
}

TEST_CASE("a calibration of another GPU model is refused, naming its line") {
  // calibrate/data/h200x4/calibration.json was fitted on NVIDIA H200; dgx-h100.yaml's GPUs are
  // H100-SXM5-80GB. Line 104 of the file names the GPU ("gpu_name": "NVIDIA H200").
  const std::string cal =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x4/calibration.json";
  const CommandResult r = clustersim_stderr("coll --topology " + kTopologies +
                                            "dgx-h100.yaml -b 8 -e 8 --calibration " + cal);
  cs::test::check_bad_input(r,
                            "calibration.json:104: key 'machine.gpu_name': fitted on NVIDIA H200");
}

TEST_CASE("usage errors of the program are one line") {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      // CLI11 said "A subcommand is required" and a second line.
      {"simulate", "unknown command 'simulate'; valid: topo, coll, flows, fit, validate, discover"},
      {"", "A subcommand is required"},
      {"topo", "file is required"},
      {"coll", "--topology is required"},
      {"topo a.yaml b.yaml", "not expected: b.yaml"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const CommandResult r = clustersim_stderr(c.args);
    cs::test::check_bad_input(r, c.message);
  }
}

TEST_CASE("a run whose standard output cannot be written is not a success") {
  // /dev/full refuses every write (ENOSPC); the program said nothing and exited 0.
  const CommandResult r =
      cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' coll --topology " +
                            kTopologies + "dgx-h100.yaml -b 8 -e 8 2>&1 >/dev/full");
  CHECK(r.status == 2);
  CHECK(r.output == "clustersim: error: standard output: the write failed (disk full?)\n");
}

}  // namespace
