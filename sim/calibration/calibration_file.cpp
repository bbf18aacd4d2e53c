// Calibration <-> JSON and the atomic write; NcclParams' own mapping is calibration_file_nccl.cpp,
// the application to a cluster calibration_file_apply.cpp.
#include "calibration/calibration_file.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "calibration/calibration_file_nccl.hpp"
#include "core/atomic_file.hpp"

namespace cs::cal {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string file, std::string prefix)
      : j_(j), file_(std::move(file)), prefix_(std::move(prefix)) {}
  const json& at(const std::string& key) const {
    if (!j_.is_object() || !j_.contains(key)) fail(key, "missing");
    return j_.at(key);
  }
  double number(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
    return v.get<double>();
  }
  int integer(const std::string& key) const { return static_cast<int>(number(key)); }
  std::string text(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  bool has(const std::string& key) const { return j_.is_object() && j_.contains(key); }
  const json& array(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected an array");
    return v;
  }
  Reader child(const json& j, const std::string& key) const {
    return Reader(j, file_, prefix_ + key + ".");
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(SourceLoc{file_, 0}, prefix_ + key, message);
  }
  const std::string& file() const { return file_; }

 private:
  const json& j_;
  std::string file_;
  std::string prefix_;
};

json fit_quality(int points, double rms, double worst) {
  return {{"points", points}, {"rms_rel_error", rms}, {"max_rel_error", worst}};
}

json nccl_fit_json(const NcclFit& fit) {
  json j;
  j["op"] = fit.op;
  j["params"] = nccl_params_json(fit.params);
  j["ring_graph"] = {{"channels", fit.channels_ring}, {"per_channel_GBps", fit.channel_GBps}};
  j["p2p_nvlink_efficiency"] = fit.p2p_nvlink_efficiency;
  json configs = json::array();
  for (const NcclConfigFit& f : fit.configs) {
    json cfg = fit_quality(f.points, f.rms_rel_error, f.max_rel_error);
    cfg["algo"] = coll::to_string(f.algo);
    cfg["proto"] = coll::to_string(f.proto);
    cfg["base_us"] = f.base_us;
    cfg["hop_us"] = f.hop_us;
    cfg["bus_GBps"] = f.bus_GBps;
    configs.push_back(cfg);
  }
  j["fits"] = configs;
  json floors = json::array();
  for (const HostFloor& f : fit.host_floors.curves) {
    floors.push_back({{"config", f.config},
                      {"n_ranks", f.n_ranks},
                      {"floor_us", f.floor_us},
                      {"points", f.points}});
  }
  j["host_floors"] = floors;
  return j;
}

NcclFit nccl_fit_from(const Reader& r) {
  NcclFit out;
  out.op = r.text("op");
  out.params = nccl_params_from_json(r.at("params"), r.file());
  const Reader g = r.child(r.at("ring_graph"), "ring_graph");
  out.channels_ring = g.integer("channels");
  out.channel_GBps = g.number("per_channel_GBps");
  out.p2p_nvlink_efficiency = r.number("p2p_nvlink_efficiency");
  for (const json& v : r.array("fits")) {
    const Reader f = r.child(v, "fits[]");
    NcclConfigFit fit;
    const auto algo = coll::parse_algo(f.text("algo"));
    const auto proto = coll::parse_proto(f.text("proto"));
    if (!algo) f.fail("algo", "unknown algorithm; valid: " + coll::valid_algos());
    if (!proto) f.fail("proto", "unknown protocol; valid: " + coll::valid_protos());
    fit.algo = *algo;
    fit.proto = *proto;
    fit.base_us = f.number("base_us");
    fit.hop_us = f.number("hop_us");
    fit.bus_GBps = f.number("bus_GBps");
    fit.points = f.integer("points");
    fit.rms_rel_error = f.number("rms_rel_error");
    fit.max_rel_error = f.number("max_rel_error");
    out.configs.push_back(fit);
  }
  // Files from before host floors were fitted have none: their latencies carry the floor.
  if (!r.has("host_floors")) return out;
  for (const json& v : r.array("host_floors")) {
    const Reader f = r.child(v, "host_floors[]");
    const HostFloor floor{f.text("config"), f.integer("n_ranks"), f.number("floor_us"),
                          f.integer("points")};
    if (floor.n_ranks < 1) f.fail("n_ranks", "expected a rank count >= 1");
    if (!(floor.floor_us >= 0)) f.fail("floor_us", "expected a time >= 0");
    const auto& before = out.host_floors.curves;
    if (!before.empty() && std::make_pair(floor.config, floor.n_ranks) <=
                               std::make_pair(before.back().config, before.back().n_ranks))
      f.fail("n_ranks", "expected curves in (config, n_ranks) order, each once");
    out.host_floors.curves.push_back(floor);
  }
  return out;
}

}  // namespace

const NcclFit& nccl_fit_for(const Calibration& calibration, const std::string& op) {
  for (const NcclFit& f : calibration.nccl_by_op) {
    if (f.op == op) return f;
  }
  return calibration.nccl;
}

std::string calibration_json(const Calibration& c) {
  json j;
  j["schema"] = kCalibrationSchema;
  j["machine"] = {{"name", c.machine},
                  {"gpu_name", c.gpu_name},
                  {"gpu_count", c.gpu_count},
                  {"nccl_version", c.nccl_version}};
  j["topology"] = c.topology;
  j["split"] = {{"holdout_ranks", c.split.holdout_ranks},
                {"holdout_sizes", to_string(c.split.sizes)},
                {"rule", c.split.describe()}};
  j["timing"] = to_string(c.timing);
  j["nccl"] = nccl_fit_json(c.nccl);
  j["nccl_by_op"] = json::array();
  for (const NcclFit& f : c.nccl_by_op) j["nccl_by_op"].push_back(nccl_fit_json(f));
  json copies = json::array();
  for (const CopyFit& f : c.copies) {
    json cf = fit_quality(f.points, f.rms_rel_error, f.max_rel_error);
    cf["path"] = f.path;
    cf["latency_us"] = f.latency_us;
    cf["bandwidth_GBps"] = f.bandwidth_GBps;
    cf["spread_rel"] = f.spread_rel;
    copies.push_back(cf);
  }
  j["copies"] = copies;
  const ComputeFit& k = c.compute;
  j["launch"] = {{"kernel_launch_us", k.kernel_launch_us},
                 {"launch_call_us", k.launch_call_us},
                 {"launch_latency_us", k.launch_latency_us},
                 {"event_sync_us", k.event_sync_us}};
  j["membw_GBps"] = k.membw_GBps;
  json gemm = json::array();
  for (const GemmFit& g : k.gemm) {
    json gf = fit_quality(g.points, g.rms_rel_error, g.max_rel_error);
    gf["dtype"] = g.dtype;
    gf["peak_flops"] = g.peak_flops;
    gf["efficiency"] = g.efficiency;
    gf["overhead_us"] = g.overhead_us;
    gemm.push_back(gf);
  }
  j["gemm"] = gemm;
  return j.dump(2) + "\n";
}

void save_calibration(const Calibration& calibration, const std::string& path) {
  write_file_atomically(path, calibration_json(calibration));
}

Calibration parse_calibration(const std::string& text, const std::string& file_name) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(SourceLoc{file_name, 0}, "", std::string("not valid JSON: ") + e.what());
  }
  const Reader r(j, file_name, "");
  const std::string schema = r.text("schema");
  if (schema == "clustersim-fit-v1")
    r.fail("schema",
           "written by an older clustersim (clustersim-fit-v1); fit it again with "
           "`clustersim fit`");
  if (schema != kCalibrationSchema)
    r.fail("schema", "expected \"" + std::string(kCalibrationSchema) + "\"");
  Calibration c;
  const Reader m = r.child(r.at("machine"), "machine");
  c.machine = m.text("name");
  c.gpu_name = m.text("gpu_name");
  c.gpu_count = m.integer("gpu_count");
  c.nccl_version = static_cast<long long>(m.number("nccl_version"));
  c.topology = r.text("topology");
  const Reader s = r.child(r.at("split"), "split");
  for (const json& v : s.array("holdout_ranks")) {
    if (!v.is_number_integer()) s.fail("holdout_ranks", "expected integers");
    c.split.holdout_ranks.push_back(v.get<int>());
  }
  c.split.sizes = parse_size_holdout(s.text("holdout_sizes"), "split.holdout_sizes");
  // Files written before the key existed were all fitted on host-paced records.
  if (j.contains("timing")) {
    const auto timing = parse_nccl_timing(r.text("timing"));
    if (!timing) r.fail("timing", "expected \"host_paced\" or \"gated\"");
    c.timing = *timing;
  }
  c.nccl = nccl_fit_from(r.child(r.at("nccl"), "nccl"));
  for (const json& v : r.array("nccl_by_op"))
    c.nccl_by_op.push_back(nccl_fit_from(r.child(v, "nccl_by_op[]")));
  for (const json& v : r.array("copies")) {
    const Reader f = r.child(v, "copies[]");
    CopyFit fit;
    fit.path = f.text("path");
    fit.latency_us = f.number("latency_us");
    fit.bandwidth_GBps = f.number("bandwidth_GBps");
    fit.points = f.integer("points");
    fit.rms_rel_error = f.number("rms_rel_error");
    fit.max_rel_error = f.number("max_rel_error");
    fit.spread_rel = f.number("spread_rel");
    c.copies.push_back(fit);
  }
  const Reader l = r.child(r.at("launch"), "launch");
  c.compute.kernel_launch_us = l.number("kernel_launch_us");
  c.compute.launch_call_us = l.number("launch_call_us");
  c.compute.launch_latency_us = l.number("launch_latency_us");
  c.compute.event_sync_us = l.number("event_sync_us");
  c.compute.membw_GBps = r.number("membw_GBps");
  for (const json& v : r.array("gemm")) {
    const Reader f = r.child(v, "gemm[]");
    GemmFit fit;
    fit.dtype = f.text("dtype");
    fit.peak_flops = f.number("peak_flops");
    fit.efficiency = f.number("efficiency");
    fit.overhead_us = f.number("overhead_us");
    fit.points = f.integer("points");
    fit.rms_rel_error = f.number("rms_rel_error");
    fit.max_rel_error = f.number("max_rel_error");
    c.compute.gemm.push_back(fit);
  }
  return c;
}

Calibration load_calibration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0}, "", "cannot read the calibration file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_calibration(text.str(), path);
}

}  // namespace cs::cal
