// Formats and throws the DeviceError that the CUDA_CHECK / NCCL_CHECK / CUBLAS_CHECK macros raise.
#include "check.hpp"

namespace cs_cal {

void throw_device_error(const char* call, const std::string& what, const char* file, int line) {
  throw DeviceError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                    " failed: " + what);
}

}  // namespace cs_cal
