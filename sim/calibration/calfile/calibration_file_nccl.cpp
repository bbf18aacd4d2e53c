// The field-by-field mapping; tables are nested arrays indexed like the struct
// ([algo][proto], [link class][algo][proto], [node class]).
#include "calibration/calfile/calibration_file_nccl.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "calibration/measurements/json_reader.hpp"
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

// Fixed-size tables of the params, each element read and range-checked at its own line.
template <std::size_t N>
void fill(const JsonReader& a, double (&out)[N], double lo, double hi, const char* what) {
  a.expect_array(N);
  for (std::size_t i = 0; i < N; ++i) out[i] = a.item(i).as_number(lo, hi, what);
}

template <std::size_t N>
void fill(const JsonReader& a, int (&out)[N], int lo) {
  a.expect_array(N);
  for (std::size_t i = 0; i < N; ++i) out[i] = a.item(i).as_integer(lo, kMaxCount);
}

template <std::size_t N, std::size_t M>
void fill2(const JsonReader& a, double (&out)[N][M], double lo, double hi, const char* what) {
  a.expect_array(N);
  for (std::size_t i = 0; i < N; ++i) fill(a.item(i), out[i], lo, hi, what);
}

// The algorithms before CollNet (tree, ring, nvls, pat, nvls_tree).
constexpr std::size_t kAlgoCountBeforeCollNet = 5;

// The first `rows` rows of a per-algorithm latency table.
void fill_rows(const JsonReader& a, double (&out)[kAlgoCount][kProtoCount], std::size_t rows,
               const char* what) {
  a.expect_array(rows);
  for (std::size_t i = 0; i < rows; ++i) fill(a.item(i), out[i], 0, kMaxLatencyUs, what);
}

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
  j["nvls_multimem_efficiency"] = p.nvls_multimem_efficiency;
  j["ll_max_bw_GBps"] = row(p.ll_max_bw_GBps);
  j["ll_max_bw_amd_GBps"] = row(p.ll_max_bw_amd_GBps);
  j["net_overhead_us"] = p.net_overhead_us;
  j["net_overhead_amd_us"] = p.net_overhead_amd_us;
  j["ring_ll128_max_per_channel_GBps"] = p.ring_ll128_max_per_channel_GBps;
  j["tree_max_per_channel_GBps"] = row(p.tree_max_per_channel_GBps);
  j["tree_ll128_max_per_channel_GBps"] = row(p.tree_ll128_max_per_channel_GBps);
  j["nvls_tree_max_per_channel_GBps"] = row(p.nvls_tree_max_per_channel_GBps);
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
  j["p2p_ll_per_channel_GBps"] = p.p2p_ll_per_channel_GBps;
  j["p2p_extra_peer_latency_us"] = p.p2p_extra_peer_latency_us;
  j["p2p_nvlink_latency_us"] = p.p2p_nvlink_latency_us;
  j["p2p_fill_GBps"] = p.p2p_fill_GBps;
  j["p2p_unaligned_per_channel_GBps"] = p.p2p_unaligned_per_channel_GBps;
  j["p2p_unaligned_gpu_GBps"] = p.p2p_unaligned_gpu_GBps;
  j["ring_recv_pass_steps"] = row(p.ring_recv_pass_steps);
  j["ring_fill_GBps"] = p.ring_fill_GBps;
  j["ll128_net_chunk_us"] = p.ll128_net_chunk_us;
  j["ring_misaligned_slowdown"] = {row(p.ring_misaligned_slowdown[0]),
                                   row(p.ring_misaligned_slowdown[1])};
  j["ring_misaligned_head_bytes"] = p.ring_misaligned_head_bytes;
  j["ring_misaligned_head_ps_per_byte"] = p.ring_misaligned_head_ps_per_byte;
  j["ring_misaligned_tail_ps_per_byte"] = p.ring_misaligned_tail_ps_per_byte;
  return j;
}

NcclParams nccl_params_from_json(const json& j, const JsonLines& lines, const std::string& pointer,
                                 const std::string& prefix) {
  const JsonReader r(j, lines, pointer, prefix);
  if (!j.is_object()) r.fail("", "expected an object");
  r.only({"source",
          "base_latency_us",
          "hop_latency_us",
          "ring_simple_multinode_latency_factor",
          "ring_simple_plateau_bytes",
          "pat_log_latency_divisor",
          "pat_per_rank_latency_us",
          "ring_ll_efficiency",
          "ll128_efficiency",
          "tree_efficiency",
          "tree_ll_efficiency",
          "tree_ll128_efficiency_one_node",
          "tree_ll128_efficiency_multi_node",
          "pat_efficiency",
          "nvls_efficiency",
          "nvls_multimem_efficiency",
          "ll_max_bw_GBps",
          "ll_max_bw_amd_GBps",
          "net_overhead_us",
          "net_overhead_amd_us",
          "ring_ll128_max_per_channel_GBps",
          "tree_max_per_channel_GBps",
          "tree_ll128_max_per_channel_GBps",
          "nvls_tree_max_per_channel_GBps",
          "nvlink_per_link_GBps",
          "pcie_GBps_gen3_4_5",
          "intra_speeds_GBps",
          "inter_speeds_GBps",
          "search_max_channels",
          "duplicate_channels_min_GBps",
          "search_speed_ratio_floor",
          "nvls_channels",
          "max_threads",
          "thread_threshold",
          "p2p_max_channels",
          "p2p_net_channels_per_peer",
          "p2p_nvl_chunk_bytes",
          "p2p_net_chunk_bytes",
          "p2p_ll_threshold_bytes",
          "p2p_per_channel_GBps",
          "p2p_ll_per_channel_GBps",
          "p2p_extra_peer_latency_us",
          "p2p_nvlink_latency_us",
          "p2p_fill_GBps",
          "p2p_unaligned_per_channel_GBps",
          "p2p_unaligned_gpu_GBps",
          "ring_recv_pass_steps",
          "ring_fill_GBps",
          "ll128_net_chunk_us",
          "ring_misaligned_slowdown",
          "ring_misaligned_head_bytes",
          "ring_misaligned_head_ps_per_byte",
          "ring_misaligned_tail_ps_per_byte"});
  const double huge = std::numeric_limits<double>::max();
  const char* const latency = "a latency of 0 to 1e6 us";
  const char* const rate = "a rate of 0 or more GB/s";
  NcclParams p;
  p.source = r.text("source");
  // Files written before CollNet was modelled have the first kAlgoCountBeforeCollNet rows; the
  // CollNet rows then take NCCL's figures (set_collnet_latencies).
  set_collnet_latencies(p);
  const JsonReader base = r.value("base_latency_us");
  const std::size_t rows =
      base.size() == kAlgoCountBeforeCollNet ? kAlgoCountBeforeCollNet : std::size_t{kAlgoCount};
  fill_rows(base, p.base_latency_us, rows, latency);
  const JsonReader hop = r.value("hop_latency_us");  // a table per link class
  hop.expect_array(kLinkClassCount);
  for (int c = 0; c < kLinkClassCount; ++c)
    fill_rows(hop.item(static_cast<std::size_t>(c)), p.hop_latency_us[c], rows, latency);
  auto num = [&](const char* key, double lo, double hi, const char* what) {
    return r.number(key, lo, hi, what);
  };
  // Multipliers, efficiencies and divisors scale a time or a rate: above 0 (a fit may exceed 1).
  auto factor = [&](const char* key) { return r.positive(key); };
  p.ring_simple_multinode_latency_factor = factor("ring_simple_multinode_latency_factor");
  p.ring_simple_plateau_bytes = num("ring_simple_plateau_bytes", 0, huge, "a size of 0 or more");
  p.pat_log_latency_divisor = factor("pat_log_latency_divisor");
  p.pat_per_rank_latency_us = num("pat_per_rank_latency_us", 0, kMaxLatencyUs, latency);
  p.ring_ll_efficiency = factor("ring_ll_efficiency");
  p.ll128_efficiency = factor("ll128_efficiency");
  p.tree_efficiency = factor("tree_efficiency");
  p.tree_ll_efficiency = factor("tree_ll_efficiency");
  p.tree_ll128_efficiency_one_node = factor("tree_ll128_efficiency_one_node");
  p.tree_ll128_efficiency_multi_node = factor("tree_ll128_efficiency_multi_node");
  p.pat_efficiency = factor("pat_efficiency");
  p.nvls_efficiency = factor("nvls_efficiency");
  p.nvls_multimem_efficiency = num("nvls_multimem_efficiency", 0, huge, "a factor of 0 or more");
  fill(r.value("ll_max_bw_GBps"), p.ll_max_bw_GBps, 0, huge, rate);
  fill(r.value("ll_max_bw_amd_GBps"), p.ll_max_bw_amd_GBps, 0, huge, rate);
  p.net_overhead_us = num("net_overhead_us", 0, kMaxLatencyUs, latency);
  p.net_overhead_amd_us = num("net_overhead_amd_us", 0, kMaxLatencyUs, latency);
  p.ring_ll128_max_per_channel_GBps = num("ring_ll128_max_per_channel_GBps", 0, huge, rate);
  fill(r.value("tree_max_per_channel_GBps"), p.tree_max_per_channel_GBps, 0, huge, rate);
  fill(r.value("tree_ll128_max_per_channel_GBps"), p.tree_ll128_max_per_channel_GBps, 0, huge,
       rate);
  fill(r.value("nvls_tree_max_per_channel_GBps"), p.nvls_tree_max_per_channel_GBps, 0, huge, rate);
  p.nvlink_per_link_GBps = num("nvlink_per_link_GBps", 0, huge, rate);
  double pcie[3] = {};
  fill(r.value("pcie_GBps_gen3_4_5"), pcie, 0, huge, rate);
  p.pcie_gen3_GBps = pcie[0];
  p.pcie_gen4_GBps = pcie[1];
  p.pcie_gen5_GBps = pcie[2];
  for (const char* key : {"intra_speeds_GBps", "inter_speeds_GBps"}) {
    const JsonReader speeds = r.value(key);
    const json& v = r.array(key);
    if (v.empty()) r.fail(key, "expected a non-empty array of GB/s");
    std::vector<double>& out =
        std::string(key) == "intra_speeds_GBps" ? p.intra_speeds_GBps : p.inter_speeds_GBps;
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.push_back(speeds.item(i).as_number(std::numeric_limits<double>::denorm_min(), huge,
                                             "a speed above 0 GB/s"));
    }
  }
  p.search_max_channels = r.integer("search_max_channels", 1, kMaxCount);
  p.duplicate_channels_min_GBps = num("duplicate_channels_min_GBps", 0, huge, rate);
  p.search_speed_ratio_floor = num("search_speed_ratio_floor", 0, 1, "a fraction in 0..1");
  p.nvls_channels = r.integer("nvls_channels", 1, kMaxCount);
  fill(r.value("max_threads"), p.max_threads, 1);
  fill(r.value("thread_threshold"), p.thread_threshold, 0);
  p.p2p_max_channels = r.integer("p2p_max_channels", 1, kMaxCount);
  p.p2p_net_channels_per_peer = r.integer("p2p_net_channels_per_peer", 1, kMaxCount);
  p.p2p_nvl_chunk_bytes = factor("p2p_nvl_chunk_bytes");
  p.p2p_net_chunk_bytes = factor("p2p_net_chunk_bytes");
  p.p2p_ll_threshold_bytes = num("p2p_ll_threshold_bytes", 0, huge, "a size of 0 or more");
  p.p2p_per_channel_GBps = num("p2p_per_channel_GBps", 0, huge, rate);
  // Absent in files of clustersim before the LL rate and the fill: 0, neither charged.
  if (r.has("p2p_ll_per_channel_GBps"))
    p.p2p_ll_per_channel_GBps = num("p2p_ll_per_channel_GBps", 0, huge, rate);
  p.p2p_extra_peer_latency_us = num("p2p_extra_peer_latency_us", 0, kMaxLatencyUs, latency);
  p.p2p_nvlink_latency_us = num("p2p_nvlink_latency_us", 0, kMaxLatencyUs, latency);
  if (r.has("p2p_fill_GBps")) p.p2p_fill_GBps = num("p2p_fill_GBps", 0, huge, rate);
  p.p2p_unaligned_per_channel_GBps = num("p2p_unaligned_per_channel_GBps", 0, huge, rate);
  p.p2p_unaligned_gpu_GBps = num("p2p_unaligned_gpu_GBps", 0, huge, rate);
  fill(r.value("ring_recv_pass_steps"), p.ring_recv_pass_steps, 0, huge, "pass costs of 0 or more");
  if (r.has("ring_fill_GBps")) p.ring_fill_GBps = num("ring_fill_GBps", 0, huge, rate);
  // Absent in files of clustersim before Tree LL128 chunks cost time across servers: 0.
  if (r.has("ll128_net_chunk_us"))
    p.ll128_net_chunk_us = num("ll128_net_chunk_us", 0, kMaxLatencyUs, latency);
  fill2(r.value("ring_misaligned_slowdown"), p.ring_misaligned_slowdown, 1, huge,
        "factors of at least 1");
  // Absent in files of clustersim before misaligned all-gathers added time: 0, none added.
  const char* const cost = "a cost of 0 or more ps per byte";
  if (r.has("ring_misaligned_head_bytes")) {
    p.ring_misaligned_head_bytes =
        num("ring_misaligned_head_bytes", 0, huge, "a size of 0 or more");
  }
  if (r.has("ring_misaligned_head_ps_per_byte"))
    p.ring_misaligned_head_ps_per_byte = num("ring_misaligned_head_ps_per_byte", 0, huge, cost);
  if (r.has("ring_misaligned_tail_ps_per_byte"))
    p.ring_misaligned_tail_ps_per_byte = num("ring_misaligned_tail_ps_per_byte", 0, huge, cost);
  return p;
}

}  // namespace cs::cal
