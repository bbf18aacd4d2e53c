// Copy bandwidth of a node: host<->device (pinned and pageable), device-local, and peer copies for
// every GPU pair, one way and both ways at once. One record per (direction, memory, GPUs, size).
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/events.hpp"
#include "common/fill.hpp"
#include "common/harness.hpp"
#include "common/node_info.hpp"

namespace {

using cs_cal::DeviceBuffer;
using cs_cal::EventPair;
using cs_cal::Point;
using cs_cal::Record;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

// Copies per timed region: many for small sizes (so the region is well past event resolution),
// few for large ones (so the sweep fits a short lease).
int copies_per_region(size_t bytes) {
  return bytes <= kMiB ? 50 : bytes <= 64 * kMiB ? 10 : 2;
}
int repetitions_for(size_t bytes) {
  return bytes <= 64 * kMiB ? 5 : 3;
}

// Host memory of either kind, freed with the matching call.
class HostBuffer {
 public:
  HostBuffer(size_t bytes, bool pinned) : pinned_(pinned) {
    if (pinned) {
      CUDA_CHECK(cudaMallocHost(&data_, bytes));
    } else {
      data_ = std::malloc(bytes);
      if (data_ == nullptr)
        throw cs_cal::DeviceError("malloc of " + std::to_string(bytes) + " bytes failed");
    }
    std::memset(data_, 0x5a, bytes);  // fault every page in before timing
  }
  ~HostBuffer() { pinned_ ? (void)cudaFreeHost(data_) : std::free(data_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* data() const { return data_; }

 private:
  bool pinned_;
  void* data_ = nullptr;
};

// Per GPU: a stream, two device buffers of the largest size, and an event pair.
struct GpuSide {
  GpuSide(int gpu, size_t max_bytes)
      : device(gpu), src(gpu, max_bytes), dst(gpu, max_bytes), events(gpu) {
    CUDA_CHECK(cudaSetDevice(gpu));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    cs_cal::fill_random(src.as<float>(), max_bytes / sizeof(float), 1u + gpu, stream);
    cs_cal::fill_random(dst.as<float>(), max_bytes / sizeof(float), 101u + gpu, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  int device;
  DeviceBuffer src;
  DeviceBuffer dst;
  EventPair events;
  cudaStream_t stream{};
  cudaEvent_t done{};
};

struct Node {
  std::vector<std::unique_ptr<GpuSide>> gpus;
  std::unique_ptr<HostBuffer> pinned;
  std::unique_ptr<HostBuffer> pageable;
  std::vector<std::vector<bool>> peer_ok;
};

Record copy_record(const char* direction, const char* memory, int src, int dst, bool both,
                   size_t bytes, int copies) {
  Record r;
  r.set("kind", "copy").set("direction", direction).set("memory", memory);
  r.set("src", src).set("dst", dst).set("bidirectional", both);
  r.set("bytes", static_cast<std::int64_t>(bytes)).set("iterations", copies);
  return r;
}

// GBps counts the bytes that crossed (both directions for a bidirectional copy).
std::function<void(Record&, double)> gbps(double bytes_moved) {
  return [bytes_moved](Record& r, double seconds) {
    r.set("bytes_moved", static_cast<std::int64_t>(bytes_moved));
    r.set("GBps", bytes_moved / seconds / 1e9);
  };
}

// Times `copies` calls of `copy` on one GPU's stream.
double time_on(GpuSide& g, int copies, const std::function<void()>& copy) {
  CUDA_CHECK(cudaSetDevice(g.device));
  CUDA_CHECK(cudaEventRecord(g.events.start(), g.stream));
  for (int i = 0; i < copies; ++i) copy();
  CUDA_CHECK(cudaSetDevice(g.device));
  CUDA_CHECK(cudaEventRecord(g.events.stop(), g.stream));
  return g.events.seconds() / copies;
}

void add_host_copies(cs_cal::Harness& harness, const std::shared_ptr<Node>& node,
                     const std::vector<size_t>& sizes) {
  for (const bool pinned : {true, false}) {
    for (const bool to_device : {true, false}) {
      for (size_t g = 0; g < node->gpus.size(); ++g) {
        for (const size_t bytes : sizes) {
          const char* memory = pinned ? "pinned" : "pageable";
          const char* direction = to_device ? "h2d" : "d2h";
          const int copies = copies_per_region(bytes);
          const int gpu = static_cast<int>(g);
          Point p;
          p.name = std::string("copy/") + direction + "/" + memory + "/gpu" + std::to_string(g) +
                   "/" + std::to_string(bytes);
          p.record = copy_record(direction, memory, to_device ? -1 : gpu, to_device ? gpu : -1,
                                 false, bytes, copies);
          p.repetitions = repetitions_for(bytes);
          p.bytes_per_op = static_cast<double>(bytes);
          auto copy = [node, gpu, pinned, to_device, bytes] {
            GpuSide& side = *node->gpus[gpu];
            void* host = (pinned ? node->pinned : node->pageable)->data();
            if (to_device) {
              CUDA_CHECK(cudaMemcpyAsync(side.dst.as<void>(), host, bytes, cudaMemcpyHostToDevice,
                                         side.stream));
            } else {
              CUDA_CHECK(cudaMemcpyAsync(host, side.src.as<void>(), bytes, cudaMemcpyDeviceToHost,
                                         side.stream));
            }
          };
          p.warmup = copy;
          p.measure = [node, gpu, copies, copy] { return time_on(*node->gpus[gpu], copies, copy); };
          p.finish = gbps(static_cast<double>(bytes));
          harness.add(std::move(p));
        }
      }
    }
  }
}

void add_device_copies(cs_cal::Harness& harness, const std::shared_ptr<Node>& node,
                       const std::vector<size_t>& sizes) {
  for (size_t g = 0; g < node->gpus.size(); ++g) {
    for (const size_t bytes : sizes) {
      const int gpu = static_cast<int>(g);
      const int copies = copies_per_region(bytes);
      Point p;
      p.name = "copy/d2d/gpu" + std::to_string(g) + "/" + std::to_string(bytes);
      p.record = copy_record("d2d", "device", gpu, gpu, false, bytes, copies);
      p.repetitions = repetitions_for(bytes);
      p.bytes_per_op = static_cast<double>(bytes);
      auto copy = [node, gpu, bytes] {
        GpuSide& side = *node->gpus[gpu];
        CUDA_CHECK(cudaMemcpyAsync(side.dst.as<void>(), side.src.as<void>(), bytes,
                                   cudaMemcpyDeviceToDevice, side.stream));
      };
      p.warmup = copy;
      p.measure = [node, gpu, copies, copy] { return time_on(*node->gpus[gpu], copies, copy); };
      p.finish = gbps(static_cast<double>(bytes));
      harness.add(std::move(p));
    }
  }
}

// Both directions at once: a on its stream, b on its stream, both gated by a's start event and
// joined before a's stop event.
double time_both_ways(Node& node, int a, int b, size_t bytes, int copies) {
  GpuSide& ga = *node.gpus[a];
  GpuSide& gb = *node.gpus[b];
  CUDA_CHECK(cudaSetDevice(a));
  CUDA_CHECK(cudaEventRecord(ga.events.start(), ga.stream));
  CUDA_CHECK(cudaSetDevice(b));
  CUDA_CHECK(cudaStreamWaitEvent(gb.stream, ga.events.start(), 0));
  for (int i = 0; i < copies; ++i) {
    CUDA_CHECK(cudaMemcpyPeerAsync(gb.dst.as<void>(), b, ga.src.as<void>(), a, bytes, ga.stream));
    CUDA_CHECK(cudaMemcpyPeerAsync(ga.dst.as<void>(), a, gb.src.as<void>(), b, bytes, gb.stream));
  }
  CUDA_CHECK(cudaSetDevice(b));
  CUDA_CHECK(cudaEventRecord(gb.done, gb.stream));
  CUDA_CHECK(cudaSetDevice(a));
  CUDA_CHECK(cudaStreamWaitEvent(ga.stream, gb.done, 0));
  CUDA_CHECK(cudaEventRecord(ga.events.stop(), ga.stream));
  return ga.events.seconds() / copies;
}

void add_peer_copies(cs_cal::Harness& harness, const std::shared_ptr<Node>& node,
                     const std::vector<size_t>& sizes) {
  const int n = static_cast<int>(node->gpus.size());
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      for (const bool both : {false, true}) {
        if (both && b < a) continue;  // each unordered pair once
        for (const size_t bytes : sizes) {
          const int copies = copies_per_region(bytes);
          Point p;
          p.name = std::string("copy/peer/") + (both ? "bidir/" : "oneway/") + std::to_string(a) +
                   "-" + std::to_string(b) + "/" + std::to_string(bytes);
          p.record = copy_record("peer", "device", a, b, both, bytes, copies);
          p.record.set("peer_access", static_cast<bool>(node->peer_ok[a][b]));
          p.repetitions = repetitions_for(bytes);
          const double moved = static_cast<double>(bytes) * (both ? 2 : 1);
          p.bytes_per_op = moved;
          if (both) {
            p.warmup = [node, a, b, bytes] { time_both_ways(*node, a, b, bytes, 1); };
            p.measure = [node, a, b, bytes, copies] {
              return time_both_ways(*node, a, b, bytes, copies);
            };
          } else {
            auto copy = [node, a, b, bytes] {
              CUDA_CHECK(cudaMemcpyPeerAsync(node->gpus[b]->dst.as<void>(), b,
                                             node->gpus[a]->src.as<void>(), a, bytes,
                                             node->gpus[a]->stream));
            };
            p.warmup = copy;
            p.measure = [node, a, copies, copy] { return time_on(*node->gpus[a], copies, copy); };
          }
          p.finish = gbps(moved);
          harness.add(std::move(p));
        }
      }
    }
  }
}

void setup(const cs_cal::Options& options, cs_cal::Harness& harness) {
  const int count = cs_cal::require_gpus(1);
  const auto max_bytes = options.count("max-bytes");
  const auto sizes = cs_cal::geometric_sizes(options.count("min-bytes"), max_bytes, 4);
  if (sizes.empty()) throw cs_cal::DeviceError("empty size sweep: --min-bytes exceeds --max-bytes");
  auto node = std::make_shared<Node>();
  for (int g = 0; g < count; ++g) node->gpus.push_back(std::make_unique<GpuSide>(g, sizes.back()));
  node->pinned = std::make_unique<HostBuffer>(sizes.back(), true);
  node->pageable = std::make_unique<HostBuffer>(sizes.back(), false);
  node->peer_ok.assign(count, std::vector<bool>(count, false));
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (can) {
        CUDA_CHECK(cudaSetDevice(a));
        CUDA_CHECK(cudaDeviceEnablePeerAccess(b, 0));
      }
      node->peer_ok[a][b] = can != 0;
    }
  }
  add_host_copies(harness, node, sizes);
  add_device_copies(harness, node, sizes);
  add_peer_copies(harness, node, sizes);
}

}  // namespace

int main(int argc, char** argv) {
  return cs_cal::calibration_main(
      argc, argv, "cs_cal_copy",
      {{"min-bytes", std::to_string(4 * kKiB)}, {"max-bytes", std::to_string(1024 * kMiB)}}, setup);
}
