// Sweep files: what they may say per command, the order of their points (first axis slowest, as
// derived by hand below), and the one-line refusals of what they may not say.
#include <doctest/doctest.h>

#include <string>

#include "plan/sweep_file.hpp"

using namespace cs::plan;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_sweep(text, "s.yaml");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a sweep's points: the cartesian product, first axis slowest") {
  const SweepFile s = parse_sweep(
      "command: ddp\n"
      "axes:\n"
      "  topology: [a.yaml, b.yaml]\n"
      "  model: m.yaml\n"
      "  batch: [1, 2, 3]\n",
      "dir/s.yaml");
  CHECK(s.command == SweepCommand::ddp);
  CHECK(s.dir == "dir");
  REQUIRE(s.axes.size() == 3);
  CHECK(s.axes[1].values == std::vector<std::string>{"m.yaml"});  // a scalar is a list of one
  CHECK(point_count(s) == 6);                                     // 2 x 1 x 3
  // Point 4 = topology 4 / 3 = 1 (b.yaml), model 0, batch 4 mod 3 = 1 (2).
  CHECK(point_coordinates(s, 4) == std::vector<std::size_t>{1, 0, 1});
  CHECK(point_coordinates(s, 2) == std::vector<std::size_t>{0, 0, 2});
  CHECK(point_coordinates(s, 5) == std::vector<std::size_t>{1, 0, 2});
  // The same bytes, the same digest; one byte more, another.
  CHECK(parse_sweep("command: coll\naxes: {topology: t, size: 1M}\n", "x").digest ==
        parse_sweep("command: coll\naxes: {topology: t, size: 1M}\n", "y").digest);
  CHECK(parse_sweep("command: coll\naxes: {topology: t, size: 1M}\n", "x").digest !=
        parse_sweep("command: coll\naxes: {topology: t, size: 2M}\n", "x").digest);
}

TEST_CASE("a sweep's momentum axis: SGD's factor, 0 or above") {
  const SweepFile s = parse_sweep(
      "command: ddp\naxes: {topology: t.yaml, model: m.yaml, momentum: [0, 0.9]}\n", "s.yaml");
  REQUIRE(s.axes.size() == 3);
  CHECK(s.axes[2].values == std::vector<std::string>{"0", "0.9"});
  CHECK(error_of("command: plan\naxes:\n  topology: t\n  model: m\n  momentum: [0.9, -1]\n"
                 "target: {steps: 1}\n")
            .find("s.yaml:5: key 'momentum': '-1' is not a momentum (a number >= 0)") !=
        std::string::npos);
  CHECK(error_of("command: coll\naxes: {topology: t, size: 1M, momentum: 0}\n")
            .find("key 'momentum': unknown key in axes") != std::string::npos);
}

TEST_CASE("a plan sweep's target and prices") {
  const SweepFile s = parse_sweep(
      "command: plan\n"
      "axes: {topology: t.yaml, model: m.yaml, nodes: [2, 4]}\n"
      "target: {tokens: 300e9}\n"
      "prices: {dgx-h100: 40}\n",
      "s.yaml");
  CHECK(s.target.kind == TargetKind::tokens);
  CHECK(s.target.amount == 300e9);
  CHECK(s.prices.at("dgx-h100") == 40);
}

TEST_CASE("a sweep file that is wrong names its line and key") {
  CHECK(error_of("axes: {topology: t}\n").find("key 'command': missing") != std::string::npos);
  CHECK(error_of("command: ddq\naxes: {topology: t, model: m}\n")
            .find("s.yaml:1: key 'command': unknown command 'ddq' (did you mean 'ddp'?)") !=
        std::string::npos);
  CHECK(error_of("command: ddp\naxes: {topology: t, model: m, batchsize: [1]}\n")
            .find("key 'batchsize'") != std::string::npos);
  CHECK(error_of("command: ddp\naxes: {topology: t}\n")
            .find("key 'model': missing: a ddp sweep needs it") != std::string::npos);
  CHECK(error_of("command: ddp\naxes:\n  topology: t\n  model: m\n  batch: []\n")
            .find("s.yaml:5: key 'batch': the axis has no values") != std::string::npos);
  CHECK(error_of("command: ddp\naxes:\n  topology: t\n  model: m\n  batch: [4, four]\n")
            .find("s.yaml:5: key 'batch'") != std::string::npos);
  CHECK(error_of("command: ddp\naxes:\n  topology: t\n  model: m\n  nodes: [0]\n")
            .find("key 'nodes'") != std::string::npos);
  CHECK(error_of("command: ddp\naxes:\n  topology: t\n  model: m\n  precision: fp8\n")
            .find("s.yaml:5: key 'precision': unknown precision 'fp8'; valid: bf16, fp32, fp16") !=
        std::string::npos);
  CHECK(error_of("command: ddp\naxes:\n  topology: t\n  model: m\n  bucket_cap_mb: 0\n")
            .find("key 'bucket_cap_mb': '0' is not a bucket cap") != std::string::npos);
  CHECK(error_of("command: ddp\naxes: {topology: t, model: m}\ntarget: {tokens: 1}\n")
            .find("key 'target': applies to plan sweeps only") != std::string::npos);
  CHECK(error_of("command: plan\naxes: {topology: t, model: m}\n").find("key 'target': missing") !=
        std::string::npos);
  CHECK(error_of("command: plan\naxes: {topology: t, model: m}\ntarget: {tokens: 0}\n")
            .find("key 'tokens'") != std::string::npos);
  CHECK(error_of("command: plan\naxes: {topology: t, model: m}\ntarget: {tokens: 1, steps: 2}\n")
            .find("give exactly one of samples, tokens, steps") != std::string::npos);
  CHECK(error_of("command: plan\naxes: {topology: t, model: m}\ntarget: {steps: 9}\n"
                 "prices: {p5: cheap}\n")
            .find("s.yaml:4: key 'p5': 'cheap' is not a price") != std::string::npos);
  CHECK(error_of("command: [ddp\n").find("s.yaml:") != std::string::npos);
  CHECK(error_of("").find("s.yaml:1") != std::string::npos);
  // 101^4 = 104,060,401 points: more than 10,000,000.
  std::string big = "command: coll\naxes:\n  topology: t\n";
  for (const char* axis : {"nodes", "size", "op", "dtype"}) {
    big += std::string("  ") + axis + ": [";
    for (int i = 1; i <= 101; ++i) big += (i > 1 ? "," : "") + std::to_string(i);
    big += "]\n";
  }
  CHECK(error_of(big).find("s.yaml:3: key 'axes': 104060401 points are more than 10000000") !=
        std::string::npos);
}
