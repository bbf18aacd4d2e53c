// Loading good model files: repeat blocks expand in order with `{i}` in names, params keep their
// order, settings and measurements read as written, defaults where keys are absent, op FLOPs.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/input_file.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

using namespace cs::workload;

namespace {

Model load_fixture(const std::string& name) {
  return load_model_file(std::string(CLUSTERSIM_TEST_DATA) + "/models/" + name);
}

const Layer& layer_named(const Model& m, const std::string& name) {
  for (const auto& layer : m.layers) {
    if (layer.name == name) return layer;
  }
  FAIL("no layer " << name);
  return m.layers.front();
}

std::vector<std::string> names_of(const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> out;
  for (const auto& t : tensors) out.push_back(t.name);
  return out;
}

}  // namespace

TEST_CASE("a repeat block expands in order, {i} becoming 0..count-1, and params keep their order") {
  const Model m = load_fixture("tiny-gpt.yaml");
  std::vector<std::string> names;
  for (const auto& layer : m.layers) names.push_back(layer.name);
  CHECK(names ==
        std::vector<std::string>{"wte", "h.0.attn", "h.0.mlp", "h.1.attn", "h.1.mlp", "lm_head"});
  for (const char* attn : {"h.0.attn", "h.1.attn"}) {
    const Layer& l = layer_named(m, attn);
    CHECK(names_of(l.params) == std::vector<std::string>{"weight", "bias"});
    CHECK(l.params[0].elements == 12288);
    CHECK(l.forward.size() == 2);
    CHECK(l.backward.size() == 2);
    // The measured map is copied into every iteration.
    REQUIRE(l.measured.count("h100") == 1);
    CHECK(l.measured.at("h100").backward_kernels == 4);
  }
  const Layer& head = layer_named(m, "lm_head");
  CHECK(head.params.empty());
  CHECK(head.forward.empty());
  CHECK(head.backward.empty());
  CHECK(head.activation_bytes == 0);
}

TEST_CASE("param_count and param_bytes sum the params of the expanded layers") {
  const Model m = load_fixture("tiny-gpt.yaml");
  // wte 6400 fp32; per block: attn 12288 + 192 fp32, mlp 16384 bf16; two blocks.
  CHECK(m.param_count() == 6400 + 2 * (12288 + 192 + 16384));
  CHECK(m.param_bytes() == 6400 * 4 + 2 * ((12288 + 192) * 4 + 16384 * 2));
}

TEST_CASE("settings, recorded_at and measurements read as written") {
  const Model m = load_fixture("tiny-gpt.yaml");
  CHECK(m.name == "tiny-gpt");
  CHECK(m.source == "hand-written for tests/workload");
  CHECK(m.file == std::string(CLUSTERSIM_TEST_DATA) + "/models/tiny-gpt.yaml");
  CHECK(m.settings.batch == 2);
  CHECK(m.settings.seq == 32);
  CHECK(m.settings.precision == Precision::bf16);
  CHECK(m.settings.optimizer == OptimizerKind::adamw);
  CHECK(m.settings.input_bytes_per_sample == 256);
  CHECK_FALSE(m.settings.input_pinned);
  CHECK(m.recorded_at.batch == 2);
  CHECK(m.recorded_at.seq == 32);
  CHECK(m.recorded_at.precision == Precision::bf16);

  REQUIRE(m.measurements.size() == 2);
  const Measurement& h200 = m.measurements[0];
  CHECK(h200.id == "h200");
  CHECK(h200.gpu == "H200-SXM-141GB");
  CHECK(h200.batch == 2);
  CHECK(h200.seq == 32);
  CHECK(h200.optimizer_us == 120.5);
  CHECK(h200.optimizer_kernels == 12);
  CHECK(h200.host_forward_us == 900);
  CHECK(h200.host_backward_us == 1500.5);
  CHECK(h200.host_optimizer_us == 80);
  CHECK(h200.source == "made up for the test");
  const Measurement& h100 = m.measurements[1];
  CHECK(h100.precision == Precision::fp32);
  CHECK(h100.optimizer == OptimizerKind::sgd);
  CHECK(h100.source.empty());

  const Layer& wte = layer_named(m, "wte");
  REQUIRE(wte.measured.size() == 1);
  CHECK(wte.measured.at("h200").forward_us == 3.5);
  CHECK(wte.measured.at("h200").backward_us == 7);
  CHECK(wte.measured.at("h200").forward_kernels == 1);
  // 16 KiB, and the default scale of a model with a sequence: batch^1 * seq^1.
  CHECK(wte.activation_bytes == 16384);
  CHECK(wte.activation_scale_batch == 1);
  CHECK(wte.activation_scale_seq == 1);
  CHECK(layer_named(m, "h.1.attn").activation_scale_seq == 2);
}

TEST_CASE("op fields and FLOPs, derived by hand") {
  const Model m = load_fixture("tiny-gpt.yaml");
  const Layer& attn = layer_named(m, "h.0.attn");
  const Op& qkv = attn.forward[0];
  CHECK(qkv.kind == OpKind::gemm);
  CHECK(qkv.m == 64);
  CHECK(qkv.n == 192);
  CHECK(qkv.k == 64);
  CHECK(qkv.batch == 1);
  CHECK(qkv.dtype == Dtype::bf16);
  CHECK(qkv.grows_batch == Dim::m);
  CHECK(qkv.grows_seq == Dim::m);
  CHECK(qkv.kernels == 1);
  // A gemm does m*n*k multiply-adds of 2 FLOPs: 2 x 64 x 192 x 64 = 1,572,864.
  CHECK(qkv.flops() == 1'572'864.0);

  const Op& sdpa = attn.forward[1];
  CHECK(sdpa.kind == OpKind::attention);
  CHECK(sdpa.causal);
  CHECK(sdpa.kernels == 2);
  // Per (batch, head): QK^T is 2 x 32 x 32 x 16 FLOPs and PV the same, 65,536 together; x 2
  // samples x 4 heads = 524,288; causal masking halves it to 262,144.
  CHECK(sdpa.flops() == 262'144.0);

  CHECK(attn.backward[1].grows_batch == Dim::k);
  const Op& embed = layer_named(m, "wte").forward[0];
  CHECK(embed.kind == OpKind::memory);
  CHECK(embed.bytes == 16384);
  CHECK(embed.flops() == 0);
  CHECK(embed.scale_batch == 1);
  CHECK(embed.scale_seq == 1);
}

TEST_CASE("a model without a sequence: conv, buffers, and scales that ignore seq") {
  const Model m = load_fixture("tiny-cnn.yaml");
  CHECK_FALSE(m.settings.seq.has_value());
  CHECK_FALSE(m.recorded_at.seq.has_value());
  CHECK(m.settings.input_pinned);  // the default
  CHECK(m.settings.input_bytes_per_sample == 3072);
  CHECK(m.measurements.empty());
  CHECK(m.source.empty());

  const Op& conv = layer_named(m, "conv1").forward[0];
  CHECK(conv.kind == OpKind::conv);
  CHECK(conv.dtype == Dtype::tf32);
  CHECK(conv.grows_batch == Dim::m);
  CHECK(conv.grows_seq == Dim::none);
  // 2 x 1024 outputs x 16 channels x 27 inputs each = 884,736.
  CHECK(conv.flops() == 884'736.0);

  const Layer& bn = layer_named(m, "bn1");
  CHECK(names_of(bn.params) == std::vector<std::string>{"weight", "bias"});
  CHECK(names_of(bn.buffers) == std::vector<std::string>{"running_mean", "running_var"});
  CHECK(bn.activation_scale_batch == 1);
  CHECK(bn.activation_scale_seq == 0);
  CHECK(bn.forward[0].bytes == 1.5e5);
  CHECK(bn.forward[0].kernels == 2);
  CHECK(bn.forward[0].scale_seq == 0);
  // Buffers are not parameters: 432 + 16 + 16.
  CHECK(m.param_count() == 464);
}

TEST_CASE("dtype sizes and spellings") {
  CHECK(dtype_bytes(Dtype::fp32) == 4);
  CHECK(dtype_bytes(Dtype::tf32) == 4);
  CHECK(dtype_bytes(Dtype::bf16) == 2);
  CHECK(dtype_bytes(Dtype::fp16) == 2);
  CHECK(std::string(to_string(Dtype::tf32)) == "tf32");
  CHECK(std::string(to_string(Precision::fp32)) == "fp32");
  CHECK(std::string(to_string(OptimizerKind::adamw)) == "adamw");
  CHECK(TensorSpec{"w", 10, Dtype::bf16}.bytes() == 20);
}

TEST_CASE("the known GPU models are exactly those the shipped topologies define") {
  std::set<std::string> in_topologies;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies")) {
    if (entry.path().extension() != ".yaml") continue;
    for (const auto& model : cs::topo::load_cluster(entry.path().string()).gpu_models) {
      in_topologies.insert(model.name);
    }
  }
  const auto& known = known_gpu_models();
  CHECK(std::set<std::string>(known.begin(), known.end()) == in_topologies);
}

TEST_CASE("every shipped model file loads") {
  const std::filesystem::path dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/models";
  if (!std::filesystem::exists(dir)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(load_model_file(entry.path().string()));
  }
}

TEST_CASE("the example in models/README.md loads") {
  const std::string readme =
      cs::read_input_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/models/README.md", "README");
  const std::string fence = "```yaml\n";
  const std::size_t begin = readme.find(fence);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = readme.find("```", begin + fence.size());
  REQUIRE(end != std::string::npos);
  const Model m = parse_model_text(readme.substr(begin + fence.size(), end - begin - fence.size()),
                                   "models/README.md");
  CHECK(m.layers.size() == 13);
  CHECK(m.layers.back().name == "transformer.h.11.attn.c_attn");
}

TEST_CASE("the model keeps its blocks: each iteration of a repeat block, or each indexed module") {
  // tiny-gpt.yaml: wte, a repeat block of 2 x (h.{i}.attn, h.{i}.mlp), lm_head.
  const Model m = load_fixture("tiny-gpt.yaml");
  REQUIRE(m.blocks.size() == 2);
  CHECK(m.blocks[1].name == "h.1.attn");
  CHECK(m.blocks[1].repeat == 0);
  CHECK(m.blocks[1].iteration == 1);
  CHECK(m.blocks[1].first_layer == 3);
  CHECK(m.blocks[1].layer_count == 2);
  CHECK(m.layers[0].block == -1);  // wte: the root's
  CHECK(m.layers[4].block == 1);
  CHECK(m.layers[5].block == -1);
  // An export lists every layer: GPT-2's 12 blocks are its transformer.h.N modules, each the
  // same run of layers (ln_1, attn and its parts, ln_2, mlp and its parts).
  const Model gpt2 = load_model_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/models/gpt2.yaml");
  REQUIRE(gpt2.blocks.size() == 12);
  CHECK(gpt2.blocks[0].name == "transformer.h.0");
  CHECK(gpt2.blocks[11].name == "transformer.h.11");
  CHECK(gpt2.blocks[0].repeat == -1);
  for (const Block& b : gpt2.blocks) CHECK(b.layer_count == gpt2.blocks[0].layer_count);
  // ResNet-50's blocks are its 3 + 4 + 6 + 3 bottlenecks (layerK.N).
  const Model resnet =
      load_model_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/models/resnet50.yaml");
  CHECK(resnet.blocks.size() == 16);
  CHECK(resnet.blocks[3].name == "layer2.0");
}
