// End-to-end: `clustersim ddp` prints exactly its golden outputs (tests/golden/ddp/, refreshed by
// tests/golden/ddp/refresh.sh, whose cases these are), writes a Chrome trace that parses, gives
// the same bytes twice, and refuses a model that does not fit with one line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/bad_input.hpp"
#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(CLUSTERSIM_SOURCE_DIR);

cs::test::CommandResult ddp(const std::string& args) {
  return cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' ddp " + args + " 2>&1");
}

std::string topo(const char* name) {
  return "--topology '" + (kRoot / "topologies" / name).string() + "' ";
}
std::string model(const char* name) {
  return "--model '" + (kRoot / "models" / name).string() + "' ";
}

}  // namespace

TEST_CASE("clustersim ddp matches its golden outputs") {
  struct Case {
    const char* golden;
    std::string args;
  };
  const Case cases[] = {
      {"gpt2-dgx-h100.txt", topo("dgx-h100.yaml") + model("gpt2.yaml")},
      {"resnet50-h200-noddp-b64.json",
       topo("dgx-h200.yaml") + model("resnet50.yaml") + "--no-ddp --batch 64 --json"},
      {"bert-large-h100-work.csv",
       topo("dgx-h100.yaml") + model("bert-large.yaml") + "--compute work --pageable --csv"},
      {"gpt2-dgx-h100-2node-n16.txt", topo("dgx-h100-2node.yaml") + model("gpt2.yaml") + "-n 16"},
      {"resnet50-dgx-h200-n8-unused.json",
       topo("dgx-h200.yaml") + model("resnet50.yaml") + "-n 8 --find-unused-parameters --json"},
      {"gpt2-dgx-h200-n2-fsdp.txt",
       topo("dgx-h200.yaml") + model("gpt2.yaml") + "-n 2 --batch 8 --strategy fsdp"},
      {"gpt2-dgx-h200-n2-fsdp-accum4-ac.json",
       topo("dgx-h200.yaml") + model("gpt2.yaml") +
           "-n 2 --batch 8 --strategy fsdp --grad-accum 4 --activation-checkpointing --json"},
      {"llama-1b-dgx-h200-n2-accum2-ac.txt", topo("dgx-h200.yaml") + model("llama-1b.yaml") +
                                                 "-n 2 --grad-accum 2 --activation-checkpointing"},
      {"llama-3.1-8b-2node-tp4-pp2.txt", topo("dgx-h100-2node.yaml") + model("llama-3.1-8b.yaml") +
                                             "--nodes 2 --batch 1 --tp 4 --pp 2 --grad-accum 8"},
      {"llama-1b-dgx-h200-tp2-sp.json",
       topo("dgx-h200.yaml") + model("llama-1b.yaml") + "-n 0-3 --tp 2 --sequence-parallel --json"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.golden);
    const cs::test::CommandResult r = ddp(c.args);
    CHECK(r.status == 0);
    CHECK(r.output == cs::test::read_text_file((kRoot / "tests/golden/ddp" / c.golden).string()));
    CHECK(ddp(c.args).output == r.output);  // the same input, the same bytes
  }
}

TEST_CASE("clustersim ddp --trace writes the host thread and both streams, ending at the step") {
  const fs::path trace = fs::temp_directory_path() / ("cs-ddp-trace-" + std::to_string(getpid()));
  const cs::test::CommandResult r = ddp(topo("dgx-h200.yaml") + model("gpt2.yaml") + "--json " +
                                        "--trace '" + trace.string() + "'");
  REQUIRE(r.status == 0);
  const nlohmann::json out = nlohmann::json::parse(r.output);
  const nlohmann::json t = nlohmann::json::parse(cs::test::read_text_file(trace.string()));
  fs::remove(trace);
  double last_end_us = 0;
  int spans[3] = {0, 0, 0};
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int tid = e["tid"].get<int>();
    REQUIRE(tid >= 0);
    REQUIRE(tid < 3);
    ++spans[tid];
    last_end_us = std::max(last_end_us, e["ts"].get<double>() + e["dur"].get<double>());
  }
  CHECK(spans[0] > 0);                                         // host launches
  CHECK(spans[1] > 0);                                         // compute stream
  CHECK(spans[2] == static_cast<int>(out["buckets"].size()));  // one all-reduce per bucket
  CHECK(last_end_us / 1e3 == doctest::Approx(out["step_ms"].get<double>()));
}

TEST_CASE("clustersim ddp --trace on 16 GPUs: the busiest links' utilization per all-reduce") {
  // A link direction cannot carry more than its capacity: while an all-reduce runs, its bytes
  // over capacity and duration lie in (0, 1], and drop to 0 when it ends.
  const fs::path trace = fs::temp_directory_path() / ("cs-ddp-links-" + std::to_string(getpid()));
  const cs::test::CommandResult r = ddp(topo("dgx-h100-2node.yaml") + model("gpt2.yaml") +
                                        "-n 16 --json --trace '" + trace.string() + "'");
  REQUIRE(r.status == 0);
  const nlohmann::json out = nlohmann::json::parse(r.output);
  const nlohmann::json t = nlohmann::json::parse(cs::test::read_text_file(trace.string()));
  fs::remove(trace);
  std::set<std::string> links;
  int rising = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "C") continue;
    links.insert(e["name"].get<std::string>());
    const double u = e["args"]["utilization"].get<double>();
    CHECK(u >= 0);
    CHECK(u <= 1.0 + 1e-9);
    if (u > 0) ++rising;
  }
  CHECK(links.size() == 8);
  CHECK(rising > 0);
  CHECK(rising <= 8 * static_cast<int>(out["buckets"].size()));
}

TEST_CASE("clustersim ddp refuses a batch that does not fit, naming the largest that does") {
  // gpt2-xl's activations grow ~7.6 GB per sample at seq 1024: 512 samples cannot fit in 80 GB.
  const cs::test::CommandResult r =
      ddp(topo("dgx-h100.yaml") + model("gpt2-xl.yaml") + "--batch 512");
  cs::test::check_bad_input(r, "gpt2-xl at batch 512 needs ");
  CHECK(r.output.find("H100-SXM5-80GB has ") != std::string::npos);
  CHECK(r.output.find("; the largest batch that fits is ") != std::string::npos);
  CHECK(r.output.find("gpt2-xl.yaml: key 'batch'") != std::string::npos);
}

TEST_CASE("clustersim ddp: bad flags exit 2 with one line") {
  const std::string base = topo("dgx-h100.yaml") + model("gpt2.yaml");
  cs::test::check_bad_input(ddp(base + "--precision fp8"),
                            "key 'precision': unknown precision 'fp8'; valid: bf16, fp32, fp16");
  cs::test::check_bad_input(ddp(base + "--precision fp16 --strategy fsdp"),
                            "key 'precision': fp16 (GradScaler) goes only with --strategy ddp");
  cs::test::check_bad_input(ddp(base + "--optimizer lamb"),
                            "key 'optimizer': unknown optimizer 'lamb'; valid: sgd, adamw");
  cs::test::check_bad_input(ddp(base + "--compute guess"),
                            "key 'compute': unknown source 'guess'; valid: measured, work");
  cs::test::check_bad_input(ddp(base + "--measurement a100"), "no measurement 'a100' (it has: ");
  cs::test::check_bad_input(ddp(topo("dgx-h100.yaml") + model("resnet50.yaml") + "--seq 128"),
                            "key 'seq': model 'resnet50' has no sequence length");
  cs::test::check_bad_input(ddp(base + "--momentum 0.9"),
                            "key 'momentum': applies only to --optimizer sgd");
  cs::test::check_bad_input(ddp(base + "--momentum -1"), "--momentum: Value -1 not in range");
  // A batch or sequence below 1 is refused, not replaced by the model file's (issue 41).
  cs::test::check_bad_input(ddp(base + "--batch -4"), "--batch: Value -4 not in range 1 to");
  cs::test::check_bad_input(ddp(base + "--batch 0"), "--batch: Value 0 not in range 1 to");
  cs::test::check_bad_input(ddp(base + "--seq 0"), "--seq: Value 0 not in range 1 to");
  cs::test::check_bad_input(ddp(base + "--strategy zero3"),
                            "--strategy: zero3 not in {ddp,fsdp,hsdp,auto}");
  // HSDP on one server; a shard degree that does not split the ranks, or without hsdp.
  cs::test::check_bad_input(
      ddp(topo("dgx-h200.yaml") + model("gpt2.yaml") + "-n 8 --strategy hsdp"),
      "key 'shard-degree': hsdp shards over 8 GPUs and replicates across at least two such "
      "groups; 8 ranks make one");
  cs::test::check_bad_input(ddp(topo("dgx-h100-2node.yaml") + model("gpt2.yaml") +
                                "-n 16 --strategy hsdp --shard-degree 3"),
                            "16 ranks do not split into them");
  cs::test::check_bad_input(ddp(base + "--shard-degree 8"),
                            "key 'shard-degree': applies only to --strategy hsdp");
  cs::test::check_bad_input(ddp(base + "--strategy auto"),
                            "key 'strategy': auto applies only to plan");
  cs::test::check_bad_input(ddp(base + "--sync-every-micro-batch"),
                            "key 'sync-every-micro-batch': applies with --grad-accum 2 or more");
  cs::test::check_bad_input(ddp(base + "--reshard-after-forward false"),
                            "--reshard-after-forward, --param-dtype and --reduce-dtype apply only "
                            "to --strategy fsdp");
  cs::test::check_bad_input(ddp(base + "--strategy fsdp --no-ddp"),
                            "--no-ddp is the plain step; it does not go with fsdp");
  // Accumulation of no micro-batch; checkpointing a model without blocks (issue 40).
  cs::test::check_bad_input(ddp(base + "--grad-accum 0"),
                            "--grad-accum: Value 0 not in range 1 to 65536");
  const std::string cnn = (kRoot / "tests" / "data" / "models" / "tiny-cnn.yaml").string();
  cs::test::check_bad_input(
      ddp(topo("dgx-h200.yaml") + "--model '" + cnn + "' --activation-checkpointing"),
      "key 'activation-checkpointing': model 'tiny-cnn' (" + cnn + ") has no blocks");
  // A host probe that is not one: the file's line and key.
  const std::string probe = (kRoot / "models" / "gpt2.yaml").string();
  cs::test::check_bad_input(ddp(base + "--host-probe '" + probe + "'"),
                            probe + ":1: not valid JSON");
  cs::test::check_bad_input(ddp(base + "--host-probe /nonexistent/probe.json"),
                            "cannot open the --host-probe file");
}

TEST_CASE(
    "clustersim ddp -n N: each bucket's all-reduce is the collective model's, as coll gives") {
  // The same all-reduce, the same ranks and topology: ddp's bucket and coll's row must agree; on
  // two servers the 16 ranks' rings share the servers' NICs and fabric as coll's flows do.
  struct Case {
    const char* topology;
    int ranks;
  };
  for (const Case c : {Case{"dgx-h100.yaml", 8}, Case{"dgx-h100-2node.yaml", 16}}) {
    CAPTURE(c.topology);
    const std::string n = std::to_string(c.ranks);
    const cs::test::CommandResult r =
        ddp(topo(c.topology) + model("gpt2.yaml") + "-n " + n + " --json");
    REQUIRE(r.status == 0);
    const nlohmann::json out = nlohmann::json::parse(r.output);
    CHECK(out["ranks"] == c.ranks);
    REQUIRE(out["buckets"].size() > 2);
    const nlohmann::json& bucket = out["buckets"][1];
    const std::string size = std::to_string(static_cast<long long>(bucket["bytes"].get<double>()));
    const cs::test::CommandResult cr = cs::test::run_command(
        "env -u NCCL_ALGO -u NCCL_PROTO -u NCCL_NVLS_ENABLE '" + std::string(CLUSTERSIM_BINARY) +
        "' coll " + topo(c.topology) + "-n " + n + " -b " + size + " -e " + size + " --json");
    REQUIRE(cr.status == 0);
    const nlohmann::json row = nlohmann::json::parse(cr.output)["rows"][0];
    const double coll_ms = row["time_us"].get<double>() / 1e3;
    CHECK(bucket["alone_ms"].get<double>() == doctest::Approx(coll_ms).epsilon(1e-9));
    // Beside backward's kernels it runs no faster than alone.
    CHECK(bucket["end_ms"].get<double>() - bucket["start_ms"].get<double>() >=
          coll_ms * (1 - 1e-9));
    CHECK(bucket["nccl"].get<std::string>().rfind(row["algo"].get<std::string>() + "/", 0) == 0);
    // N ranks of 8 samples: samples/s is 8 N / step.
    CHECK(out["samples_per_s"].get<double>() ==
          doctest::Approx(8.0 * c.ranks / (out["step_ms"].get<double>() / 1e3)));
  }
}

TEST_CASE("clustersim scale: weak scaling from one GPU, servers filled in order") {
  const cs::test::CommandResult r =
      cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' scale " + model("gpt2.yaml") +
                            topo("dgx-h100-2node.yaml") + "--gpus 1,8,16,32 --json 2>&1");
  REQUIRE(r.status == 0);
  const nlohmann::json points = nlohmann::json::parse(r.output)["points"];
  REQUIRE(points.size() == 3);  // 32 GPUs exceed the two servers: no point
  CHECK(points[0]["efficiency"].get<double>() == doctest::Approx(1.0));
  CHECK(points[1]["servers"] == 1);
  CHECK(points[2]["servers"] == 2);
  for (const auto& p : points) {
    // Weak scaling: samples/s = GPUs x batch / step, efficiency = that over GPUs x one GPU's.
    const double expected = p["gpus"].get<double>() * 8 / (p["step_ms"].get<double>() / 1e3);
    CHECK(p["samples_per_s"].get<double>() == doctest::Approx(expected));
    CHECK(p["efficiency"].get<double>() <= 1.0);
  }
  // More GPUs never make the step faster: every one adds all-reduce work.
  CHECK(points[2]["step_ms"].get<double>() >= points[1]["step_ms"].get<double>());
}

TEST_CASE("clustersim scale --strong splits the global batch, and refuses a count that cannot") {
  const std::string base = "'" + std::string(CLUSTERSIM_BINARY) + "' scale " + model("gpt2.yaml") +
                           topo("dgx-h100.yaml");
  const cs::test::CommandResult r = cs::test::run_command(base + "--strong --gpus 1,2,8 --json");
  REQUIRE(r.status == 0);
  const nlohmann::json points = nlohmann::json::parse(r.output)["points"];
  CHECK(points[2]["batch_per_gpu"] == 1);  // 8 samples over 8 GPUs
  cs::test::check_bad_input(cs::test::run_command(base + "--strong --gpus 3 2>&1"),
                            "key 'gpus': --strong splits the global batch of 8 evenly; 3 GPUs");
  cs::test::check_bad_input(cs::test::run_command(base + "--gpus 1,x 2>&1"),
                            "key 'gpus': 'x' is not a GPU count");
}

TEST_CASE("clustersim scale --plot draws a PNG and an SVG that open") {
  const fs::path dir = fs::temp_directory_path() / ("cs-plot-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string base = "'" + std::string(CLUSTERSIM_BINARY) + "' scale " + model("gpt2.yaml") +
                           topo("dgx-h100-2node.yaml") + "--gpus 1,8,16 --plot ";
  const cs::test::CommandResult png =
      cs::test::run_command(base + "'" + (dir / "s.png").string() + "' 2>&1");
  REQUIRE(png.status == 0);
  const std::string bytes = cs::test::read_text_file((dir / "s.png").string());
  // A PNG: its 8-byte signature, then the IHDR chunk with width and height (big-endian).
  REQUIRE(bytes.size() > 1000);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(bytes.compare(12, 4, "IHDR") == 0);
  auto be32 = [&bytes](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 3]));
  };
  CHECK(be32(16) == 1400);
  CHECK(be32(20) == 560);
  const cs::test::CommandResult svg =
      cs::test::run_command(base + "'" + (dir / "s.svg").string() + "' 2>&1");
  REQUIRE(svg.status == 0);
  const std::string text = cs::test::read_text_file((dir / "s.svg").string());
  CHECK(text.find("<svg") != std::string::npos);
  CHECK(text.find("dgx-h100-2node") != std::string::npos);  // the legend names the topology
  cs::test::check_bad_input(cs::test::run_command(base + "'" + (dir / "s.gif").string() + "' 2>&1"),
                            "key '--plot': ");
  CHECK_FALSE(fs::exists(dir / "s.gif"));
  fs::remove_all(dir);
}

TEST_CASE("clustersim ddp --nodes: the 16-node file resized to 2 is the 2-node file") {
  // dgx-h100-2node.yaml and dgx-h100-16node.yaml differ only in name and count, and their rail
  // fabric's rules give both 8 rail leaves and one spine at 2 servers; so every figure matches.
  const cs::test::CommandResult resized =
      ddp(topo("dgx-h100-16node.yaml") + model("gpt2.yaml") + "--nodes 2 --csv");
  const cs::test::CommandResult written =
      ddp(topo("dgx-h100-2node.yaml") + model("gpt2.yaml") + "-n 16 --csv");
  REQUIRE(resized.status == 0);
  std::string expected = written.output;
  expected.replace(expected.find("dgx-h100-2node"), 14, "dgx-h100-16node");
  CHECK(resized.output == expected);
  // A list runs each count in turn under one CSV header.
  const cs::test::CommandResult both =
      ddp(topo("dgx-h100-16node.yaml") + model("gpt2.yaml") + "--nodes 1,2 --csv");
  CHECK(both.output.find("gpt2,dgx-h100-16node,H100-SXM5-80GB,8,1,") != std::string::npos);
  CHECK(both.output.find("gpt2,dgx-h100-16node,H100-SXM5-80GB,16,2,") != std::string::npos);
  CHECK(std::count(both.output.begin(), both.output.end(), '\n') == 3);
  cs::test::check_bad_input(
      ddp(topo("dgx-h100-16node.yaml") + model("gpt2.yaml") + "--nodes 1,2 --trace /tmp/x.json"),
      "--trace: the trace is one step; give --nodes one count");
}

TEST_CASE("--strategy fsdp runs through scale and plan, and their headers say so") {
  const std::string bin = "'" + std::string(CLUSTERSIM_BINARY) + "' ";
  const cs::test::CommandResult s =
      cs::test::run_command(bin + "scale " + topo("dgx-h100-16node.yaml") + model("llama-1b.yaml") +
                            "--nodes 1,2 --strategy fsdp 2>&1");
  CHECK(s.status == 0);
  CHECK(s.output.rfind("# clustersim scale: llama-1b, FSDP2, weak scaling", 0) == 0);
  const cs::test::CommandResult p =
      cs::test::run_command(bin + "plan " + topo("aws-p5.48xlarge.yaml") + model("gpt2-xl.yaml") +
                            "--tokens 10B --strategy fsdp 2>&1");
  CHECK(p.status == 0);
  CHECK(p.output.find(", FSDP2 over every GPU\n") != std::string::npos);
  // The same step as `ddp --strategy fsdp` prints: FSDP's own step, not DDP's.
  const cs::test::CommandResult d =
      ddp(topo("dgx-h100-16node.yaml") + model("llama-1b.yaml") + "--nodes 1 --strategy fsdp");
  const cs::test::CommandResult d2 =
      ddp(topo("dgx-h100-16node.yaml") + model("llama-1b.yaml") + "--nodes 1");
  CHECK(d.output != d2.output);
}

TEST_CASE("clustersim ddp refuses a layout the ranks or the model do not allow, naming the flag") {
  const std::string llama = topo("dgx-h100.yaml") + model("llama-3.1-8b.yaml") + "--batch 1 ";
  cs::test::CommandResult r = ddp(llama + "-n 0-7 --tp 3");
  CHECK(r.status == 2);
  CHECK(r.output.find("flag '--tp': --tp 3 x --pp 1 = 3 GPUs per model replica do not divide "
                      "the 8 ranks") != std::string::npos);
  r = ddp(llama + "-n 0-5 --tp 6");
  CHECK(r.status == 2);
  CHECK(r.output.find("flag '--tp': 6 does not divide the 32 attention heads") !=
        std::string::npos);
  r = ddp(llama +
          "-n 0-7 --tp 2 --pp 4 --schedule interleaved-1f1b --virtual-stages 2 "
          "--grad-accum 6");
  CHECK(r.status == 2);
  CHECK(r.output.find("flag '--grad-accum'") != std::string::npos);
  r = ddp(llama + "-n 0-7 --pp 8 --pp-blocks 4,4");
  CHECK(r.status == 2);
  CHECK(r.output.find("flag '--pp-blocks'") != std::string::npos);
}
