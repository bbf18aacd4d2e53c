#!/usr/bin/env bash
# Measures DDP steps and the host on every GPU count of this node, one process per GPU, and packs
# the raw files into $OUT/<machine>-ddp.tar.gz. Prints stage status only (not the figures), so that
# predictions made before reading them stay blind.
#
#   calibrate/ddp/run_ddp.sh MACHINE [SECONDS] [CONFIGS]
#
# SECONDS (default 540): wall-clock budget; a stage never starts past it. CONFIGS: the models
# (calibrate/models/builders.py names, `model:batch` for another batch), comma-separated.
set -u
machine=${1:?usage: run_ddp.sh MACHINE [SECONDS] [CONFIGS]}
budget=${2:-540}
configs=${3:-gpt2,resnet50,bert-large,gpt2-medium,llama-1b,gpt2-xl,gpt2:2,resnet50:32}
out=${OUT:-/tmp/ddp-out}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
began=$(date +%s)
dir=/tmp/ddp/$machine-ddp
rm -rf "$dir" && mkdir -p "$dir" "$out"
here=$(cd "$(dirname "$0")" && pwd)

stage() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - 15 - ($(date +%s) - began)))
  if ((left < 10)); then echo "$name: skipped (budget spent)" | tee -a "$dir/stages.txt"; return; fi
  ((limit > left)) && limit=$left
  local t0
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >>"$dir/$name.log" 2>&1
  echo "$name: rc $?, $(($(date +%s) - t0)) s (limit $limit)" | tee -a "$dir/stages.txt"
}

{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  python3 -c 'import torch, transformers, torchvision; print(torch.__version__, transformers.__version__, torchvision.__version__, torch.cuda.nccl.version())'
  nproc; grep MemTotal /proc/meminfo; lscpu | grep -E 'Model name|Socket|NUMA node\(s\)'
} >"$dir/host.txt" 2>&1
nvidia-smi topo -m >"$dir/topo-m.txt" 2>&1
gpus=$(nvidia-smi -L | grep -c '^GPU')
cat "$dir/host.txt"

stage host-probe-n1 60 python3 "$here/../host/host_probe.py" --procs 1 --out "$dir/host_probe-n1.json"
stage host-probe-n$gpus 90 python3 "$here/../host/host_probe.py" --procs "$gpus" \
  --out "$dir/host_probe-n$gpus.json"
# The largest count first, with each bucket's NCCL kernels profiled; then the smaller counts.
counts="$gpus"
for n in 2 1; do ((n < gpus)) && counts="$counts $n"; done
for n in $counts; do
  extra=()
  ((n == gpus && n > 1)) && extra=(--profile)
  stage ddp-n$n 400 env NCCL_TOPO_DUMP_FILE="$dir/nccl-topo-n$n.xml" \
    torchrun --standalone --nproc-per-node="$n" "$here/ddp_steps.py" --out "$dir" \
    --configs "$configs" "${extra[@]}"
done
stage host-probe-n$gpus-after 90 python3 "$here/../host/host_probe.py" --procs "$gpus" \
  --out "$dir/host_probe-n$gpus-after.json"
tar -C /tmp/ddp -czf "$out/$machine-ddp.tar.gz" "$machine-ddp"
echo "=== $machine: $(($(date +%s) - began)) s"
cat "$dir/stages.txt"
grep -h -iE 'error|Traceback' "$dir"/*.log | sort | uniq -c | head -20
ls "$dir"
