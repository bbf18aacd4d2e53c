// Published training runs: the strict reading of the YAML file and one predicted step per run.
#include "cli/step/published_runs.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <system_error>

#include "cli/step/ddp_predict.hpp"
#include "core/input_file.hpp"
#include "topology/loader.hpp"
#include "topology/parse/yaml_fields.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

using topo::yaml::Fields;

// A model file's parameters may differ from the table's rounded count by this much: beyond it the
// file is not the row's model.
constexpr double kParamsTolerance = 0.05;

YAML::Node load_yaml(const std::string& path) {
  const std::string text = read_input_file(path, "published runs file");
  check_is_text(text, path, "a published runs file is YAML text");
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLoc{path, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "",
                     "malformed YAML: " + e.msg);
  }
}

std::string resolved(const std::string& dir, const std::string& relative) {
  return (std::filesystem::path(dir) / relative).lexically_normal().string();
}

bool is_file(const std::string& path) {
  std::error_code ec;  // a path the system cannot look up (a name too long) is no file either
  return std::filesystem::is_regular_file(path, ec);
}

PublishedRun parse_run(const YAML::Node& node, const std::string& file, const std::string& dir,
                       const SourceLoc& at, const PublishedRunSet& set) {
  const Fields f(node, "run", "runs", file, at,
                 {"model", "params_b", "hidden", "layers", "heads", "tp", "pp", "gpus",
                  "global_batch", "micro_batch", "tflops_per_gpu", "role"});
  PublishedRun r;
  r.at = f.loc();
  if (f.has("model")) {
    r.model = resolved(dir, f.text("model"));
    if (!is_file(r.model)) f.fail("model", "no model file " + r.model);
  }
  if (!f.has("params_b")) f.fail("params_b", "missing: the published parameter count, billions");
  r.params_b = *f.optional_number("params_b", 0, 1e6);
  r.hidden = static_cast<int>(f.integer("hidden", 1, 1 << 20));
  r.layers = static_cast<int>(f.integer("layers", 1, 1 << 16));
  r.heads = static_cast<int>(f.integer("heads", 1, 1 << 16));
  r.tp = static_cast<int>(f.integer("tp", 1, 1 << 16));
  r.pp = static_cast<int>(f.integer("pp", 1, 1 << 16));
  r.gpus = static_cast<int>(f.integer("gpus", 1, 1 << 24));
  r.global_batch = static_cast<int>(f.integer("global_batch", 1, 1 << 24));
  r.micro_batch = static_cast<int>(f.integer("micro_batch", 1, 1 << 20));
  if (!f.has("tflops_per_gpu")) f.fail("tflops_per_gpu", "missing: the published TFLOP/s per GPU");
  r.tflops_per_gpu = *f.optional_number("tflops_per_gpu", 0, 1e6);
  r.role = f.text("role");
  if (r.role != "fit" && r.role != "check")
    f.fail("role", "'" + r.role + "' is not a role; valid: fit, check");
  if (r.gpus % set.gpus_per_node != 0)
    f.fail("gpus", std::to_string(r.gpus) + " GPUs are not whole servers of " +
                       std::to_string(set.gpus_per_node));
  if (r.gpus % (r.tp * r.pp) != 0)
    f.fail("gpus", "TP " + std::to_string(r.tp) + " x PP " + std::to_string(r.pp) +
                       " does not divide " + std::to_string(r.gpus) + " GPUs");
  const int dp = r.gpus / (r.tp * r.pp);
  if (r.global_batch % (dp * r.micro_batch) != 0)
    f.fail("global_batch", std::to_string(r.global_batch) +
                               " does not split into micro-batches of " +
                               std::to_string(r.micro_batch) + " over " + std::to_string(dp) +
                               " data-parallel ranks");
  return r;
}

PublishedRunSet parse_set(const YAML::Node& node, const std::string& file, const std::string& dir,
                          const SourceLoc& at) {
  const Fields f(
      node, "set", "sets", file, at,
      {"name", "source", "topology", "gpus_per_node", "seq", "precision", "optimizer", "tp_impl",
       "schedule", "virtual_stages", "activation_checkpointing", "flops", "vocab", "runs"});
  PublishedRunSet s;
  s.name = f.text("name");
  s.source = f.text("source");
  s.topology = resolved(dir, f.text("topology"));
  if (!is_file(s.topology)) f.fail("topology", "no topology file " + s.topology);
  s.gpus_per_node = static_cast<int>(f.integer("gpus_per_node", 1, 1024));
  s.seq = static_cast<int>(f.integer("seq", 1, 100000000));
  s.precision = f.text("precision");
  if (s.precision != "bf16" && s.precision != "fp16" && s.precision != "fp32")
    f.fail("precision", "unknown precision '" + s.precision + "'; valid: bf16, fp16, fp32");
  s.optimizer = f.text("optimizer");
  if (s.optimizer != "adamw" && s.optimizer != "sgd")
    f.fail("optimizer", "unknown optimizer '" + s.optimizer + "'; valid: adamw, sgd");
  s.tp_impl = f.optional_text("tp_impl").value_or("pytorch");
  if (s.tp_impl != "pytorch" && s.tp_impl != "megatron")
    f.fail("tp_impl", "'" + s.tp_impl + "' is not a TP implementation; valid: pytorch, megatron");
  s.schedule = f.optional_text("schedule").value_or("1f1b");
  if (s.schedule != "gpipe" && s.schedule != "1f1b" && s.schedule != "interleaved-1f1b")
    f.fail("schedule",
           "unknown schedule '" + s.schedule + "'; valid: gpipe, 1f1b, interleaved-1f1b");
  s.virtual_stages = static_cast<int>(f.optional_integer("virtual_stages", 1, 1024).value_or(1));
  s.activation_checkpointing = f.optional_bool("activation_checkpointing").value_or(false);
  s.flops = f.text("flops");
  if (s.flops != "megatron-sc21")
    f.fail("flops", "unknown FLOP formula '" + s.flops + "'; valid: megatron-sc21");
  s.vocab = static_cast<int>(f.integer("vocab", 1, 1 << 30));
  const YAML::Node runs = f.list("runs");
  for (const YAML::Node& run : runs)
    s.runs.push_back(parse_run(run, file, dir, topo::yaml::loc_of(run, file, f.loc("runs")), s));
  if (s.runs.empty()) f.fail("runs", "no runs");
  return s;
}

}  // namespace

bool holds_training_runs(const std::string& path) {
  YAML::Node root;
  try {
    root = load_yaml(path);
  } catch (const InputError&) {
    return false;  // not readable as YAML: the nccl-tests sets' reader says why
  }
  if (!root.IsMap() || !root["sets"] || !root["sets"].IsSequence()) return false;
  for (const YAML::Node& set : root["sets"]) {
    if (set.IsMap() && set["runs"]) return true;
  }
  return false;
}

std::vector<PublishedRunSet> load_published_runs(const std::string& path) {
  const YAML::Node root = load_yaml(path);
  const Fields f(root, "the published runs file", "", path, SourceLoc{path, 1}, {"sets"});
  const YAML::Node sets = f.list("sets");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::vector<PublishedRunSet> out;
  for (const YAML::Node& node : sets)
    out.push_back(parse_set(node, path, dir, topo::yaml::loc_of(node, path, f.loc("sets"))));
  if (out.empty()) f.fail("sets", "no sets");
  return out;
}

double megatron_sc21_flops(double batch, double seq, double layers, double hidden, double vocab) {
  return 96.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

std::vector<ComparedRunSet> predict_runs(const std::vector<PublishedRunSet>& sets) {
  std::vector<ComparedRunSet> out;
  std::map<std::string, workload::Model> models;
  for (const PublishedRunSet& s : sets) {
    ComparedRunSet cs;
    cs.set = &s;
    for (const PublishedRun& r : s.runs) {
      ComparedRun c;
      c.run = &r;
      c.flops = megatron_sc21_flops(r.global_batch, s.seq, r.layers, r.hidden, s.vocab);
      c.published_s = c.flops / (r.tflops_per_gpu * 1e12 * r.gpus);
      const int dp = r.gpus / (r.tp * r.pp);
      c.micro_batches = r.global_batch / (dp * r.micro_batch);
      if (r.model.empty()) {
        c.skipped = "no model file";
        cs.runs.push_back(c);
        continue;
      }
      if (!models.count(r.model)) models.emplace(r.model, workload::load_model_file(r.model));
      const workload::Model& model = models.at(r.model);
      const double params = model.param_count();
      if (std::fabs(params / (r.params_b * 1e9) - 1) > kParamsTolerance) {
        throw InputError(r.at, "model",
                         r.model + " has " + std::to_string(params / 1e9) +
                             "B parameters, not the row's " + std::to_string(r.params_b) + "B");
      }
      const topo::Cluster cluster = topo::load_cluster(s.topology, {r.gpus / s.gpus_per_node});
      cs.cluster = cluster.name;
      if (static_cast<int>(cluster.ranks.size()) != r.gpus) {
        throw InputError(r.at, "gpus",
                         std::to_string(r.gpus / s.gpus_per_node) + " servers of " + cluster.name +
                             " hold " + std::to_string(cluster.ranks.size()) + " GPUs, not " +
                             std::to_string(r.gpus));
      }
      StepFlags flags;
      flags.batch = r.micro_batch;
      flags.seq = s.seq;
      flags.precision = s.precision;
      flags.optimizer = s.optimizer;
      flags.grad_accum = c.micro_batches;
      flags.activation_checkpointing = s.activation_checkpointing;
      flags.tp = r.tp;
      flags.pp = r.pp;
      flags.tp_impl = s.tp_impl;
      flags.schedule = r.pp > 1 ? s.schedule : "1f1b";
      flags.virtual_stages = r.pp > 1 ? s.virtual_stages : 1;
      const workload::TrainingOptions options = step_options(flags, model);
      std::vector<int> ranks(cluster.ranks.size());
      for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
      try {
        const DdpPrediction p = predict_ddp(cluster, model, options, ranks, nullptr);
        const workload::StepBreakdown& b = p.result.breakdown;
        c.predicted_s = b.step_us / 1e6;
        c.predicted_tflops = c.flops / (c.predicted_s * r.gpus) / 1e12;
        c.error = (c.predicted_s - c.published_s) / c.published_s;
        c.bubble_s = b.pipeline_bubble_us / 1e6;
        c.tp_exposed_s = b.tp_exposed_us / 1e6;
        c.dp_exposed_s = (b.exposed_communication_us -
                          (options.parallel.reduce_after_backward() ? 0.0 : b.tp_exposed_us)) /
                         1e6;
      } catch (const InputError& e) {
        // The run was measured, so a prediction that it does not fit is the model's miss.
        c.skipped = std::string("predicted not to run: ") + e.what();
      }
      cs.runs.push_back(c);
    }
    out.push_back(std::move(cs));
  }
  return out;
}

}  // namespace cs::cli
