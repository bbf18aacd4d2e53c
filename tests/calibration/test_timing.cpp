// NCCL timings (host_paced / gated): the reader keeps them apart, and the selection used by fit
// and validate keeps one record per point, falling back to host_paced where no gated record
// exists. Expected figures are counted from the committed files by this test's own JSON scan.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "calibration/fit/fit_nccl.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/timing_select.hpp"
#include "support/calibration_data.hpp"

using cs::cal::Measurements;
using cs::cal::NcclPoint;
using cs::cal::NcclTiming;

namespace {

const std::string kData = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/";

using Point = std::tuple<std::string, int, double, std::string, std::string>;
using Record = std::tuple<std::string, Point, double>;  // timing, point, time_us

Point point_of(const NcclPoint& p) {
  return {p.op, p.n_ranks, p.bytes, p.forced_algo, p.forced_proto};
}

// Every NCCL record of a folder as the files spell it, read with nlohmann directly.
std::multiset<Record> raw_nccl(const std::string& folder) {
  std::multiset<Record> out;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const nlohmann::json doc = nlohmann::json::parse(in);
    if (doc.value("schema", "") != "clustersim-calibration-v1") continue;
    for (const auto& r : doc["measurements"]) {
      if (r.value("kind", "") != "nccl") continue;
      const Point p{r["op"].get<std::string>(), r["nranks"].get<int>(), r["bytes"].get<double>(),
                    r["forced_algo"].get<std::string>(), r["forced_proto"].get<std::string>()};
      out.insert({r.value("timing", "host_paced"), p, r["time_us"].get<double>()});
    }
  }
  return out;
}

const char* kRecord =
    "\"kind\":\"nccl\",\"op\":\"allreduce\",\"nranks\":2,\"bytes\":1024,"
    "\"forced_algo\":\"default\",\"forced_proto\":\"default\",\"time_us\":";

constexpr double kGatedMaxBytes = 16.0 * 1024 * 1024;  // the collector's --gated-max-bytes default

}  // namespace

TEST_CASE("the reader keeps each record's timing, as the files give it") {
  for (const char* machine : {"h200x2-run2", "h200x2"}) {
    CAPTURE(machine);
    const std::multiset<Record> raw = raw_nccl(kData + machine);
    const Measurements m = cs::cal::read_measurements(kData + machine);
    std::multiset<Record> read;
    for (const NcclPoint& p : m.nccl) read.insert({to_string(p.timing), point_of(p), p.time_us});
    CHECK(read == raw);
  }
  // h200x2-run2 holds both timings, so the comparison above did see both.
  std::set<std::string> timings;
  for (const NcclPoint& p : cs::cal::read_measurements(kData + "h200x2-run2").nccl)
    timings.insert(to_string(p.timing));
  CHECK(timings == std::set<std::string>{"gated", "host_paced"});
}

TEST_CASE("a record without timing is host_paced, an unknown timing names file, line and key") {
  Measurements m;
  read_measurement_text(std::string(cs::test::kMeasurementsHead) + "{" + kRecord +
                            "5},\n{\"timing\":\"gated\"," + kRecord + "4}\n]}\n",
                        "ok.json", m);
  REQUIRE(m.nccl.size() == 2);
  CHECK(m.nccl[0].timing == NcclTiming::host_paced);
  CHECK(m.nccl[1].timing == NcclTiming::gated);
  CHECK(cs::test::measurement_error(std::string(cs::test::kMeasurementsHead) + "{" + kRecord +
                                    "5},\n{\"timing\":\"paced\"," + kRecord + "4}\n]}\n") ==
        "bad.json:4: key 'timing': unknown value 'paced'; valid: host_paced, gated");
}

TEST_CASE("either selection keeps exactly one record per measured point") {
  for (const char* machine : {"h200x2-run2", "h200x4-run3"}) {
    const Measurements all = cs::cal::read_measurements(kData + machine);
    std::set<Point> points;
    std::set<Point> host_paced_points;
    for (const NcclPoint& p : all.nccl) {
      points.insert(point_of(p));
      if (p.timing == NcclTiming::host_paced) host_paced_points.insert(point_of(p));
    }
    // Both timings are in the folder, so reading alone holds some points twice.
    REQUIRE(all.nccl.size() > points.size());
    for (const NcclTiming timing : {NcclTiming::host_paced, NcclTiming::gated}) {
      CAPTURE(machine);
      CAPTURE(to_string(timing));
      Measurements m = all;
      const cs::cal::TimingSelection s = select_nccl_timing(m, timing);
      std::set<Point> selected;
      for (const NcclPoint& p : m.nccl) selected.insert(point_of(p));
      CHECK(selected.size() == m.nccl.size());
      CHECK(selected == (timing == NcclTiming::gated ? points : host_paced_points));
      CHECK(s.kept + s.fallback + s.dropped == static_cast<int>(all.nccl.size()));
      CHECK(s.kept + s.fallback == static_cast<int>(m.nccl.size()));
    }
  }
}

TEST_CASE("gated selection takes the gated record up to 16 MiB and host_paced above") {
  const Measurements all = cs::cal::read_measurements(kData + "h200x4-run3");
  std::set<Point> gated;
  for (const NcclPoint& p : all.nccl) {
    if (p.timing == NcclTiming::gated) gated.insert(point_of(p));
  }
  Measurements m = all;
  const cs::cal::TimingSelection s = select_nccl_timing(m, NcclTiming::gated);
  int above = 0;
  for (const NcclPoint& p : m.nccl) {
    CAPTURE(p.loc.file);
    CAPTURE(p.loc.line);
    CHECK(p.timing == (gated.count(point_of(p)) ? NcclTiming::gated : NcclTiming::host_paced));
    if (p.bytes > kGatedMaxBytes) {
      CHECK(p.timing == NcclTiming::host_paced);
      ++above;
    }
  }
  CHECK(above > 0);
  CHECK(s.kept == static_cast<int>(gated.size()));
  CHECK(s.fallback == static_cast<int>(m.nccl.size() - gated.size()));
  CHECK(s.describe().rfind("timing: gated (", 0) == 0);
}

TEST_CASE("two records of one point with one timing are an error naming both") {
  Measurements m;
  read_measurement_text(
      std::string(cs::test::kMeasurementsHead) + "{" + kRecord + "5},\n{" + kRecord + "4}\n]}\n",
      "twice.json", m);
  std::string error;
  try {
    select_nccl_timing(m, NcclTiming::host_paced);
  } catch (const cs::InputError& e) {
    error = e.what();
  }
  CHECK(error ==
        "twice.json:4: key 'timing': a second host_paced record of this point (allreduce on 2 "
        "ranks, 1024 bytes); the first is at twice.json:3");
}

TEST_CASE("--timing takes host_paced or gated only") {
  CHECK(cs::cal::nccl_timing_option("gated", "timing") == NcclTiming::gated);
  CHECK(cs::cal::nccl_timing_option("host_paced", "timing") == NcclTiming::host_paced);
  CHECK_THROWS_AS(cs::cal::nccl_timing_option("paced", "timing"), cs::InputError);
}

TEST_CASE("each NCCL record keeps its run's NCCL_NVLS_ENABLE, and the prediction follows it") {
  auto read = [](const std::string& env) {
    Measurements m;
    read_measurement_text("{\"schema\":\"clustersim-calibration-v1\",\n" + env +
                              "\"measurements\":[\n{" + kRecord + "5}\n]}\n",
                          "ok.json", m);
    REQUIRE(m.nccl.size() == 1);
    return m.nccl.front().nvls;
  };
  CHECK(read("\"env\":{\"NCCL_NVLS_ENABLE\":\"0\"},\n") == std::optional<bool>(false));
  CHECK(read("\"env\":{\"NCCL_NVLS_ENABLE\":\"1\"},\n") == std::optional<bool>(true));
  CHECK_FALSE(read("\"env\":{\"NCCL_NVLS_ENABLE\":null},\n").has_value());
  CHECK_FALSE(read("").has_value());
  // The fit and validate predict each record with its run's setting.
  NcclPoint off;
  off.forced_algo = off.forced_proto = "default";
  off.nvls = false;
  REQUIRE(cs::cal::forced_options(off));
  CHECK(cs::cal::forced_options(off)->nvls == std::optional<bool>(false));
  CHECK(cs::test::measurement_error(
            "{\"schema\":\"clustersim-calibration-v1\",\n\"env\":{\"NCCL_NVLS_ENABLE\":\"yes\"},"
            "\n\"measurements\":[\n{" +
            std::string(kRecord) + "5}\n]}\n") ==
        "bad.json:2: key 'NCCL_NVLS_ENABLE': 'yes' is not an integer");
}
