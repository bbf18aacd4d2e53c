// Copies as flows: pinned vs pageable host <-> device, peer copies, device-local copies.
#include <doctest/doctest.h>

#include <map>

#include "cluster_builder.hpp"
#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "network/copies.hpp"
#include "network/flow_network.hpp"

namespace cs::net {
namespace {

using test::ClusterBuilder;
using topo::LinkKind;
using topo::NodeKind;

constexpr double kGBps = 1e9;

// One server: two sockets joined by a 60 GB/s socket link (2 us); each socket has a PCIe switch
// on a 50 GB/s link (1 us); gpu0 and gpu1 sit under switch 0, gpu2 under switch 1, each on a
// 50 GB/s link (1 us). Socket 0 stages pageable copies at 20 GB/s. GPUs have 3 TB/s of memory.
struct TwoSocketServer {
  ClusterBuilder b;
  int cpu0, cpu1, sw0, sw1, gpu0, gpu1, gpu2;
  TwoSocketServer() {
    topo::GpuModel model;
    model.name = "test-gpu";
    model.memory_bandwidth_Bps = 3e12;
    b.cluster.gpu_models.push_back(model);
    cpu0 = b.node("cpu0", NodeKind::cpu);
    cpu1 = b.node("cpu1", NodeKind::cpu);
    b.cluster.nodes[static_cast<std::size_t>(cpu0)].pageable_copy_Bps = 20 * kGBps;
    sw0 = b.node("sw0", NodeKind::pcie_switch);
    sw1 = b.node("sw1", NodeKind::pcie_switch);
    gpu0 = b.gpu("gpu0");
    gpu1 = b.gpu("gpu1");
    gpu2 = b.gpu("gpu2");
    for (int g : {gpu0, gpu1, gpu2}) b.cluster.nodes[static_cast<std::size_t>(g)].gpu_model = 0;
    b.link(cpu0, cpu1, 60 * kGBps, 2 * kPsPerUs, LinkKind::socket);
    b.link(cpu0, sw0, 50 * kGBps, kPsPerUs);
    b.link(cpu1, sw1, 50 * kGBps, kPsPerUs);
    b.link(sw0, gpu0, 50 * kGBps, kPsPerUs);
    b.link(sw0, gpu1, 50 * kGBps, kPsPerUs);
    b.link(sw1, gpu2, 50 * kGBps, kPsPerUs);
  }
};

// Runs the specs from time 0 on a fresh FlowNetwork and returns their completion times.
std::map<int, TimePs> run_all(const topo::ClusterGraph& graph, const std::vector<FlowSpec>& specs) {
  EventQueue queue;
  FlowNetwork network(queue, graph);
  std::map<int, TimePs> done;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    network.start(specs[i], [&done, i](TimePs at) { done[static_cast<int>(i)] = at; });
  }
  queue.run();
  return done;
}

TEST_CASE("a GPU's host is the socket on its PCIe path") {
  TwoSocketServer s;
  const topo::ClusterGraph graph(s.b.cluster);
  CHECK(host_cpu_of(graph, s.gpu0) == s.cpu0);
  CHECK(host_cpu_of(graph, s.gpu1) == s.cpu0);
  CHECK(host_cpu_of(graph, s.gpu2) == s.cpu1);  // 2 us via cpu1, 5 us via cpu0
  CHECK_THROWS_AS(host_cpu_of(graph, s.sw0), InputError);
}

TEST_CASE("pinned vs pageable host-to-device copies") {
  TwoSocketServer s;
  const topo::ClusterGraph graph(s.b.cluster);
  // Pinned: DMA over cpu0 -> sw0 -> gpu0 at 50 GB/s: 1 GB in 20 ms, plus 2 hops x 1 us.
  // Pageable: the staging memcpy (20 GB/s) pipelines with the DMA, so min(50, 20) = 20 GB/s:
  // 1 GB in 50 ms, plus 2 us.
  const auto alone = run_all(graph, {host_to_device(graph, s.gpu0, 1e9, HostMemory::pinned),
                                     host_to_device(graph, s.gpu2, 1e9, HostMemory::pinned)});
  CHECK(alone.at(0) == 20 * kPsPerMs + 2 * kPsPerUs);
  CHECK(alone.at(1) == 20 * kPsPerMs + 2 * kPsPerUs);  // gpu2 from cpu1: another path, no sharing
  const auto pageable = run_all(graph, {host_to_device(graph, s.gpu0, 1e9, HostMemory::pageable)});
  CHECK(pageable.at(0) == 50 * kPsPerMs + 2 * kPsPerUs);

  // gpu0 and gpu1 at once share cpu0 -> sw0 (50 GB/s).
  // Pinned: 25 GB/s each, 1 GB in 40 ms. Pageable: capped at 20 each, 40 <= 50 GB/s, so the PCIe
  // link is not the limit and each still takes 50 ms.
  const auto pinned_pair = run_all(graph, {host_to_device(graph, s.gpu0, 1e9, HostMemory::pinned),
                                           host_to_device(graph, s.gpu1, 1e9, HostMemory::pinned)});
  CHECK(pinned_pair.at(0) == 40 * kPsPerMs + 2 * kPsPerUs);
  CHECK(pinned_pair.at(1) == 40 * kPsPerMs + 2 * kPsPerUs);
  const auto pageable_pair =
      run_all(graph, {host_to_device(graph, s.gpu0, 1e9, HostMemory::pageable),
                      host_to_device(graph, s.gpu1, 1e9, HostMemory::pageable)});
  CHECK(pageable_pair.at(0) == 50 * kPsPerMs + 2 * kPsPerUs);
  CHECK(pageable_pair.at(1) == 50 * kPsPerMs + 2 * kPsPerUs);
}

TEST_CASE("device-to-host goes the other way on the same path") {
  TwoSocketServer s;
  const topo::ClusterGraph graph(s.b.cluster);
  const FlowSpec up = host_to_device(graph, s.gpu0, 1e9, HostMemory::pinned);
  const FlowSpec down = device_to_host(graph, s.gpu0, 1e9, HostMemory::pinned);
  // Opposite directions of the same links: no channel in common, both at 50 GB/s at once.
  CHECK(up.channels == std::vector<topo::ChannelId>{test::forward(1), test::forward(3)});
  CHECK(down.channels == std::vector<topo::ChannelId>{test::backward(3), test::backward(1)});
  const auto done = run_all(graph, {up, down});
  CHECK(done.at(0) == 20 * kPsPerMs + 2 * kPsPerUs);
  CHECK(done.at(1) == 20 * kPsPerMs + 2 * kPsPerUs);
}

// A calibration gives device-to-host pageable copies their own staging rate, and each direction
// a staging cost before the data moves (calibration_file_apply.cpp).
TEST_CASE("calibrated pageable staging: a rate per direction and a fixed cost") {
  TwoSocketServer s;
  topo::Node& cpu0 = s.b.cluster.nodes[static_cast<std::size_t>(s.cpu0)];
  cpu0.pageable_d2h_copy_Bps = 40 * kGBps;
  cpu0.pageable_h2d_latency = 3 * kPsPerUs;
  cpu0.pageable_d2h_latency = 7 * kPsPerUs;
  const topo::ClusterGraph graph(s.b.cluster);
  // H2D: 20 GB/s as before, 50 ms, plus 2 us of path and 3 us of staging.
  // D2H: 40 GB/s (under the 50 GB/s path), 1 GB in 25 ms, plus 2 us of path and 7 us of staging.
  const auto done = run_all(graph, {host_to_device(graph, s.gpu0, 1e9, HostMemory::pageable),
                                    device_to_host(graph, s.gpu0, 1e9, HostMemory::pageable)});
  CHECK(done.at(0) == 50 * kPsPerMs + 5 * kPsPerUs);
  CHECK(done.at(1) == 25 * kPsPerMs + 9 * kPsPerUs);
  // Pinned copies are untouched by either.
  CHECK(device_to_host(graph, s.gpu0, 1e9, HostMemory::pinned).latency == 2 * kPsPerUs);
}

TEST_CASE("pageable copies need the socket's staging rate") {
  TwoSocketServer s;
  const topo::ClusterGraph graph(s.b.cluster);
  // cpu1 has no pageable_copy figure.
  CHECK_THROWS_AS(device_to_host(graph, s.gpu2, 1e9, HostMemory::pageable), InputError);
  CHECK_NOTHROW(device_to_host(graph, s.gpu2, 1e9, HostMemory::pinned));
}

TEST_CASE(
    "peer copies follow the route, device-local copies run at 0.9 x half the memory bandwidth") {
  TwoSocketServer s;
  const topo::ClusterGraph graph(s.b.cluster);
  // Alone: gpu0 -> gpu1 under one switch, 2 hops of 50 GB/s: 20 ms + 2 us.
  // gpu0 -> gpu2 across sockets: gpu0-sw0-cpu0-cpu1-sw1-gpu2, bottleneck 50 GB/s, latency
  // 1 + 1 + 2 + 1 + 1 = 6 us: 20 ms + 6 us.
  // Device-local, priors (copies.cpp): 3 TB/s / 2 x 0.9 = 1.35 TB/s: 1 GB in 740.7407... us,
  // rounded to 740,740,741 ps, after the fixed 1.85 us.
  const auto alone = run_all(graph, {peer_copy(graph, s.gpu0, s.gpu1, 1e9)});
  CHECK(alone.at(0) == 20 * kPsPerMs + 2 * kPsPerUs);
  const auto across = run_all(graph, {peer_copy(graph, s.gpu0, s.gpu2, 1e9)});
  CHECK(across.at(0) == 20 * kPsPerMs + 6 * kPsPerUs);
  const auto local = run_all(graph, {device_copy(graph, s.gpu1, 1e9)});
  CHECK(local.at(0) == 1'850'000 + 740'740'741);
  // A calibration's d2d fit replaces the rate: the fixed 1.85 us, then 1 GB at 1.6 TB/s = 625 us.
  topo::Cluster calibrated = s.b.cluster;
  for (topo::GpuModel& m : calibrated.gpu_models) m.copy_Bps = 1.6e12;
  const topo::ClusterGraph calibrated_graph(calibrated);
  CHECK(run_all(calibrated_graph, {device_copy(calibrated_graph, s.gpu1, 1e9)}).at(0) ==
        1'850'000 + 625 * kPsPerUs);
  CHECK(peer_copy(graph, s.gpu1, s.gpu1, 1e9).max_rate_Bps == 1.35e12);  // to itself: local
  // Both peer copies at once share gpu0 -> sw0: 25 GB/s each, both drain 1 GB at 40 ms.
  const auto both = run_all(
      graph, {peer_copy(graph, s.gpu0, s.gpu1, 1e9), peer_copy(graph, s.gpu0, s.gpu2, 1e9)});
  CHECK(both.at(0) == 40 * kPsPerMs + 2 * kPsPerUs);
  CHECK(both.at(1) == 40 * kPsPerMs + 6 * kPsPerUs);
  CHECK(peer_copy(graph, s.gpu0, s.gpu1, 1).channels.size() == 2);
}

}  // namespace
}  // namespace cs::net
