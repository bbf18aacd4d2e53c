// Timing a communicator's collectives alone: one flow-fidelity run per distinct size.
#include "system/collective_timer.hpp"

#include <algorithm>

#include "collectives/sweep.hpp"

namespace cs::system {

coll::TunerOptions nccl_env_options(bool calibration_nvls) {
  coll::TunerOptions o;
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  o.nvls = coll::parse_enable(v != nullptr ? v : "", "NCCL_NVLS_ENABLE");
  if (!o.nvls && calibration_nvls) o.nvls = true;
  const char* collnet = std::getenv("NCCL_COLLNET_ENABLE");
  o.collnet = coll::parse_enable(collnet != nullptr ? collnet : "", "NCCL_COLLNET_ENABLE");
  return o;
}

CollectiveTimer::CollectiveTimer(const topo::ClusterGraph& graph, const std::vector<int>& ranks,
                                 const coll::NcclParams& params, const coll::TunerOptions& options)
    : comm_(std::make_unique<coll::Communicator>(graph, ranks, params)), options_(options) {}

std::vector<CollectiveTime> CollectiveTimer::time(coll::Op op, const std::vector<double>& bytes) {
  std::vector<double> sizes = bytes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const coll::DataType fp32{"float", 4};
  const std::vector<coll::SweepRow> rows =
      coll::sweep(*comm_, op, sizes, fp32, options_, coll::Fidelity::flow);
  const coll::CommLayout& layout = comm_->layout();
  const double n = static_cast<double>(layout.shape.n_ranks);
  const double ppn = n / std::max(layout.shape.n_nodes, 1);
  std::vector<CollectiveTime> out;
  out.reserve(bytes.size());
  for (double b : bytes) {
    const auto at = std::lower_bound(sizes.begin(), sizes.end(), b) - sizes.begin();
    const coll::SweepRow& row = rows[static_cast<std::size_t>(at)];
    CollectiveTime t;
    t.alone_us = row.time_us;
    t.ctas = row.choice.n_channels;
    // What the rank's SMs move over the call's time and channels. An all-reduce's Ring and Tree
    // copy and reduce the bus bytes (nccl-tests' busbw convention, 2 (n - 1) / n of the buffer);
    // NVLS leaves the reduction to the switch: a rank's SMs load its reduced shard (S / ranks of
    // its server) and multicast it back, and NVLSTree adds the shard's trip up and down the tree
    // across servers (4 shards). Other ops: their bus bytes.
    const coll::Algo algo = row.choice.estimate.algo;
    const double sm_bytes = op != coll::Op::all_reduce
                                ? b * coll::busbw_factor(op, layout.shape.n_ranks)
                            : algo == coll::Algo::nvls      ? 2 * b / ppn
                            : algo == coll::Algo::nvls_tree ? 4 * b / ppn
                                                            : 2 * (n - 1) / n * b;
    t.rate_gbps = row.time_us > 0 && row.choice.n_channels > 0
                      ? sm_bytes / (row.time_us * 1e-6) / row.choice.n_channels / 1e9
                      : 0.0;
    t.label = std::string(coll::to_string(algo)) + "/" +
              coll::to_string(row.choice.estimate.proto) + "/" +
              std::to_string(row.choice.n_channels);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace cs::system
