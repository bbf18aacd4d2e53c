// Host probes to and from JSON: a probe file's summary, a calibration's `host` section.
#include "calibration/measurements/node_host.hpp"

#include <filesystem>

#include "core/input_file.hpp"

namespace cs::cal {
namespace {

using nlohmann::json;

// Host microseconds per call: above 0, under a second.
constexpr double kMaxHostUs = 1e6;
const char* const kRange = "microseconds per call, above 0 and under 1e6";

// Every class of kHostProbeClasses (and nccl, optional) from a map class -> us.
HostProbe classes_from(const JsonReader& r) {
  HostProbe p;
  for (std::size_t i = 0; i < kHostProbeClasses.size(); ++i) {
    p.us[i] = r.number(kHostProbeClasses[i], 1e-6, kMaxHostUs, kRange);
  }
  if (r.has("nccl")) p.nccl_us = r.number("nccl", 1e-6, kMaxHostUs, kRange);
  return p;
}

json classes_json(const HostProbe& p) {
  json j = json::object();
  for (std::size_t i = 0; i < kHostProbeClasses.size(); ++i) j[kHostProbeClasses[i]] = p.us[i];
  if (p.nccl_us > 0) j["nccl"] = p.nccl_us;
  return j;
}

void only_classes(const JsonReader& r) {
  r.only({"launch", "elementwise", "linear", "conv", "autograd", "foreach", "nccl"});
}

}  // namespace

NodeHost node_host_from_probe(const JsonReader& probe_file, const std::string& base_name) {
  NodeHost h;
  h.file = base_name;
  h.world_size = probe_file.integer("world_size", 1, kMaxCount);
  // The summary is per class {alone_us, all_us}: each side gathered into one probe. nccl has no
  // alone figure at several ranks (a collective needs every rank).
  const JsonReader summary = probe_file.child("summary");
  summary.only({"launch", "elementwise", "linear", "conv", "autograd", "foreach", "nccl"});
  HostProbe all;
  for (std::size_t i = 0; i < kHostProbeClasses.size(); ++i) {
    const JsonReader f = summary.child(kHostProbeClasses[i]);
    f.only({"alone_us", "all_us"});
    h.alone.us[i] = f.number("alone_us", 1e-6, kMaxHostUs, kRange);
    if (h.world_size > 1) all.us[i] = f.number("all_us", 1e-6, kMaxHostUs, kRange);
  }
  if (summary.has("nccl")) {
    const JsonReader f = summary.child("nccl");
    f.only({"alone_us", "all_us"});
    if (f.has("alone_us")) h.alone.nccl_us = f.number("alone_us", 1e-6, kMaxHostUs, kRange);
    if (f.has("all_us")) all.nccl_us = f.number("all_us", 1e-6, kMaxHostUs, kRange);
  }
  h.alone.source = base_name;
  if (h.world_size > 1) {
    all.source = base_name;
    h.all = all;
  }
  return h;
}

NodeHost read_host_probe_file(const std::string& path, const std::string& what) {
  const std::string text = read_input_file(path, what);
  const json doc = parse_json(text, path);
  const JsonLines lines(path, text);
  const JsonReader r(doc, lines, "", "");
  if (r.text("schema") != kHostProbeSchema)
    r.fail("schema", std::string("expected \"") + kHostProbeSchema + "\" (a host probe file)");
  return node_host_from_probe(r, std::filesystem::path(path).filename().string());
}

NodeHost node_host_from_calibration(const JsonReader& host) {
  host.only({"probe", "world_size", "file", "alone_us", "all_us"});
  if (host.text("probe") != kHostProbeSchema)
    host.fail("probe", "unknown host probe '" + host.text("probe") + "'; valid: \"" +
                           kHostProbeSchema + "\" (fit again from a probe of this version)");
  NodeHost h;
  h.world_size = host.integer("world_size", 1, kMaxCount);
  h.file = host.text("file");
  const JsonReader alone = host.child("alone_us");
  only_classes(alone);
  h.alone = classes_from(alone);
  if (host.has("all_us")) {
    const JsonReader all = host.child("all_us");
    only_classes(all);
    h.all = classes_from(all);
  }
  return h;
}

json node_host_json(const NodeHost& host) {
  json j;
  j["probe"] = kHostProbeSchema;
  j["world_size"] = host.world_size;
  j["file"] = host.file;
  j["alone_us"] = classes_json(host.alone);
  if (host.all) j["all_us"] = classes_json(*host.all);
  return j;
}

}  // namespace cs::cal
