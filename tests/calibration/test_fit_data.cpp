// The fitter on the committed 4 x H200 measurements: every assertion compares figures computed
// from the data (held-out errors with and without calibration, the scatter between identical
// GPUs), none is a number typed in.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "calibration/fit/fit.hpp"
#include "calibration/fit/fit_host_floor.hpp"
#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/fit/fit_links.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "calibration/validate/validate.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

struct Fixture {
  Measurements data = read_measurements(kRoot + "/calibrate/data/h200x4");
  cs::topo::Cluster cluster = cs::topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  Split split = default_split(nccl_rank_counts(data));
  Calibration calibration = [&] {
    const cs::topo::ClusterGraph graph(cluster);
    return fit_calibration(data, split, graph, "h200x4", "h200-4gpu.yaml");
  }();
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

const Validation& validation() {
  static const Validation v = validate(fixture().data, fixture().cluster, fixture().calibration);
  return v;
}

const ErrorRow* summary_row(const std::string& kind, const std::string& group) {
  for (const ErrorRow& r : validation().summary) {
    if (r.kind == kind && r.group == group) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the default split holds out the middle rank count and odd size steps") {
  // Measured at 2, 3 and 4 ranks: 3 is strictly between the smallest and the largest.
  CHECK(fixture().split.holdout_ranks == std::vector<int>{3});
  CHECK(fixture().split.sizes == SizeHoldout::odd);
  // 8 B is step 3 (odd: held out), 16 B step 4 (trained on) on NCCL's x2 ladder.
  CHECK(fixture().split.size_held_out(8, 1));
  CHECK(!fixture().split.size_held_out(16, 1));
}

TEST_CASE("every measured collective gets its own fit, and no fit used a held-out point") {
  std::set<std::string> fitted;
  for (const NcclFit& f : fixture().calibration.nccl_by_op) fitted.insert(f.op);
  CHECK(fitted == std::set<std::string>{"allgather", "allreduce", "alltoall", "broadcast",
                                        "reducescatter", "sendrecv"});
  // Training points per (op, algo, proto) can be counted from the data directly: those the host
  // floor does not hide.
  for (const NcclFit& f : fixture().calibration.nccl_by_op) {
    if (is_p2p_op(f.op)) continue;
    for (const NcclConfigFit& c : f.configs) {
      int expected = 0;
      for (const NcclPoint& p : fixture().data.nccl) {
        if (p.op != f.op ||
            fixture().split.held_out(p.n_ranks, p.bytes, nccl_curve_gap(fixture().data, p)))
          continue;
        const std::string algo = p.is_default() ? p.algo : p.forced_algo;
        const std::string proto = p.is_default() ? p.proto : p.forced_proto;
        const auto a = cs::coll::parse_algo(algo);
        const auto q = cs::coll::parse_proto(proto);
        expected += a && q && *a == c.algo && *q == c.proto && device_bound(p, f.host_floors);
      }
      CHECK(c.points == expected);
    }
  }
}

TEST_CASE("calibration beats NCCL's priors on held-out points of every tuned collective") {
  for (const char* op : {"allreduce", "allgather", "reducescatter", "broadcast"}) {
    const ErrorRow* row = summary_row("nccl", op);
    REQUIRE(row != nullptr);
    INFO(op << ": prior " << row->prior_median << ", calibrated " << row->calibrated_median);
    CHECK(row->points > 0);
    CHECK(row->calibrated_median < row->prior_median);
  }
}

TEST_CASE("pinned, peer, device and D2H pageable copies: held-out error inside the GPUs' scatter") {
  // The data's own spread: at each held-out size, the relative range of the times the GPUs (or
  // GPU pairs) measured; the calibrated median |error| must not exceed the widest of them.
  for (const char* path : {"h2d_pinned", "d2h_pinned", "peer", "d2d", "d2h_pageable"}) {
    std::map<double, std::pair<double, double>> range;  // bytes -> (min, max)
    const int gap = copy_gap(fixture().data, path);
    for (const CopyPoint& c : fixture().data.copies) {
      if (copy_path(c) != path || !fixture().split.size_held_out(c.bytes, gap)) continue;
      auto [it, added] = range.emplace(c.bytes, std::make_pair(c.time_us, c.time_us));
      it->second.first = std::min(it->second.first, c.time_us);
      it->second.second = std::max(it->second.second, c.time_us);
    }
    double widest = 0;
    for (const auto& [bytes, r] : range) widest = std::max(widest, (r.second - r.first) / r.first);
    const ErrorRow* row = summary_row("copy", path);
    REQUIRE(row != nullptr);
    INFO(path << ": calibrated median " << row->calibrated_median << ", widest spread " << widest);
    CHECK(row->calibrated_median <= widest);
    CHECK(row->calibrated_median < row->prior_median);
  }
}

TEST_CASE("a device copy's intercept is the median time of the training copies that fit in L2") {
  std::vector<double> in_cache;
  const int gap = copy_gap(fixture().data, "d2d");
  for (const CopyPoint& c : fixture().data.copies) {
    if (copy_path(c) != "d2d" || fixture().split.size_held_out(c.bytes, gap)) continue;
    if (c.bytes <= fixture().data.node.l2_cache_bytes) in_cache.push_back(c.time_us);
  }
  REQUIRE(in_cache.size() >= 2);
  std::sort(in_cache.begin(), in_cache.end());
  const std::size_t n = in_cache.size();
  const double median = n % 2 ? in_cache[n / 2] : 0.5 * (in_cache[n / 2 - 1] + in_cache[n / 2]);
  const CopyFit* d2d = find_copy_fit(fixture().calibration.copies, "d2d");
  REQUIRE(d2d != nullptr);
  CHECK(d2d->latency_us == median);
  // Applied to the cluster, every GPU model takes the fitted rate but not the intercept, which is
  // the host's issue interval of back-to-back copies: the GPU keeps the prior fixed cost.
  cs::topo::Cluster cluster = fixture().cluster;
  apply_links(fixture().calibration, cluster);
  for (const cs::topo::GpuModel& m : cluster.gpu_models)
    CHECK(m.copy_Bps == d2d->bandwidth_GBps * 1e9);
  // validate floors each d2d copy with it: a 4 KiB copy's calibrated time is the intercept
  // (1.85 us + 4096 B at the fitted rate is less).
  const std::vector<Prediction>& predictions = validation().predictions;
  const auto small = std::find_if(predictions.begin(), predictions.end(), [](const Prediction& p) {
    return p.kind == "copy" && p.group == "d2d" && p.bytes == 4096;
  });
  REQUIRE(small != predictions.end());
  CHECK(small->calibrated_us == median);
}

TEST_CASE("the GEMM model interpolates: held-out shapes are predicted from the trained ones") {
  // Held-out shapes (odd flop steps) were not fitted; their median error must stay within the
  // worst error the fit leaves on its own training shapes.
  for (const GemmFit& g : fixture().calibration.compute.gemm) {
    std::vector<double> errors;
    for (const GemmPoint& p : fixture().data.gemms) {
      if (p.dtype != g.dtype || !fixture().split.size_held_out(p.flops(), 1)) continue;
      errors.push_back(std::fabs(g.time_us(p.flops()) - p.time_us) / p.time_us);
    }
    REQUIRE(!errors.empty());
    INFO(g.dtype << ": held-out median " << median_abs(errors) << ", training worst "
                 << g.max_rel_error);
    CHECK(median_abs(errors) <= g.max_rel_error);
    CHECK(g.efficiency > 0);
    CHECK(g.efficiency <= 1);
  }
}

TEST_CASE("a run of one rank count keeps NCCL's per-hop latency and fits the base") {
  // calibrate/data/h200x2-run2 measured 2 ranks only: every row crosses the same latency steps,
  // so base and per-hop cannot be told apart. Each ring configuration keeps the prior's per-hop
  // figure (NVLink row of nccl_priors(hopper)); its base is what the data says.
  const Measurements data = read_measurements(kRoot + "/calibrate/data/h200x2-run2");
  const cs::topo::Cluster cluster = cs::topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const cs::topo::ClusterGraph graph(cluster);
  Split none;
  none.sizes = SizeHoldout::none;
  const Calibration c = fit_calibration(data, none, graph, "h200x2-run2", "h200-4gpu.yaml");
  const cs::coll::NcclParams prior = cs::coll::nccl_priors(cs::coll::GpuArch::hopper);
  int ring_configs = 0;
  for (const NcclConfigFit& f : c.nccl.configs) {
    if (f.algo != cs::coll::Algo::ring) continue;
    CAPTURE(cs::coll::to_string(f.proto));
    ++ring_configs;
    CHECK(f.hop_us ==
          prior.hop_latency_us[cs::coll::index_of(cs::coll::LinkClass::nvlink)]
                              [cs::coll::index_of(f.algo)][cs::coll::index_of(f.proto)]);
    CHECK(f.base_us > 0);
  }
  CHECK(ring_configs == 3);
}
