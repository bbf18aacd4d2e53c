// Memory copies as flows: host <-> device over the GPU's PCIe path, GPU peer copies, and copies
// inside one GPU's memory. Each returns a FlowSpec for either network fidelity; the figures it
// uses (link bandwidth x efficiency, the host's pageable copy rate, the GPU's memory bandwidth)
// come from the topology, with measured priors where it has none, or from a calibration
// (calibration/calibration_file_apply.cpp).
#pragma once

#include "network/network_model.hpp"
#include "topology/graph.hpp"

namespace cs::net {

// Pinned (page-locked) host memory is read by the GPU's DMA engine directly. Pageable memory is
// first copied by the driver, on the host, into a pinned staging buffer (CUDA Driver API, "API
// synchronization behavior": "the pageable buffer has been copied to the staging memory for DMA
// transfer"). The driver does this in chunks, so the host memcpy of one chunk overlaps the DMA of
// the previous one: a pipeline whose throughput is the slower stage, min(PCIe share, staging rate),
// not the serialized harmonic 1 / (1/PCIe + 1/staging). The staging memcpy runs on the calling
// thread, so its rate is a private cap of each copy (FlowSpec::max_rate_Bps), not a shared channel.
// The fill of the pipeline (one chunk, sub-MiB on current drivers) is left out.
enum class HostMemory { pinned, pageable };

// The cpu node (socket) a GPU hangs off: of the cpu nodes in the GPU's server, the one with the
// lowest-latency route to it (fewest hops, then lowest index, on ties). InputError if none.
int host_cpu_of(const topo::ClusterGraph& graph, int gpu_node);

// Host memory of the GPU's own socket -> GPU, and back.
FlowSpec host_to_device(const topo::ClusterGraph& graph, int gpu_node, double bytes,
                        HostMemory memory);
FlowSpec device_to_host(const topo::ClusterGraph& graph, int gpu_node, double bytes,
                        HostMemory memory);

// GPU -> GPU over the route between them (NVLink, or PCIe through switches and sockets).
FlowSpec peer_copy(const topo::ClusterGraph& graph, int src_gpu, int dst_gpu, double bytes);

// A copy within one GPU's memory (cudaMemcpy device to device; NCCL's one-rank collectives): it
// crosses no channel. Every byte is read once and written once, so it runs at most at half the
// memory bandwidth; measured, a cudaMemcpy reaches 0.90 of that, after a fixed cost of about
// 1.85 us on the GPU (device_copy_Bps, device_copy_latency). A calibration replaces the rate
// (GpuModel::copy_Bps) and, where it timed one-rank NCCL calls gated, the cost (copy_latency).
FlowSpec device_copy(const topo::ClusterGraph& graph, int gpu_node, double bytes);
// The rate of a device-local copy on `model`: the calibrated one, else the prior.
double device_copy_Bps(const topo::GpuModel& model);
// The fixed cost of a device-local copy on the GPU: the calibrated one (from gated one-rank NCCL
// calls; copy.json times the host's issue interval instead), else the prior.
TimePs device_copy_latency(const topo::GpuModel& model);
// That prior, 1.85 us, the same for every model.
TimePs device_copy_prior_latency();

}  // namespace cs::net
