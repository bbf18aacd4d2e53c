// The bad-input corpus: one file under tests/data/bad per validation error. Each message must name
// the file, the line a person would edit, the key, and say what is wrong or what would be valid.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "topology/loader.hpp"

namespace {

struct BadFile {
  const char* name;                    // tests/data/bad/<name>.yaml
  int line;                            // 1-based line the message must point at
  const char* key;                     // key the message must name ("" where no key applies)
  std::vector<const char*> fragments;  // text the message must contain
};

// Lines are counted in the files: each starts with a one-line comment saying what is wrong.
const std::vector<BadFile> kCorpus = {
    {"unknown_key", 13, "bandwith", {"did you mean 'bandwidth'?", "Valid keys: from, to"}},
    {"unknown_top_key", 16, "fabrik", {"did you mean 'fabric'?"}},
    {"bad_unit", 13, "bandwidth", {"'100Gbit' is not a bandwidth", "valid units", "Gbps"}},
    {"nonpositive_bandwidth", 13, "bandwidth", {"must be positive", "0GB/s"}},
    {"bandwidth_overflow", 13, "bandwidth", {"'1e308TB/s' is too large a bandwidth"}},
    {"negative_latency", 13, "latency", {"must not be negative", "-1us"}},
    {"efficiency_out_of_range", 13, "efficiency", {"'1.5'", "greater than 0 and at most 1"}},
    {"duplicate_node", 11, "name", {"duplicate node name 'gpu1'", "duplicate_node.yaml:8"}},
    {"duplicate_gpu_model", 5, "H100", {"duplicate gpu model", "first defined at line 4"}},
    {"duplicate_instance", 16, "name", {"'node0' is used twice"}},
    {"duplicate_key", 13, "type", {"given twice in link entry"}},
    {"unknown_link_node", 13, "to", {"no node 'gpu9'", "known nodes: gpu0, gpu1, cpu, nic"}},
    {"unknown_gpu_model", 8, "model", {"'H10'", "did you mean 'H100'?", "gpu_models: H100"}},
    {"unknown_template", 15, "server", {"'bx'", "did you mean 'box'?", "servers: box"}},
    {"count_zero", 15, "count", {"'0' is out of range", "from 1 to"}},
    {"bad_integer", 8, "count", {"'two' is not an integer"}},
    {"huge_count", 15, "count", {"out of range", "from 1 to 1000000"}},
    {"unclosed_range", 12, "from", {"'gpu[0-1'", "not closed by ']'"}},
    {"backwards_range", 12, "from", {"runs backwards"}},
    {"zip_mismatch", 12, "to", {"'from' names 2 nodes and 'to' names 3", "equal counts"}},
    {"self_link", 13, "to", {"links node 'nic' to itself"}},
    {"unknown_link_type", 13, "type", {"'nvlnk'", "did you mean 'nvlink'?", "valid: pcie"}},
    {"bad_pcie_generation", 13, "generation", {"PCIe generation 9", "valid: 3, 4, 5, 6"}},
    {"key_not_for_type", 13, "width", {"does not apply to nvlink links", "generation, count"}},
    {"missing_type", 13, "type", {"missing in link entry"}},
    {"bad_name", 8, "name", {"'gpu/a' contains '/'"}},
    {"scalar_for_map", 3, "servers", {"must be a map"}},
    {"node_entry_not_map", 11, "nodes", {"must be a map", "found a scalar"}},
    {"gpu_at_top_level", 17, "kind", {"GPUs belong in a server template"}},
    {"unknown_node_kind", 11, "kind", {"'nvswich'", "did you mean 'nvswitch'?"}},
    {"unknown_fabric_kind", 17, "kind", {"'fat-tree'", "did you mean 'fat_tree'?"}},
    {"fabric_too_few_spines", 19, "spines", {"cannot take 4 leaf uplinks", "at least 2"}},
    {"fabric_no_down_ports", 19, "oversubscription", {"0 down and 2 up ports"}},
    {"fabric_exceeds_two_levels", 18, "leaf_ports", {"3 leaves", "at most 2 leaves"}},
    {"fabric_param_for_single_switch", 18, "leaf_ports", {"single_switch", "take: link"}},
    {"fabric_without_nics", 15, "kind", {"server 'node0'", "has no nic node"}},
    {"unknown_infiniband_rate", 18, "rate", {"'NDR400'", "valid: HDR, NDR, XDR"}},
    {"gpus_cut_off", 8, "links", {"'node1/gpu0' cannot reach GPU 'node0/gpu0'"}},
    {"malformed_yaml", 7, "", {"malformed YAML"}},
    {"empty_template", 7, "nodes", {"has no nodes"}},
    {"bad_multicast", 11, "multicast", {"'maybe' is not true or false"}},
    {"sharp_on_ethernet", 18, "sharp", {"SHARP reduces in InfiniBand switches", "is ethernet"}},
    {"unknown_cpu_vendor", 9, "vendor", {"unknown cpu vendor 'via'", "valid: intel, amd, arm"}},
};

std::string load_error(const std::string& path) {
  try {
    cs::topo::load_cluster(path);
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

}  // namespace

TEST_CASE("every bad file fails with file:line, the key and a useful message") {
  for (const auto& bad : kCorpus) {
    const std::string path = std::string(CLUSTERSIM_TEST_DATA) + "/bad/" + bad.name + ".yaml";
    const std::string message = load_error(path);
    CAPTURE(message);
    CHECK(message.rfind(path + ":" + std::to_string(bad.line) + ": ", 0) == 0);
    if (bad.key[0] != '\0') {
      CHECK(message.find(std::string("key '") + bad.key + "'") != std::string::npos);
    }
    for (const char* fragment : bad.fragments) {
      CHECK(message.find(fragment) != std::string::npos);
    }
  }
}

TEST_CASE("every file in tests/data/bad has a row in the corpus table") {
  // A bad file added without a row in kCorpus would never be checked. The folders hold the
  // corpus of every format by class of error (tests/cli/test_bad_inputs.cpp).
  std::set<std::string> listed;
  for (const auto& bad : kCorpus) listed.insert(std::string(bad.name) + ".yaml");
  std::set<std::string> on_disk;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CLUSTERSIM_TEST_DATA) + "/bad")) {
    if (entry.is_regular_file()) on_disk.insert(entry.path().filename().string());
  }
  CHECK(on_disk == listed);
}

TEST_CASE("a missing file is an InputError naming the path") {
  const std::string path = std::string(CLUSTERSIM_TEST_DATA) + "/bad/no-such-file.yaml";
  const std::string message = load_error(path);
  CHECK(message.rfind(path + ": ", 0) == 0);
  CHECK(message.find("cannot open") != std::string::npos);
}

TEST_CASE("text that is not a topology never crashes the loader") {
  // Each is wrong in a different structural way; all must end in InputError, none in a crash or
  // another exception type.
  const std::vector<std::string> inputs = {
      "",
      "- just\n- a list\n",
      "42\n",
      "servers: {box: 5}\ncluster: []\n",
      "servers: {box: {nodes: {a: 1}}}\ncluster: []\n",
      "servers: {box: {nodes: [{name: [1, 2], kind: gpu}]}}\ncluster: []\n",
      "servers: {box: {nodes: [{name: c, kind: cpu, memory_bandwidth: 1GB/s}]}}\ncluster: 7\n",
      "servers: {box: {nodes: [{name: c, kind: cpu, memory_bandwidth: 1GB/s}]}}\n"
      "cluster: [{server: box}]\nfabric: [1]\n",
      "servers: {box: {nodes: [{name: c, kind: cpu, memory_bandwidth: 1GB/s}], links: [[]]}}\n"
      "cluster: [{server: box}]\n",
      "{a: [}\n",
      "servers: {box: {nodes: [{name: c, kind: cpu, memory_bandwidth: 1GB/s}]}}\n"
      "cluster: [{server: box}]\nlinks: [{from: [], to: c, type: pcie, generation: 4}]\n",
      "? [complex, key]\n: value\n",
  };
  for (const auto& text : inputs) {
    CAPTURE(text);
    CHECK_THROWS_AS(cs::topo::load_cluster_from_string(text, "inline.yaml"), cs::InputError);
  }
}
