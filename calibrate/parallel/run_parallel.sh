#!/usr/bin/env bash
# Measures tensor-parallel (tp, tp-sp), unsharded (plain) and pipeline-parallel (GPipe, 1F1B)
# training steps on this node, one process per GPU, into DIR; prints each stage's status and,
# last, the tables (calibrate/parallel/summarize_parallel.py).
#
#   calibrate/parallel/run_parallel.sh DIR [SECONDS]
#
# SECONDS (default 520): wall-clock budget; a stage never starts past it, and each is cut at what
# is left. PAR_STEPS / PAR_WARMUP (default 10 / 3): timed and warm-up steps. PAR_TP_CONFIGS
# (default llama-1b:1,llama-1b: batch 1, then the model's default 4, per rank), PAR_PP_CONFIGS
# (default gpipe:4,1f1b:4,gpipe:8,1f1b:8), PAR_PP_MB (default 2): the grids. PAR_PROFILE=0 skips
# the profiled TP steps at 2 GPUs.
set -u
dir=${1:?usage: run_parallel.sh DIR [SECONDS]}
budget=${2:-520}
steps=${PAR_STEPS:-10}
warmup=${PAR_WARMUP:-3}
tp_configs=${PAR_TP_CONFIGS:-llama-1b:1,llama-1b}
pp_configs=${PAR_PP_CONFIGS:-gpipe:4,1f1b:4,gpipe:8,1f1b:8}
pp_mb=${PAR_PP_MB:-2}
here=$(cd "$(dirname "$0")" && pwd)
# NCCL's multicast off, DIR/stages.txt, stage(): calibrate/common/stages.sh; each stage's timing
# and failure lines printed after it.
stage_reserve=10 stage_min=15 stage_summary=' ms|failed|profile|Error|error'
# shellcheck source=../common/stages.sh
source "$here/../common/stages.sh"

{
  echo "# nvidia-smi -L"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  echo "# nvidia-smi topo -m"
  nvidia-smi topo -m
  echo "# torch, transformers, CUDA, NCCL"
  python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__, torch.version.cuda, torch.cuda.nccl.version())'
  echo "# host"
  nproc --all; grep MemTotal /proc/meminfo
  env | grep -E '^(NCCL_|TORCH_SYMM|NVSHMEM_)' | sort
  echo "# the installed HF Llama attention's reshape (local heads need -1 there)"
  python3 - <<'EOF'
import inspect
from transformers.models.llama import modeling_llama as m
src = inspect.getsource(m.LlamaAttention.forward)
print("\n".join(l for l in src.splitlines() if "hidden_shape" in l or "reshape" in l))
src = inspect.getsource(m.LlamaDecoderLayer.forward)
print("\n".join(l for l in src.splitlines() if "self_attn(" in l or "hidden_states=hidden_states" in l or "self.mlp(" in l))
EOF
} >"$dir/host.txt" 2>&1
cat "$dir/host.txt"
gpus=$(nvidia-smi -L | grep -c '^GPU')

tp=(python3 -m torch.distributed.run --standalone)
common=(--steps "$steps" --warmup "$warmup")
# TP at all GPUs (4), then 2 (with the profiled steps), then the unsharded model on one GPU.
counts=""
for n in "$gpus" 2; do ((n >= 2 && n <= gpus)) && [[ " $counts " != *" $n "* ]] && counts="$counts $n"; done
for n in $counts; do
  extra=()
  ((n == 2)) && [ "${PAR_PROFILE:-1}" != 0 ] && extra=(--profile tp,tp-sp)
  stage tp-n$n $(( n == 2 ? 150 : 130 )) "${tp[@]}" --nproc-per-node="$n" "$here/tp_steps.py" --out "$dir" \
    --configs "$tp_configs" --variants tp,tp-sp "${common[@]}" "${extra[@]}"
done
stage plain-n1 80 "${tp[@]}" --nproc-per-node=1 "$here/tp_steps.py" --out "$dir" \
  --configs "llama-1b:1,llama-1b:2,llama-1b" --variants plain "${common[@]}"
for n in $counts; do
  stage pp-n$n 130 "${tp[@]}" --nproc-per-node="$n" "$here/pp_steps.py" --out "$dir" \
    --model llama-1b --configs "$pp_configs" --mb "$pp_mb" "${common[@]}"
done
echo "=== $(($(date +%s) - began)) s"
cat "$dir/stages.txt"
grep -h -iE 'error|Traceback' "$dir"/*.log | sort | uniq -c | sort -rn | head -20
ls -la "$dir"
python3 "$here/summarize_parallel.py" "$dir" | tee "$dir/summary.md"
