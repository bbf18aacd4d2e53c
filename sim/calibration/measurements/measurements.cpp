// Reading calibration files: a folder of them, each parsed by nlohmann_json with its node and its
// records (measurement_record.hpp); errors name the file, the record's line and the key.
// Lines come from json_lines.hpp, as for fitted files, but records are not read with JsonReader:
// the benchmarks write one record per line and a non-finite figure as null (calibrate/common/
// record.cpp), so a record's error stands at the record's line under its bare key ("bad.json:4:
// key 'bytes': missing", a null being missing), where JsonReader names the key's own line by its
// dotted path ("measurements[1].bytes") and a null as a value of the wrong type. Fitted files are
// edited by hand, where the key's own line is what helps.
#include "calibration/measurements/measurements.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "calibration/measurements/ddp_steps.hpp"
#include "calibration/measurements/json_lines.hpp"
#include "calibration/measurements/json_reader.hpp"
#include "calibration/measurements/measurement_record.hpp"
#include "core/input_file.hpp"

namespace cs::cal {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "clustersim-calibration-v1";
// The fitter's own output may sit in the same folder (calibrate/data/<machine>/calibration.json).
// Any version of it (calibration_file.hpp).
constexpr std::string_view kFittedSchemaPrefix = "clustersim-fit-v";

void read_node(const json& node, const JsonLines& lines, Measurements& out) {
  if (!out.node.gpu_name.empty() || !node.is_object()) return;
  out.node.loc = lines.at("/node/gpus/0/name");
  if (node.contains("hostname") && node["hostname"].is_string())
    out.node.hostname = node["hostname"].get<std::string>();
  if (node.contains("gpus") && node["gpus"].is_array() && !node["gpus"].empty()) {
    out.node.gpu_count = static_cast<int>(node["gpus"].size());
    const json& gpu0 = node["gpus"][0];
    if (gpu0.contains("name") && gpu0["name"].is_string())
      out.node.gpu_name = gpu0["name"].get<std::string>();
    if (gpu0.contains("l2_cache_bytes") && gpu0["l2_cache_bytes"].is_number())
      out.node.l2_cache_bytes = gpu0["l2_cache_bytes"].get<double>();
    if (gpu0.contains("memory_bytes") && gpu0["memory_bytes"].is_number())
      out.node.memory_bytes = gpu0["memory_bytes"].get<double>();
  }
  if (node.contains("nccl_version") && node["nccl_version"].is_number_integer())
    out.node.nccl_version = node["nccl_version"].get<long long>();
  if (node.contains("cuda_runtime_version"))
    out.node.cuda_runtime_version = node["cuda_runtime_version"].dump();
}

}  // namespace

const char* to_string(NcclTiming timing) {
  return timing == NcclTiming::gated ? "gated" : "host_paced";
}

std::optional<NcclTiming> parse_nccl_timing(std::string_view text) {
  if (text == "host_paced") return NcclTiming::host_paced;
  if (text == "gated") return NcclTiming::gated;
  return std::nullopt;
}

const char* to_string(CopyDirection direction) {
  switch (direction) {
    case CopyDirection::h2d:
      return "h2d";
    case CopyDirection::d2h:
      return "d2h";
    case CopyDirection::d2d:
      return "d2d";
    case CopyDirection::peer:
      return "peer";
  }
  return "?";
}

void read_measurement_text(const std::string& text, const std::string& file_name,
                           Measurements& out) {
  check_is_text(text, file_name, "a measurement file is JSON text");
  const json doc = parse_json(text, file_name);
  const SourceLoc top{file_name, 1};
  if (!doc.is_object()) throw InputError(top, "", "expected a JSON object at the top level");
  if (!doc.contains("schema") || !doc["schema"].is_string())
    throw InputError(top, "schema", std::string("missing; expected \"") + kSchema + "\"");
  const std::string schema = doc["schema"].get<std::string>();
  if (schema.rfind(kFittedSchemaPrefix, 0) == 0) {
    out.fitted_files.push_back(file_name);
    return;
  }
  // DDP step files (ddp_steps.hpp) may sit beside the node's other measurements: validate --ddp
  // reads them, the NCCL / copy / compute fits do not.
  if (schema == kDdpStepsSchema) return;
  if (schema == kHostProbeSchema) {
    const JsonLines lines(file_name, text);
    out.hosts.push_back(node_host_from_probe(JsonReader(doc, lines, "", ""),
                                             std::filesystem::path(file_name).filename().string()));
    return;
  }
  if (schema != kSchema)
    throw InputError(top, "schema",
                     "unknown schema '" + schema + "'; expected \"" + kSchema + "\"");
  if (!doc.contains("measurements") || !doc["measurements"].is_array())
    throw InputError(top, "measurements", "missing or not an array");
  const JsonLines lines(file_name, text);
  if (doc.contains("node")) read_node(doc["node"], lines, out);
  const json& records = doc["measurements"];
  const std::size_t first_nccl = out.nccl.size();
  for (std::size_t i = 0; i < records.size(); ++i)
    read_record(records[i], lines.at("/measurements/" + std::to_string(i)), out);
  // The run's NCCL_NVLS_ENABLE (cs_cal_nccl records its environment): "0" off, another integer
  // on, null or absent NCCL's default.
  if (doc.contains("env") && doc["env"].is_object() && doc["env"].contains("NCCL_NVLS_ENABLE")) {
    const json& v = doc["env"]["NCCL_NVLS_ENABLE"];
    std::optional<bool> nvls;
    if (v.is_string()) {
      const std::string t = v.get<std::string>();
      int value = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
      if (ec != std::errc() || end != t.data() + t.size())
        throw InputError(lines.at(std::string("/env/NCCL_NVLS_ENABLE")), "NCCL_NVLS_ENABLE",
                         "'" + t + "' is not an integer");
      nvls = value != 0;
    } else if (!v.is_null()) {
      throw InputError(lines.at(std::string("/env/NCCL_NVLS_ENABLE")), "NCCL_NVLS_ENABLE",
                       "expected a string or null");
    }
    for (std::size_t i = first_nccl; i < out.nccl.size(); ++i) out.nccl[i].nvls = nvls;
  }
}

Measurements read_measurements(const std::string& folder) {
  namespace fs = std::filesystem;
  Measurements out;
  out.folder = folder;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(SourceLoc{folder, 0}, "", "not a folder of calibration JSON files");
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      out.files.push_back(entry.path().string());
  }
  std::sort(out.files.begin(), out.files.end());
  if (out.files.empty())
    throw InputError(SourceLoc{folder, 0}, "", "no *.json calibration files in this folder");
  for (const std::string& file : out.files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(SourceLoc{file, 0}, "", "cannot read");
    std::ostringstream text;
    text << in.rdbuf();
    read_measurement_text(text.str(), file, out);
  }
  if (out.nccl.empty() && out.copies.empty() && out.launches.empty() && out.gemms.empty() &&
      out.membw.empty()) {
    throw InputError(SourceLoc{folder, 0}, "measurements",
                     "no records in " + std::to_string(out.files.size()) +
                         " file(s); a calibration run writes records of kind nccl, copy, "
                         "launch, gemm or membw");
  }
  return out;
}

}  // namespace cs::cal
