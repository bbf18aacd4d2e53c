// clustersim validate: the table's shape, the calibration file's round trip, and the end-to-end
// output on the 4 x H200 data against its golden file (tests/golden/validate/refresh.sh).
#include <doctest/doctest.h>

#include <algorithm>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>
#include "calibration/fit/fit.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "calibration/validate/validate.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs::cal;
namespace fs = std::filesystem;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;
const std::string kData = kRoot + "/calibrate/data/h200x4";
const std::string kTopology = kRoot + "/topologies/h200-4gpu.yaml";

std::string read_text(const fs::path& path) {
  return cs::test::read_text_file(path.string());
}

// The 4 x H200 calibration as `clustersim fit` makes it by default (held out: 3 ranks, odd sizes).
Calibration fit_h200x4(const Measurements& data, const cs::topo::Cluster& cluster) {
  const cs::topo::ClusterGraph graph(cluster);
  return fit_calibration(data, default_split(nccl_rank_counts(data)), graph, "h200x4",
                         "h200-4gpu.yaml");
}

std::string run(const std::string& command, int& status) {
  const cs::test::CommandResult result = cs::test::run_command(command);
  status = result.status;
  return result.output;
}

}  // namespace

TEST_CASE("the calibration file round-trips through JSON byte for byte") {
  const Measurements data = read_measurements(kData);
  const cs::topo::Cluster cluster = cs::topo::load_cluster(kTopology);
  const Calibration c = fit_h200x4(data, cluster);
  const std::string text = calibration_json(c);
  const Calibration back = parse_calibration(text, "roundtrip.json");
  CHECK(calibration_json(back) == text);
  CHECK(back.nccl_by_op.size() == c.nccl_by_op.size());
  CHECK(nccl_fit_for(back, "allreduce").params.base_latency_us[1][2] ==
        nccl_fit_for(c, "allreduce").params.base_latency_us[1][2]);
}

TEST_CASE("the calibration file records the NCCL timing it was fitted on") {
  const std::string committed = read_text(kData + "/calibration.json");
  Calibration c = parse_calibration(committed, "calibration.json");
  CHECK(c.timing == NcclTiming::host_paced);  // refresh.sh fits host-paced records
  c.timing = NcclTiming::gated;
  const std::string gated = calibration_json(c);
  CHECK(gated.find("\"timing\": \"gated\"") != std::string::npos);
  CHECK(parse_calibration(gated, "g.json").timing == NcclTiming::gated);

  // A file from before the key existed was fitted on host-paced records; a wrong value is named.
  nlohmann::json old_file = nlohmann::json::parse(committed);
  old_file.erase("timing");
  CHECK(parse_calibration(old_file.dump(), "old.json").timing == NcclTiming::host_paced);
  nlohmann::json bad = nlohmann::json::parse(committed);
  bad["timing"] = "paced";
  std::string message;
  try {
    parse_calibration(bad.dump(), "bad.json");
  } catch (const cs::InputError& e) {
    message = e.what();
  }
  CHECK(message == "bad.json:1: key 'timing': expected \"host_paced\" or \"gated\"");
}

TEST_CASE("the calibration file keeps each collective's host floors") {
  const std::string committed = read_text(kData + "/calibration.json");
  const Calibration c = parse_calibration(committed, "calibration.json");
  const HostFloors& floors = nccl_fit_for(c, "allreduce").host_floors;
  REQUIRE(!floors.empty());
  const Calibration back = parse_calibration(calibration_json(c), "back.json");
  const HostFloors& again = nccl_fit_for(back, "allreduce").host_floors;
  REQUIRE(again.curves.size() == floors.curves.size());
  for (std::size_t i = 0; i < floors.curves.size(); ++i) {
    CHECK(again.curves[i].config == floors.curves[i].config);
    CHECK(again.curves[i].n_ranks == floors.curves[i].n_ranks);
    CHECK(again.curves[i].floor_us == floors.curves[i].floor_us);
    CHECK(again.curves[i].points == floors.curves[i].points);
  }
  // A file from before the key existed has no floors (its latencies carry them); a curve out of
  // order is named.
  nlohmann::json old_file = nlohmann::json::parse(committed);
  for (auto& fit : old_file["nccl_by_op"]) fit.erase("host_floors");
  CHECK(nccl_fit_for(parse_calibration(old_file.dump(), "old.json"), "allreduce")
            .host_floors.empty());
  nlohmann::json bad = nlohmann::json::parse(committed);
  auto& list = bad["nccl_by_op"][0]["host_floors"];
  REQUIRE(list.size() >= 2);
  std::swap(list[0], list[1]);
  std::string message;
  try {
    parse_calibration(bad.dump(), "bad.json");
  } catch (const cs::InputError& e) {
    message = e.what();
  }
  CHECK(message ==
        "bad.json:1: key 'nccl_by_op[0].host_floors[1].n_ranks': expected curves in (config, "
        "n_ranks) order, each once");
}

TEST_CASE("a broken calibration file names the key") {
  std::string message;
  try {
    parse_calibration("{\"schema\":\"clustersim-fit-v2\",\"machine\":{}}", "c.json");
  } catch (const cs::InputError& e) {
    message = e.what();
  }
  CHECK(message == "c.json:1: key 'machine.name': missing");

  // A file of the previous schema lacks this version's NCCL fields: refused, with what to do.
  message.clear();
  try {
    parse_calibration("{\"schema\":\"clustersim-fit-v1\",\"machine\":{}}", "old.json");
  } catch (const cs::InputError& e) {
    message = e.what();
  }
  CHECK(
      message ==
      "old.json:1: key 'schema': written by an older clustersim (clustersim-fit-v1); fit it again "
      "with `clustersim fit`");

  // A misaligned-chunk factor below 1 would make misaligned copies faster than aligned ones.
  nlohmann::json j = nlohmann::json::parse(read_text(kData + "/calibration.json"));
  j["nccl"]["params"]["ring_misaligned_slowdown"][0][2] = 0.9;
  message.clear();
  try {
    parse_calibration(j.dump(2), "c.json");
  } catch (const cs::InputError& e) {
    message = e.what();
  }
  // Written with dump(2), every number of the table has a line of its own: the message names the
  // element and its line, not the table's key.
  const std::string text = j.dump(2);
  const auto at = text.find("\"ring_misaligned_slowdown\"");
  REQUIRE(at != std::string::npos);
  // The key's line ends with the outer "[", the next holds the inner one, then [0][0], [0][1] and
  // [0][2], a line each: 4 lines further.
  const long key_line = std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1;
  CHECK(message == "c.json:" + std::to_string(key_line + 4) +
                       ": key 'nccl.params.ring_misaligned_slowdown[0][2]': expected factors of "
                       "at least 1, got 0.9");
}

TEST_CASE("validate has a row per (collective, rank count) of the default runs") {
  const Measurements data = read_measurements(kData);
  const cs::topo::Cluster cluster = cs::topo::load_cluster(kTopology);
  const Calibration c = fit_h200x4(data, cluster);
  const Validation v = validate(data, cluster, c);
  std::set<std::tuple<std::string, int>> measured;
  for (const NcclPoint& p : data.nccl) {
    if (p.is_default()) measured.insert({p.op, p.n_ranks});
  }
  std::set<std::tuple<std::string, int>> rows;
  for (const ErrorRow& r : v.rows) {
    if (r.kind == "nccl" && r.config == "default") rows.insert({r.group, r.n_ranks});
  }
  CHECK(rows == measured);
  // Held-out rank count 3 is reported on every size it was measured at.
  for (const ErrorRow& r : v.rows) {
    if (r.kind != "nccl" || r.n_ranks != 3) continue;
    int sizes = 0;
    for (const NcclPoint& p : data.nccl) {
      sizes += p.op == r.group && p.n_ranks == 3 &&
               (p.is_default() ? "default" : p.forced_algo + "/" + p.forced_proto) == r.config;
    }
    CHECK(r.points == sizes);
  }
}

TEST_CASE("clustersim validate on the 4 x H200 data matches its golden output") {
  const std::string calibration = kData + "/calibration.json";
  REQUIRE(fs::exists(calibration));
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' validate --topology '" +
                              kTopology + "' --data '" + kData + "' --calibration '" + calibration +
                              "' 2>/dev/null";
  int status = 0;
  const std::string out = run(command, status);
  REQUIRE(status == 0);
  CHECK(out == read_text(kRoot + "/tests/golden/validate/h200x4.txt"));
}

TEST_CASE("clustersim validate --timing gated on run 3 of the 4 x H200 matches its golden output") {
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' validate --topology '" +
                              kTopology + "' --data '" + kRoot +
                              "/calibrate/data/h200x4-run3' --timing gated 2>/dev/null";
  int status = 0;
  const std::string out = run(command, status);
  REQUIRE(status == 0);
  CHECK(out == read_text(kRoot + "/tests/golden/validate/h200x4-run3-gated.txt"));
}

TEST_CASE("the committed calibration file is what `clustersim fit` writes from the data") {
  const fs::path out = cs::test::scratch_path("clustersim-test-calibration.json");
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' fit '" + kData +
                              "' --topology '" + kTopology + "' -o '" + out.string() +
                              "' >/dev/null 2>&1";
  int status = 0;
  run(command, status);
  REQUIRE(status == 0);
  CHECK(read_text(out) == read_text(kData + "/calibration.json"));
  fs::remove(out);
}

TEST_CASE(
    "the committed gated calibration of run 5 is what `clustersim fit --timing gated` writes") {
  const fs::path out = cs::test::scratch_path("clustersim-test-calibration-gated.json");
  const std::string run5 = kRoot + "/calibrate/data/h200x4-run5";
  const std::string command = std::string("'") + CLUSTERSIM_BINARY + "' fit '" + run5 +
                              "' --topology '" + kTopology + "' --timing gated -o '" +
                              out.string() + "' >/dev/null 2>&1";
  int status = 0;
  run(command, status);
  REQUIRE(status == 0);
  CHECK(read_text(out) == read_text(run5 + "/calibration.json"));
  fs::remove(out);
}
