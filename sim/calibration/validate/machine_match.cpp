// The GPU model is compared by the topology file's model name, which discover_models.cpp maps
// from nvidia-smi's product name; a name it does not know cannot be compared and passes.
#include "calibration/validate/machine_match.hpp"

#include "calibration/discover/discover_models.hpp"
#include "calibration/fit/fit.hpp"
#include "core/error.hpp"

namespace cs::cal {
namespace {

const topo::GpuModel& model_of_rank(const topo::Cluster& cluster, int rank) {
  const topo::Node& gpu = cluster.nodes[static_cast<std::size_t>(cluster.ranks[rank])];
  return cluster.gpu_models[static_cast<std::size_t>(gpu.gpu_model)];
}

// The topology's model name for an nvidia-smi name; empty when discovery does not know it.
std::string known_model(const std::string& smi_name) {
  const KnownGpu* known = find_gpu_by_name(smi_name);
  return known != nullptr ? known->model : "";
}

}  // namespace

void check_measurements_match(const Measurements& data, const topo::Cluster& cluster) {
  const int gpus = static_cast<int>(cluster.ranks.size());
  const std::string topology = base_name(cluster.source_file);
  const std::string has = topology + " has " + std::to_string(gpus) + " GPU(s)";
  for (const NcclPoint& p : data.nccl) {
    if (p.n_ranks > gpus) {
      throw InputError(p.loc, "nranks",
                       std::to_string(p.n_ranks) + " ranks measured, but " + has +
                           "; give the measured machine's topology");
    }
  }
  for (const CopyPoint& c : data.copies) {
    for (const auto& [key, gpu] : {std::pair<const char*, int>{"src", c.src}, {"dst", c.dst}}) {
      if (gpu >= gpus) {
        throw InputError(c.loc, key,
                         "GPU " + std::to_string(gpu) + " measured, but " + has +
                             "; give the measured machine's topology");
      }
    }
  }
  const std::string model = known_model(data.node.gpu_name);
  if (model.empty() || gpus == 0 || model_of_rank(cluster, 0).name == model) return;
  throw InputError(data.node.loc, "node.gpus[0].name",
                   "measured on " + data.node.gpu_name + " (" + model + "), but " + topology +
                       " has " + model_of_rank(cluster, 0).name +
                       " GPUs; give the measured machine's topology");
}

void check_calibration_match(const Calibration& calibration, const topo::Cluster& cluster,
                             const std::vector<int>& ranks) {
  const std::string model = known_model(calibration.gpu_name);
  if (model.empty()) return;
  for (const int r : ranks) {
    const topo::GpuModel& gpu = model_of_rank(cluster, r);
    if (gpu.name == model) continue;
    throw InputError(calibration.gpu_name_loc, "machine.gpu_name",
                     "fitted on " + calibration.gpu_name + " (" + model + "), but rank " +
                         std::to_string(r) + " of " + base_name(cluster.source_file) + " is " +
                         gpu.name + "; fit a calibration on that GPU");
  }
}

}  // namespace cs::cal
