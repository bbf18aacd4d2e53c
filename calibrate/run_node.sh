#!/usr/bin/env bash
# Measures one GPU node end to end: builds calibrate/, records the node (nvidia-smi topo -m / -q,
# NCCL's topology XML), runs every calibration program with a time limit per stage, and packs all
# results into ONE tarball $OUT/<machine>.tar.gz. Prints a short summary last.
#
#   [GATED_MAX=BYTES] calibrate/run_node.sh MACHINE [probe|full] [SECONDS]
#
# MACHINE names the data folder (h200x4, h100x1, ...); probe runs tiny sweeps to check the tooling;
# SECONDS (default 540) is the wall-clock budget: a stage never starts past it, and each stage's
# limit is cut to what is left, 25 s being kept for packing.
set -u
machine=${1:?usage: run_node.sh MACHINE [probe|full] [SECONDS]}
mode=${2:-full}
budget=${3:-540}
out=${OUT:-/tmp/calibrate-out}
# NVLink multicast stays off: a program using it can take the host's shared GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
unset NCCL_ALGO NCCL_PROTO

began=$(date +%s)
work=/tmp/calibrate/$machine
rm -rf "$work" && mkdir -p "$work" "$out"
bin=build-dev/calibrate

left() { echo $((budget - 25 - ($(date +%s) - began))); }

# stage NAME LIMIT_S COMMAND...: runs with a timeout, logs stdout/stderr, notes rc and seconds.
stage() {
  local name=$1 limit=$2
  shift 2
  local remaining
  remaining=$(left)
  if ((remaining < 5)); then
    echo "$name skipped (budget spent)" | tee -a "$work/stages.txt"
    return 0
  fi
  ((limit > remaining)) && limit=$remaining
  local t0
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$work/$name.stdout" 2>"$work/$name.stderr"
  local rc=$?
  printf '%s rc=%d %dms (limit %ds)\n' "$name" "$rc" $((($(date +%s%N) - t0) / 1000000)) "$limit" |
    tee -a "$work/stages.txt"
  return 0
}

stage build 300 bash -c "cmake -S . -B build-dev -G Ninja -DCLUSTERSIM_BUILD_SIM=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-dev -j16"

nvidia-smi topo -m >"$work/topo-m.txt" 2>&1
nvidia-smi -q >"$work/nvidia-smi-q.txt" 2>&1
nvidia-smi >"$work/nvidia-smi.txt" 2>&1
{ uname -a; nproc; grep MemTotal /proc/meminfo; nvcc --version | tail -2; } >"$work/host.txt" 2>&1
gpus=$(nvidia-smi -L | grep -c '^GPU')

if [[ $mode == probe ]]; then
  copy_args=(--max-bytes=16777216)
  gemm_args=(--benchmark_filter='gemm/bf16/(1024|8192)x|membw' --membw-max-bytes=268435456)
  nccl_args=(--max-bytes=1048576)
  nccl_ranks="2 $gpus"
  configs="default Ring/LL"
else
  copy_args=()
  gemm_args=()
  nccl_args=()
  nccl_ranks=$(seq 2 "$gpus")
  configs="default Ring/LL Ring/LL128 Ring/Simple Tree/LL Tree/LL128 Tree/Simple"
fi
# GATED_MAX=BYTES: time NCCL calls up to that size gated as well (cs_cal_nccl --gated-max-bytes).
[[ -n ${GATED_MAX:-} ]] && nccl_args+=(--gated-max-bytes="$GATED_MAX")
# LAUNCH=procs: one process per GPU, as PyTorch and mpirun-launched nccl-tests run NCCL.
procs=0
[[ ${LAUNCH:-} == procs ]] && procs=1

stage launch 60 "$bin/cs_cal_launch" --out="$work/launch.json"

# NCCL first on multi-GPU nodes: it is what the validation is about. One process per
# (config, nranks) so that each NCCL debug log belongs to one communicator size.
if ((gpus >= 2)); then
  for config in $configs; do
    for n in $nccl_ranks; do
      tag=${config//\//-}-n$n
      tag=${tag,,}
      env_args=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$work/nccl-$tag.log")
      ops=allreduce,allgather,reducescatter,broadcast,alltoall,sendrecv
      if [[ $config != default ]]; then
        env_args+=(NCCL_ALGO="${config%/*}" NCCL_PROTO="${config#*/}")
        # NCCL_ALGO does not apply to send/recv; Tree exists for all-reduce only.
        ops=allreduce,allgather,reducescatter,broadcast
        [[ $config == Tree/* ]] && ops=allreduce
      elif ((n == gpus)); then
        env_args+=(NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING NCCL_TOPO_DUMP_FILE="$work/nccl-topo.xml"
          NCCL_GRAPH_DUMP_FILE="$work/nccl-graph.xml")
      fi
      launch_args=()
      ((procs)) && launch_args=(--procs="$n")
      stage "nccl-$tag" 90 env "${env_args[@]}" "$bin/cs_cal_nccl" --nranks="$n" --ops="$ops" \
        "${launch_args[@]}" "${nccl_args[@]}" --out="$work/nccl-$tag.json"
    done
  done
fi

# One GPU: NCCL's one-rank calls, a device-to-device copy of the buffer (data/h200x1-onerank),
# which `clustersim validate` predicts as `clustersim coll -n 1` does.
if ((gpus == 1)); then
  stage nccl-default-n1 90 env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING \
    NCCL_DEBUG_FILE="$work/nccl-default-n1.log" "$bin/cs_cal_nccl" --nranks=1 \
    --ops=allreduce,allgather,reducescatter,broadcast "${nccl_args[@]}" \
    --out="$work/nccl-default-n1.json"
fi

stage gemm 150 "$bin/cs_cal_gemm" "${gemm_args[@]}" --out="$work/gemm.json"
stage copy 150 "$bin/cs_cal_copy" "${copy_args[@]}" --out="$work/copy.json"

# Logs over 2 MB keep only NCCL's TUNING lines (the ones the JSON files were annotated from).
for log in "$work"/nccl-*.log; do
  [[ -f $log ]] || continue
  if (($(stat -c %s "$log") > 2000000)); then
    grep ' Bytes -> Algo ' "$log" >"$log.tuning" && mv "$log.tuning" "$log"
  fi
done
tar czf "$out/$machine.tar.gz" -C /tmp/calibrate "$machine"

echo "=== $machine ($mode): $(($(date +%s) - began)) s, $gpus GPU(s)"
cat "$work/stages.txt"
tail -n 3 "$work"/*.stderr | grep -v '^$' | tail -n 40
ls -la "$work" | awk '{print $5, $9}' | tail -n +2
if command -v python3 >/dev/null; then python3 calibrate/summarize.py "$work"; fi
