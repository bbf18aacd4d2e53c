// `clustersim flows`: the CSV parser's errors, completion times of the example matrix derived by
// hand, and the golden output (refresh with tests/data/flows/refresh_golden.sh).
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "network/flow_table.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace cs::net {
namespace {

const std::string kDir = std::string(CLUSTERSIM_TEST_DATA) + "/flows";

struct Run {
  int status;
  std::string output;
};

// Runs clustersim with `arguments`; stderr joins stdout when `with_stderr`.
Run clustersim(const std::string& arguments, bool with_stderr = false) {
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' " + arguments +
                              (with_stderr ? " 2>&1" : " 2>/dev/null");
  const cs::test::CommandResult result = cs::test::run_command(command);
  return {result.status, result.output};
}

std::string read_file(const std::string& path) {
  REQUIRE(std::filesystem::exists(path));
  return cs::test::read_text_file(path);
}

// finish_us per flow id, from the CSV part of the output.
std::map<std::string, std::string> finish_by_id(const std::string& output) {
  std::map<std::string, std::string> finish;
  std::istringstream lines(output);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line) && !line.empty()) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    REQUIRE(fields.size() == 8);
    finish[fields[0]] = fields[5];
  }
  return finish;
}

const std::string kTopology = kDir + "/two-servers.yaml";
const std::string kArgs = "flows --topology '" + kTopology + "' --flows '" + kDir + "/example.csv'";

TEST_CASE("the example matrix: completion times derived by hand") {
  // two-servers.yaml: NVLink 100 GB/s (0.5 us per hop), PCIe 50 GB/s (1 us), Ethernet 25 GB/s
  // (2 us), one NIC per server, efficiency 1. Cross-server routes are
  // gpu -> pcie -> nic -> tor -> nic -> pcie -> gpu: 1 + 1 + 2 + 2 + 1 + 1 = 8 us.
  const Run run = clustersim(kArgs);
  REQUIRE(run.status == 0);
  const auto finish = finish_by_id(run.output);
  // a: gpu0 -> gpu1 over NVLink alone: 1 GB / 100 GB/s = 10 ms, + 2 x 0.5 us.
  CHECK(finish.at("a") == "10001.000000");
  // b and c cross node0's pcie -> nic and the Ethernet link together: 25 / 2 = 12.5 GB/s each;
  // 0.5 GB / 12.5 GB/s = 40 ms, + 8 us.
  CHECK(finish.at("b") == "40008.000000");
  CHECK(finish.at("c") == "40008.000000");
  // d: node1/gpu0 -> node0/gpu0 at 10 ms, the other direction of every link b and c use; on
  // node0's pcie -> gpu0 it meets e: that channel (50) splits 25/25, and d's Ethernet allows 25
  // anyway. 0.25 GB / 25 GB/s = 10 ms: finishes at 20 ms + 8 us.
  CHECK(finish.at("d") == "20008.000000");
  // e: cpu -> pcie -> gpu0, 1 GB: 0-10 ms at 50 GB/s (0.5 GB), 10-20 ms at 25 beside d
  // (0.25 GB), then 50 again for the last 0.25 GB (5 ms): 25 ms + 2 x 1 us.
  CHECK(finish.at("e") == "25002.000000");
  // f: a GPU to itself is a device-local copy (copies.cpp's priors): the fixed 1.85 us, then
  // 1 GB at 0.9 x 1 TB/s / 2 = 450 GB/s, 2222.222222 us: 2224.072222 us.
  CHECK(finish.at("f") == "2224.072222");
  // g: zero bytes at 5 ms: the route's latency alone, 8 us.
  CHECK(finish.at("g") == "5008.000000");
  // h: 4 KiB over NVLink at 30 ms: 4096 B / 100 GB/s = 40.96 ns, + 1 us.
  CHECK(finish.at("h") == "30001.040960");
}

TEST_CASE("golden output of both fidelities") {
  const Run flow = clustersim(kArgs);
  REQUIRE(flow.status == 0);
  CHECK(flow.output == read_file(kDir + "/example.golden.txt"));
  const Run analytical = clustersim(kArgs + " --fidelity analytical");
  REQUIRE(analytical.status == 0);
  CHECK(analytical.output == read_file(kDir + "/example.analytical.golden.txt"));
  // Without contention b and c each get the 25 GB/s Ethernet link: 0.5 GB in 20 ms, + 8 us.
  CHECK(finish_by_id(analytical.output).at("b") == "20008.000000");
  // -t is --topology, as in coll, fit and validate.
  const Run short_flag =
      clustersim("flows -t '" + kTopology + "' --flows '" + kDir + "/example.csv'");
  REQUIRE(short_flag.status == 0);
  CHECK(short_flag.output == flow.output);
}

TEST_CASE("--csv and --links-csv write files, the table stays on standard output") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("clustersim-flows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string flows_out = (dir / "flows.csv").string();
  const std::string links_out = (dir / "links.csv").string();
  const Run run = clustersim(kArgs + " --csv '" + flows_out + "' --links-csv '" + links_out + "'");
  REQUIRE(run.status == 0);
  const std::string golden = read_file(kDir + "/example.golden.txt");
  const std::string flows = read_file(flows_out);
  CHECK(golden.starts_with(flows));
  CHECK(run.output == golden.substr(flows.size() + 1));  // the table, after the CSV's blank line
  const std::string links = read_file(links_out);
  CHECK(links.starts_with(
      "from,to,kind,label,capacity_GBps,bytes,busy_fraction,avg_utilization,peak_utilization\n"));
  // node0's Ethernet uplink carried b and c (1 GB) at full rate over 40 ms of a 40.008 ms span.
  CHECK(links.find("node0/nic,tor,ethernet,Ethernet 200Gbps,25.000,1000000000,0.999800,"
                   "0.999800,1.000000\n") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input exits 2 with file:line and the column") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("clustersim-badflows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string bad = (dir / "bad.csv").string();
  std::ofstream(bad)
      << "id,src,dst,bytes,start\na,rank:0,rank:1,1GB,0us\nb,rank:0,rank:1,1 parsec,0us\n";
  const Run run = clustersim("flows --topology '" + kTopology + "' --flows '" + bad + "'", true);
  CHECK(run.status == 2);
  CHECK(run.output.find("bad.csv:3: key 'bytes'") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the CSV parser names the line and the column of every mistake") {
  const topo::Cluster cluster = topo::load_cluster(kTopology);
  const std::string header = "id,src,dst,bytes,start\n";
  auto error_of = [&](const std::string& text) {
    try {
      parse_flow_table(text, "m.csv", cluster);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Columns in any order, comments and blank lines skipped, rank:N and units resolved.
  const auto rows = parse_flow_table(
      "# comment\n\nstart, bytes ,id,dst,src\n1.5us,2KiB,x,node1/gpu1,rank:1\n", "m.csv", cluster);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].id == "x");
  CHECK(rows[0].src == cluster.ranks[1]);
  CHECK(rows[0].dst == cluster.find_node("node1/gpu1"));
  CHECK(rows[0].bytes == 2048);
  CHECK(rows[0].start == 1'500'000);
  CHECK(rows[0].loc.line == 4);

  CHECK(error_of("id,src,dst,bytes\n").starts_with("m.csv:1: key 'start': missing column"));
  CHECK(error_of("id,src,dst,bytes,start,when\n").starts_with("m.csv:1: key 'when': unknown"));
  CHECK(error_of(header + "a,rank:0,rank:9,1GB,0us\n").starts_with("m.csv:2: key 'dst'"));
  CHECK(error_of(header + "a,node7/gpu0,rank:1,1GB,0us\n")
            .starts_with("m.csv:2: key 'src': no node named 'node7/gpu0'; valid: rank:0..rank:3"));
  CHECK(error_of(header + "a,rank:0,rank:1,-5,0us\n").starts_with("m.csv:2: key 'bytes'"));
  CHECK(error_of(header + "a,rank:0,rank:1,1GB,0\n").starts_with("m.csv:2: key 'start'"));
  CHECK(error_of(header + "a,rank:0,rank:1,1GB,-1us\n").starts_with("m.csv:2: key 'start'"));
  CHECK(error_of(header + "a,rank:0,rank:1,1GB\n").starts_with("m.csv:2: the row has 4 fields"));
  CHECK(error_of(header + "a,rank:0,rank:1,1GB,0us\na,rank:1,rank:0,1GB,0us\n")
            .starts_with("m.csv:3: key 'id': 'a' is used by an earlier row"));
  CHECK(error_of("# only a comment\n").starts_with("m.csv:1: no header line"));
  CHECK_THROWS_AS(load_flow_table(kDir + "/no-such-file.csv", cluster), InputError);
}

}  // namespace
}  // namespace cs::net
