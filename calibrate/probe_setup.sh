# Sourced by the probe_*.sh scripts: the output folder ($OUT, else the probe's default, given as
# $1), NVLink multicast off, no forced algorithm or protocol, and cs_cal_nccl built in build-dev.
# Sets `out` and `bin`; exits if the build fails.
out=${OUT:-$1}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
unset NCCL_ALGO NCCL_PROTO
cmake -S . -B build-dev -G Ninja -DCLUSTERSIM_BUILD_SIM=OFF -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
  cmake --build build-dev -j16 --target cs_cal_nccl >/dev/null || exit 1
bin=build-dev/calibrate/cs_cal_nccl
