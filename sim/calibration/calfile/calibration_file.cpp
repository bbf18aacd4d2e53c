// Calibration <-> JSON and the atomic write; NcclParams' own mapping is calibration_file_nccl.cpp,
// the application to a cluster calibration_file_apply.cpp. Reading checks every key, type and
// range (json_reader.hpp) and refuses keys it does not know.
#include "calibration/calfile/calibration_file.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

#include "calibration/calfile/calibration_file_nccl.hpp"
#include "calibration/measurements/json_reader.hpp"
#include "core/atomic_file.hpp"
#include "core/input_file.hpp"

namespace cs::cal {
namespace {

using nlohmann::json;

// The copy paths fit_links.cpp fits (CopyFit::path).
const char* const kCopyPaths[] = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable",
                                  "peer",       "peer_bidir", "d2d"};

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

// "default" or a forced "algo/proto" (NcclPoint::config), e.g. "ring/LL".
bool is_config_name(const std::string& config) {
  const auto slash = config.find('/');
  if (slash == std::string::npos) return config == "default";
  return coll::parse_algo(config.substr(0, slash)) && coll::parse_proto(config.substr(slash + 1));
}

// `every_op`: the fit of all collectives together, whose op is "".
NcclFit nccl_fit_from(const JsonReader& r, bool every_op) {
  r.only({"op", "params", "ring_graph", "p2p_nvlink_efficiency", "fits", "host_floors"});
  NcclFit out;
  out.op = r.text("op");
  if (every_op ? !out.op.empty() : !coll::parse_op(out.op))
    r.fail("op", every_op ? "expected \"\" (the fit of every collective)"
                          : "unknown collective '" + out.op + "'; valid: " + coll::valid_ops());
  out.params = nccl_params_from_json(r.at("params"), r.lines(), r.pointer() + "/params",
                                     r.prefix() + "params.");
  const JsonReader g = r.child("ring_graph");
  g.only({"channels", "per_channel_GBps"});
  out.channels_ring = g.integer("channels", 0, 1 << 16);
  out.channel_GBps = g.non_negative("per_channel_GBps");
  // A link efficiency, as a topology file's: 0 = not fitted (apply_op_links skips it).
  out.p2p_nvlink_efficiency = r.number("p2p_nvlink_efficiency", 0, 1, "an efficiency in 0..1");
  for (std::size_t i = 0; i < r.array("fits").size(); ++i) {
    const JsonReader f = r.element("fits", i);
    f.only({"algo", "proto", "base_us", "hop_us", "bus_GBps", "points", "rms_rel_error",
            "max_rel_error"});
    NcclConfigFit fit;
    const auto algo = coll::parse_algo(f.text("algo"));
    const auto proto = coll::parse_proto(f.text("proto"));
    if (!algo) f.fail("algo", "unknown algorithm; valid: " + coll::valid_algos());
    if (!proto) f.fail("proto", "unknown protocol; valid: " + coll::valid_protos());
    fit.algo = *algo;
    fit.proto = *proto;
    // What the fit found, reported by `clustersim fit`; params carries what the simulator uses.
    fit.base_us = f.number("base_us");
    fit.hop_us = f.number("hop_us");
    fit.bus_GBps = f.number("bus_GBps");
    fit.points = f.integer("points", 0, std::numeric_limits<int>::max());
    fit.rms_rel_error = f.non_negative("rms_rel_error");
    fit.max_rel_error = f.non_negative("max_rel_error");
    out.configs.push_back(fit);
  }
  // Files from before host floors were fitted have none: their latencies carry the floor.
  if (!r.has("host_floors")) return out;
  for (std::size_t i = 0; i < r.array("host_floors").size(); ++i) {
    const JsonReader f = r.element("host_floors", i);
    f.only({"config", "n_ranks", "floor_us", "points"});
    const HostFloor floor{f.text("config"), f.integer("n_ranks", 1, kMaxCount),
                          f.latency_us("floor_us"),
                          f.integer("points", 0, std::numeric_limits<int>::max())};
    // A floor is looked up by its configuration's name: one that names no configuration would
    // never be found, and its points would take the prior floor in silence.
    if (!is_config_name(floor.config))
      f.fail("config", "unknown configuration '" + floor.config +
                           "'; valid: default, or ALGO/PROTO with ALGO one of " +
                           coll::valid_algos() + " and PROTO one of " + coll::valid_protos());
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
  j["nccl_nvls_enable"] = c.nvls ? json(*c.nvls) : json(nullptr);
  j["nccl"] = nccl_fit_json(c.nccl);
  j["nccl_by_op"] = json::array();
  for (const NcclFit& f : c.nccl_by_op) j["nccl_by_op"].push_back(nccl_fit_json(f));
  json copies = json::array();
  for (const CopyFit& f : c.copies) {
    json cf = fit_quality(f.points, f.rms_rel_error, f.max_rel_error);
    cf["path"] = f.path;
    cf["latency_us"] = f.latency_us;
    if (f.gpu_latency_us > 0) cf["gpu_latency_us"] = f.gpu_latency_us;
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
  if (c.host) j["host"] = node_host_json(*c.host);
  return j.dump(2) + "\n";
}

void save_calibration(const Calibration& calibration, const std::string& path) {
  write_file_atomically(path, calibration_json(calibration));
}

Calibration parse_calibration(const std::string& text, const std::string& file_name) {
  check_is_text(text, file_name, "a calibration file is JSON text");
  const json j = parse_json(text, file_name);
  const JsonLines lines(file_name, text);
  const JsonReader r(j, lines, "", "");
  const std::string schema = r.text("schema");
  if (schema == "clustersim-fit-v1")
    r.fail("schema",
           "written by an older clustersim (clustersim-fit-v1); fit it again with "
           "`clustersim fit`");
  if (schema != kCalibrationSchema)
    r.fail("schema", "expected \"" + std::string(kCalibrationSchema) + "\"");
  r.only({"schema", "machine", "topology", "split", "timing", "nccl_nvls_enable", "nccl",
          "nccl_by_op", "copies", "launch", "membw_GBps", "gemm", "host"});
  Calibration c;
  const JsonReader m = r.child("machine");
  m.only({"name", "gpu_name", "gpu_count", "nccl_version"});
  c.machine = m.text("name");
  c.gpu_name = m.text("gpu_name");
  c.gpu_name_loc = lines.at("/machine/gpu_name");
  c.gpu_count = m.integer("gpu_count", 0, kMaxCount);
  c.nccl_version = m.integer("nccl_version", 0, std::numeric_limits<int>::max());
  c.topology = r.text("topology");
  const JsonReader s = r.child("split");
  s.only({"holdout_ranks", "holdout_sizes", "rule"});
  const JsonReader held_out = s.value("holdout_ranks");  // rank counts
  for (std::size_t i = 0; i < s.array("holdout_ranks").size(); ++i)
    c.split.holdout_ranks.push_back(held_out.item(i).as_integer(1, kMaxCount));
  try {
    c.split.sizes = parse_size_holdout(s.text("holdout_sizes"), "split.holdout_sizes");
  } catch (const InputError&) {
    s.fail("holdout_sizes",
           "unknown size holdout '" + s.text("holdout_sizes") + "'; valid: odd, even, none");
  }
  // Files written before the key existed were all fitted on host-paced records.
  if (j.contains("timing")) {
    const auto timing = parse_nccl_timing(r.text("timing"));
    if (!timing) r.fail("timing", "expected \"host_paced\" or \"gated\"");
    c.timing = *timing;
  }
  // Files written before the key existed: not recorded.
  if (j.contains("nccl_nvls_enable") && !j["nccl_nvls_enable"].is_null()) {
    if (!j["nccl_nvls_enable"].is_boolean())
      r.fail("nccl_nvls_enable", "expected true, false or null");
    c.nvls = j["nccl_nvls_enable"].get<bool>();
  }
  c.nccl = nccl_fit_from(r.child("nccl"), true);
  for (std::size_t i = 0; i < r.array("nccl_by_op").size(); ++i) {
    const JsonReader f = r.element("nccl_by_op", i);
    c.nccl_by_op.push_back(nccl_fit_from(f, false));
    for (std::size_t k = 0; k + 1 < c.nccl_by_op.size(); ++k) {
      if (c.nccl_by_op[k].op == c.nccl_by_op.back().op)
        f.fail("op", "'" + c.nccl_by_op.back().op + "' is fitted twice");
    }
  }
  for (std::size_t i = 0; i < r.array("copies").size(); ++i) {
    const JsonReader f = r.element("copies", i);
    f.only({"path", "latency_us", "gpu_latency_us", "bandwidth_GBps", "points", "rms_rel_error",
            "max_rel_error", "spread_rel"});
    CopyFit fit;
    fit.path = f.text("path");
    if (std::find_if(std::begin(kCopyPaths), std::end(kCopyPaths),
                     [&](const char* p) { return fit.path == p; }) == std::end(kCopyPaths)) {
      std::string list;
      for (const char* p : kCopyPaths) list += std::string(list.empty() ? "" : ", ") + p;
      f.fail("path", "unknown copy path '" + fit.path + "'; valid: " + list);
    }
    fit.latency_us = f.latency_us("latency_us");
    if (f.has("gpu_latency_us")) fit.gpu_latency_us = f.latency_us("gpu_latency_us");
    fit.bandwidth_GBps = f.positive("bandwidth_GBps");
    fit.points = f.integer("points", 0, std::numeric_limits<int>::max());
    fit.rms_rel_error = f.non_negative("rms_rel_error");
    fit.max_rel_error = f.non_negative("max_rel_error");
    fit.spread_rel = f.non_negative("spread_rel");
    c.copies.push_back(fit);
  }
  const JsonReader l = r.child("launch");
  l.only({"kernel_launch_us", "launch_call_us", "launch_latency_us", "event_sync_us"});
  c.compute.kernel_launch_us = l.latency_us("kernel_launch_us");
  c.compute.launch_call_us = l.latency_us("launch_call_us");
  c.compute.launch_latency_us = l.latency_us("launch_latency_us");
  c.compute.event_sync_us = l.latency_us("event_sync_us");
  c.compute.membw_GBps = r.non_negative("membw_GBps");
  for (std::size_t i = 0; i < r.array("gemm").size(); ++i) {
    const JsonReader f = r.element("gemm", i);
    f.only({"dtype", "peak_flops", "efficiency", "overhead_us", "points", "rms_rel_error",
            "max_rel_error"});
    GemmFit fit;
    fit.dtype = f.text("dtype");
    // The GEMM fit is reported, not applied: an intercept below 0 or a flat fit (efficiency 0)
    // is what the fitter found on that data.
    fit.peak_flops = f.non_negative("peak_flops");
    fit.efficiency = f.non_negative("efficiency");
    fit.overhead_us = f.number("overhead_us");
    fit.points = f.integer("points", 0, std::numeric_limits<int>::max());
    fit.rms_rel_error = f.non_negative("rms_rel_error");
    fit.max_rel_error = f.non_negative("max_rel_error");
    c.compute.gemm.push_back(fit);
  }
  // Files fitted without a host probe (or before it existed) have none.
  if (r.has("host")) c.host = node_host_from_calibration(r.child("host"));
  return c;
}

Calibration load_calibration(const std::string& path) {
  return parse_calibration(read_input_file(path, "calibration file"), path);
}

}  // namespace cs::cal
