// One-rank NCCL records (calibrate/data/h200x1-onerank: a 1 x H200 machine, every size also gated)
// in fit and validate: NCCL's copy of the send buffer, timed on the GPU and as nccl-tests times it.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/fit/fit.hpp"
#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/timing_select.hpp"
#include "calibration/validate/validate.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

struct OneRank {
  Measurements data;
  cs::topo::Cluster cluster = cs::topo::load_cluster(kRoot + "/topologies/dgx-h200.yaml");
  Split split;
  Calibration calibration;
  Validation validation;
  explicit OneRank(NcclTiming timing)
      : data(read_measurements(kRoot + "/calibrate/data/h200x1-onerank")) {
    select_nccl_timing(data, timing);
    split = default_split(nccl_rank_counts(data));
    const cs::topo::ClusterGraph graph(cluster);
    calibration = fit_calibration(data, split, graph, "h200x1-onerank", "dgx-h200.yaml");
    validation = validate(data, cluster, calibration);
  }
  const Prediction& allreduce_at(double bytes) const {
    const auto it = std::find_if(
        validation.predictions.begin(), validation.predictions.end(), [bytes](const Prediction& p) {
          return p.kind == "nccl" && p.group == "allreduce" && p.n_ranks == 1 && p.bytes == bytes;
        });
    REQUIRE(it != validation.predictions.end());
    return *it;
  }
};

TEST_CASE("one-rank records are predicted as NCCL's device copy, on the GPU") {
  const OneRank r(NcclTiming::gated);
  // 8 B, gated: the prior's fixed 1.85 us (network/copies.cpp), then 8 B at 0.9 x 4.8 TB/s / 2 =
  // 2.16 TB/s (dgx-h200.yaml's memory bandwidth): 8 / 2.16e12 s = 3.7e-6 us.
  const Prediction& p = r.allreduce_at(8);
  CHECK(p.prior_us == doctest::Approx(1.85 + 8 / 2.16e12 * 1e6).epsilon(1e-6));
  // Calibrated: the GPU's own fixed cost, the median of the gated one-rank calls of at most
  // 4 KiB among the training sizes (the d2d fit's intercept is the host's issue interval, not
  // the GPU's), then the fitted rate.
  std::vector<double> small;
  for (const NcclPoint& q : r.data.nccl) {
    if (q.bytes <= 4096 && !r.split.size_held_out(q.bytes, nccl_curve_gap(r.data, q)))
      small.push_back(q.time_us);
  }
  REQUIRE(small.size() >= 3);
  const double gpu_us = median_abs(small);  // times are positive
  const CopyFit* d2d = find_copy_fit(r.calibration.copies, "d2d");
  REQUIRE(d2d != nullptr);
  CHECK(d2d->gpu_latency_us == doctest::Approx(gpu_us).epsilon(1e-12));
  CHECK(p.calibrated_us ==
        doctest::Approx(gpu_us + 8 / (d2d->bandwidth_GBps * 1e9) * 1e6).epsilon(1e-6));
  // The calibration file keeps it.
  const Calibration back = parse_calibration(calibration_json(r.calibration), "cal.json");
  CHECK(find_copy_fit(back.copies, "d2d")->gpu_latency_us == d2d->gpu_latency_us);
  // One row per collective at its one rank count.
  const auto rows = std::count_if(r.validation.rows.begin(), r.validation.rows.end(),
                                  [](const ErrorRow& row) { return row.kind == "nccl"; });
  CHECK(rows == 4);  // allreduce, allgather, reducescatter, broadcast at 1 rank
}

TEST_CASE("host-paced one-rank records get the collective's own host floor at one rank") {
  const OneRank r(NcclTiming::host_paced);
  const NcclFit& fit = nccl_fit_for(r.calibration, "allreduce");
  REQUIRE_FALSE(fit.host_floors.empty());
  // The floor, by the fitter's rule (fit_host_floor.hpp): of the training sizes (the odd size
  // steps are held out), those within 10 % of the fastest, their median. Here the small sizes'
  // host-paced times, 3.7-4.3 us, against 1.65 us on the GPU.
  std::vector<double> times;
  for (const NcclPoint& p : r.data.nccl) {
    if (p.op == "allreduce" && !r.split.held_out(1, p.bytes, nccl_curve_gap(r.data, p)))
      times.push_back(p.time_us);
  }
  REQUIRE(times.size() >= 3);
  const double fastest = *std::min_element(times.begin(), times.end());
  std::vector<double> flat;
  for (double t : times) {
    if (t <= 1.1 * fastest) flat.push_back(t);
  }
  const double median = median_abs(flat);  // times are positive
  CHECK(fit.host_floors.at("default", 1) == doctest::Approx(median).epsilon(1e-12));
  // An 8 B call is the floor: the GPU's copy takes less.
  CHECK(r.allreduce_at(8).calibrated_us == doctest::Approx(median).epsilon(1e-12));
}

}  // namespace
