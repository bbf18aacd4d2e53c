// fit_calibration: the three fits side by side, with the machine's description.
#include "calibration/fit/fit.hpp"

#include <algorithm>
#include <filesystem>

#include "calibration/fit/fit_compute.hpp"
#include "calibration/fit/fit_links.hpp"
#include "calibration/fit/fit_nccl.hpp"

namespace cs::cal {

std::string base_name(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

Calibration fit_calibration(const Measurements& data, const Split& split,
                            const topo::ClusterGraph& graph, const std::string& machine,
                            const std::string& topology) {
  Calibration c;
  c.machine = machine;
  c.gpu_name = data.node.gpu_name;
  c.gpu_count = data.node.gpu_count;
  c.nccl_version = data.node.nccl_version;
  c.topology = topology;
  c.split = split;
  // The runs' NCCL_NVLS_ENABLE when every NCCL record agrees on it.
  if (!data.nccl.empty() &&
      std::all_of(data.nccl.begin(), data.nccl.end(),
                  [&](const NcclPoint& p) { return p.nvls == data.nccl.front().nvls; }))
    c.nvls = data.nccl.front().nvls;
  c.nccl = fit_nccl(data, split, graph);
  // A collective gets its own fit where it was run in forced configurations, or on one rank
  // (NCCL's copy, whose host floor is the collective's own).
  for (const char* op : {"allreduce", "allgather", "reducescatter", "broadcast", "reduce"}) {
    const bool own = std::any_of(data.nccl.begin(), data.nccl.end(), [&](const NcclPoint& p) {
      return p.op == op && (!p.is_default() || p.n_ranks == 1);
    });
    if (own) c.nccl_by_op.push_back(fit_nccl(data, split, graph, op));
  }
  for (const char* op : {"alltoall", "sendrecv"}) {
    NcclFit f = fit_nccl_p2p(data, split, graph, op);
    if (!f.configs.empty()) c.nccl_by_op.push_back(std::move(f));
  }
  c.copies = fit_copies(data, split);
  c.compute = fit_compute(data, split);
  // The host: the probe run on the most GPUs (every process at once is how a job runs), the first
  // by file name among equals. Nothing is fitted: the probe's figures are the host's.
  for (const NodeHost& h : data.hosts) {
    if (!c.host || h.world_size > c.host->world_size) c.host = h;
  }
  return c;
}

}  // namespace cs::cal
