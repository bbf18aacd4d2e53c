// validate --parallel: the parallel step files' reader (its refusals at file:line:key) and the
// command's output against its golden.
#include <doctest/doctest.h>

#include <string>

#include "calibration/measurements/parallel_steps.hpp"
#include "support/cli_run.hpp"

namespace {

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

// A TP step file as tp_steps.py writes it, `extra` JSON members appended.
std::string tp_file(const std::string& variant, const std::string& extra = "") {
  return "{\n"
         "  \"schema\": \"clustersim-parallel-steps/1\",\n"
         "  \"model\": \"llama-1b\",\n"
         "  \"kind\": \"tp\",\n"
         "  \"variant\": \"" +
         variant +
         "\",\n"
         "  \"world_size\": 2,\n"
         "  \"seq\": 2048,\n"
         "  \"batch\": 4,\n"
         "  \"step_ms_median\": 261.4" +
         extra + "\n}\n";
}

}  // namespace

TEST_CASE("a parallel step file: the layout it ran and its measured step") {
  const auto f = cs::cal::parse_parallel_step_file(tp_file("tp-sp"), "tp.json");
  REQUIRE(f.has_value());
  CHECK(f->world_size == 2);
  CHECK(f->batch == 4);
  CHECK(f->sequence_parallel());
  CHECK(!f->pipeline());
  CHECK(f->step_ms == doctest::Approx(261.4));
  // Another schema is not a parallel step file: skipped, not refused.
  CHECK(!cs::cal::parse_parallel_step_file("{\"schema\": \"clustersim-ddp-steps/1\"}", "d.json"));
}

TEST_CASE("a parallel step file with a bad key is refused at its line") {
  const auto refused = [](const std::string& text) {
    try {
      cs::cal::parse_parallel_step_file(text, "tp.json");
    } catch (const cs::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused(tp_file("tp-zz")).find("tp.json:5: key 'variant': unknown variant 'tp-zz'") !=
        std::string::npos);
  CHECK(refused(tp_file("tp", ",\n  \"stepms\": 1")).find("'stepms'") != std::string::npos);
  CHECK(refused(tp_file("plain")).find("key 'world_size': the plain variant runs on one GPU") !=
        std::string::npos);
}

TEST_CASE("clustersim validate --parallel on the 4 x H200 TP and PP runs matches its golden") {
  const std::string command = "cd '" + kRoot + "' && '" + std::string(CLUSTERSIM_BINARY) +
                              "' validate -t topologies/h200-4gpu.yaml --parallel "
                              "calibrate/data/h200x4-r11-parallel 2>&1";
  const cs::test::CommandResult r = cs::test::run_command(command);
  REQUIRE(r.status == 0);
  CHECK(r.output ==
        cs::test::read_text_file(kRoot + "/tests/golden/validate/parallel-h200x4-r11.txt"));
}
