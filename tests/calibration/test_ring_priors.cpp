// Hopper priors of the ring model against the committed measurements they were read from: the
// misaligned-chunk factors (2 x H200 offset runs, calibrate/data/h200x2-align, -align-run2: the
// ratio of misaligned to aligned per-byte slopes over 32 MiB - 1 GiB, gated, per forced protocol)
// and the receive-only pass of ring loops (calibrate/data/h200x4, 2 and 4 ranks), and the NVLink
// send latencies (gated runs 3 and 4 of the same machine).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "calibration/fit_least_squares.hpp"
#include "calibration/fit_nccl.hpp"
#include "calibration/fit_split.hpp"
#include "calibration/measurements.hpp"
#include "calibration/timing_select.hpp"
#include "collectives/nccl_params.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

using namespace cs;

namespace {

const std::string kData = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/";

// Per-byte time (us per byte) of a forced ring protocol's gated points from 32 MiB up.
double slope(const cal::Measurements& m, const std::string& op, const std::string& proto) {
  std::vector<double> bytes, t;
  for (const cal::NcclPoint& p : m.nccl) {
    if (p.op != op || p.timing != cal::NcclTiming::gated || p.forced_proto != proto) continue;
    if (p.bytes < 32.0 * 1024 * 1024) continue;
    bytes.push_back(p.bytes);
    t.push_back(p.time_us);
  }
  REQUIRE(bytes.size() >= 5);  // 32 MiB - 1 GiB: six sizes
  return cal::fit_alpha_beta(bytes, t).coef[1];
}

}  // namespace

TEST_CASE("the misaligned-chunk priors are the mean of the two measured runs") {
  const coll::NcclParams prm = coll::nccl_priors(coll::GpuArch::hopper);
  const char* protos[] = {"LL", "LL128", "Simple"};
  const coll::Proto proto_of[] = {coll::Proto::ll, coll::Proto::ll128, coll::Proto::simple};
  const char* ops[] = {"allgather", "reducescatter"};
  std::vector<cal::Measurements> aligned, misaligned;
  for (const char* run : {"h200x2-align", "h200x2-align-run2"}) {
    aligned.push_back(cal::read_measurements(kData + run + "/off0"));
    misaligned.push_back(cal::read_measurements(kData + run + "/off1"));
  }
  for (int o = 0; o < 2; ++o) {
    for (int q = 0; q < 3; ++q) {
      const std::string what = std::string(ops[o]) + " " + protos[q];
      CAPTURE(what);
      double mean = 0;
      for (std::size_t r = 0; r < aligned.size(); ++r)
        mean += slope(misaligned[r], ops[o], protos[q]) / slope(aligned[r], ops[o], protos[q]);
      mean /= static_cast<double>(aligned.size());
      // The priors are rounded to two decimals.
      CHECK(prm.ring_misaligned_slowdown[o][coll::index_of(proto_of[q])] ==
            doctest::Approx(mean).epsilon(0.006));
    }
  }
}

TEST_CASE("the receive-only pass priors are the mean over the 2- and 4-rank ring runs") {
  // a = S x (busbw of broadcast / busbw of the op - 1) at the largest size, S the op's link steps
  // per loop; averaged over all-gather, reduce-scatter and all-reduce on 2 and 4 ranks.
  const coll::NcclParams prm = coll::nccl_priors(coll::GpuArch::hopper);
  const struct {
    const char* config;
    coll::Proto proto;
  } configs[] = {{"ring-ll", coll::Proto::ll},
                 {"ring-ll128", coll::Proto::ll128},
                 {"ring-simple", coll::Proto::simple}};
  for (const auto& c : configs) {
    CAPTURE(std::string(c.config));
    double sum = 0;
    int terms = 0;
    for (int n : {2, 4}) {
      const std::string file =
          kData + "h200x4/nccl-" + c.config + "-n" + std::to_string(n) + ".json";
      cal::Measurements m;
      cal::read_measurement_text(cs::test::read_text_file(file), file, m);
      auto largest_busbw = [&](const std::string& op) {
        double bytes = 0, busbw = 0;
        for (const cal::NcclPoint& p : m.nccl) {
          if (p.op != op || p.bytes <= bytes) continue;
          bytes = p.bytes;
          // nccl-tests' bus factors: 2(n-1)/n all-reduce, (n-1)/n gather / scatter, 1 broadcast.
          const double factor = op == "allreduce"   ? 2.0 * (n - 1) / n
                                : op == "broadcast" ? 1.0
                                                    : (n - 1.0) / n;
          busbw = p.bytes / p.time_us * factor;
        }
        REQUIRE(bytes > 0);
        return busbw;
      };
      const double broadcast = largest_busbw("broadcast");
      sum += (n - 1) * (broadcast / largest_busbw("allgather") - 1);
      sum += (n - 1) * (broadcast / largest_busbw("reducescatter") - 1);
      sum += 2 * (n - 1) * (broadcast / largest_busbw("allreduce") - 1);
      terms += 3;
    }
    CHECK(prm.ring_recv_pass_steps[coll::index_of(c.proto)] ==
          doctest::Approx(sum / terms).epsilon(0.01));
  }
}

TEST_CASE("the NVLink send latency priors are the mean of the gated runs' p2p fits") {
  // Send/recv and all-to-all fitted on runs 3 and 4 as `clustersim fit --timing gated` does
  // (3 ranks and the odd sizes held out): one-peer latency and latency per further peer.
  const topo::Cluster cluster =
      topo::load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/h200-4gpu.yaml");
  const topo::ClusterGraph graph(cluster);
  double one_peer_us = 0, extra_peer_us = 0;
  int fits = 0;
  for (const char* run : {"h200x4-run3", "h200x4-run4"}) {
    cal::Measurements m = cal::read_measurements(kData + run);
    cal::select_nccl_timing(m, cal::NcclTiming::gated);
    const cal::Split split = cal::default_split(cal::nccl_rank_counts(m));
    for (const char* op : {"sendrecv", "alltoall"}) {
      const cal::NcclFit fit = cal::fit_nccl_p2p(m, split, graph, op);
      REQUIRE(fit.configs.size() == 1);
      one_peer_us += fit.params.p2p_nvlink_latency_us;
      extra_peer_us += fit.params.p2p_extra_peer_latency_us;
      ++fits;
    }
  }
  const coll::NcclParams prm = coll::nccl_priors(coll::GpuArch::hopper);
  // Rounded to 0.01 us.
  CHECK(prm.p2p_nvlink_latency_us == doctest::Approx(one_peer_us / fits).epsilon(0.002));
  CHECK(prm.p2p_extra_peer_latency_us == doctest::Approx(extra_peer_us / fits).epsilon(0.02));
}
