// Error checks for CUDA, NCCL and cuBLAS calls: a failure throws DeviceError naming the call, the
// library's error string and file:line, so main() can print one line and exit non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace cs_cal {

// A device or library failure (not a bug in this program): caught in main, printed, exit code 1.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds "file:line: call failed: what" and throws it as DeviceError.
[[noreturn]] void throw_device_error(const char* call, const std::string& what, const char* file,
                                     int line);

}  // namespace cs_cal

#define CUDA_CHECK(call)                                                                    \
  do {                                                                                      \
    cudaError_t cs_err_ = (call);                                                           \
    if (cs_err_ != cudaSuccess)                                                             \
      ::cs_cal::throw_device_error(#call, cudaGetErrorString(cs_err_), __FILE__, __LINE__); \
  } while (0)

#define NCCL_CHECK(call)                                                                    \
  do {                                                                                      \
    ncclResult_t cs_res_ = (call);                                                          \
    if (cs_res_ != ncclSuccess)                                                             \
      ::cs_cal::throw_device_error(#call, ncclGetErrorString(cs_res_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                    \
  do {                                                                                        \
    cublasStatus_t cs_st_ = (call);                                                           \
    if (cs_st_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::cs_cal::throw_device_error(#call, cublasGetStatusString(cs_st_), __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad launch configuration is reported at once, not at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
