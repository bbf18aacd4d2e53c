// No committed calibration moves NCCL's choice (issue 18): NCCL picks with its own constants, so a
// calibration may change how long a call takes but never which algorithm, protocol or channels
// run. Checked against what NCCL logged on every 2- and 4-GPU H200 run, and through
// `clustersim coll` for each committed calibration on the topology it was fitted for.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/validate/validate.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

// The (size, algo, proto, channels) columns of `clustersim coll --csv`, one string per row.
std::vector<std::string> coll_choices(const std::string& args) {
  const cs::test::CommandResult r =
      cs::test::run_command(std::string("'") + CLUSTERSIM_BINARY + "' coll " + args + " --csv");
  REQUIRE(r.status == 0);
  std::vector<std::string> rows;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("size,", 0) == 0) continue;
    // size,count,type,redop,root,time_us,algbw,busbw,algo,proto,channels
    std::vector<std::string> cells;
    std::istringstream fields(line);
    std::string cell;
    while (std::getline(fields, cell, ',')) cells.push_back(cell);
    REQUIRE(cells.size() == 11);
    rows.push_back(cells[0] + " " + cells[8] + " " + cells[9] + " " + cells[10]);
  }
  return rows;
}

}  // namespace

TEST_CASE("no committed H200 calibration moves a choice NCCL logged on any H200 run") {
  const cs::topo::Cluster cluster = cs::topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const char* calibrations[] = {"h200x4", "h200x2", "h200x4-run5"};
  const char* runs[] = {"h200x4",      "h200x4-run2", "h200x4-run3", "h200x4-run4",
                        "h200x4-run5", "h200x2",      "h200x2-run2", "h200x2-run3"};
  for (const char* cal_name : calibrations) {
    const Calibration cal =
        load_calibration(kRoot + "/calibrate/data/" + cal_name + "/calibration.json");
    for (const char* run : runs) {
      const std::string what = std::string(cal_name) + " on " + run;
      CAPTURE(what);
      const Validation v =
          validate(read_measurements(kRoot + "/calibrate/data/" + run), cluster, cal);
      int logged = 0;
      for (const Prediction& p : v.predictions) {
        if (p.kind != "nccl" || p.nccl_choice.empty()) continue;
        ++logged;
        const std::string point =
            p.group + " " + std::to_string(p.n_ranks) + " ranks " + std::to_string(p.bytes) + " B";
        CAPTURE(point);
        CHECK(p.calibrated_choice == p.prior_choice);
      }
      CHECK(logged > 500);  // every run logged NCCL's choice for each default-run call
    }
  }
}

TEST_CASE(
    "clustersim coll picks the same algorithm, protocol and channels with every calibration") {
  struct Case {
    const char* calibration;
    const char* topology;
    const char* ranks;
  };
  // Each calibration on the topology `tests/golden/validate/refresh.sh` fits it on, NVLS on or
  // off alike on both sides (a calibration otherwise brings its runs' setting: below).
  const Case cases[] = {{"h200x4", "h200-4gpu", "4"},
                        {"h200x4-run5", "h200-4gpu", "4"},
                        {"h200x2", "h200-4gpu", "2"},
                        {"h100x1", "dgx-h100", "8"},
                        {"h200x1", "dgx-h200", "8"}};
  for (const Case& c : cases) {
    for (const char* op : {"allreduce", "allgather", "reducescatter", "broadcast", "alltoall"}) {
      const std::string what = std::string(c.calibration) + " " + op;
      CAPTURE(what);
      const std::string args = "--topology '" + kRoot + "/topologies/" + c.topology + ".yaml' -n " +
                               c.ranks + " --op " + op + " -b 8 -e 1G -f 4 --nvls off";
      const std::vector<std::string> prior = coll_choices(args);
      const std::vector<std::string> calibrated =
          coll_choices(args + " --calibration '" + kRoot + "/calibrate/data/" + c.calibration +
                       "/calibration.json'");
      CHECK(prior.size() == 14);  // 8 B x 4^k for k = 0..13: 8 B to 512 MiB
      CHECK(calibrated == prior);
    }
  }
}

TEST_CASE("a calibration brings its runs' NVLS setting unless the flag or environment says") {
  // calibrate/data/h200x4 ran with NCCL_NVLS_ENABLE=0: its calibration records false, so a 1 GiB
  // all-reduce on the 4 x H200 runs Ring, where NCCL's default (the priors) runs NVLS.
  const std::string args = "--topology '" + kRoot + "/topologies/h200-4gpu.yaml' -n 4 -b 1G -e 1G";
  const std::string calibration =
      " --calibration '" + kRoot + "/calibrate/data/h200x4/calibration.json'";
  CHECK(load_calibration(kRoot + "/calibrate/data/h200x4/calibration.json").nvls ==
        std::optional<bool>(false));
  CHECK(coll_choices(args).front() == "1073741824 NVLS SIMPLE 16");
  CHECK(coll_choices(args + calibration).front().find(" RING SIMPLE ") != std::string::npos);
  CHECK(coll_choices(args + calibration + " --nvls on").front() == "1073741824 NVLS SIMPLE 16");
}
