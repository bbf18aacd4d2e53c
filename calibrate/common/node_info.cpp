// node_json / env_json: what machine and settings a calibration file was measured on.
#include "node_info.hpp"

#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "check.hpp"
#include "record.hpp"

namespace cs_cal {

std::string capture_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    out.append(buffer.data(), got);
  pclose(pipe);
  return out;
}

int require_gpus(int wanted) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    throw DeviceError(std::string("no usable CUDA GPU: cudaGetDeviceCount failed: ") +
                      cudaGetErrorString(err));
  }
  if (count < wanted) {
    throw DeviceError("this benchmark needs " + std::to_string(wanted) + " GPU(s), found " +
                      std::to_string(count));
  }
  return count;
}

namespace {

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string uuid_text(const cudaUUID_t& uuid) {
  // Same layout as nvidia-smi: GPU-8-4-4-4-12 hex digits.
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += "-";
  }
  return out;
}

std::string gpu_json(int device) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
  char bus_id[64] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  Record gpu;
  gpu.set("index", device)
      .set("name", prop.name)
      .set("uuid", uuid_text(prop.uuid))
      .set("memory_bytes", static_cast<std::int64_t>(prop.totalGlobalMem))
      .set("sm_count", prop.multiProcessorCount)
      .set("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor))
      .set("max_sm_clock_khz", sm_clock_khz)
      .set("max_memory_clock_khz", mem_clock_khz)
      .set("memory_bus_width_bits", prop.memoryBusWidth)
      .set("l2_cache_bytes", prop.l2CacheSize)
      .set("pci_bus_id", std::string(bus_id));
  return to_json(gpu);
}

}  // namespace

std::string node_json() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  int runtime_version = 0;
  int driver_cuda_version = 0;
  int nccl_version = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));
  CUDA_CHECK(cudaDriverGetVersion(&driver_cuda_version));
  NCCL_CHECK(ncclGetVersion(&nccl_version));
  std::string gpus = "[";
  for (int d = 0; d < count; ++d) gpus += (d ? "," : "") + gpu_json(d);
  gpus += "]";
  const std::string driver =
      trim(capture_command("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0"));
  return std::string("{") + "\"hostname\":" + json_string(host) + ",\"gpus\":" + gpus +
         ",\"driver_version\":" + json_string(driver) +
         ",\"cuda_runtime_version\":" + std::to_string(runtime_version) +
         ",\"cuda_driver_version\":" + std::to_string(driver_cuda_version) +
         ",\"nccl_version\":" + std::to_string(nccl_version) +
         ",\"nvidia_smi_topo_m\":" + json_string(capture_command("nvidia-smi topo -m")) + "}";
}

std::string env_json() {
  static constexpr std::array<const char*, 12> kNames = {
      "NCCL_ALGO",         "NCCL_PROTO",       "NCCL_NVLS_ENABLE",     "NCCL_DEBUG",
      "NCCL_DEBUG_SUBSYS", "NCCL_NCHANNELS",   "NCCL_MIN_NCHANNELS",   "NCCL_MAX_NCHANNELS",
      "NCCL_P2P_DISABLE",  "NCCL_SHM_DISABLE", "CUDA_VISIBLE_DEVICES", "NCCL_BUFFSIZE"};
  std::string out = "{";
  for (size_t i = 0; i < kNames.size(); ++i) {
    const char* value = std::getenv(kNames[i]);
    out += (i ? "," : "") + json_string(kNames[i]) + ":" + (value ? json_string(value) : "null");
  }
  return out + "}";
}

}  // namespace cs_cal
