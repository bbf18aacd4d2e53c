// load_model_file: read the file, refuse what is not YAML text, then read the top-level keys,
// settings, recorded_at and measurements here and the layers in model_loader_layers.cpp.
#include "workload/model/model_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <unordered_map>

#include "core/input_file.hpp"
#include "workload/model/model_loader_parse.hpp"

namespace cs::workload {
namespace loader {
namespace {

Precision precision(const Fields& f) {
  return choice(f, "precision", "precision", {Precision::fp32, Precision::bf16});
}

OptimizerKind optimizer(const Fields& f) {
  return choice(f, "optimizer", "optimizer", {OptimizerKind::sgd, OptimizerKind::adamw});
}

// SGD's momentum (torch.optim.SGD's `momentum`, default 0): a number >= 0, only with sgd.
double momentum(const Fields& f, OptimizerKind optimizer) {
  if (!f.has("momentum")) return 0;
  if (optimizer != OptimizerKind::sgd)
    f.fail("momentum", "applies only to optimizer sgd (AdamW's betas are not a momentum)");
  return number(f, "momentum", Least::zero);
}

int batch(const Fields& f) {
  return static_cast<int>(f.integer("batch", 1, kMaxCount));
}

// seq is given where settings has it and only there.
std::optional<int> seq(const Fields& f, bool has_seq) {
  if (!has_seq) {
    if (f.has("seq")) {
      f.fail("seq", "applies only to a model with a sequence, and settings has no seq");
    }
    return std::nullopt;
  }
  if (!f.has("seq")) {
    f.fail("seq", "missing in " + f.what() + ": required because settings has seq");
  }
  return static_cast<int>(f.integer("seq", 1, kMaxSeq));
}

Settings parse_settings(const Fields& root) {
  const Fields f = sub_map(root, "settings", "settings",
                           {"batch", "seq", "precision", "optimizer", "momentum",
                            "input_bytes_per_sample", "input_pinned"});
  Settings s;
  s.batch = batch(f);
  if (f.has("seq")) s.seq = static_cast<int>(f.integer("seq", 1, kMaxSeq));
  s.precision = precision(f);
  s.optimizer = optimizer(f);
  s.momentum = momentum(f, s.optimizer);
  s.input_bytes_per_sample = size_bytes(f, "input_bytes_per_sample");
  if (f.has("input_pinned")) s.input_pinned = boolean(f, "input_pinned");
  return s;
}

RecordedAt parse_recorded_at(const Fields& root, const ModelContext& ctx) {
  const Fields f = sub_map(root, "recorded_at", "recorded_at", {"batch", "seq", "precision"});
  RecordedAt r;
  r.batch = batch(f);
  r.seq = seq(f, ctx.has_seq);
  r.precision = precision(f);
  return r;
}

// A measurement's `host:` map: the probe of the host it was exported on (core/host_probe.hpp).
HostProbe parse_host_probe(const Fields& measurement) {
  std::vector<std::string> keys = {"probe", "nccl_us"};
  for (const char* c : kHostProbeClasses) keys.push_back(std::string(c) + "_us");
  const Fields f = sub_map(measurement, "host", "host", keys);
  if (f.text("probe") != kHostProbeSchema)
    f.fail("probe", "unknown host probe '" + f.text("probe") + "'; valid: " + kHostProbeSchema +
                        " (export the model again with calibrate/models/export.py)");
  HostProbe probe;
  for (std::size_t i = 0; i < kHostProbeClasses.size(); ++i)
    probe.us[i] = number(f, std::string(kHostProbeClasses[i]) + "_us", Least::above_zero);
  if (f.has("nccl_us")) probe.nccl_us = number(f, "nccl_us", Least::above_zero);
  return probe;
}

Measurement parse_measurement(const YAML::Node& node, const SourceLoc& where,
                              const ModelContext& ctx) {
  const Fields f(node, "measurement", "measurements", ctx.file, where,
                 {"id", "gpu", "batch", "seq", "precision", "optimizer", "momentum", "optimizer_us",
                  "optimizer_kernels", "host_us", "host", "source"});
  Measurement m;
  m.id = name_text(f, "id");
  m.gpu = f.text("gpu");
  const auto& gpus = known_gpu_models();
  if (std::find(gpus.begin(), gpus.end(), m.gpu) == gpus.end()) {
    f.fail("gpu", "unknown GPU model '" + m.gpu + "'" + topo::names::did_you_mean(m.gpu, gpus) +
                      "; valid: " + topo::names::join_truncated(gpus));
  }
  m.batch = batch(f);
  m.seq = seq(f, ctx.has_seq);
  m.precision = precision(f);
  m.optimizer = optimizer(f);
  m.momentum = momentum(f, m.optimizer);
  m.optimizer_us = number(f, "optimizer_us", Least::zero);
  m.optimizer_kernels = static_cast<int>(f.integer("optimizer_kernels", 0, kMaxCount));
  const Fields host = sub_map(f, "host_us", "host_us", {"forward", "backward", "optimizer"});
  m.host_forward_us = number(host, "forward", Least::zero);
  m.host_backward_us = number(host, "backward", Least::zero);
  m.host_optimizer_us = number(host, "optimizer", Least::zero);
  if (f.has("host")) m.host = parse_host_probe(f);
  m.source = f.optional_text("source").value_or("");
  return m;
}

std::vector<Measurement> parse_measurements(const Fields& root, ModelContext& ctx) {
  std::vector<Measurement> out;
  if (!root.has("measurements")) return out;
  std::unordered_map<std::string, int> first_line;
  for (const auto& item : root.list("measurements")) {
    const SourceLoc where = topo::yaml::loc_of(item, ctx.file, root.loc("measurements"));
    Measurement m = parse_measurement(item, where, ctx);
    const SourceLoc id_loc = topo::yaml::loc_of(item["id"], ctx.file, where);
    const auto [it, inserted] = first_line.emplace(m.id, id_loc.line);
    if (!inserted) {
      throw InputError(id_loc, "id",
                       "duplicate measurement id '" + m.id + "'; first defined at line " +
                           std::to_string(it->second));
    }
    ctx.measurement_ids.push_back(m.id);
    out.push_back(std::move(m));
  }
  return out;
}

Model parse_root(const YAML::Node& root, const std::string& file) {
  const Fields f(root, "the model file", "", file, SourceLoc{file, 1},
                 {"model", "source", "settings", "recorded_at", "measurements", "layers"});
  Model model;
  model.file = file;
  model.name = name_text(f, "model");
  model.source = f.optional_text("source").value_or("");
  model.settings = parse_settings(f);
  ModelContext ctx;
  ctx.file = file;
  ctx.has_seq = model.settings.seq.has_value();
  model.recorded_at = parse_recorded_at(f, ctx);
  model.measurements = parse_measurements(f, ctx);
  model.layers = parse_layers(f, ctx, model.blocks);
  return model;
}

}  // namespace
}  // namespace loader

const std::vector<std::string>& known_gpu_models() {
  // The gpu_models keys of topologies/*.yaml; a measurement on a GPU added there is added here.
  static const std::vector<std::string> kModels = {"H100-SXM5-80GB", "H200-SXM-141GB",
                                                   "A100-SXM4-40GB", "A100-SXM4-80GB",
                                                   "L40S",           "B200-SXM-180GB"};
  return kModels;
}

Model load_model_file(const std::string& path) {
  return parse_model_text(read_input_file(path, "model file"), path);
}

Model parse_model_text(const std::string& text, const std::string& file_label) {
  // Binary data: yaml-cpp would read some of it as a scalar and then talk of a missing map.
  check_is_text(text, file_label, "a model file is YAML text");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based; a mark it could not place has line -1.
    throw InputError(SourceLoc{file_label, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "",
                     "malformed YAML: " + e.msg);
  }
  if (root.IsNull()) {
    throw InputError(SourceLoc{file_label, 1}, "",
                     "the file holds no YAML; a model file needs model, settings, recorded_at "
                     "and layers");
  }
  return loader::parse_root(root, file_label);
}

}  // namespace cs::workload
