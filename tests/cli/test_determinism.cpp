// Same input, same output, bit for bit: every subcommand runs twice on shipped inputs and its
// standard output (and any file it writes) must be byte-identical between the runs; `sweep`, the
// one command that runs points on threads, must also print the same table on 1 and 2 threads.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

std::string q(const std::string& path) {
  return "'" + path + "'";
}

// A subcommand's arguments; `{out}` is replaced by an output path unique to the run.
struct Case {
  const char* name;
  std::string args;
};

std::vector<Case> cases() {
  const std::string topo = q(kRoot + "/topologies/dgx-h100.yaml");
  const std::string two_node = q(kRoot + "/topologies/dgx-h100-2node.yaml");
  const std::string gpt2 = q(kRoot + "/models/gpt2.yaml");
  const std::string h200x4 = kRoot + "/calibrate/data/h200x4/";
  return {
      {"topo", "topo " + two_node},
      {"topo --json", "topo --json " + two_node},
      {"coll", "coll -t " + two_node + " --op allreduce -b 1K -e 1G -f 4"},
      {"coll alltoall --json", "coll -t " + two_node + " --op alltoall -b 1M -e 64M -f 8 --json"},
      {"flows", "flows --topology " + q(kRoot + "/tests/data/flows/two-servers.yaml") +
                    " --flows " + q(kRoot + "/tests/data/flows/example.csv")},
      {"ddp", "ddp --topology " + topo + " --model " + gpt2 + " -n 8"},
      {"ddp --trace", "ddp --topology " + two_node + " --model " + gpt2 + " --trace {out}"},
      {"scale", "scale --model " + gpt2 + " -t " + two_node + " --nodes 1,2"},
      {"plan", "plan -m " + q(kRoot + "/models/gpt2-xl.yaml") + " -t " +
                   q(kRoot + "/topologies/aws-p5.48xlarge.yaml") + " -t " +
                   q(kRoot + "/topologies/aws-p4d.24xlarge.yaml") +
                   " --nodes 8,16 --tokens 300B --batch 1"},
      {"fit", "fit " + q(h200x4) + " -t " + q(kRoot + "/topologies/h200-4gpu.yaml") + " -o {out}"},
      {"discover", "discover --nvidia-smi " + q(h200x4 + "topo-m.txt") + " --nccl-xml " +
                       q(h200x4 + "nccl-topo.xml") +
                       " --host-memory-bandwidth 307.2GB/s --name h200x4 -o {out}"},
      {"validate", "validate -t " + q(kRoot + "/topologies/h200-4gpu.yaml") + " -d " + q(h200x4)},
      {"validate --ddp", "validate -t " + q(kRoot + "/topologies/h200-4gpu.yaml") + " --ddp " +
                             q(kRoot + "/calibrate/data/h200x2-r2-ddp") + " --models " +
                             q(kRoot + "/models") + " --json {out}"},
      {"compare", "compare " + q(kRoot + "/calibrate/published/multinode.yaml")},
  };
}

struct Run {
  int status = -1;
  std::string output;
  std::string file;  // what it wrote at {out}, if anything
};

// Runs one after another write the same path, so that outputs naming it still compare equal;
// the path is this test process's own, so that tests running side by side never share it.
Run run(const std::string& args) {
  const fs::path out = cs::test::scratch_path("cs_determinism_out");
  fs::remove(out);
  std::string line = args;
  if (const auto at = line.find("{out}"); at != std::string::npos) line.replace(at, 5, q(out));
  const auto r = cs::test::run_command("env -u NCCL_ALGO -u NCCL_PROTO -u NCCL_NVLS_ENABLE " +
                                       q(CLUSTERSIM_BINARY) + " " + line + " 2>&1");
  Run result{r.status, r.output, fs::exists(out) ? cs::test::read_text_file(out.string()) : ""};
  fs::remove(out);
  return result;
}

}  // namespace

TEST_CASE("every subcommand prints the same bytes when run twice") {
  for (const Case& c : cases()) {
    INFO(std::string(c.name) << ": clustersim " << c.args);
    const Run first = run(c.args);
    const Run second = run(c.args);
    INFO(first.output);
    REQUIRE(first.status == 0);
    CHECK(!first.output.empty());
    CHECK(second.status == 0);
    CHECK(first.output == second.output);
    CHECK(first.file == second.file);
  }
}

TEST_CASE("sweep writes the same table on 1 and 2 threads") {
  const std::string sweep = q(kRoot + "/sim/plan/examples/allreduce-nodes.yaml");
  const Run one = run("sweep -q --threads 1 -o {out} " + sweep);
  const Run two = run("sweep -q --threads 2 -o {out} " + sweep);
  INFO(one.output);
  REQUIRE(one.status == 0);
  REQUIRE(two.status == 0);
  CHECK(!one.file.empty());
  CHECK(one.file == two.file);
}
