// Reading DDP step files with JsonReader, so that every error names the file, the key's line and
// its dotted path ("variants.ddp25.step_ms_median").
#include "calibration/measurements/ddp_steps.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "calibration/measurements/json_lines.hpp"
#include "calibration/measurements/json_reader.hpp"
#include "core/input_file.hpp"

namespace cs::cal {
namespace {

// "ddp<cap>" -> the cap in MiB (ddp_steps.py writes f"ddp{cap:g}"); "plain" -> 0; else nullopt.
std::optional<double> bucket_cap_of(const std::string& name) {
  if (name == "plain") return 0.0;
  if (name.rfind("ddp", 0) != 0 || name.size() == 3) return std::nullopt;
  const char* first = name.data() + 3;
  const char* last = name.data() + name.size();
  double cap = 0;
  const auto [end, ec] = std::from_chars(first, last, cap);
  if (ec != std::errc() || end != last || !std::isfinite(cap) || !(cap > 0)) return std::nullopt;
  return cap;
}

std::string one_of(const JsonReader& r, const std::string& key,
                   std::initializer_list<const char*> valid) {
  std::string value = r.text(key);
  std::string list;
  for (const char* v : valid) {
    if (value == v) return value;
    list.append(list.empty() ? "" : ", ").append(v);
  }
  r.fail(key, "unknown " + key + " '" + value + "'; valid: " + list);
}

// node.nccl_env.NCCL_NVLS_ENABLE, where the run recorded its NCCL environment.
std::optional<bool> recorded_nvls(const JsonReader& r) {
  if (!r.has("node")) return std::nullopt;
  const JsonReader node = r.child("node");
  if (!node.has("nccl_env")) return std::nullopt;
  const JsonReader env = node.child("nccl_env");
  if (!env.has("NCCL_NVLS_ENABLE")) return std::nullopt;
  const std::string text = env.text("NCCL_NVLS_ENABLE");
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    env.fail("NCCL_NVLS_ENABLE", "'" + text + "' is not an integer");
  return value != 0;
}

// A variant name's modifiers, fsdp_steps.py's grammar: BASE[-ac][-accumK][#2].
struct NameParts {
  std::string base;
  bool checkpointing = false;
  int accum = 1;
};
std::optional<NameParts> name_parts(const std::string& name) {
  NameParts p;
  p.base = name.substr(0, name.find('#'));
  if (name.size() > p.base.size() && name.substr(p.base.size()) != "#2") return std::nullopt;
  const std::size_t accum = p.base.rfind("-accum");
  if (accum != std::string::npos) {
    const char* first = p.base.data() + accum + 6;
    const char* last = p.base.data() + p.base.size();
    const auto [end, ec] = std::from_chars(first, last, p.accum);
    if (ec != std::errc() || end != last || first == last || *first == '0' || p.accum > 65536)
      return std::nullopt;
    p.base.resize(accum);
  }
  if (p.base.size() > 3 && p.base.compare(p.base.size() - 3, 3, "-ac") == 0) {
    p.checkpointing = true;
    p.base.resize(p.base.size() - 3);
  }
  return p;
}

// The variant's grad_accum, where it records one, agrees with its name.
void check_accum(const JsonReader& v, int accum) {
  if (v.has("grad_accum") && v.integer("grad_accum", 1, 65536) != accum)
    v.fail("grad_accum", "disagrees with the variant's name (-accum" + std::to_string(accum) + ")");
}

// An FSDP2 variant of calibrate/fsdp/fsdp_steps.py; nullopt for another name.
std::optional<DdpVariant> fsdp_variant(const JsonReader& variants, const std::string& name) {
  const std::optional<NameParts> parts = name_parts(name);
  if (!parts ||
      (parts->base != "fsdp" && parts->base != "fsdp-noreshard" && parts->base != "fsdp-default"))
    return std::nullopt;
  const JsonReader v = variants.child(name);
  v.only({"wrapper",
          "grad_accum",
          "blocks",
          "block_count",
          "block_params",
          "root_params",
          "reshard_after_forward",
          "root_reshards_after_forward",
          "param_dtype",
          "reduce_dtype",
          "activation_checkpointing",
          "use_cache",
          "params",
          "step_ms_median",
          "step_ms",
          "rank_step_ms",
          "rank_memory",
          "peak_allocated_bytes",
          "peak_reserved_bytes",
          "eval_loss",
          "host_call_ms_median"});
  DdpVariant out;
  out.name = name;
  out.step_ms = v.positive("step_ms_median");
  if (v.has("peak_allocated_bytes")) out.peak_allocated_bytes = v.positive("peak_allocated_bytes");
  out.fsdp = true;
  out.reshard_after_forward = parts->base != "fsdp-noreshard";
  out.activation_checkpointing = parts->checkpointing;
  out.grad_accum = parts->accum;
  check_accum(v, out.grad_accum);
  return out;
}

std::vector<DdpVariant> read_variants(const JsonReader& r, bool fsdp_file) {
  const JsonReader variants = r.child("variants");
  const nlohmann::json& all = r.at("variants");
  if (all.empty()) variants.fail("", "no variants; ddp_steps.py writes plain and ddp<cap>");
  std::vector<DdpVariant> out;
  for (const auto& item : all.items()) {
    const std::string& name = item.key();
    if (fsdp_file) {
      if (std::optional<DdpVariant> f = fsdp_variant(variants, name)) {
        out.push_back(*f);
        continue;
      }
    }
    // fsdp_steps.py's plain and DDP variants take its modifiers too.
    const std::optional<NameParts> parts =
        fsdp_file ? name_parts(name) : std::optional<NameParts>(NameParts{name, false, 1});
    const std::optional<double> cap = parts ? bucket_cap_of(parts->base) : std::nullopt;
    if (!cap)
      variants.fail(name,
                    "unknown variant; valid: plain (no DDP) or ddp<cap> (DDP with a bucket cap "
                    "in MiB, as ddp25)" +
                        std::string(fsdp_file ? ", fsdp, fsdp-noreshard, fsdp-default; each "
                                                "with -ac, -accumK, #2 after it"
                                              : ""));
    const JsonReader v = variants.child(name);
    if (fsdp_file) {
      v.only({"wrapper", "bucket_cap_mb", "params", "step_ms_median", "step_ms", "rank_step_ms",
              "rank_memory", "peak_allocated_bytes", "peak_reserved_bytes", "ddp_buckets",
              "eval_loss", "host_call_ms_median", "grad_accum", "activation_checkpointing",
              "use_cache"});
    } else {
      v.only({"step_ms_median", "step_ms", "rank_step_ms", "peak_allocated_bytes", "ddp_buckets"});
    }
    DdpVariant d;
    d.name = name;
    d.bucket_cap_mb = *cap;
    d.activation_checkpointing = parts->checkpointing;
    d.grad_accum = parts->accum;
    check_accum(v, d.grad_accum);
    d.step_ms = v.positive("step_ms_median");
    if (v.has("peak_allocated_bytes")) d.peak_allocated_bytes = v.positive("peak_allocated_bytes");
    out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const DdpVariant& a, const DdpVariant& b) {
    if (a.fsdp != b.fsdp) return !a.fsdp;  // plain and DDP first, then FSDP
    return a.bucket_cap_mb != b.bucket_cap_mb ? a.bucket_cap_mb < b.bucket_cap_mb : a.name < b.name;
  });
  return out;
}

}  // namespace

std::string DdpVariant::modifiers() const {
  return std::string(activation_checkpointing ? "-ac" : "") +
         (grad_accum > 1 ? "-accum" + std::to_string(grad_accum) : "");
}

std::optional<DdpStepFile> parse_ddp_step_file(const std::string& text,
                                               const std::string& file_name) {
  check_is_text(text, file_name, "a DDP step file is JSON text");
  const nlohmann::json doc = parse_json(text, file_name);
  // Other JSON of a run's folder (host probes, fitted files) is not a step file.
  if (!doc.is_object() || !doc.contains("schema") ||
      (doc["schema"] != kDdpStepsSchema && doc["schema"] != kFsdpStepsSchema))
    return std::nullopt;
  const bool fsdp_file = doc["schema"] == kFsdpStepsSchema;
  const JsonLines lines(file_name, text);
  const JsonReader r(doc, lines, "", "");
  if (fsdp_file) {
    r.only({"schema", "model", "source", "batch", "global_batch", "seq", "precision", "autocast",
            "optimizer", "momentum", "world_size", "params", "launch", "steps", "warmup", "date",
            "node", "variants"});
  } else {
    r.only({"schema", "model", "batch", "seq", "precision", "optimizer", "momentum", "world_size",
            "launch", "steps", "warmup", "date", "node", "variants"});
  }
  DdpStepFile f;
  f.file = file_name;
  f.model = r.text("model");
  if (f.model.empty() || f.model.find('/') != std::string::npos)
    r.fail("model", "expected a model file's name (models/<model>.yaml), got '" + f.model + "'");
  f.model_at = lines.at("/model");
  f.batch = r.integer("batch", 1, kMaxCount);
  if (!r.at("seq").is_null()) f.seq = r.integer("seq", 1, kMaxCount);
  f.precision = one_of(r, "precision", {"bf16", "fp32"});
  f.optimizer = one_of(r, "optimizer", {"sgd", "adamw"});
  if (!r.at("momentum").is_null()) f.momentum = r.number("momentum", 0, 1, "a momentum of 0 to 1");
  f.world_size = r.integer("world_size", 1, kMaxCount);
  f.world_size_at = lines.at("/world_size");
  f.nvls = recorded_nvls(r);
  f.variants = read_variants(r, fsdp_file);
  return f;
}

DdpStepFolder read_ddp_step_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(SourceLoc{folder, 0}, "", "not a folder of DDP step files");
  DdpStepFolder out;
  out.folder = folder;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      out.files.push_back(entry.path().string());
  }
  std::sort(out.files.begin(), out.files.end());
  for (const std::string& name : out.files) {
    std::optional<DdpStepFile> f =
        parse_ddp_step_file(read_input_file(name, "DDP step file"), name);
    if (f) out.steps.push_back(std::move(*f));
  }
  std::stable_sort(
      out.steps.begin(), out.steps.end(), [](const DdpStepFile& a, const DdpStepFile& b) {
        return std::tie(a.model, a.batch, a.world_size) < std::tie(b.model, b.batch, b.world_size);
      });
  if (out.steps.empty())
    throw InputError(SourceLoc{folder, 0}, "",
                     std::string("no DDP step files (*.json of schema ") + kDdpStepsSchema +
                         ", written by calibrate/ddp/ddp_steps.py) in this folder");
  return out;
}

}  // namespace cs::cal
