// Reading the parallel step files with JsonReader: every error names the file, the key's line and
// the key.
#include "calibration/measurements/parallel_steps.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "calibration/measurements/json_lines.hpp"
#include "calibration/measurements/json_reader.hpp"
#include "core/input_file.hpp"

namespace cs::cal {

std::optional<ParallelStepFile> parse_parallel_step_file(const std::string& text,
                                                         const std::string& file_name) {
  check_is_text(text, file_name, "a parallel step file is JSON text");
  const nlohmann::json doc = parse_json(text, file_name);
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != kParallelStepsSchema)
    return std::nullopt;
  const JsonLines lines(file_name, text);
  const JsonReader r(doc, lines, "", "");
  // What tp_steps.py and pp_steps.py write (calibrate/parallel/README.md).
  r.only({"schema",
          "model",
          "source",
          "seq",
          "precision",
          "autocast",
          "optimizer",
          "tf32_matmul",
          "world_size",
          "launch",
          "steps",
          "warmup",
          "date",
          "kind",
          "variant",
          "node",
          "step_ms_median",
          "step_ms",
          "rank_step_ms",
          "rank_memory",
          "peak_allocated_bytes",
          "peak_reserved_bytes",
          "batch",
          "global_batch",
          "batch_note",
          "host_phase_return_ms",
          "optimizer_groups",
          "param_dtype",
          "params",
          "tp",
          "schedule",
          "stages",
          "micro_batches",
          "micro_batch_size",
          "layers",
          "stage_layers",
          "params_unsharded",
          "stage_params",
          "tied_embedding",
          "lm_head",
          "loss",
          "losses",
          "loss_first",
          "loss_last",
          "loss_check",
          "scale_grads",
          "step_kwargs"});
  ParallelStepFile f;
  f.file = file_name;
  f.model = r.text("model");
  if (f.model.empty() || f.model.find('/') != std::string::npos)
    r.fail("model", "expected a model file's name (models/<model>.yaml), got '" + f.model + "'");
  f.model_at = lines.at("/model");
  f.variant = r.text("variant");
  const std::string kind = r.text("kind");
  const bool pipeline = f.variant == "pp-gpipe" || f.variant == "pp-1f1b";
  if (!pipeline && f.variant != "plain" && f.variant != "tp" && f.variant != "tp-sp")
    r.fail("variant",
           "unknown variant '" + f.variant + "'; valid: plain, tp, tp-sp, pp-gpipe, pp-1f1b");
  if (kind != (pipeline ? "pp" : "tp"))
    r.fail("kind", "'" + kind + "' does not go with variant '" + f.variant + "'");
  f.world_size = r.integer("world_size", 1, kMaxCount);
  f.world_size_at = lines.at("/world_size");
  if (f.variant == "plain" && f.world_size != 1)
    r.fail("world_size", "the plain variant runs on one GPU, not " + std::to_string(f.world_size));
  f.seq = r.integer("seq", 1, kMaxCount);
  if (pipeline) {
    f.batch = r.integer("micro_batch_size", 1, kMaxCount);
    f.micro_batches = r.integer("micro_batches", 1, kMaxCount);
    if (r.integer("stages", 1, kMaxCount) != f.world_size)
      r.fail("stages", "one stage per rank: expected " + std::to_string(f.world_size));
  } else {
    f.batch = r.integer("batch", 1, kMaxCount);
  }
  f.step_ms = r.positive("step_ms_median");
  if (r.has("peak_allocated_bytes")) f.peak_allocated_bytes = r.positive("peak_allocated_bytes");
  return f;
}

std::vector<ParallelStepFile> read_parallel_step_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(SourceLoc{folder, 0}, "", "no such folder of parallel step files");
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<ParallelStepFile> out;
  for (const std::string& name : names) {
    std::optional<ParallelStepFile> f =
        parse_parallel_step_file(read_input_file(name, "parallel step file"), name);
    if (f) out.push_back(std::move(*f));
  }
  if (out.empty())
    throw InputError(SourceLoc{folder, 0}, "",
                     std::string("no parallel step files (*.json of schema ") +
                         kParallelStepsSchema + ", written by calibrate/parallel/) in this folder");
  return out;
}

}  // namespace cs::cal
