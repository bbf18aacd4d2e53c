# Sourced by the measurement drivers (calibrate/fsdp/run_fsdp.sh, calibrate/parallel/run_parallel.sh):
# NVLink multicast off, the run's folder and its stages.txt, and stage NAME LIMIT CMD..., which runs
# CMD into DIR/NAME.log under LIMIT seconds or what is left of the wall-clock budget, whichever is
# less, and records its exit code and time in stages.txt.
# Expects `dir` and `budget` (seconds); optional `stage_reserve` (seconds kept at the end, default
# 20), `stage_min` (the least left for a stage to start, default 10) and `stage_summary` (an
# extended regex of the log's lines to print after the stage; unset: none).

# NVLink multicast (NVLS) stays off: on shared hosts it can take the GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
began=$(date +%s)
mkdir -p "$dir"
: >"$dir/stages.txt"

stage() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - ${stage_reserve:-20} - ($(date +%s) - began)))
  if ((left < ${stage_min:-10})); then
    echo "$name: skipped (budget spent)" | tee -a "$dir/stages.txt"
    return
  fi
  ((limit > left)) && limit=$left
  local t0
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >>"$dir/$name.log" 2>&1
  echo "$name: rc $?, $(($(date +%s) - t0)) s (limit $limit)" | tee -a "$dir/stages.txt"
  if [ -n "${stage_summary:-}" ]; then
    grep -vE '^\s*$' "$dir/$name.log" | grep -E "$stage_summary" | tail -12
  fi
}
