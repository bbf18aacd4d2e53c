// The host probe in a calibration: read from a probe file of a data folder, chosen by `fit`,
// written to and read back from the calibration file, and refused with file:line:key when it is
// malformed or from another probe version.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/node_host.hpp"
#include "support/calibration_data.hpp"

namespace {

using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

// A probe file of two processes, each key on its own line (dump(2)): classes 1..6 us alone,
// 2..7 us all at once, nccl 30 us all at once only.
nlohmann::json probe_doc() {
  nlohmann::json summary;
  const char* classes[] = {"launch", "elementwise", "linear", "conv", "autograd", "foreach"};
  for (int i = 0; i < 6; ++i) summary[classes[i]] = {{"alone_us", i + 1.0}, {"all_us", i + 2.0}};
  summary["nccl"] = {{"all_us", 30.0}};
  return {{"schema", "clustersim-host-probe/1"}, {"world_size", 2}, {"summary", summary}};
}

std::string error_reading(const std::string& text) {
  try {
    Measurements out;
    read_measurement_text(text, "host_probe.json", out);
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string calibration_error(const std::string& text) {
  try {
    parse_calibration(text, "c.json");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a probe file in a data folder: alone and all-at-once figures, nccl apart") {
  Measurements out;
  read_measurement_text(probe_doc().dump(2), "dir/host_probe-n2.json", out);
  REQUIRE(out.hosts.size() == 1);
  const NodeHost& h = out.hosts[0];
  CHECK(h.world_size == 2);
  CHECK(h.file == "host_probe-n2.json");
  CHECK(h.alone.us[0] == 1.0);
  CHECK(h.alone.us[5] == 6.0);
  REQUIRE(h.all.has_value());
  CHECK(h.all->us[2] == 4.0);
  CHECK(h.alone.nccl_us == 0.0);  // no alone figure at two ranks
  CHECK(h.all->nccl_us == 30.0);
  // Index: the geometric mean of 1..6 = (720)^(1/6) = 2.9938 us.
  CHECK(h.alone.index_us() == doctest::Approx(2.99379).epsilon(1e-5));
}

TEST_CASE("a malformed probe file is refused at its line and key") {
  nlohmann::json doc = probe_doc();
  doc["summary"]["conv"]["alone_us"] = -3.0;
  const std::string text = doc.dump(2);
  const std::string e = error_reading(text);
  CHECK(e.find("host_probe.json:") == 0);
  CHECK(e.find("key 'summary.conv.alone_us'") != std::string::npos);
  doc = probe_doc();
  doc["summary"].erase("foreach");
  CHECK(error_reading(doc.dump(2)).find("key 'summary.foreach'") != std::string::npos);
  doc = probe_doc();
  doc["summary"]["launch"]["fast_us"] = 1.0;
  CHECK(error_reading(doc.dump(2)).find("fast_us") != std::string::npos);
}

TEST_CASE("the calibration file carries the host and reads it back, and refuses another probe") {
  Calibration c = load_calibration(kRoot + "/calibrate/data/h200x4/calibration.json");
  CHECK_FALSE(c.host.has_value());  // fitted before the probe existed
  Measurements data;
  read_measurement_text(probe_doc().dump(2), "host_probe-n2.json", data);
  c.host = data.hosts[0];
  const Calibration back = parse_calibration(calibration_json(c), "c.json");
  REQUIRE(back.host.has_value());
  CHECK(back.host->world_size == 2);
  CHECK(back.host->alone.us == c.host->alone.us);
  CHECK(back.host->all->us == c.host->all->us);
  CHECK(back.host->all->nccl_us == 30.0);

  nlohmann::json j = nlohmann::json::parse(calibration_json(c));
  j["host"]["probe"] = "clustersim-host-probe/0";
  std::string e = calibration_error(j.dump(2));
  CHECK(e.find("c.json:") == 0);
  CHECK(e.find("key 'host.probe': unknown host probe 'clustersim-host-probe/0'") !=
        std::string::npos);
  j = nlohmann::json::parse(calibration_json(c));
  j["host"]["alone_us"]["autograd"] = "fast";
  CHECK(calibration_error(j.dump(2)).find("key 'host.alone_us.autograd'") != std::string::npos);
}

TEST_CASE("a DDP step file beside the node's measurements is skipped by the fits") {
  Measurements out;
  read_measurement_text(R"({"schema": "clustersim-ddp-steps/1", "model": "gpt2"})", "gpt2-n2.json",
                        out);
  CHECK(out.nccl.empty());
  CHECK(out.hosts.empty());
  CHECK(out.fitted_files.empty());
}
