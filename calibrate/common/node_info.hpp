// The node description that heads every calibration file: GPUs, driver / CUDA / NCCL versions and
// `nvidia-smi topo -m`, plus the environment variables that steer NCCL.
#pragma once

#include <string>

namespace cs_cal {

// JSON object text for "node". Queries the CUDA runtime for every visible GPU and runs nvidia-smi
// (its text is empty where nvidia-smi is missing).
std::string node_json();

// JSON object text for "env": the NCCL / CUDA variables that change what is measured (null if
// unset).
std::string env_json();

// Output of a shell command ("" if it cannot run); used for nvidia-smi only.
std::string capture_command(const std::string& command);

// Number of visible GPUs; throws DeviceError with a one-line message if fewer than `wanted`.
int require_gpus(int wanted);

}  // namespace cs_cal
