// `spray: true`: the spines of a two-level fabric stand as one logical spine, each leaf's uplinks
// one trunk to it, derived by hand from the generator rules (topologies/README.md) as in
// test_fabric.cpp.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "fabric_fixtures.hpp"
#include "topology/graph.hpp"
#include "topology/summary.hpp"

using namespace cs::topo;
using namespace cs::topo::testing;

TEST_CASE("a sprayed fat tree: one logical spine, each leaf's uplinks one trunk") {
  // As in test_fabric.cpp: 12 NICs on 8-port leaves at 1:1 -> 3 leaves of 4 NICs, 4 uplinks each,
  // ceil(12 / 8) = 2 spines. Sprayed: one logical spine standing for those 2, and each leaf's 4
  // uplinks one link of 4 x 12.5 = 50 GB/s: the same 150 GB/s up as the 6 links of 25 GB/s.
  const Cluster c = load_fabric(6, 2, "  kind: fat_tree\n  leaf_ports: 8\n  spray: true\n");
  CHECK(c.fabric.spray);
  CHECK(c.fabric.leaves.size() == 3);
  REQUIRE(c.fabric.spines.size() == 1);
  CHECK(c.fabric.sprayed_spines == 2);
  const auto up = leaf_spine_links(c);
  REQUIRE(up.size() == 3);
  for (const auto& l : up) {
    CHECK(l.spine == "spine0");
    CHECK(l.bandwidth_Bps == doctest::Approx(4 * kPort_Bps));
    CHECK(l.label == "Ethernet 100Gbps x4");
  }
  CHECK(sum_bandwidth(up) == doctest::Approx(150e9));
  const ClusterGraph graph(c);
  const std::string text = format_summary(summarize(graph), c);
  CHECK(text.find("1 logical spine (spraying over 2 spines)") != std::string::npos);
}

TEST_CASE("spray is refused where it means nothing or is not generated") {
  CHECK_THROWS_WITH_AS(load_fabric(2, 1, "  kind: single_switch\n  spray: true\n"),
                       doctest::Contains("spray"), cs::InputError);
  CHECK_THROWS_WITH_AS(
      load_fabric(6, 2, "  kind: fat_tree\n  leaf_ports: 8\n  levels: 3\n  spray: true\n"),
      doctest::Contains("two-level fabrics only"), cs::InputError);
}
