// The bad-model corpus: one file under tests/data/models/bad_*.yaml per validation error, each
// with its whole one-line message: file:line (the line a person would edit), the key, what is
// wrong and what would be valid. Line 1 of each file is a comment saying what is wrong.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "workload/model/model_loader.hpp"

using namespace std::string_literals;

namespace {

struct BadFile {
  const char* name;     // tests/data/models/<name>.yaml
  const char* message;  // what follows "<path>:"
};

const std::vector<BadFile> kCorpus = {
    // Not a model file at all.
    {"bad_syntax", "4: malformed YAML: illegal flow end"},
    {"bad_empty",
     "1: the file holds no YAML; a model file needs model, settings, recorded_at and layers"},
    // Unknown keys, with the closest valid one.
    {"bad_unknown_key",
     "6: key 'precison': unknown key in settings; did you mean 'precision'? Valid keys: batch, "
     "seq, precision, optimizer, momentum, input_bytes_per_sample, input_pinned"},
    {"bad_unknown_op_key",
     "13: key 'hed_dim': unknown key in op entry; did you mean 'head_dim'? Valid keys: op, m, n, "
     "k, batch, dtype, grows, weight, heads, seq_q, seq_kv, head_dim, causal, bytes, scale, "
     "access, "
     "kernels"},
    {"bad_key_not_for_op",
     "12: key 'heads': does not apply to gemm ops; they take: m, n, k, batch, dtype, grows, "
     "weight, kernels"},
    // Wrong types.
    {"bad_params_not_list", "8: key 'params': must be a list of entries (lines starting with '-')"},
    {"bad_batch_list", "4: key 'batch': expected a single value, found a list"},
    {"bad_causal", "14: key 'causal': 'yes' is not a boolean; valid: true, false"},
    // Out of range, unknown spellings.
    {"bad_batch_zero", "5: key 'batch': '0' is out of range; valid: an integer from 1 to 1000000"},
    {"bad_negative_dim", "9: key 'm': '-64' is out of range; valid: a number > 0"},
    {"bad_unknown_op", "8: key 'op': unknown op 'matmul'; valid: gemm, conv, attention, memory"},
    {"bad_tensor_dtype",
     "10: key 'dtype': unknown dtype 'tf32' (did you mean 'fp32'?); valid: fp32, bf16, fp16"},
    {"bad_size_unit",
     "9: key 'bytes': '12 MiBs' is not a size; valid units: B KB MB GB TB KiB MiB GiB TiB, or a "
     "bare byte count"},
    {"bad_memory_no_kernels", "8: key 'kernels': missing in memory op: how many kernels move it"},
    {"bad_momentum_negative", "11: key 'momentum': '-0.9' is out of range; valid: a number >= 0"},
    // SGD's momentum with another optimizer.
    {"bad_momentum_adamw",
     "7: key 'momentum': applies only to optimizer sgd (AdamW's betas are not a momentum)"},
    // References: measurement ids, GPU models, weights.
    {"bad_dangling_measured",
     "18: key 'h100': no measurement has id 'h100' (did you mean 'h200'?); ids under "
     "measurements: h200"},
    {"bad_duplicate_measurement",
     "8: key 'id': duplicate measurement id 'a100'; first defined at line 6"},
    {"bad_unknown_gpu",
     "7: key 'gpu': unknown GPU model 'H200-SXM5-141GB' (did you mean 'H200-SXM-141GB'?); "
     "valid: H100-SXM5-80GB, H200-SXM-141GB, A100-SXM4-40GB, A100-SXM4-80GB, L40S, B200-SXM-180GB"},
    {"bad_unknown_weight",
     "11: key 'weight': no param 'wieght' in this layer (did you mean 'weight'?); params: "
     "weight, bias"},
    {"bad_weight_shape",
     "15: key 'weight': gemm shape 192 x 32 does not fit param 'weight' of 12288 elements; "
     "n*k*batch must equal them"},
    // The sequence: only where settings has one, and then everywhere.
    {"bad_seq_grows",
     "15: key 'seq': grows along 'm', but the model has no sequence (settings has no seq); valid "
     "here: none"},
    {"bad_seq_exponent",
     "9: key 'scale': the seq exponent must be 0: the model has no sequence (settings has no "
     "seq)"},
    {"bad_recorded_at_no_seq",
     "5: key 'seq': missing in recorded_at: required because settings has seq"},
    // Layers: at least one, unique names after expansion, flat repeats.
    {"bad_no_layers", "5: key 'layers': the model has no layers"},
    {"bad_repeat_name",
     "8: key 'name': 'block' would repeat 12 times; names in a repeat block need '{i}' to stay "
     "unique"},
    {"bad_duplicate_layer", "9: key 'name': duplicate layer name 'h.1'; first defined at line 6"},
    {"bad_nested_repeat",
     "8: key 'repeat': repeat blocks do not nest; list the inner block's layers instead"},
};

std::string parse_error(const std::string& text) {
  try {
    cs::workload::parse_model_text(text, "inline.yaml");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "(parsed without error)";
}

std::string load_error(const std::string& path) {
  try {
    cs::workload::load_model_file(path);
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

}  // namespace

TEST_CASE("every bad model file fails with its exact one-line message") {
  for (const auto& bad : kCorpus) {
    const std::string path = std::string(CLUSTERSIM_TEST_DATA) + "/models/" + bad.name + ".yaml";
    CHECK(load_error(path) == path + ":" + bad.message);
  }
}

TEST_CASE("every bad_*.yaml in tests/data/models has a row in the corpus table") {
  // A bad file added without a row in kCorpus would never be checked.
  std::set<std::string> listed;
  for (const auto& bad : kCorpus) listed.insert(std::string(bad.name) + ".yaml");
  std::set<std::string> on_disk;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CLUSTERSIM_TEST_DATA) + "/models")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("bad_", 0) == 0) on_disk.insert(name);
  }
  CHECK(on_disk == listed);
}

TEST_CASE("an empty text and binary garbage get one line naming the file") {
  CHECK(parse_error("") ==
        "inline.yaml:1: the file holds no YAML; a model file needs model, settings, recorded_at "
        "and layers");
  // The start of an ELF executable: 0x7f 'E' 'L' 'F', then NULs.
  CHECK(parse_error("\x7f"
                    "ELF\x02\x01\x01\0\0\0"s) ==
        "inline.yaml:1: not a text file (control byte 0x7f); a model file is YAML text");
  CHECK(parse_error("model: x\nsettings:\n  batch: 8\0\0"s) ==
        "inline.yaml:3: not a text file (control byte 0x00); a model file is YAML text");
}

TEST_CASE("a missing model file names the path and says it cannot be opened") {
  const std::string path = std::string(CLUSTERSIM_TEST_DATA) + "/models/no-such-model.yaml";
  const std::string message = load_error(path);
  CHECK(message.rfind(path + ": cannot open the model file", 0) == 0);
}

TEST_CASE("text that is not a model never crashes the loader") {
  // Each is wrong in a different structural way; all must end in InputError, none in a crash or
  // another exception type.
  const std::string head =
      "model: x\nsettings: {batch: 1, seq: 4, precision: bf16, optimizer: sgd, "
      "input_bytes_per_sample: 0}\nrecorded_at: {batch: 1, seq: 4, precision: bf16}\n";
  const std::vector<std::string> inputs = {
      "- just\n- a list\n",
      "42\n",
      "? [complex, key]\n: value\n",
      "model: [x]\n",
      "model: x\nsettings: 8\n",
      head + "layers: 5\n",
      head + "layers: [5]\n",
      head + "layers: [[]]\n",
      head + "layers: [{repeat: x, layers: []}]\n",
      head + "layers: [{repeat: 2}]\n",
      head + "layers: [{repeat: 2, layers: [7]}]\n",
      head + "layers: [{name: a, params: [5]}]\n",
      head + "layers: [{name: a, params: [{name: w, elements: 1e3, dtype: fp32}]}]\n",
      head + "layers: [{name: a, activations: 5}]\n",
      head + "layers: [{name: a, activations: {bytes: 1, scale: [1]}}]\n",
      head + "layers: [{name: a, activations: {bytes: 1, scale: [1, [2]]}}]\n",
      head +
          "layers: [{name: a, forward: [{op: gemm, m: 1, n: 1, k: 1, dtype: bf16, grows: m}]}]\n",
      head + "layers: [{name: a, forward: [{op: [gemm]}]}]\n",
      head + "layers: [{name: a, forward: [{op: memory, bytes: -1, kernels: 1}]}]\n",
      head + "layers: [{name: a, forward: [{op: attention, batch: nan}]}]\n",
      head + "layers: [{name: a, measured: [1]}]\n",
      head + "layers: [{name: a, measured: {[1]: 2}}]\n",
      head + "layers: [{name: '', forward: []}]\n",
      head + "layers: [{name: 'a.{i}'}]\n",
      head + "measurements: {id: x}\nlayers: [{name: a}]\n",
      head + "measurements: [{id: x, gpu: L40S, host_us: 4}]\nlayers: [{name: a}]\n",
      "model: x\nmodel: y\n",
      "{a: [}\n",
  };
  for (const auto& text : inputs) {
    CAPTURE(text);
    CHECK_THROWS_AS(cs::workload::parse_model_text(text, "inline.yaml"), cs::InputError);
  }
}
