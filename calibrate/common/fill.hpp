// Device buffers filled with pseudo-random values, so no measurement runs on zeros (which can be
// faster than real data, METHOD.md) and every element is written.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cs_cal {

// Values uniform in [-1, 1) from a hash of (index, seed); same seed, same values.
void fill_random(float* data, size_t count, std::uint32_t seed, cudaStream_t stream);
void fill_random(__half* data, size_t count, std::uint32_t seed, cudaStream_t stream);
void fill_random(__nv_bfloat16* data, size_t count, std::uint32_t seed, cudaStream_t stream);

// Every float set to `value` (for checking a reduction's result).
void fill_constant(float* data, size_t count, float value, cudaStream_t stream);

// A device buffer owned by the caller's scope; freed on the device it was allocated on.
class DeviceBuffer {
 public:
  DeviceBuffer(int device, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  int device_;
  size_t bytes_;
  void* data_ = nullptr;
};

}  // namespace cs_cal
