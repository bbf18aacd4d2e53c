// The field-by-field mapping; tables are nested arrays indexed like the struct
// ([algo][proto], [link class][algo][proto], [node class]).
#include "calibration/calibration_file_nccl.hpp"

#include "core/error.hpp"

namespace cs::cal {
namespace {

using nlohmann::json;
using namespace coll;

template <std::size_t N>
json row(const double (&r)[N]) {
  json out = json::array();
  for (double v : r) out.push_back(v);
  return out;
}
template <std::size_t N>
json row(const int (&r)[N]) {
  json out = json::array();
  for (int v : r) out.push_back(v);
  return out;
}

class Reader {
 public:
  Reader(const json& j, std::string file) : j_(j), file_(std::move(file)) {}
  const json& at(const std::string& key) const {
    if (!j_.contains(key)) fail(key, "missing");
    return j_.at(key);
  }
  double number(const json& v, const std::string& key) const {
    if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
    return v.get<double>();
  }
  template <std::size_t N, typename T>
  void fill(const json& v, const std::string& key, T (&out)[N]) const {
    if (!v.is_array() || v.size() != N)
      fail(key, "expected an array of " + std::to_string(N) + ", got " + v.dump());
    for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<T>(number(v[i], key));
  }
  template <std::size_t N, typename T>
  void fill(const std::string& key, T (&out)[N]) const {
    fill(at(key), key, out);
  }
  template <std::size_t N, std::size_t M>
  void fill2(const json& v, const std::string& key, double (&out)[N][M]) const {
    if (!v.is_array() || v.size() != N) fail(key, "expected " + std::to_string(N) + " rows");
    for (std::size_t i = 0; i < N; ++i) fill(v[i], key, out[i]);
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(SourceLoc{file_, 0}, "nccl." + key, message);
  }

 private:
  const json& j_;
  std::string file_;
};

}  // namespace

json nccl_params_json(const NcclParams& p) {
  json j;
  j["source"] = p.source;
  json base = json::array();
  for (const auto& r : p.base_latency_us) base.push_back(row(r));
  j["base_latency_us"] = base;
  json hop = json::array();
  for (const auto& link : p.hop_latency_us) {
    json l = json::array();
    for (const auto& r : link) l.push_back(row(r));
    hop.push_back(l);
  }
  j["hop_latency_us"] = hop;
  j["ring_simple_multinode_latency_factor"] = p.ring_simple_multinode_latency_factor;
  j["ring_simple_plateau_bytes"] = p.ring_simple_plateau_bytes;
  j["pat_log_latency_divisor"] = p.pat_log_latency_divisor;
  j["pat_per_rank_latency_us"] = p.pat_per_rank_latency_us;
  j["ring_ll_efficiency"] = p.ring_ll_efficiency;
  j["ll128_efficiency"] = p.ll128_efficiency;
  j["tree_efficiency"] = p.tree_efficiency;
  j["tree_ll_efficiency"] = p.tree_ll_efficiency;
  j["tree_ll128_efficiency_one_node"] = p.tree_ll128_efficiency_one_node;
  j["tree_ll128_efficiency_multi_node"] = p.tree_ll128_efficiency_multi_node;
  j["pat_efficiency"] = p.pat_efficiency;
  j["nvls_efficiency"] = p.nvls_efficiency;
  j["ll_max_bw_GBps"] = row(p.ll_max_bw_GBps);
  j["ring_ll128_max_per_channel_GBps"] = p.ring_ll128_max_per_channel_GBps;
  j["tree_max_per_channel_GBps"] = row(p.tree_max_per_channel_GBps);
  j["tree_ll128_max_per_channel_GBps"] = row(p.tree_ll128_max_per_channel_GBps);
  j["nvlink_per_link_GBps"] = p.nvlink_per_link_GBps;
  j["pcie_GBps_gen3_4_5"] = {p.pcie_gen3_GBps, p.pcie_gen4_GBps, p.pcie_gen5_GBps};
  j["intra_speeds_GBps"] = p.intra_speeds_GBps;
  j["inter_speeds_GBps"] = p.inter_speeds_GBps;
  j["search_max_channels"] = p.search_max_channels;
  j["duplicate_channels_min_GBps"] = p.duplicate_channels_min_GBps;
  j["search_speed_ratio_floor"] = p.search_speed_ratio_floor;
  j["nvls_channels"] = p.nvls_channels;
  j["max_threads"] = row(p.max_threads);
  j["thread_threshold"] = row(p.thread_threshold);
  j["p2p_max_channels"] = p.p2p_max_channels;
  j["p2p_net_channels_per_peer"] = p.p2p_net_channels_per_peer;
  j["p2p_nvl_chunk_bytes"] = p.p2p_nvl_chunk_bytes;
  j["p2p_net_chunk_bytes"] = p.p2p_net_chunk_bytes;
  j["p2p_ll_threshold_bytes"] = p.p2p_ll_threshold_bytes;
  j["p2p_per_channel_GBps"] = p.p2p_per_channel_GBps;
  j["p2p_extra_peer_latency_us"] = p.p2p_extra_peer_latency_us;
  j["p2p_nvlink_latency_us"] = p.p2p_nvlink_latency_us;
  j["p2p_unaligned_per_channel_GBps"] = p.p2p_unaligned_per_channel_GBps;
  j["p2p_unaligned_gpu_GBps"] = p.p2p_unaligned_gpu_GBps;
  j["ring_recv_pass_steps"] = row(p.ring_recv_pass_steps);
  j["ring_misaligned_slowdown"] = {row(p.ring_misaligned_slowdown[0]),
                                   row(p.ring_misaligned_slowdown[1])};
  return j;
}

NcclParams nccl_params_from_json(const json& j, const std::string& file) {
  const Reader r(j, file);
  if (!j.is_object()) r.fail("", "expected an object");
  NcclParams p;
  const json& source = r.at("source");
  if (!source.is_string()) r.fail("source", "expected a string");
  p.source = source.get<std::string>();
  r.fill2(r.at("base_latency_us"), "base_latency_us", p.base_latency_us);
  const json& hop = r.at("hop_latency_us");
  if (!hop.is_array() || hop.size() != kLinkClassCount)
    r.fail("hop_latency_us", "expected one table per link class (nvlink, pcie, network)");
  for (int c = 0; c < kLinkClassCount; ++c)
    r.fill2(hop[static_cast<std::size_t>(c)], "hop_latency_us", p.hop_latency_us[c]);
  auto num = [&](const char* key) { return r.number(r.at(key), key); };
  p.ring_simple_multinode_latency_factor = num("ring_simple_multinode_latency_factor");
  p.ring_simple_plateau_bytes = num("ring_simple_plateau_bytes");
  p.pat_log_latency_divisor = num("pat_log_latency_divisor");
  p.pat_per_rank_latency_us = num("pat_per_rank_latency_us");
  p.ring_ll_efficiency = num("ring_ll_efficiency");
  p.ll128_efficiency = num("ll128_efficiency");
  p.tree_efficiency = num("tree_efficiency");
  p.tree_ll_efficiency = num("tree_ll_efficiency");
  p.tree_ll128_efficiency_one_node = num("tree_ll128_efficiency_one_node");
  p.tree_ll128_efficiency_multi_node = num("tree_ll128_efficiency_multi_node");
  p.pat_efficiency = num("pat_efficiency");
  p.nvls_efficiency = num("nvls_efficiency");
  r.fill("ll_max_bw_GBps", p.ll_max_bw_GBps);
  p.ring_ll128_max_per_channel_GBps = num("ring_ll128_max_per_channel_GBps");
  r.fill("tree_max_per_channel_GBps", p.tree_max_per_channel_GBps);
  r.fill("tree_ll128_max_per_channel_GBps", p.tree_ll128_max_per_channel_GBps);
  p.nvlink_per_link_GBps = num("nvlink_per_link_GBps");
  double pcie[3] = {};
  r.fill("pcie_GBps_gen3_4_5", pcie);
  p.pcie_gen3_GBps = pcie[0];
  p.pcie_gen4_GBps = pcie[1];
  p.pcie_gen5_GBps = pcie[2];
  for (const char* key : {"intra_speeds_GBps", "inter_speeds_GBps"}) {
    const json& v = r.at(key);
    if (!v.is_array() || v.empty()) r.fail(key, "expected a non-empty array of GB/s");
    std::vector<double>& out =
        std::string(key) == "intra_speeds_GBps" ? p.intra_speeds_GBps : p.inter_speeds_GBps;
    for (const json& s : v) out.push_back(r.number(s, key));
  }
  p.search_max_channels = static_cast<int>(num("search_max_channels"));
  p.duplicate_channels_min_GBps = num("duplicate_channels_min_GBps");
  p.search_speed_ratio_floor = num("search_speed_ratio_floor");
  p.nvls_channels = static_cast<int>(num("nvls_channels"));
  r.fill("max_threads", p.max_threads);
  r.fill("thread_threshold", p.thread_threshold);
  p.p2p_max_channels = static_cast<int>(num("p2p_max_channels"));
  p.p2p_net_channels_per_peer = static_cast<int>(num("p2p_net_channels_per_peer"));
  p.p2p_nvl_chunk_bytes = num("p2p_nvl_chunk_bytes");
  p.p2p_net_chunk_bytes = num("p2p_net_chunk_bytes");
  p.p2p_ll_threshold_bytes = num("p2p_ll_threshold_bytes");
  p.p2p_per_channel_GBps = num("p2p_per_channel_GBps");
  p.p2p_extra_peer_latency_us = num("p2p_extra_peer_latency_us");
  p.p2p_nvlink_latency_us = num("p2p_nvlink_latency_us");
  p.p2p_unaligned_per_channel_GBps = num("p2p_unaligned_per_channel_GBps");
  p.p2p_unaligned_gpu_GBps = num("p2p_unaligned_gpu_GBps");
  r.fill("ring_recv_pass_steps", p.ring_recv_pass_steps);
  for (double a : p.ring_recv_pass_steps)
    if (!(a >= 0.0)) r.fail("ring_recv_pass_steps", "pass costs must be 0 or more");
  r.fill2(r.at("ring_misaligned_slowdown"), "ring_misaligned_slowdown", p.ring_misaligned_slowdown);
  for (const auto& op_row : p.ring_misaligned_slowdown)
    for (double f : op_row)
      if (!(f >= 1.0)) r.fail("ring_misaligned_slowdown", "factors must be at least 1");
  if (p.p2p_max_channels < 1 || p.p2p_net_channels_per_peer < 1 || !(p.p2p_nvl_chunk_bytes > 0) ||
      !(p.p2p_net_chunk_bytes > 0))
    r.fail("p2p_max_channels", "p2p channel counts and chunk sizes must be positive");
  return p;
}

}  // namespace cs::cal
