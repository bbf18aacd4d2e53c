// Compute and memory ceilings of one GPU: cuBLAS GEMM throughput (bf16, fp16, tf32) over the shapes
// transformer training runs, and device-memory bandwidth of a large copy kernel (read + write
// bytes).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
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
using cs_cal::Point;
using cs_cal::Record;

constexpr size_t kMiB = 1024 * 1024;

struct Shape {
  std::string label;  // where training meets this product
  int m, n, k;
};

// Square sizes plus the linear layers of a transformer block with hidden h over T tokens
// (column-major C[m x n] = A[m x k] B[k x n]): QKV, attention output, MLP up and down projections,
// and the MLP weight gradient (contracts over tokens).
std::vector<Shape> training_shapes() {
  std::vector<Shape> shapes;
  for (const int s : {1024, 2048, 4096, 8192}) shapes.push_back({"square", s, s, s});
  for (const int h : {4096, 8192}) {
    for (const int t : {2048, 4096, 8192, 16384}) {
      const std::string tag = " h=" + std::to_string(h) + " T=" + std::to_string(t);
      shapes.push_back({"qkv" + tag, t, 3 * h, h});
      shapes.push_back({"attn_out" + tag, t, h, h});
      shapes.push_back({"mlp_up" + tag, t, 4 * h, h});
      shapes.push_back({"mlp_down" + tag, t, h, 4 * h});
      shapes.push_back({"mlp_up_wgrad" + tag, h, 4 * h, t});
    }
  }
  return shapes;
}

struct Dtype {
  const char* name;
  cudaDataType_t data;  // A, B and C
  cublasComputeType_t compute;
  size_t element_bytes;
};

constexpr Dtype kDtypes[] = {
    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2},
    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
    {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4},
};

struct Gpu {
  Gpu(size_t max_elements)
      : a(0, max_elements * 4), b(0, max_elements * 4), c(0, max_elements * 4), events(0) {
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetStream(handle, stream));
  }
  ~Gpu() { cublasDestroy(handle); }
  DeviceBuffer a, b, c;  // sized for the largest operand in fp32
  cs_cal::EventPair events;
  cudaStream_t stream{};
  cublasHandle_t handle{};
};

// Random (never zero) operands of the given type in the first `count` elements of each buffer.
void fill_operands(Gpu& gpu, const Dtype& dtype, size_t count, std::uint32_t seed) {
  for (DeviceBuffer* buffer : {&gpu.a, &gpu.b, &gpu.c}) {
    if (dtype.data == CUDA_R_16BF)
      cs_cal::fill_random(buffer->as<__nv_bfloat16>(), count, seed++, gpu.stream);
    else if (dtype.data == CUDA_R_16F)
      cs_cal::fill_random(buffer->as<__half>(), count, seed++, gpu.stream);
    else
      cs_cal::fill_random(buffer->as<float>(), count, seed++, gpu.stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
}

void gemm(Gpu& gpu, const Dtype& dtype, const Shape& s) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(gpu.handle, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &alpha,
                            gpu.a.as<void>(), dtype.data, s.m, gpu.b.as<void>(), dtype.data, s.k,
                            &beta, gpu.c.as<void>(), dtype.data, s.m, dtype.compute,
                            CUBLAS_GEMM_DEFAULT));
}

void add_gemms(cs_cal::Harness& harness, const std::shared_ptr<Gpu>& gpu,
               const std::vector<Shape>& shapes) {
  for (const Dtype& dtype : kDtypes) {
    for (const Shape& shape : shapes) {
      const double flops = 2.0 * shape.m * shape.n * shape.k;
      const int products = flops > 1e12 ? 3 : flops > 1e11 ? 10 : 30;
      const size_t largest = std::max(
          {size_t(shape.m) * shape.k, size_t(shape.k) * shape.n, size_t(shape.m) * shape.n});
      Point p;
      // The label is part of the name: a square 4096^3 and attn_out h=4096 T=4096 are the same
      // product, and Google Benchmark names must be unique for their medians to stay apart.
      std::string label = shape.label;
      std::replace(label.begin(), label.end(), ' ', '_');
      p.name = std::string("gemm/") + dtype.name + "/" + std::to_string(shape.m) + "x" +
               std::to_string(shape.n) + "x" + std::to_string(shape.k) + "/" + label;
      p.record.set("kind", "gemm").set("dtype", dtype.name).set("shape", shape.label);
      p.record.set("m", shape.m).set("n", shape.n).set("k", shape.k).set("iterations", products);
      p.repetitions = 5;
      const Dtype* d = &dtype;
      p.warmup = [gpu, d, shape, largest] {
        fill_operands(*gpu, *d, largest, 7);
        gemm(*gpu, *d, shape);
        CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
      };
      p.measure = [gpu, d, shape, products] {
        CUDA_CHECK(cudaEventRecord(gpu->events.start(), gpu->stream));
        for (int i = 0; i < products; ++i) gemm(*gpu, *d, shape);
        CUDA_CHECK(cudaEventRecord(gpu->events.stop(), gpu->stream));
        return gpu->events.seconds() / products;
      };
      p.finish = [flops](Record& r, double seconds) {
        r.set("flops", flops);
        r.set("tflops", flops / seconds / 1e12);
      };
      harness.add(std::move(p));
    }
  }
}

// Grid-stride copy with 16-byte loads and stores: each byte is read once and written once.
__global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    dst[i] = src[i];
}

void add_membw(cs_cal::Harness& harness, const std::shared_ptr<Gpu>& gpu, size_t max_bytes) {
  int sm_count = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  for (size_t bytes = 64 * kMiB; bytes <= max_bytes; bytes *= 4) {
    const int copies = 5;
    Point p;
    p.name = "membw/copy_kernel/" + std::to_string(bytes);
    p.record.set("kind", "membw").set("method", "copy_kernel").set("device", 0);
    p.record.set("bytes", static_cast<std::int64_t>(bytes)).set("iterations", copies);
    p.repetitions = 7;
    p.bytes_per_op = 2.0 * bytes;
    auto run = [gpu, bytes, sm_count] {
      // 4 blocks of 512 threads per SM fill the 2048 resident threads an SM holds on Hopper.
      copy_kernel<<<sm_count * 4, 512, 0, gpu->stream>>>(gpu->a.as<int4>(), gpu->b.as<int4>(),
                                                         bytes / sizeof(int4));
      CUDA_CHECK_LAUNCH();
    };
    p.warmup = [gpu, bytes, run] {
      cs_cal::fill_random(gpu->a.as<float>(), bytes / 4, 11, gpu->stream);
      run();
      CUDA_CHECK(cudaStreamSynchronize(gpu->stream));
    };
    p.measure = [gpu, run, copies] {
      CUDA_CHECK(cudaEventRecord(gpu->events.start(), gpu->stream));
      for (int i = 0; i < copies; ++i) run();
      CUDA_CHECK(cudaEventRecord(gpu->events.stop(), gpu->stream));
      return gpu->events.seconds() / copies;
    };
    p.finish = [bytes](Record& r, double seconds) {
      r.set("bytes_moved", static_cast<std::int64_t>(2 * bytes));
      r.set("GBps", 2.0 * bytes / seconds / 1e9);
    };
    harness.add(std::move(p));
  }
}

void setup(const cs_cal::Options& options, cs_cal::Harness& harness) {
  cs_cal::require_gpus(1);
  const auto shapes = training_shapes();
  size_t max_elements = 0;
  for (const Shape& s : shapes) {
    max_elements =
        std::max({max_elements, size_t(s.m) * s.k, size_t(s.k) * s.n, size_t(s.m) * s.n});
  }
  const auto membw_max = options.count("membw-max-bytes");
  max_elements = std::max(max_elements, membw_max / 4);
  auto gpu = std::make_shared<Gpu>(max_elements);
  add_gemms(harness, gpu, shapes);
  add_membw(harness, gpu, membw_max);
}

}  // namespace

int main(int argc, char** argv) {
  return cs_cal::calibration_main(argc, argv, "cs_cal_gemm",
                                  {{"membw-max-bytes", std::to_string(4096 * kMiB)}}, setup);
}
