// `clustersim flows` against hostile input: what the flows CSV parser refuses beyond the cases of
// test_flows_cli.cpp, what it tolerates (a spreadsheet's byte order mark, CRLF, a trailing blank
// line), and that a failed run leaves none of its output files behind.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "network/flow_table.hpp"
#include "support/bad_input.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace cs::net {
namespace {

namespace fs = std::filesystem;

const std::string kDir = std::string(CLUSTERSIM_TEST_DATA) + "/flows";
const std::string kTopology = kDir + "/two-servers.yaml";

std::string error_of(const std::string& text) {
  const topo::Cluster cluster = topo::load_cluster(kTopology);
  try {
    parse_flow_table(text, "m.csv", cluster);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A scratch folder of this test process, removed at the end of each case.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("clustersim-flowsbad-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

cs::test::CommandResult flows(const std::string& arguments) {
  return cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' flows --topology '" +
                               kTopology + "' " + arguments + " 2>&1");
}

TEST_CASE("a header with no rows, a control character, and a size past simulated time") {
  const std::string header = "id,src,dst,bytes,start\n";
  CHECK(error_of("# comment\n" + header + "\n") ==
        "m.csv:2: no flows after the header; give one row per flow (id, src, dst, bytes, start)");
  CHECK(error_of(header + std::string("a,rank:0,rank:1,1GB,0us\0\n", 25))
            .starts_with("m.csv:2: key 'start': control character 0x00"));
  // two-servers.yaml: the slowest rate is the Ethernet link, 25 GB/s (the GPUs' device-local
  // copies run at 1 TB/s / 2). One flow of B bytes may take B / 25e9 s, and the limit is 4e6 s:
  // 1e17 bytes = 4e6 s is the largest that passes, 1.1e17 = 4.4e6 s fails.
  CHECK(error_of(header + "a,rank:0,rank:1,1e17,0us\n") == "no error");
  CHECK(error_of(header + "a,rank:0,rank:1,1.1e17,0us\n")
            .starts_with("m.csv:2: key 'bytes': '1.1e17' is too large to simulate"));
  // Two flows may share that link, each at half its rate: 2 x 6e16 bytes / 25e9 = 4.8e6 s. The
  // error names the largest flow's row.
  CHECK(error_of(header + "a,rank:0,rank:1,6e16,0us\nb,rank:1,rank:0,5e16,0us\n")
            .starts_with("m.csv:2: key 'bytes': '6e16' is too large to simulate: 2 flow(s)"));
}

TEST_CASE("a byte order mark, CRLF line ends and a trailing blank line read as plain CSV") {
  const topo::Cluster cluster = topo::load_cluster(kTopology);
  const std::string plain = "id,src,dst,bytes,start\na,rank:0,rank:1,1GB,0us\n";
  const auto rows = parse_flow_table(
      "\xEF\xBB\xBFid,src,dst,bytes,start\r\na,rank:0,rank:1,1GB,0us\r\n\r\n", "m.csv", cluster);
  const auto expected = parse_flow_table(plain, "m.csv", cluster);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].id == expected[0].id);
  CHECK(rows[0].bytes == expected[0].bytes);
  CHECK(rows[0].loc.line == 2);
}

TEST_CASE("a folder given as the flows file is named as one") {
  const topo::Cluster cluster = topo::load_cluster(kTopology);
  CHECK_THROWS_WITH_AS(load_flow_table(kDir, cluster),
                       doctest::Contains("cannot open the flows file: it is a folder"), InputError);
}

TEST_CASE("a run that fails to write one output leaves none of them") {
  const Scratch scratch;
  const std::string csv = scratch.path("flows.csv");
  const std::string example = "--flows '" + kDir + "/example.csv' ";
  // --links-csv that passes the checks before the run but cannot be written: a name of 240
  // characters whose temporary (".clustersim-<pid>.tmp" added) passes the 255 a name may have.
  // The --csv file must not appear either.
  const std::string long_name = scratch.path(std::string(236, 'x') + ".csv");
  const auto r = flows(example + "--csv '" + csv + "' --links-csv '" + long_name + "'");
  cs::test::check_bad_input(r, ".csv: cannot write the --links-csv file: File name too long");
  CHECK_FALSE(fs::exists(csv));
  CHECK_FALSE(fs::exists(csv + ".tmp"));
  // A folder that does not exist is refused before the run, naming the flag.
  const auto missing =
      flows(example + "--csv '" + csv + "' --links-csv '" + scratch.path("no/links.csv") + "'");
  cs::test::check_bad_input(missing, "key '--links-csv': cannot write '" +
                                         scratch.path("no/links.csv") + "': folder '" +
                                         scratch.path("no") + "' does not exist");
  CHECK_FALSE(fs::exists(csv));
  // Two flags naming one file, and an output that is a folder.
  const auto twice = flows(example + "--csv '" + csv + "' --links-csv '" + csv + "'");
  CHECK(twice.status == 2);
  CHECK(twice.output.find("is also the --csv file") != std::string::npos);
  CHECK_FALSE(fs::exists(csv));
  const auto folder = flows(example + "--csv '" + scratch.dir.string() + "'");
  cs::test::check_bad_input(folder, "key '--csv': cannot write '" + scratch.dir.string() +
                                        "': it is a folder; give a file name");
}

TEST_CASE("bad flows input and flags: exit 2, one line naming the file, line and column") {
  const Scratch scratch;
  const std::string huge =
      scratch.write("huge.csv", "id,src,dst,bytes,start\na,rank:0,rank:1,1e30,0us\n");
  const std::string only = scratch.write("only.csv", "id,src,dst,bytes,start\n");
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      // Was exit 3: an assertion in the flow model ("never finish").
      {"--flows '" + huge + "'", "huge.csv:2: key 'bytes': '1e30' is too large"},
      // Was exit 0 with an empty report.
      {"--flows '" + only + "'", "only.csv:1: no flows after the header"},
      // Was exit 0: -1 wrapped to the largest count.
      {"--flows '" + kDir + "/example.csv' --top -1", "--top: takes a count of 0 or more"},
      {"--flows '" + kDir + "'", "cannot open the flows file: it is a folder"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = flows(c.args);
    cs::test::check_bad_input(r, c.message);
  }
}

TEST_CASE("the same flows twice give the same files, byte for byte") {
  const Scratch scratch;
  const std::string example = "--flows '" + kDir + "/example.csv' ";
  const auto first = flows(example + "--csv '" + scratch.path("a.csv") + "' --links-csv '" +
                           scratch.path("a-links.csv") + "'");
  const auto second = flows(example + "--csv '" + scratch.path("b.csv") + "' --links-csv '" +
                            scratch.path("b-links.csv") + "'");
  REQUIRE(first.status == 0);
  REQUIRE(second.status == 0);
  CHECK(first.output == second.output);
  CHECK(cs::test::read_text_file(scratch.path("a.csv")) ==
        cs::test::read_text_file(scratch.path("b.csv")));
  CHECK(cs::test::read_text_file(scratch.path("a-links.csv")) ==
        cs::test::read_text_file(scratch.path("b-links.csv")));
}

}  // namespace
}  // namespace cs::net
