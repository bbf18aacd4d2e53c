// Every command that writes files refuses an output that is one of its inputs (the same file under
// any name: as given, through ./, a symlink or a hard link), with exit 2, one line naming the flag
// and both paths, and the input left byte for byte; an output that does not exist yet is written.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kSource = CLUSTERSIM_SOURCE_DIR;

// A scratch folder of this test process holding copies of the inputs: the one-GPU H100
// measurements (folder h100x1/, with its fitted calibration.json), its topology, and the example
// flows.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("clustersim-outin-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(kSource + "/calibrate/data/h100x1", dir / "h100x1");
    fs::copy_file(kSource + "/topologies/dgx-h100.yaml", dir / "dgx-h100.yaml");
    fs::copy_file(kSource + "/tests/data/flows/two-servers.yaml", dir / "servers.yaml");
    fs::copy_file(kSource + "/tests/data/flows/example.csv", dir / "flows.csv");
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string text(const std::string& name) const {
    return cs::test::read_text_file((dir / name).string());
  }
  // Runs clustersim in the scratch folder, so that paths may be given relative to it.
  cs::test::CommandResult run(const std::string& arguments) const {
    return cs::test::run_command("cd '" + dir.string() + "' && '" + std::string(CLUSTERSIM_BINARY) +
                                 "' " + arguments + " 2>&1");
  }
};

}  // namespace

TEST_CASE("fit -o onto a measurement file or the topology is refused, onto calibration.json not") {
  const Scratch s;
  const std::string copy = s.text("h100x1/copy.json");
  cs::test::check_bad_input(s.run("fit h100x1 -t dgx-h100.yaml -o h100x1/copy.json"),
                            "error: key '--out': 'h100x1/copy.json' is the measurement file "
                            "'h100x1/copy.json'; an output may not "
                            "overwrite an input");
  CHECK(s.text("h100x1/copy.json") == copy);
  // A symlink to the topology is the topology.
  fs::create_symlink("dgx-h100.yaml", s.dir / "link.yaml");
  cs::test::check_bad_input(s.run("fit h100x1 -t dgx-h100.yaml -o link.yaml"),
                            "key '--out': 'link.yaml' is the --topology file 'dgx-h100.yaml'");
  // The fitter's own file in the folder is skipped when measurements are read, so it is no input:
  // fitting again replaces it (tests/golden/validate/refresh.sh does so), here with itself.
  const std::string fitted = s.text("h100x1/calibration.json");
  CHECK(s.run("fit h100x1 -t dgx-h100.yaml -o h100x1/calibration.json").status == 0);
  CHECK(s.text("h100x1/calibration.json") == fitted);
}

TEST_CASE("validate --json / --csv onto the topology or the calibration is refused") {
  const Scratch s;
  const std::string topology = s.text("dgx-h100.yaml");
  cs::test::check_bad_input(
      s.run("validate -t dgx-h100.yaml --data h100x1 --json ./dgx-h100.yaml"),
      "key '--json': './dgx-h100.yaml' is the --topology file 'dgx-h100.yaml'");
  CHECK(s.text("dgx-h100.yaml") == topology);
  const std::string calibration = s.text("h100x1/calibration.json");
  cs::test::check_bad_input(
      s.run("validate -t dgx-h100.yaml --data h100x1 -c h100x1/calibration.json --csv "
            "h100x1/../h100x1/calibration.json"),
      "key '--csv': 'h100x1/../h100x1/calibration.json' is the --calibration file "
      "'h100x1/calibration.json'");
  CHECK(s.text("h100x1/calibration.json") == calibration);
  cs::test::check_bad_input(
      s.run("validate -t dgx-h100.yaml --data h100x1 --csv h100x1/gemm.json"),
      "key '--csv': 'h100x1/gemm.json' is the measurement file 'h100x1/gemm.json'");
  // The folder's fitted calibration, though validate does not read it without -c: only fit may
  // replace it (a report there would leave the folder unreadable to fit and validate).
  cs::test::check_bad_input(
      s.run("validate -t dgx-h100.yaml --data h100x1 --json h100x1/calibration.json"),
      "key '--json': 'h100x1/calibration.json' is the fitted calibration file "
      "'h100x1/calibration.json'");
  CHECK(s.text("h100x1/calibration.json") == calibration);
  // New files are written as before.
  CHECK(s.run("validate -t dgx-h100.yaml --data h100x1 --csv v.csv --json v.json").status == 0);
  CHECK(fs::exists(s.dir / "v.csv"));
  CHECK(fs::exists(s.dir / "v.json"));
}

TEST_CASE("flows --csv, --links-csv and --trace onto the flows or the topology are refused") {
  const Scratch s;
  const std::string flows = s.text("flows.csv");
  const std::string base = "flows --topology servers.yaml --flows flows.csv ";
  cs::test::check_bad_input(s.run(base + "--csv flows.csv"),
                            "key '--csv': 'flows.csv' is the --flows file 'flows.csv'");
  // A hard link is the same file under another name.
  fs::create_hard_link(s.dir / "flows.csv", s.dir / "hard.csv");
  cs::test::check_bad_input(s.run(base + "--trace hard.csv"),
                            "key '--trace': 'hard.csv' is the --flows file 'flows.csv'");
  cs::test::check_bad_input(s.run(base + "--csv out.csv --links-csv servers.yaml"),
                            "key '--links-csv': 'servers.yaml' is the --topology file");
  CHECK(s.text("flows.csv") == flows);
  CHECK_FALSE(fs::exists(s.dir / "out.csv"));  // refused before anything is written
}

TEST_CASE("discover -o onto the nvidia-smi text or the NCCL XML is refused") {
  const Scratch s;
  const std::string smi = s.text("h100x1/topo-m.txt");
  const std::string base =
      "discover --nvidia-smi h100x1/topo-m.txt --gpu 'NVIDIA H100 80GB HBM3' "
      "--host-memory-bandwidth 307.2GB/s ";
  cs::test::check_bad_input(
      s.run(base + "-o h100x1/topo-m.txt"),
      "key '--out': 'h100x1/topo-m.txt' is the --nvidia-smi file 'h100x1/topo-m.txt'");
  CHECK(s.text("h100x1/topo-m.txt") == smi);
  fs::copy_file(kSource + "/calibrate/data/h200x4/nccl-topo.xml", s.dir / "nccl.xml");
  cs::test::check_bad_input(
      s.run("discover --nvidia-smi h100x1/topo-m.txt --nccl-xml nccl.xml --host-memory-bandwidth "
            "307.2GB/s -o ./nccl.xml"),
      "key '--out': './nccl.xml' is the --nccl-xml file 'nccl.xml'");
  CHECK(s.run(base + "-o new.yaml").status == 0);
}
