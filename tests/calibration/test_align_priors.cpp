// The Hopper priors for misaligned ring all-gather / reduce-scatter chunks against the committed
// 2 x H200 offset runs they were read from (calibrate/data/h200x2-align, -align-run2): the ratio of
// misaligned to aligned per-byte slopes over 32 MiB - 1 GiB, gated times, per forced protocol.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "calibration/fit_least_squares.hpp"
#include "calibration/measurements.hpp"
#include "collectives/nccl_params.hpp"

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
