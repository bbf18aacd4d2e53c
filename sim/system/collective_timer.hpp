// A collective as the step graph needs it: its time alone on the cluster's links, the CTAs its
// kernel holds and the bytes each CTA moves per second, from the collective model (NCCL's choice
// of algorithm, protocol and channels, run on the flow network). The one place a workload
// generator's collectives are timed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/nccl/nccl_params.hpp"
#include "collectives/nccl/nccl_types.hpp"
#include "topology/graph.hpp"

namespace cs::system {

struct CollectiveTime {
  double alone_us = 0;
  int ctas = 0;          // NCCL's channels, one CTA each
  double rate_gbps = 0;  // bytes a CTA moves per second alone
  std::string label;     // "algorithm/protocol/channels"
};

// NCCL's defaults (NVLS where the servers support it, CollNet off), with NCCL_NVLS_ENABLE and
// NCCL_COLLNET_ENABLE from the environment as a job would pass them, else NVLS as a
// calibration's runs had it (`calibration_nvls`).
coll::TunerOptions nccl_env_options(bool calibration_nvls);

// Collectives of one communicator (a rank group of a cluster), each alone on the links.
class CollectiveTimer {
 public:
  CollectiveTimer(const topo::ClusterGraph& graph, const std::vector<int>& ranks,
                  const coll::NcclParams& params, const coll::TunerOptions& options);
  // `op` on fp32 data of each size in `bytes`, in that order; each distinct size is run once.
  std::vector<CollectiveTime> time(coll::Op op, const std::vector<double>& bytes);

 private:
  std::unique_ptr<coll::Communicator> comm_;
  coll::TunerOptions options_;
};

}  // namespace cs::system
