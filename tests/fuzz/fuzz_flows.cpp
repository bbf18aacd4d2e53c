// Fuzz target: a flows CSV file (network/flow_table.hpp), the connection matrix of
// `clustersim flows`, parsed against the two-server topology its test data uses.
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz_input.hpp"
#include "network/flow_table.hpp"
#include "topology/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cs::topo::Cluster cluster =
      cs::topo::load_cluster(cs::fuzz::kSourceDir + "/tests/data/flows/two-servers.yaml");
  try {
    cs::net::parse_flow_table(cs::fuzz::as_text(data, size), "fuzz.csv", cluster);
  } catch (const cs::InputError&) {
  }
  return 0;
}
