// Every output file of every command is checked before the command's work: an output whose folder
// does not exist, or that names a folder, is refused with exit 2 and one line naming the flag,
// and nothing is written (issue 41: `scale --plot missing/dir/out.png` ran the whole scaling and
// then printed `gnuplot failed: ` with no reason).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

// clustersim from the repository root, so that inputs are given by their paths in the checkout;
// the outputs go under missing/, a folder that does not exist there.
cs::test::CommandResult run(const std::string& arguments) {
  return cs::test::run_command("cd '" + std::string(CLUSTERSIM_SOURCE_DIR) + "' && '" +
                               std::string(CLUSTERSIM_BINARY) + "' " + arguments + " 2>&1");
}

}  // namespace

TEST_CASE("every output flag into a folder that does not exist is refused before the work") {
  REQUIRE_FALSE(fs::exists(fs::path(CLUSTERSIM_SOURCE_DIR) / "missing"));
  struct Case {
    const char* flag;
    std::string arguments;  // the command, its inputs and the flag, without the output path
    const char* output;
  };
  const std::string step = "-m models/gpt2.yaml -t topologies/dgx-h100.yaml ";
  const std::string flows =
      "flows -t tests/data/flows/two-servers.yaml --flows "
      "tests/data/flows/example.csv ";
  const std::string fit = "-t topologies/h200-4gpu.yaml ";
  const std::vector<Case> cases = {
      {"--plot", "scale " + step + "--gpus 1,8 --plot", "missing/out.png"},
      {"--plot", "plan " + step + "--steps 100 --plot", "missing/out.svg"},
      {"--trace", "ddp " + step + "--trace", "missing/trace.json"},
      {"--csv", flows + "--csv", "missing/flows.csv"},
      {"--links-csv", flows + "--links-csv", "missing/links.csv"},
      {"--trace", flows + "--trace", "missing/trace.json"},
      {"--out", "fit calibrate/data/h200x4 " + fit + "-o", "missing/calibration.json"},
      {"--csv", "validate --data calibrate/data/h200x4 " + fit + "--csv", "missing/v.csv"},
      {"--json", "validate --data calibrate/data/h200x4 " + fit + "--json", "missing/v.json"},
      {"--json", "validate --ddp calibrate/data/h200x2-r2-ddp " + fit + "--json", "missing/d.json"},
      {"-o", "sweep sim/plan/examples/gpt2-xl-aws-plan.yaml -o", "missing/sweep.csv"},
      {"--out",
       "discover --nvidia-smi calibrate/data/h100x1/topo-m.txt --gpu 'NVIDIA H100 80GB HBM3' "
       "--host-memory-bandwidth 307.2GB/s -o",
       "missing/topology.yaml"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.arguments);
    const cs::test::CommandResult r = run(c.arguments + " " + c.output);
    cs::test::check_bad_input(r, std::string("error: key '") + c.flag + "': cannot write '" +
                                     c.output +
                                     "': folder 'missing' does not exist; create it "
                                     "first");
    CHECK(r.output.find("sweep: 1/") == std::string::npos);  // no point ran
    CHECK_FALSE(fs::exists(fs::path(CLUSTERSIM_SOURCE_DIR) / "missing"));
  }
}

TEST_CASE("an output that names a folder, or a file as its folder, is refused before the work") {
  // tests/ is a folder; README.md is a file, so README.md/out.png has no folder to go in.
  const std::string scale = "scale -m models/gpt2.yaml -t topologies/dgx-h100.yaml --gpus 1 ";
  cs::test::check_bad_input(run(scale + "--plot tests"),
                            "key '--plot': cannot write 'tests': it is a folder; give a file name");
  cs::test::check_bad_input(run(scale + "--plot README.md/out.png"),
                            "key '--plot': cannot write 'README.md/out.png': 'README.md' is not a "
                            "folder");
  // A plot that is neither .png nor .svg is refused up front too, with the same flag.
  cs::test::check_bad_input(run(scale + "--plot out.gif"),
                            "key '--plot': 'out.gif' is neither .png nor .svg");
}
