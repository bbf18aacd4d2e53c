// `clustersim flows --trace`: the Chrome trace of the example matrix (tests/data/flows), its flow
// slices and link counters checked against the timeline test_flows_cli.cpp derives by hand.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "network/flow_replay.hpp"
#include "network/flow_table.hpp"
#include "network/flow_trace.hpp"
#include "support/cli_run.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace cs::net {
namespace {

const std::string kDir = std::string(CLUSTERSIM_TEST_DATA) + "/flows";

struct Example {
  topo::Cluster cluster = topo::load_cluster(kDir + "/two-servers.yaml");
  topo::ClusterGraph graph{cluster};
  std::vector<FlowRequest> requests = load_flow_table(kDir + "/example.csv", cluster);

  nlohmann::json trace(Fidelity fidelity, std::size_t link_limit) const {
    const ReplayResult result = replay_flows(graph, requests, fidelity, true);
    return nlohmann::json::parse(flows_trace_json(graph, requests, result, link_limit));
  }
};

// (ts of "b", ts of "e") per flow id, checking that each flow has exactly one of each.
std::map<std::string, std::pair<double, double>> slices(const nlohmann::json& trace) {
  std::map<std::string, std::pair<double, double>> found;
  std::map<int, std::string> flow_of;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") == "b") {
      CHECK(event.at("cat") == "flow");
      const std::string id = event.at("args").at("id");
      REQUIRE(found.count(id) == 0);
      found[id] = {event.at("ts").get<double>(), -1.0};
      flow_of[event.at("id").get<int>()] = id;
    }
  }
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") != "e") continue;
    auto& slice = found.at(flow_of.at(event.at("id").get<int>()));
    REQUIRE(slice.second == -1.0);
    slice.second = event.at("ts").get<double>();
  }
  return found;
}

// (ts, utilization) of one counter, in file order.
std::vector<std::pair<double, double>> counter(const nlohmann::json& trace,
                                               const std::string& name) {
  std::vector<std::pair<double, double>> samples;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") == "C" && event.at("name") == name) {
      samples.emplace_back(event.at("ts").get<double>(),
                           event.at("args").at("utilization").get<double>());
    }
  }
  return samples;
}

TEST_CASE("each flow is one slice from its start to its completion") {
  const nlohmann::json trace = Example{}.trace(Fidelity::flow, 100);
  const auto found = slices(trace);
  CHECK(found.size() == 8);
  // Times from test_flows_cli.cpp: e (cpu -> gpu0, 1 GB) ends at 25 ms + 2 x 1 us of PCIe
  // latency; d starts at 10 ms and ends at 20 ms + 8 us; h, 4 KiB at 30 ms, at 30001.04096 us.
  CHECK(found.at("e") == std::pair<double, double>{0.0, 25002.0});
  CHECK(found.at("d") == std::pair<double, double>{10000.0, 20008.0});
  CHECK(found.at("h") == std::pair<double, double>{30000.0, 30001.04096});
}

TEST_CASE("a link's counter follows its load as flows join and drain") {
  const nlohmann::json trace = Example{}.trace(Fidelity::flow, 100);
  // node0/cpu -> node0/pcie (PCIe, 50 GB/s) carries e alone: 50 GB/s from 0 (utilization 1);
  // from 10 ms d shares node0/pcie -> gpu0 with e, 25 each (0.5); d drains at 20 ms (250 MB at
  // 25 GB/s), e is back at 50 (1); e drains at 25 ms (0.5 + 0.25 + 0.25 GB) and the link idles.
  const std::vector<std::pair<double, double>> expected = {
      {0.0, 1.0}, {10000.0, 0.5}, {20000.0, 1.0}, {25000.0, 0.0}};
  CHECK(counter(trace, "node0/cpu -> node0/pcie (PCIe Gen5 x16)") == expected);
}

TEST_CASE("counters only for the busiest links, and none in the analytical fidelity") {
  const Example example;
  // The three busiest (flows golden table): node0/pcie -> gpu0 (1.164 GiB), then a's two NVLink
  // directions (953.7 MiB); the cpu's link ties with them but has a higher channel id.
  const nlohmann::json top = example.trace(Fidelity::flow, 3);
  CHECK(counter(top, "node0/cpu -> node0/pcie (PCIe Gen5 x16)").empty());
  CHECK_FALSE(counter(top, "node0/pcie -> node0/gpu0 (PCIe Gen5 x16)").empty());
  const nlohmann::json analytical = example.trace(Fidelity::analytical, 100);
  CHECK(slices(analytical).size() == 8);
  for (const auto& event : analytical.at("traceEvents")) CHECK(event.at("ph") != "C");
}

TEST_CASE("the same replay writes the same bytes") {
  const Example example;
  const ReplayResult result = replay_flows(example.graph, example.requests, Fidelity::flow, true);
  CHECK(flows_trace_json(example.graph, example.requests, result, 20) ==
        flows_trace_json(example.graph, example.requests,
                         replay_flows(example.graph, example.requests, Fidelity::flow, true), 20));
}

TEST_CASE("clustersim flows --trace writes the golden trace beside the usual output") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("clustersim-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "trace.json").string();
  const test::CommandResult run = test::run_command(
      std::string("'") + CLUSTERSIM_BINARY + "' flows --topology '" + kDir +
      "/two-servers.yaml' --flows '" + kDir + "/example.csv' --trace '" + out + "' 2>&1");
  REQUIRE(run.status == 0);
  CHECK(run.output.starts_with("id,src,dst,bytes,start_us,finish_us,duration_us,avg_rate_GBps\n"));
  const std::string text = test::read_text_file(out);
  const nlohmann::json trace = nlohmann::json::parse(text);
  CHECK(trace.at("displayTimeUnit") == "ns");
  CHECK(slices(trace).size() == 8);
  // Byte for byte what an earlier run wrote (refresh_golden.sh), so a run-to-run difference shows.
  CHECK(text == test::read_text_file(kDir + "/example.trace.golden.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cs::net
