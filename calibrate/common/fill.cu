// Fill kernels (hash-based pseudo-random values) and the DeviceBuffer owner.
#include "check.hpp"
#include "fill.hpp"

namespace cs_cal {

namespace {

__device__ float hash_to_unit(size_t index, std::uint32_t seed) {
  // A 32-bit integer mix (lowbias32 by C. Wellons); quality is ample for benchmark data.
  std::uint32_t x = static_cast<std::uint32_t>(index) ^
                    (static_cast<std::uint32_t>(index >> 32) * 0x9e3779b9u) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f;
}

template <typename T>
__global__ void fill_kernel(T* data, size_t count, std::uint32_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    data[i] = static_cast<T>(hash_to_unit(i, seed));
  }
}

__global__ void constant_kernel(float* data, size_t count, float value) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    data[i] = value;
  }
}

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

int blocks_for(size_t count) {
  const size_t wanted = (count + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < kMaxBlocks ? (wanted == 0 ? 1 : wanted) : kMaxBlocks);
}

template <typename T>
void launch_fill(T* data, size_t count, std::uint32_t seed, cudaStream_t stream) {
  fill_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(data, count, seed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill_random(float* data, size_t count, std::uint32_t seed, cudaStream_t stream) {
  launch_fill(data, count, seed, stream);
}
void fill_random(__half* data, size_t count, std::uint32_t seed, cudaStream_t stream) {
  launch_fill(data, count, seed, stream);
}
void fill_random(__nv_bfloat16* data, size_t count, std::uint32_t seed, cudaStream_t stream) {
  launch_fill(data, count, seed, stream);
}

void fill_constant(float* data, size_t count, float value, cudaStream_t stream) {
  constant_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count, value);
  CUDA_CHECK_LAUNCH();
}

DeviceBuffer::DeviceBuffer(int device, size_t bytes) : device_(device), bytes_(bytes) {
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaMalloc(&data_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) {
    cudaSetDevice(device_);
    cudaFree(data_);
  }
}

}  // namespace cs_cal
