#!/usr/bin/env bash
# Measures FSDP2 (fully_shard) training steps beside the plain and DDP steps on every GPU count of
# this node (all GPUs, 2, 1), one process per GPU, into DIR; prints each stage's status and, last,
# the table of medians and peaks (calibrate/fsdp/summarize_fsdp.py).
#
#   calibrate/fsdp/run_fsdp.sh DIR [SECONDS] [CONFIGS]
#
# SECONDS (default 540): wall-clock budget; a stage never starts past it, and each is cut at what
# is left. CONFIGS: the models (calibrate/models/builders.py names, `model:batch` for another
# batch), comma-separated. FSDP_STEPS / FSDP_WARMUP (default 20 / 5) set the timed and warm-up
# steps (a smoke run: FSDP_STEPS=2 FSDP_WARMUP=1). FSDP_VARIANTS / FSDP_VARIANTS_1 replace the
# variants run on several GPUs / on one (fsdp_steps.py's names: -ac, -accumK); FSDP_PROFILE=0
# skips the timelines; FSDP_COUNTS (e.g. "4") replaces the GPU counts run (all GPUs, 2, 1).
set -u
dir=${1:?usage: run_fsdp.sh DIR [SECONDS] [CONFIGS]}
budget=${2:-540}
configs=${3:-gpt2,llama-1b,gpt2-xl,gpt2:2}
steps=${FSDP_STEPS:-20}
warmup=${FSDP_WARMUP:-5}
here=$(cd "$(dirname "$0")" && pwd)
# NCCL's multicast off, DIR/stages.txt, stage(): calibrate/common/stages.sh.
# shellcheck source=../common/stages.sh
source "$here/../common/stages.sh"

{
  echo "# nvidia-smi -L"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  echo "# torch, transformers, CUDA, NCCL"
  python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__, torch.version.cuda, torch.cuda.nccl.version())'
  echo "# pip"
  python3 -m pip list 2>/dev/null | grep -iE '^(torch|transformers|triton|nvidia-nccl|numpy|accelerate) '
  echo "# host"
  nproc; grep MemTotal /proc/meminfo; lscpu | grep -E 'Model name|Socket|NUMA node\(s\)'
  env | grep -E '^(NCCL_|TORCH_SYMM|NVSHMEM_)' | sort
  echo "# the installed fully_shard: where the root's reshard_after_forward is overridden"
  src=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')/distributed/fsdp/_fully_shard
  grep -n -B3 -A1 'post_forward_mesh_info = None' "$src/_fsdp_state.py"
  grep -n 'reshard_after_forward: bool' "$src/_fully_shard.py" | head -3
} >"$dir/host.txt" 2>&1
nvidia-smi topo -m >"$dir/topo-m.txt" 2>&1
gpus=$(nvidia-smi -L | grep -c '^GPU')
cat "$dir/host.txt"

stage host-probe-n$gpus 60 python3 "$here/../host/host_probe.py" --procs "$gpus" \
  --out "$dir/host_probe-n$gpus.json"
# The largest count first (with fsdp's timeline profiled), then 2 and 1 GPU; one GPU runs no DDP
# and no fsdp-noreshard (nothing to all-gather there: it differs from fsdp by the copies alone).
counts="$gpus"
for n in 2 1; do ((n < gpus)) && counts="$counts $n"; done
counts=${FSDP_COUNTS:-$counts}
for n in $counts; do
  variants=${FSDP_VARIANTS_1:-plain,fsdp,fsdp-ac}
  extra=()
  ((n > 1)) && variants=${FSDP_VARIANTS:-plain,ddp25,fsdp,fsdp-noreshard,fsdp-default,fsdp-ac,fsdp#2}
  ((n == gpus && n > 1)) && [ "${FSDP_PROFILE:-1}" != 0 ] && extra=(--profile)
  stage fsdp-n$n 420 torchrun --standalone --nproc-per-node="$n" "$here/fsdp_steps.py" \
    --out "$dir" --configs "$configs" --variants "$variants" --steps "$steps" --warmup "$warmup" \
    "${extra[@]}"
done
echo "=== $(($(date +%s) - began)) s"
cat "$dir/stages.txt"
grep -h -iE 'error|Traceback' "$dir"/*.log | sort | uniq -c | head -20
ls -la "$dir"
python3 "$here/summarize_fsdp.py" "$dir"
