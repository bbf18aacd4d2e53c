// Calibration files and measurement folders against hostile input: errors name the file, the line
// and the key (json_lines.hpp places them), every value the simulator applies is range-checked,
// unknown keys are refused, and data or a calibration of another machine is named as such.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/json_lines.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/validate/machine_match.hpp"
#include "support/bad_input.hpp"
#include "support/calibration_data.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;
const std::string kData = kRoot + "/calibrate/data/";

std::string committed() {
  return cs::test::read_text_file(kData + "h200x4/calibration.json");
}

// The message parsing `text` as a calibration named c.json gives, or "no error".
std::string error_of(const std::string& text) {
  try {
    parse_calibration(text, "c.json");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

// The committed file with one change, written with dump(2) so that each key has its own line.
std::string edited(const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json j = nlohmann::json::parse(committed());
  change(j);
  return j.dump(2);
}

// The 1-based line of the first occurrence of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

TEST_CASE("json_value_lines: each value's pointer and the line it starts on") {
  const std::string text =
      "{\n"                       // 1: the document, ""
      "  \"a\": 1,\n"             // 2: /a
      "  \"b\": [\n"              // 3: /b
      "    {\"c\": \"x,]}\"},\n"  // 4: /b/0 and /b/0/c (a string holding , ] and })
      "    [],\n"                 // 5: /b/1, an empty array
      "    2\n"                   // 6: /b/2
      "  ],\n"
      "  \"d/e\": {},\n"  // 8: /d~1e (RFC 6901 escapes '/')
      "  \"f\":\n"        // 9: /f, at its key's line, not at its value's
      "    3\n"
      "}\n";
  const auto lines = json_value_lines(text);
  CHECK(lines.at("") == 1);
  CHECK(lines.at("/a") == 2);
  CHECK(lines.at("/b") == 3);
  CHECK(lines.at("/b/0") == 4);
  CHECK(lines.at("/b/0/c") == 4);
  CHECK(lines.at("/b/1") == 5);
  CHECK(lines.at("/b/2") == 6);
  CHECK(lines.at("/d~1e") == 8);
  CHECK(lines.at("/f") == 9);
  CHECK(lines.size() == 9);
  // A missing member is placed on its object's line.
  const JsonLines where("f.json", text);
  CHECK(where.at("/b/0/missing").line == 4);
  CHECK(where.at("/nothing/here").line == 1);
}

TEST_CASE("a calibration's bad values are named with their line and key") {
  // Each edit of the committed file, and the key the error must name on that key's own line.
  const struct {
    std::function<void(nlohmann::json&)> change;
    const char* key;
    const char* needle;  // text on the line the error must name
    const char* message;
  } cases[] = {
      // Was exit 3 (a negative link latency asserted in the graph).
      {[](nlohmann::json& j) { j["copies"][0]["latency_us"] = -5; }, "copies[0].latency_us",
       "\"latency_us\": -5", "expected a latency of 0 to 1e6 us, got -5"},
      // Was exit 3: 1e300 us overflowed the picosecond latency.
      {[](nlohmann::json& j) { j["copies"][0]["latency_us"] = 1e300; }, "copies[0].latency_us",
       "\"latency_us\": 1e+300", "expected a latency of 0 to 1e6 us"},
      // The GPU's own fixed cost of a copy, optional, in the same range.
      {[](nlohmann::json& j) { j["copies"][0]["gpu_latency_us"] = -1; }, "copies[0].gpu_latency_us",
       "\"gpu_latency_us\": -1", "expected a latency of 0 to 1e6 us"},
      // Was accepted: a zero rate, an efficiency of 5 on every NVLink link, 0 channels.
      {[](nlohmann::json& j) { j["copies"][0]["bandwidth_GBps"] = 0; }, "copies[0].bandwidth_GBps",
       "\"bandwidth_GBps\": 0", "expected a number above 0, got 0"},
      {[](nlohmann::json& j) { j["nccl_by_op"][1]["p2p_nvlink_efficiency"] = 5; },
       "nccl_by_op[1].p2p_nvlink_efficiency", "\"p2p_nvlink_efficiency\": 5",
       "expected an efficiency in 0..1, got 5"},
      {[](nlohmann::json& j) { j["nccl"]["params"]["search_max_channels"] = 0; },
       "nccl.params.search_max_channels", "\"search_max_channels\": 0",
       "expected an integer in 1..1048576, got 0"},
      {[](nlohmann::json& j) { j["machine"]["gpu_count"] = 4.5; }, "machine.gpu_count",
       "\"gpu_count\": 4.5", "expected an integer in 0..1048576, got 4.5"},
      {[](nlohmann::json& j) { j["nccl_by_op"][0]["op"] = "allshuffle"; }, "nccl_by_op[0].op",
       "\"op\": \"allshuffle\"", "unknown collective 'allshuffle'"},
      {[](nlohmann::json& j) { j["copies"][0]["path"] = "h2d_pinnned"; }, "copies[0].path",
       "\"path\": \"h2d_pinnned\"", "unknown copy path 'h2d_pinnned'"},
      // A misspelt key was ignored, the value it meant to set left at its prior.
      {[](nlohmann::json& j) { j["nccl"]["params"]["ring_ll_eficiency"] = 0.5; },
       "nccl.params.ring_ll_eficiency", "\"ring_ll_eficiency\"", "unknown key"},
      {[](nlohmann::json& j) { j["launchh"] = 1; }, "launchh", "\"launchh\"", "unknown key"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.key);
    const std::string text = edited(c.change);
    const std::string expected =
        "c.json:" + std::to_string(line_of(text, c.needle)) + ": key '" + c.key + "': " + c.message;
    CHECK(error_of(text).starts_with(expected));
  }
  // A file cut off part way: the line where the parser stopped.
  const std::string cut = committed().substr(0, 2000);
  const int last_line = 1 + static_cast<int>(std::count(cut.begin(), cut.end(), '\n'));
  CHECK(error_of(cut).starts_with("c.json:" + std::to_string(last_line) + ": not valid JSON"));
  CHECK(error_of("[]") == "c.json:1: expected an object, got []");
  // Every committed calibration still reads.
  for (const char* machine : {"h100x1", "h200x1", "h200x2", "h200x4"}) {
    CAPTURE(machine);
    CHECK_NOTHROW(load_calibration(kData + machine + "/calibration.json"));
  }
}

TEST_CASE("measurements and calibrations are checked against the topology they are used with") {
  const cs::topo::Cluster two_gpus =
      cs::topo::load_cluster(std::string(CLUSTERSIM_TEST_DATA) + "/topologies/two-gpu-pcie.yaml");
  const cs::topo::Cluster h100 = cs::topo::load_cluster(kRoot + "/topologies/dgx-h100.yaml");
  const cs::topo::Cluster h200 = cs::topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const Measurements data = read_measurements(kData + "h200x4");
  // Was std::out_of_range (map::at) in the fit, exit 3: the first 3-rank record, line 7.
  CHECK_THROWS_WITH_AS(check_measurements_match(data, two_gpus),
                       doctest::Contains("nccl-default-n3.json:7: key 'nranks': 3 ranks measured, "
                                         "but two-gpu-pcie.yaml has 2 GPU(s)"),
                       cs::InputError);
  // copy.json line 3 holds the node record with GPU 0's name.
  CHECK_THROWS_WITH_AS(check_measurements_match(data, h100),
                       doctest::Contains("copy.json:3: key 'node.gpus[0].name': measured on NVIDIA "
                                         "H200 (H200-SXM-141GB), but dgx-h100.yaml has "
                                         "H100-SXM5-80GB GPUs"),
                       cs::InputError);
  CHECK_NOTHROW(check_measurements_match(data, h200));
  const Calibration h100_fit = load_calibration(kData + "h100x1/calibration.json");
  CHECK_THROWS_WITH_AS(check_calibration_match(h100_fit, h200, {0, 1}),
                       doctest::Contains("key 'machine.gpu_name': fitted on NVIDIA H100 80GB HBM3"),
                       cs::InputError);
  CHECK_NOTHROW(check_calibration_match(h100_fit, h100, {0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_CASE("measured sizes past the GPU's memory and times past simulated time are refused") {
  // Both were read; the size then failed an assertion in validate's prediction (exit 3).
  const std::string copy = R"({"kind":"copy","direction":"h2d","memory":"pinned","src":-1,"dst":0,)"
                           R"("bidirectional":false,)";
  const std::string end = "]}";
  // No node record: a byte count is at most 2^53, the integers a double holds exactly.
  CHECK(cs::test::measurement_error(std::string(cs::test::kMeasurementsHead) + copy +
                                    R"("bytes":1e300,"time_us":5})" + end)
            .starts_with("bad.json:3: key 'bytes': 1e+300 bytes do not fit in the GPU's "
                         "9007199254740992 bytes"));
  // With one: GPU 0's memory_bytes.
  const std::string node =
      R"({"schema":"clustersim-calibration-v1","node":{"gpus":[{"name":"NVIDIA H200",)"
      R"("memory_bytes":1000}]},)"
      "\n\"measurements\":[\n";
  CHECK(cs::test::measurement_error(node + copy + R"("bytes":1001,"time_us":5})" + end)
            .starts_with("bad.json:3: key 'bytes': 1001 bytes do not fit in the GPU's 1000 bytes"));
  CHECK(cs::test::measurement_error(node + copy + R"("bytes":1000,"time_us":5})" + end).empty());
  CHECK(cs::test::measurement_error(node + copy + R"("bytes":1000,"time_us":1e300})" + end)
            .starts_with("bad.json:3: key 'time_us': expected a time below 9.2e12 us"));
}

TEST_CASE("records the fitter would drop or misread in silence are refused") {
  const std::string head = cs::test::kMeasurementsHead;
  const std::string nccl =
      R"({"kind":"nccl","op":"allreduce","nranks":2,"bytes":8,"time_us":5,"forced_algo":)";
  CHECK(cs::test::measurement_error(head + nccl + R"("ring","forced_proto":"LL"}]})").empty());
  CHECK(cs::test::measurement_error(head + nccl + R"("rign","forced_proto":"LL"}]})")
            .starts_with("bad.json:3: key 'forced_algo': unknown value 'rign'"));
  CHECK(cs::test::measurement_error(head + nccl + R"("ring","forced_proto":"LL64"}]})")
            .starts_with("bad.json:3: key 'forced_proto': unknown value 'LL64'"));
  const std::string copy = R"({"kind":"copy","memory":"device","bidirectional":false,)"
                           R"("bytes":8,"time_us":5,"direction":)";
  CHECK(cs::test::measurement_error(head + copy + R"("peer","src":1,"dst":1}]})") ==
        "bad.json:3: key 'dst': a peer copy needs a second GPU, got 1");
  CHECK(cs::test::measurement_error(head + copy + R"("d2d","src":1,"dst":0}]})") ==
        "bad.json:3: key 'dst': a device-local copy stays on GPU 1, got 0");
}

TEST_CASE("a measurement folder with no records is refused") {
  // Was a calibration file of zeros and priors, exit 0.
  const std::string folder = std::string(CLUSTERSIM_TEST_DATA) + "/bad_measurements/no_records";
  CHECK_THROWS_WITH_AS(read_measurements(folder),
                       doctest::Contains("no_records: key 'measurements': no records in 1 file(s)"),
                       cs::InputError);
}

TEST_CASE("fit and validate: bad data, topology and holdout flags exit 2 with one line") {
  const std::string bin = std::string("'") + CLUSTERSIM_BINARY + "' ";
  const std::string two_gpus = std::string(CLUSTERSIM_TEST_DATA) + "/topologies/two-gpu-pcie.yaml";
  const std::string h200 = kRoot + "/topologies/h200-4gpu.yaml";
  // Where fit would write; each case is refused before it writes anything.
  const std::string out = " -o '" + cs::test::scratch_path("cs-unwritten").string() + ".json'";
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {"fit " + kData + "h200x4 --topology " + two_gpus + out, "key 'nranks': 3 ranks measured"},
      {"validate --data " + kData + "h200x4 --topology " + two_gpus, "key 'nranks'"},
      {"validate --data " + kData + "h200x4 --topology " + h200 + " --calibration " + kData +
           "h100x1/calibration.json",
       "key 'machine.gpu_name'"},
      // Both were exit 0: nothing held out, or nothing left to fit.
      {"fit " + kData + "h200x2 --topology " + h200 + out + " --holdout-ranks 99",
       "key 'holdout-ranks': 99 ranks were not measured; measured: 2"},
      {"fit " + kData + "h200x2 --topology " + h200 + out + " --holdout-ranks 2",
       "holds out every measured rank count (2)"},
      {"validate --data " + kData + "h200x2 --topology " + h200 + " --calibration " + kData,
       "cannot open the calibration file: it is a folder"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const cs::test::CommandResult r = cs::test::run_command(bin + c.args + " 2>&1 >/dev/null");
    cs::test::check_bad_input(r, c.message);
  }
}

}  // namespace

// A file written before the p2p LL rate, the p2p and chain fills and the misaligned all-gather
// costs has none of their keys: it still reads, with each 0 (not charged), and a negative one is
// refused like any rate.
TEST_CASE(
    "a calibration without the p2p LL rate, the fills and the misaligned costs reads as none") {
  const std::string older = edited([](nlohmann::json& j) {
    for (auto* fits : {&j["nccl"], &j["nccl_by_op"][0]}) {
      for (const char* key : {"p2p_ll_per_channel_GBps", "p2p_fill_GBps", "ring_fill_GBps",
                              "ring_misaligned_head_bytes", "ring_misaligned_head_ps_per_byte",
                              "ring_misaligned_tail_ps_per_byte"})
        (*fits)["params"].erase(key);
    }
  });
  const Calibration c = parse_calibration(older, "c.json");
  CHECK(c.nccl.params.p2p_fill_GBps == 0);
  CHECK(c.nccl.params.ring_fill_GBps == 0);
  CHECK(c.nccl.params.p2p_ll_per_channel_GBps == 0);
  CHECK(c.nccl.params.ring_misaligned_head_bytes == 0);
  CHECK(c.nccl.params.ring_misaligned_head_ps_per_byte == 0);
  CHECK(c.nccl.params.ring_misaligned_tail_ps_per_byte == 0);
  const std::string cheap = edited(
      [](nlohmann::json& j) { j["nccl"]["params"]["ring_misaligned_tail_ps_per_byte"] = -1; });
  CHECK(error_of(cheap).starts_with(
      "c.json:" + std::to_string(line_of(cheap, "ring_misaligned_tail")) +
      ": key 'nccl.params.ring_misaligned_tail_ps_per_byte'"));
  const std::string negative =
      edited([](nlohmann::json& j) { j["nccl"]["params"]["p2p_fill_GBps"] = -1; });
  CHECK(error_of(negative).starts_with("c.json:" + std::to_string(line_of(negative, "p2p_fill")) +
                                       ": key 'nccl.params.p2p_fill_GBps'"));
}
