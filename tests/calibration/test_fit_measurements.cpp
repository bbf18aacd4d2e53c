// Reading measurement files: the committed 4 x H200 data parses into typed records, and broken
// files name the file, the record's line and the key.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "calibration/measurements/measurements.hpp"
#include "support/calibration_data.hpp"

using cs::cal::Measurements;
using cs::cal::read_measurement_text;

namespace {

const std::string kData = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x4";

}  // namespace

TEST_CASE("the committed 4 x H200 measurements read into typed records") {
  const Measurements m = cs::cal::read_measurements(kData);
  CHECK(m.node.gpu_count == 4);
  CHECK(m.node.gpu_name.find("H200") != std::string::npos);
  std::set<int> ranks;
  std::set<std::string> ops;
  for (const auto& p : m.nccl) {
    ranks.insert(p.n_ranks);
    ops.insert(p.op);
    CHECK(p.time_us > 0);
  }
  CHECK(ranks == std::set<int>{2, 3, 4});
  CHECK(ops == std::set<std::string>{"allgather", "allreduce", "alltoall", "broadcast",
                                     "reducescatter", "sendrecv"});
  CHECK(!m.copies.empty());
  CHECK(!m.gemms.empty());
  CHECK(!m.launches.empty());
  CHECK(!m.membw.empty());
}

TEST_CASE("a record missing a key names the file, its line and the key") {
  const std::string text = std::string(cs::test::kMeasurementsHead) +
                           "{\"kind\":\"launch\",\"what\":\"event_sync\",\"time_us\":1.5},\n"
                           "{\"kind\":\"membw\",\"time_us\":3}\n]}\n";
  CHECK(cs::test::measurement_error(text) == "bad.json:4: key 'bytes': missing");
}

TEST_CASE("bad values and unknown names list what would be valid") {
  const std::string negative = std::string(cs::test::kMeasurementsHead) +
                               "{\"kind\":\"membw\",\"bytes\":-4,\"time_us\":3}\n]}\n";
  CHECK(cs::test::measurement_error(negative).find(
            "bad.json:3: key 'bytes': expected a finite number above 0") == 0);
  const std::string op = std::string(cs::test::kMeasurementsHead) +
                         "{\"kind\":\"nccl\",\"op\":\"allsum\",\"nranks\":2,\"bytes\":8,"
                         "\"forced_algo\":\"default\",\"forced_proto\":\"default\","
                         "\"time_us\":9}\n]}\n";
  CHECK(cs::test::measurement_error(op).find(
            "key 'op': unknown value 'allsum'; valid: allreduce") != std::string::npos);
}

TEST_CASE("cs_cal_nccl's launch mode is read, and an unknown one is refused") {
  // calibrate/data/h200x1-launch: the same one-rank sweep started five ways.
  const std::string root = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x1-launch/";
  const Measurements per_gpu = cs::cal::read_measurements(root + "procs");
  REQUIRE(!per_gpu.nccl.empty());
  for (const auto& p : per_gpu.nccl) CHECK(p.launch == "process_per_gpu");
  // Files from before the field ran every rank from one process.
  for (const auto& p : cs::cal::read_measurements(kData).nccl) CHECK(p.launch == "single_process");
  const std::string bad = std::string(cs::test::kMeasurementsHead) +
                          "{\"kind\":\"nccl\",\"op\":\"allreduce\",\"nranks\":2,\"bytes\":8,"
                          "\"forced_algo\":\"default\",\"forced_proto\":\"default\","
                          "\"launch\":\"mpi\",\"time_us\":9}\n]}\n";
  CHECK(cs::test::measurement_error(bad).find(
            "key 'launch': unknown value 'mpi'; valid: single_process, process_per_gpu") !=
        std::string::npos);
}

TEST_CASE("files that are not calibration files are refused at the top") {
  CHECK(cs::test::measurement_error("{\"schema\":\"other\",\"measurements\":[]}")
            .find("key 'schema'") != std::string::npos);
  CHECK(cs::test::measurement_error(
            "{\"schema\":\"clustersim-calibration-v1\",\n\"measurements\":[1,}")
            .find("bad.json:2: not valid JSON") == 0);
  CHECK(cs::test::measurement_error("{\"schema\":\"clustersim-calibration-v1\"}")
            .find("key 'measurements'") != std::string::npos);
}
