// A topology without `name:` is named by its file's stem (topologies/foo.yaml -> foo), which is
// what the headers of `topo`, `coll` and `validate` print; `name:` wins where it is given.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace {

// tests/data/topologies/two-gpu-pcie.yaml without its `name:` line.
const std::string kUnnamed = R"(gpu_models:
  TestGPU: {bf16: 100TFLOPS, fp16: 100TFLOPS, fp32: 10TFLOPS, memory: 16GB, memory_bandwidth: 1TB/s}
servers:
  box:
    nodes:
      - {name: gpu, kind: gpu, model: TestGPU, count: 2}
      - {name: cpu, kind: cpu, memory_bandwidth: 100GB/s}
    links:
      - {from: "gpu[0-1]", to: cpu, type: pcie, generation: 4, width: 16}
cluster:
  - {server: box, count: 1, name: host}
)";

}  // namespace

TEST_CASE("a topology without name: is named by its file's stem") {
  using cs::topo::load_cluster_from_string;
  CHECK(load_cluster_from_string(kUnnamed, "topologies/foo.yaml").name == "foo");
  CHECK(load_cluster_from_string(kUnnamed, "./a/b/pcie-pair.v2.yaml").name == "pcie-pair.v2");
  CHECK(load_cluster_from_string(kUnnamed, "bare").name == "bare");
  // The file name stays the source, for messages that point into the file.
  CHECK(load_cluster_from_string(kUnnamed, "topologies/foo.yaml").source_file ==
        "topologies/foo.yaml");
  CHECK(load_cluster_from_string("name: given\n" + kUnnamed, "topologies/foo.yaml").name ==
        "given");
}

TEST_CASE("clustersim coll's header names an unnamed topology by its stem, not its path") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("clustersim-stem-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "pcie-pair.yaml") << kUnnamed;
  const cs::test::CommandResult r =
      cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' coll --topology '" +
                            (dir / "pcie-pair.yaml").string() + "' -b 8 -e 8 2>&1");
  fs::remove_all(dir);
  CHECK(r.status == 0);
  CHECK(r.output.starts_with("# clustersim coll: allreduce on pcie-pair, 2 ranks"));
}
