// The loader refuses a cluster too large to hold before it builds it (issue 41: a million servers
// were refused after a minute and 15 GB): the fabric's arithmetic and the memory estimate run on
// the spec, and the estimate counts exactly the nodes and links that loading then builds.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "topology/loader.hpp"

using namespace cs;
using namespace cs::topo;

namespace {

const std::string kTopologies = std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/";

// Servers of one GPU cabled to one NIC, all NICs on one switch: 2 nodes and 2 links a server (its
// PCIe link and its NIC's port), and the switch.
const std::string kOneSwitch = std::string(CLUSTERSIM_TEST_DATA) + "/topologies/one-switch.yaml";

std::string refusal(const std::string& path, int servers, std::uint64_t memory_bytes) {
  try {
    load_cluster(path, {servers, memory_bytes});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a cluster whose estimate passes the memory given is refused before it is built") {
  // 1,000 servers: 2,000 nodes and the switch = 2,001 nodes; 1,000 PCIe links and 1,000 ports =
  // 2,000 links. At 550 and 320 bytes: 1,100,550 + 640,000 = 1,740,550 bytes.
  const std::uint64_t bytes = 2001 * kNodeBytes + 2000 * kLinkBytes;
  CHECK(bytes == 1'740'550);
  const Cluster fits = load_cluster(kOneSwitch, {1000, bytes});
  CHECK(fits.nodes.size() == 2001);
  CHECK(fits.links.size() == 2000);
  CHECK(refusal(kOneSwitch, 1000, bytes - 1) ==
        "with --nodes 1000: " + kOneSwitch +
            ":12: key 'count': the cluster would take about 0.00174 GB to load and route (2001 "
            "nodes, 2000 links), more than the 0.00174 GB of the memory given; use fewer servers");
}

TEST_CASE("the estimate counts exactly what the shipped files build, resized or not") {
  // Each file loaded as built, then again with one byte less than its own size at the estimate's
  // rates: the refusal's counts are the built cluster's, fabric switches and links included
  // (two- and three-level, rail and fat tree, planes, spray, one leaf, no fabric).
  struct Case {
    const char* file;
    int servers;
  };
  const std::vector<Case> cases = {
      {"dgx-h100.yaml", 0},
      {"h200-4gpu.yaml", 0},
      {"aws-p5.48xlarge.yaml", 0},
      {"aws-p5.48xlarge.yaml", 4},
      {"aws-g6e.48xlarge.yaml", 8},
      {"dgx-h100-2node.yaml", 0},
      {"dgx-h100-16node.yaml", 0},
      {"dgx-h100-16node-100gbe.yaml", 0},
      {"azure-ndmv4.yaml", 3},
      {"dgx-h100-128node-fattree.yaml", 0},
      {"dgx-h100-2048node-superpod.yaml", 40},
      {"dgx-h100-2048node-2plane.yaml", 40},
      {"dgx-h100-16384node-roce.yaml", 100},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.servers);
    const std::string path = kTopologies + c.file;
    const Cluster built = load_cluster(path, {c.servers});
    const std::uint64_t bytes = built.nodes.size() * kNodeBytes + built.links.size() * kLinkBytes;
    const std::string why = refusal(path, c.servers, bytes - 1);
    CHECK(why.find("(" + std::to_string(built.nodes.size()) + " nodes, " +
                   std::to_string(built.links.size()) + " links)") != std::string::npos);
  }
}
