// Launch costs of one GPU: back-to-back empty-kernel launches (device-side spacing), the host cost
// of one launch call, launch-to-completion latency, and event record + synchronize latency.
#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/check.hpp"
#include "common/events.hpp"
#include "common/harness.hpp"
#include "common/node_info.hpp"

namespace {

using cs_cal::Point;
using cs_cal::Record;
using Clock = std::chrono::steady_clock;

__global__ void empty_kernel() {}

struct Gpu {
  explicit Gpu(int device) : events(device) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&marker, cudaEventDisableTiming));
  }
  cs_cal::EventPair events;
  cudaStream_t stream{};
  cudaEvent_t marker{};
};

double host_seconds(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

void launch(const Gpu& gpu) {
  empty_kernel<<<1, 1, 0, gpu.stream>>>();
  CUDA_CHECK_LAUNCH();
}

Point launch_point(const std::string& what, int per_region, std::function<double()> measure,
                   std::shared_ptr<Gpu> gpu) {
  Point p;
  p.name = "launch/" + what;
  p.record.set("kind", "launch").set("what", what).set("device", 0).set("iterations", per_region);
  p.repetitions = 15;
  p.warmup = [gpu] {
    for (int i = 0; i < 100; ++i) launch(*gpu);
    CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
  };
  p.measure = std::move(measure);
  return p;
}

void setup(const cs_cal::Options& options, cs_cal::Harness& harness) {
  cs_cal::require_gpus(1);
  const int n = static_cast<int>(options.integer("launches"));
  auto gpu = std::make_shared<Gpu>(0);

  // Device timeline: n launches queued back to back; the spacing between kernels is the launch
  // overhead a stream of small kernels pays.
  harness.add(launch_point(
      "kernel_launch", n,
      [gpu, n] {
        CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
        CUDA_CHECK(cudaEventRecord(gpu->events.start(), gpu->stream));
        for (int i = 0; i < n; ++i) launch(*gpu);
        CUDA_CHECK(cudaEventRecord(gpu->events.stop(), gpu->stream));
        return gpu->events.seconds() / n;
      },
      gpu));

  // Host side: the CPU time of the launch call itself (the queue is drained first).
  harness.add(launch_point(
      "launch_call", n,
      [gpu, n] {
        CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) launch(*gpu);
        const double seconds = host_seconds(t0) / n;
        CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
        return seconds;
      },
      gpu));

  // One empty kernel from the launch call until the host sees it complete.
  const int single = 200;
  harness.add(launch_point(
      "launch_latency", single,
      [gpu, single] {
        double total = 0;
        for (int i = 0; i < single; ++i) {
          const auto t0 = Clock::now();
          launch(*gpu);
          CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
          total += host_seconds(t0);
        }
        return total / single;
      },
      gpu));

  // Recording an event on an idle stream and waiting for it on the host.
  harness.add(launch_point(
      "event_sync", single,
      [gpu, single] {
        double total = 0;
        for (int i = 0; i < single; ++i) {
          const auto t0 = Clock::now();
          CUDA_CHECK(cudaEventRecord(gpu->marker, gpu->stream));
          CUDA_CHECK(cudaEventSynchronize(gpu->marker));
          total += host_seconds(t0);
        }
        return total / single;
      },
      gpu));
}

}  // namespace

int main(int argc, char** argv) {
  return cs_cal::calibration_main(argc, argv, "cs_cal_launch", {{"launches", "1000"}}, setup);
}
