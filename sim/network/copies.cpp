// Builds the FlowSpecs of memory copies from routes and the topology's node figures.
#include "network/copies.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace cs::net {
namespace {

// Priors for a device-to-device copy, from our measurements (NVIDIA H100 80GB HBM3 and H200,
// driver 580.159.04; calibrate/data/h100x1-onerank, h200x1-onerank):
// - rate: from 256 MiB to 1 GiB the copy's marginal rate is 1.51 TB/s on the H100 (copy.json) and
//   2.14-2.16 TB/s on the H200 (NCCL one-rank calls, gated), 0.90 and 0.89-0.90 of half the
//   datasheet's 3.35 and 4.8 TB/s (bytes / time there: 1.48-1.50 and 2.11-2.14 TB/s);
// - fixed cost: a gated one-rank NCCL call (a cudaMemcpyAsync device to device, timed on the GPU
//   with the launches queued ahead) of 8 B - 4 KiB takes 2.01-2.12 us on the H100 and 1.65-1.68 us
//   on the H200; the prior is the middle, 1.85 us, within 12 % of either.
// Copies whose source and destination fit in the L2 cache together run faster when repeated on
// the same buffers, as benchmarks do (H200, 16 MiB: 6.7 us against 9.6 us here): not modelled.
constexpr double kDeviceCopyEfficiency = 0.90;
constexpr double kDeviceCopyLatencyUs = 1.85;

const topo::Node& gpu_at(const topo::ClusterGraph& graph, int gpu_node) {
  const auto& nodes = graph.cluster().nodes;
  CS_ASSERT(gpu_node >= 0 && static_cast<std::size_t>(gpu_node) < nodes.size(),
            "node index " + std::to_string(gpu_node) + " out of range");
  const topo::Node& node = nodes[static_cast<std::size_t>(gpu_node)];
  if (node.kind != topo::NodeKind::gpu) {
    throw InputError(node.loc, "",
                     "'" + node.name + "' is a " + topo::to_string(node.kind) +
                         ", not a gpu: copies start or end on a GPU");
  }
  return node;
}

FlowSpec along(const topo::Route& route, double bytes) {
  FlowSpec spec;
  spec.channels = route.channels;
  spec.latency = route.latency;
  spec.bytes = bytes;
  return spec;
}

// The staging memcpy caps a pageable copy (see HostMemory in copies.hpp), and a calibrated
// staging cost comes before it.
void apply_staging(FlowSpec& spec, const topo::Node& cpu, HostMemory memory, bool to_device) {
  if (memory == HostMemory::pinned) return;
  if (!(cpu.pageable_copy_Bps > 0)) {
    throw InputError(cpu.loc, "pageable_copy",
                     "cpu '" + cpu.name + "' has no pageable copy bandwidth for pageable copies");
  }
  const double staging_Bps = !to_device && cpu.pageable_d2h_copy_Bps > 0 ? cpu.pageable_d2h_copy_Bps
                                                                         : cpu.pageable_copy_Bps;
  spec.max_rate_Bps = std::min(spec.max_rate_Bps, staging_Bps);
  spec.latency += to_device ? cpu.pageable_h2d_latency : cpu.pageable_d2h_latency;
}

}  // namespace

int host_cpu_of(const topo::ClusterGraph& graph, int gpu_node) {
  const topo::Node& gpu = gpu_at(graph, gpu_node);
  const auto& nodes = graph.cluster().nodes;
  int best = -1;
  TimePs best_latency = std::numeric_limits<TimePs>::max();
  int best_hops = std::numeric_limits<int>::max();
  for (std::size_t v = 0; v < nodes.size(); ++v) {
    if (nodes[v].kind != topo::NodeKind::cpu || nodes[v].server != gpu.server) continue;
    const topo::Route route = graph.route(static_cast<int>(v), gpu_node);
    if (route.latency < best_latency ||
        (route.latency == best_latency && route.hops() < best_hops)) {
      best = static_cast<int>(v);
      best_latency = route.latency;
      best_hops = route.hops();
    }
  }
  if (best < 0) {
    throw InputError(gpu.loc, "",
                     "gpu '" + gpu.name + "' has no cpu node in its server to copy from");
  }
  return best;
}

namespace {

// A copy between a GPU and its host's memory, in either direction, over the PCIe path.
FlowSpec host_copy(const topo::ClusterGraph& graph, int gpu_node, double bytes, HostMemory memory,
                   bool to_device) {
  const int cpu = host_cpu_of(graph, gpu_node);
  FlowSpec spec = along(to_device ? graph.route(cpu, gpu_node) : graph.route(gpu_node, cpu), bytes);
  apply_staging(spec, graph.cluster().nodes[static_cast<std::size_t>(cpu)], memory, to_device);
  return spec;
}

}  // namespace

FlowSpec host_to_device(const topo::ClusterGraph& graph, int gpu_node, double bytes,
                        HostMemory memory) {
  return host_copy(graph, gpu_node, bytes, memory, true);
}

FlowSpec device_to_host(const topo::ClusterGraph& graph, int gpu_node, double bytes,
                        HostMemory memory) {
  return host_copy(graph, gpu_node, bytes, memory, false);
}

FlowSpec peer_copy(const topo::ClusterGraph& graph, int src_gpu, int dst_gpu, double bytes) {
  gpu_at(graph, src_gpu);
  gpu_at(graph, dst_gpu);
  if (src_gpu == dst_gpu) return device_copy(graph, src_gpu, bytes);
  return along(graph.route(src_gpu, dst_gpu), bytes);
}

FlowSpec device_copy(const topo::ClusterGraph& graph, int gpu_node, double bytes) {
  const topo::Node& gpu = gpu_at(graph, gpu_node);
  const auto& models = graph.cluster().gpu_models;
  if (gpu.gpu_model < 0 || static_cast<std::size_t>(gpu.gpu_model) >= models.size() ||
      !(models[static_cast<std::size_t>(gpu.gpu_model)].memory_bandwidth_Bps > 0)) {
    throw InputError(gpu.loc, "model",
                     "gpu '" + gpu.name + "' has no memory bandwidth for a device-local copy");
  }
  const topo::GpuModel& model = models[static_cast<std::size_t>(gpu.gpu_model)];
  FlowSpec spec;
  spec.bytes = bytes;
  spec.max_rate_Bps = device_copy_Bps(model);
  spec.latency = device_copy_latency(model);
  return spec;
}

double device_copy_Bps(const topo::GpuModel& model) {
  return model.copy_Bps.value_or(model.memory_bandwidth_Bps / 2 * kDeviceCopyEfficiency);
}

TimePs device_copy_latency(const topo::GpuModel& model) {
  return model.copy_latency.value_or(device_copy_prior_latency());
}

TimePs device_copy_prior_latency() {
  return ps_from_seconds(kDeviceCopyLatencyUs * 1e-6);
}

}  // namespace cs::net
