// clustersim validate --cross: each run fitted whole predicts the other runs of its GPU model;
// the pairs it makes, what it skips, its refusals and its golden output on the gated H200 runs.
#include <doctest/doctest.h>

#include <string>

#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/timing_select.hpp"
#include "calibration/validate/validate_cross.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;
const std::string kData = kRoot + "/calibrate/data/";

NamedRun gated_run(const std::string& name) {
  NamedRun run{name, read_measurements(kData + name)};
  select_nccl_timing(run.data, NcclTiming::gated);
  return run;
}

std::string binary() {
  return std::string("'") + CLUSTERSIM_BINARY + "'";
}

}  // namespace

TEST_CASE("validate --cross fits each run and predicts every other run of its GPU model") {
  const cs::topo::Cluster cluster = cs::topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  // Two H200 runs and one H100 run with only one-rank NCCL calls: the H200 runs make the two
  // ordered pairs; the H100 run is not fitted (nothing of two ranks) and is another GPU model
  // for both H200 fits.
  const std::vector<NamedRun> runs = {gated_run("h200x4-run3"), gated_run("h200x2-run3"),
                                      gated_run("h100x1-run3")};
  const CrossValidation v = cross_validate(runs, cluster, NcclTiming::gated);
  CHECK(v.pairs == 2);
  REQUIRE(v.skipped.size() == 3);
  CHECK(v.skipped[0] == "h100x1-run3: no NCCL records of two or more ranks to fit");
  CHECK(v.skipped[1].rfind("h200x4-run3 -> h100x1-run3: other GPU model", 0) == 0);
  // Each row's points: h200x2-run3 (2 ranks) predicted by run 3's fit, and run 3's 2-, 3- and
  // 4-rank points predicted by h200x2-run3's fit. A 2-rank row thus has both pairs; a 3- or
  // 4-rank row only h200x2-run3 -> h200x4-run3.
  for (const CrossRow& r : v.rows) {
    CAPTURE(r.op);
    CAPTURE(r.n_ranks);
    CHECK(r.pairs == (r.n_ranks == 2 ? 2 : 1));
    CHECK(r.points > 0);
    CHECK(r.calibrated_median <= r.calibrated_worst);
    CHECK(r.worst.find(r.n_ranks == 2 ? " -> " : "h200x2-run3 -> h200x4-run3") !=
          std::string::npos);
  }
  // NCCL's logged choice: the calibrated choice is the prior's at every point (issue 18).
  CHECK(v.choice_points > 0);
  CHECK(v.calibrated_choice_matches == v.prior_choice_matches);
}

TEST_CASE("validate --cross refuses one folder, a calibration and --data beside it") {
  const std::string topo = " -t '" + kRoot + "/topologies/h200-4gpu.yaml'";
  const std::string two = " --cross '" + kData + "h200x4-run3' '" + kData + "h200x2-run3'";
  auto status_of = [](const std::string& command) {
    return cs::test::run_command(command + " >/dev/null 2>&1").status;
  };
  CHECK(status_of(binary() + " validate" + topo + " --cross '" + kData + "h200x4-run3'") == 2);
  CHECK(status_of(binary() + " validate" + topo + two + " --calibration '" + kData +
                  "h200x4/calibration.json'") == 2);
  CHECK(status_of(binary() + " validate" + topo + two + " --data '" + kData + "h200x4'") == 2);
  CHECK(status_of(binary() + " validate" + topo) == 2);
}

TEST_CASE("validate --cross on the gated H200 runs matches its golden output") {
  const std::string command =
      binary() + " validate -t '" + kRoot + "/topologies/h200-4gpu.yaml' --timing gated --cross '" +
      kData + "h200x4-run3' '" + kData + "h200x4-run4' '" + kData + "h200x4-run5' '" + kData +
      "h200x2-run2' '" + kData + "h200x2-run3' 2>/dev/null";
  const cs::test::CommandResult r = cs::test::run_command(command);
  REQUIRE(r.status == 0);
  CHECK(r.output ==
        cs::test::read_text_file(kRoot + "/tests/golden/validate/cross-h200-gated.txt"));
}
