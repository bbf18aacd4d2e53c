// Fuzz target: a topology YAML file (topology/loader.hpp), loaded and built into the graph that
// every command routes on, since a file that loads must be one the simulator can use.
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz_input.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const cs::topo::Cluster cluster =
        cs::topo::load_cluster_from_string(cs::fuzz::as_text(data, size), "fuzz.yaml");
    const cs::topo::ClusterGraph graph(cluster);
  } catch (const cs::InputError&) {
  }
  return 0;
}
