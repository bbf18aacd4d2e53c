// End-to-end: what `clustersim scale` says about counts it cannot run (issue 41: a --gpus list
// past the topology printed an empty table and exit 0), and why a point passes 100 % efficiency
// (the step of 16 L40S GPUs shorter than that of 8), with the plot's axis reaching it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(CLUSTERSIM_SOURCE_DIR);

// `clustersim scale` with gpt2 on the given topologies (file names under topologies/).
cs::test::CommandResult scale(const std::string& topologies, const std::string& args,
                              const std::string& redirect = " 2>&1") {
  std::string command = "'" + std::string(CLUSTERSIM_BINARY) + "' scale --model '" +
                        (kRoot / "models/gpt2.yaml").string() + "' ";
  std::string rest = topologies;
  for (std::size_t at = 0; at < rest.size();) {
    const std::size_t end = std::min(rest.find(' ', at), rest.size());
    command += "-t '" + (kRoot / "topologies" / rest.substr(at, end - at)).string() + "' ";
    at = end + 1;
  }
  return cs::test::run_command(command + args + redirect);
}

}  // namespace

TEST_CASE("clustersim scale refuses --gpus counts that no topology has, naming the flag") {
  // dgx-h100-2node.yaml is two servers of 8 GPUs: 16 GPUs, so 1,000 leaves nothing to print.
  cs::test::check_bad_input(scale("dgx-h100-2node.yaml", "--gpus 1000"),
                            "--gpus 1000: more GPUs than any topology has (dgx-h100-2node: 16); "
                            "give counts up to 16, or server counts with --nodes");
  cs::test::check_bad_input(scale("dgx-h100-2node.yaml dgx-h100.yaml", "--gpus 64,128 --json"),
                            "(dgx-h100-2node: 16, dgx-h100: 8); give counts up to 16");
}

TEST_CASE("clustersim scale says which --gpus counts a topology was too small for") {
  // 8 and 16 GPUs fit the 16-GPU file; 32 does not. The 8-GPU file takes 8 only.
  const std::string both = "dgx-h100-2node.yaml dgx-h100.yaml";
  const cs::test::CommandResult text = scale(both, "--gpus 8,16,32");
  REQUIRE(text.status == 0);
  CHECK(text.output.find("# dgx-h100-2node has 16 GPUs: skipped --gpus 32 (--nodes resizes") !=
        std::string::npos);
  CHECK(text.output.find("# dgx-h100 has 8 GPUs: skipped --gpus 16,32 (") != std::string::npos);
  // JSON: the three points, and the skipped counts as data.
  const cs::test::CommandResult json = scale(both, "--gpus 8,16,32 --json", "");
  REQUIRE(json.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.output);
  CHECK(doc["points"].size() == 3);
  REQUIRE(doc["skipped"].size() == 2);
  CHECK(doc["skipped"][0]["topology"] == "dgx-h100-2node");
  CHECK(doc["skipped"][0]["available_gpus"] == 16);
  CHECK(doc["skipped"][0]["gpus"] == nlohmann::json::array({32}));
  CHECK(doc["skipped"][1]["gpus"] == nlohmann::json::array({16, 32}));
  // CSV has no comment lines: the same words on standard error, the CSV clean on standard output.
  const cs::test::CommandResult csv = scale(both, "--gpus 8,16,32 --csv", " 2>/dev/null");
  REQUIRE(csv.status == 0);
  CHECK(csv.output.find("skipped") == std::string::npos);
  CHECK(std::count(csv.output.begin(), csv.output.end(), '\n') == 4);  // header + 3 points
  const cs::test::CommandResult csv_err = scale(both, "--gpus 8,16,32 --csv", " 2>&1 >/dev/null");
  CHECK(csv_err.output ==
        "clustersim scale: dgx-h100-2node has 16 GPUs: skipped --gpus 32 (--nodes resizes the "
        "file's cluster)\nclustersim scale: dgx-h100 has 8 GPUs: skipped --gpus 16,32 (--nodes "
        "resizes the file's cluster)\n");
}

namespace {

std::string ddp_json(const std::string& servers) {
  return cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' ddp --model '" +
                               (kRoot / "models/llama-1b.yaml").string() + "' --topology '" +
                               (kRoot / "topologies/aws-g6e.48xlarge.yaml").string() +
                               "' --batch 3 --nodes " + servers + " --json")
      .output;
}

std::string printed(const char* pattern, double a, double b = 0, double c = 0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

TEST_CASE("clustersim scale says why 16 L40S GPUs pass 100 % efficiency, from ddp's own figures") {
  // Llama-1B on one and two g6e.48xlarge (8 L40S on PCIe a server). ddp's breakdown at each size
  // gives what the note must say: weak scaling, so efficiency = step at 8 / step at 16; the
  // all-reduces' stretch by compute (communication_slowdown), their time alone (communication
  // less that), the exposed part; the largest bucket's channels (its NCCL label) and the bytes a
  // channel moves per second alone: 2 (n - 1) / n of the bucket over its time alone and channels.
  const nlohmann::json one = nlohmann::json::parse(ddp_json("1"));
  const nlohmann::json two = nlohmann::json::parse(ddp_json("2"));
  struct Size {
    double step, stretched, alone, exposed, gbps;
    int channels;
  };
  const auto size = [](const nlohmann::json& j, double n) {
    const auto& b = j["breakdown_ms"];
    nlohmann::json largest = j["buckets"][0];
    for (const auto& bucket : j["buckets"]) {
      if (bucket["bytes"].get<double>() > largest["bytes"].get<double>()) largest = bucket;
    }
    const std::string label = largest["nccl"];  // "RING/SIMPLE/2"
    const int channels = std::stoi(label.substr(label.rfind('/') + 1));
    const double stretched = b["communication_slowdown"].get<double>();
    return Size{j["step_ms"].get<double>(),
                stretched,
                b["communication"].get<double>() - stretched,
                b["exposed_communication"].get<double>(),
                2 * (n - 1) / n * largest["bytes"].get<double>() /
                    (largest["alone_ms"].get<double>() / 1e3) / channels / 1e9,
                channels};
  };
  const Size at8 = size(one, 8);
  const Size at16 = size(two, 16);
  // The mechanism: fewer channels, each past the 8.24 GB/s a channel keeps beside GEMMs, stretched
  // more by compute than the wider all-reduce loses alone.
  REQUIRE(at8.step > at16.step);
  REQUIRE(at8.channels < at16.channels);
  REQUIRE(at8.gbps > 8.24);
  REQUIRE(at16.gbps < 8.24);
  REQUIRE(at8.stretched - at16.stretched > at16.alone - at8.alone);

  const cs::test::CommandResult r = cs::test::run_command(
      "'" + std::string(CLUSTERSIM_BINARY) + "' scale --model '" +
      (kRoot / "models/llama-1b.yaml").string() + "' -t '" +
      (kRoot / "topologies/aws-g6e.48xlarge.yaml").string() + "' --batch 3 --nodes 1,2 --json");
  REQUIRE(r.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  CHECK(doc["points"][1]["efficiency"].get<double>() == doctest::Approx(at8.step / at16.step));
  const std::vector<std::string> expected = {
      "aws-g6e.48xlarge: eff above 100% at 16 GPUs: a step of " +
          printed("%.3f ms at 16 GPUs against %.3f ms at 8.", at16.step, at8.step),
      "  At 8 GPUs NCCL runs each all-reduce on 2 channels of " +
          printed("%.1f GB/s, more than the 8.2 GB/s a channel keeps beside GEMMs ", at8.gbps) +
          "(calibrate/overlap/): compute beside them stretches the all-reduces by " +
          printed("%.1f ms a step.", at8.stretched),
      "  At 16 GPUs, on 4 channels of " +
          printed("%.1f GB/s, by %.1f ms: the all-reduces take longer alone ", at16.gbps,
                  at16.stretched) +
          printed("(%.1f ms against %.1f) ", at16.alone, at8.alone) +
          printed("but less of them is exposed (%.1f ms against %.1f).", at16.exposed,
                  at8.exposed)};
  CHECK(doc["notes"] == expected);
}

TEST_CASE("clustersim scale --plot draws an efficiency above 100 %") {
  // The same two points at batch 3 (4 no longer fits an L40S), 100 % and 106.3 %: the efficiency
  // axis used to stop at 102 %, and gnuplot leaves out a point past its axis. Drawn: each panel's
  // two points and its key's sample, 6 uses of the point symbol (pointtype 7, gnuplot's gpPt6).
  const fs::path svg = cs::test::scratch_path("cs-scale-eff") += ".svg";
  const cs::test::CommandResult r =
      cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' scale --model '" +
                            (kRoot / "models/llama-1b.yaml").string() + "' -t '" +
                            (kRoot / "topologies/aws-g6e.48xlarge.yaml").string() +
                            "' --batch 3 --nodes 1,2 --plot '" + svg.string() + "' 2>&1");
  REQUIRE(r.status == 0);
  const std::string text = cs::test::read_text_file(svg.string());
  std::size_t uses = 0;
  for (std::size_t at = text.find("xlink:href='#gpPt6'"); at != std::string::npos;
       at = text.find("xlink:href='#gpPt6'", at + 1)) {
    ++uses;
  }
  CHECK(uses == 6);
  fs::remove(svg);
}
