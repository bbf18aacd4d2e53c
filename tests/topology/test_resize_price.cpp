// --nodes (LoadOptions::servers) and server prices. Switch counts follow the generator rules
// restated in test_fabric.cpp: a 64-port leaf at 1:1 has 32 down ports, uplink count = NICs on the
// leaf, spines = ceil(uplinks / 64).
#include <doctest/doctest.h>

#include <string>

#include "topology/loader.hpp"

using namespace cs::topo;

namespace {

const std::string kModels =
    "gpu_models: {G: {bf16: 1TFLOPS, fp16: 1TFLOPS, fp32: 1TFLOPS, memory: 1GB, "
    "memory_bandwidth: 1TB/s}}\n";

// A server of one GPU and `nics` NICs, `count` of them, with `fabric` (may be empty) and `price`
// (the template's price_per_hour value, may be empty). Without a price the lines are: 1 gpu_models,
// 2 servers, 3 s, 4 nodes, 5-6 the nodes, 7 links, 8 the link, 9 cluster, 10 fabric.
std::string file(int count, int nics, const std::string& fabric, const std::string& price) {
  return kModels + "servers:\n  s:\n" +
         (price.empty() ? "" : "    price_per_hour: " + price + "\n") +
         "    nodes:\n"
         "      - {name: gpu, kind: gpu, model: G}\n"
         "      - {name: nic, kind: nic, count: " +
         std::to_string(nics) +
         "}\n"
         "    links:\n"
         "      - {from: \"nic[0-" +
         std::to_string(nics - 1) + "]\", to: gpu, type: pcie, generation: 5}\n" +
         "cluster: [{server: s, count: " + std::to_string(count) + ", name: n}]\n" + fabric;
}

const std::string kFatTree =
    "fabric: {kind: fat_tree, leaf_ports: 64, link: {type: ethernet, bandwidth: 100Gbps}}\n";

}  // namespace

TEST_CASE("--nodes resizes the one cluster entry and the fabric generator with it") {
  // The file says 1 server of 32 NICs: one leaf, no spine.
  const Cluster one = load_cluster_from_string(file(1, 32, kFatTree, ""), "r.yaml");
  CHECK(one.servers.size() == 1);
  CHECK(one.fabric.leaves.size() == 1);
  CHECK(one.fabric.spines.empty());
  // 4 servers: 128 NICs / 32 down ports = 4 leaves; 4 x 32 uplinks / 64 ports = 2 spines.
  const Cluster four = load_cluster_from_string(file(1, 32, kFatTree, ""), "r.yaml", {4});
  CHECK(four.servers.size() == 4);
  CHECK(four.ranks.size() == 4);
  CHECK(four.fabric.leaves.size() == 4);
  CHECK(four.fabric.spines.size() == 2);
  CHECK(four.servers[3].name == "n3");
  // Fewer servers than the file's: 16 -> 2 servers of 4 NICs, 8 NICs on one leaf.
  const Cluster two = load_cluster_from_string(file(16, 4, kFatTree, ""), "r.yaml", {2});
  CHECK(two.servers.size() == 2);
  CHECK(two.fabric.leaves.size() == 1);
}

TEST_CASE("--nodes refuses what it cannot resize, naming the flag") {
  SUBCASE("no fabric generator to join the servers") {
    CHECK_THROWS_WITH_AS(load_cluster_from_string(file(1, 1, "", ""), "r.yaml", {2}),
                         doctest::Contains("r.yaml:9: key 'fabric': --nodes 2 needs a fabric "
                                           "generator to join the servers"),
                         cs::InputError);
    // One server needs no fabric.
    CHECK(load_cluster_from_string(file(3, 1, "", ""), "r.yaml", {1}).servers.size() == 1);
  }
  SUBCASE("a cluster of two entries") {
    const std::string text = file(1, 1, kFatTree, "") + "";
    std::string two = text;
    two.replace(two.find("cluster: [{server: s, count: 1, name: n}]"),
                std::string("cluster: [{server: s, count: 1, name: n}]").size(),
                "cluster:\n  - {server: s, count: 1, name: a}\n  - {server: s, count: 1, name: b}");
    CHECK_THROWS_WITH_AS(load_cluster_from_string(two, "r.yaml", {4}),
                         doctest::Contains("r.yaml:11: key 'cluster': --nodes 4 sets the count of "
                                           "a cluster of one entry; this file lists 2"),
                         cs::InputError);
  }
  SUBCASE("past what two switch levels hold") {
    // 64-port leaves at 1:1: at most 64 leaves x 32 NICs = 2,048 NICs; 65 servers of 32 NICs
    // need 65 leaves.
    CHECK_THROWS_WITH_AS(load_cluster_from_string(file(1, 32, kFatTree, ""), "r.yaml", {65}),
                         doctest::Contains("with --nodes 65: r.yaml:10: key 'leaf_ports': 65 "
                                           "leaves of 64 ports are more than one spine layer can "
                                           "join (at most 64 leaves)"),
                         cs::InputError);
    CHECK(load_cluster_from_string(file(1, 32, kFatTree, ""), "r.yaml", {64}).servers.size() == 64);
  }
}

TEST_CASE("a server template's price, with its source and date") {
  const Cluster c = load_cluster_from_string(
      file(2, 1, kFatTree, "{usd: 55.04, source: \"AWS price list\", date: 2026-01-21}"), "p.yaml");
  REQUIRE(c.prices.size() == 1);
  const ServerPrice* p = c.price_of("s");
  REQUIRE(p != nullptr);
  CHECK(p->usd_per_hour == 55.04);
  CHECK(p->source == "AWS price list");
  CHECK(p->date == "2026-01-21");
  CHECK(p->loc.line == 4);
  CHECK(c.price_of("t") == nullptr);
  CHECK(load_cluster_from_string(file(1, 1, "", ""), "p.yaml").prices.empty());
}

TEST_CASE("a price that is not a price is refused at its key") {
  const auto error = [](const std::string& price) {
    try {
      load_cluster_from_string(file(1, 1, "", price), "p.yaml");
    } catch (const cs::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("{usd: 0, source: s, date: 2026-01-21}")
            .find("p.yaml:4: key 'usd': '0' is out of range") != std::string::npos);
  CHECK(error("{usd: ten, source: s, date: 2026-01-21}").find("key 'usd': 'ten' is not a number") !=
        std::string::npos);
  CHECK(error("{usd: 3, date: 2026-01-21}").find("key 'source': missing") != std::string::npos);
  CHECK(error("{usd: 3, source: s}").find("key 'date': missing") != std::string::npos);
  CHECK(error("{usd: 3, source: s, date: Jan 2026}")
            .find("key 'date': 'Jan 2026' is not a date; valid: YYYY-MM-DD") != std::string::npos);
  CHECK(error("{usd: 3, source: s, date: 2026-01-21, currency: EUR}").find("key 'currency'") !=
        std::string::npos);
  CHECK(error("12.5").find("key 'price_per_hour'") != std::string::npos);
}
