// replay_flows on the example fabric (tests/data/flows/two-servers.yaml): which nodes may be their
// own destination; and a transfer too slow for simulated time.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "network/flow_replay.hpp"
#include "network/transfer_time.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace cs::net {
namespace {

const std::string kTopology = std::string(CLUSTERSIM_TEST_DATA) + "/flows/two-servers.yaml";

FlowRequest to_itself(const topo::Cluster& cluster, const std::string& node, double bytes) {
  FlowRequest request;
  request.id = "self";
  request.src = request.dst = cluster.find_node(node);
  REQUIRE(request.src >= 0);
  request.bytes = bytes;
  request.loc = SourceLoc{"flows.csv", 2};
  return request;
}

TEST_CASE("a GPU copies to itself, any other node as its own destination is refused") {
  const topo::Cluster cluster = topo::load_cluster(kTopology);
  const topo::ClusterGraph graph(cluster);
  // TestGPU's memory: 1 TB/s; a device-local copy reads and writes every byte, at 0.90 of half
  // the memory bandwidth (copies.cpp priors): 1 GB at 0.45 TB/s = 2222.2222... us, rounded to
  // 2,222,222,222 ps, after the fixed 1.85 us.
  const ReplayResult copy =
      replay_flows(graph, {to_itself(cluster, "node0/gpu0", 1e9)}, Fidelity::flow);
  CHECK(copy.finish.at(0) == 1'850'000 + 2'222'222'222);
  for (const std::string node : {"node0/cpu", "node0/nic", "tor"}) {
    CAPTURE(node);
    const std::string expected = "flows.csv:2: key 'dst': '" + node + "' is also the source";
    CHECK_THROWS_WITH_AS(replay_flows(graph, {to_itself(cluster, node, 1e9)}, Fidelity::flow),
                         doctest::Contains(expected.c_str()), InputError);
  }
}

TEST_CASE("a transfer that would outlast simulated time is bad input, not a crash") {
  // 1 GB at 100 GB/s: 10 ms exactly. 1 GB at 1 B/s: 1e9 s, past the end of TimePs (9.2e6 s);
  // such a rate can only come from the input (a 1 bps link), so it is an InputError.
  CHECK(transfer_time_ps(1e9, 100e9) == 10 * kPsPerMs);
  CHECK_THROWS_WITH_AS(transfer_time_ps(1e9, 1.0),
                       doctest::Contains("past the end of simulated time"), InputError);
}

}  // namespace
}  // namespace cs::net
