// CUDA event pairs for timing a region on one device's stream timeline (METHOD.md: time device work
// with events, not host clocks).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "check.hpp"

namespace cs_cal {

// A start/stop pair created on `device`; both must be recorded on streams of that device.
class EventPair {
 public:
  explicit EventPair(int device) : device_(device) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaSetDevice(device_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;

  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }
  // Waits for stop and returns the elapsed time start -> stop in seconds.
  double seconds() const {
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  int device_;
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

// Size sweep lo, lo*factor, ... up to and including hi (when hi is reached exactly).
inline std::vector<size_t> geometric_sizes(size_t lo, size_t hi, size_t factor) {
  std::vector<size_t> sizes;
  for (size_t s = lo; s <= hi; s *= factor) sizes.push_back(s);
  return sizes;
}

}  // namespace cs_cal
