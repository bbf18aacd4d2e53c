#!/usr/bin/env bash
# Exports every shipped model on this GPU (one process per configuration, as users run) and packs
# the raw files into $OUT/<machine>-models.tar.gz.
#
#   calibrate/models/run_models.sh MACHINE [smoke|full|defaults|variants|list] [SECONDS]
# defaults: the shipped models at their default settings; variants: only the configurations at
# other batch sizes and precisions; list: the configurations in $CONFIGS, separated by ';'
# (each "model [export flags]").
set -u
machine=${1:?usage: run_models.sh MACHINE [smoke|full] [SECONDS]}
mode=${2:-full}
budget=${3:-500}
out=${OUT:-/tmp/models-out}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
began=$(date +%s)
dir=/tmp/models/$machine-models
rm -rf "$dir" && mkdir -p "$dir" "$out"
here=$(dirname "$0")

# name [export flags]: one configuration; the first of each model sets the work it records.
if [ "$mode" = smoke ]; then
  configs=("gpt2 --batch 2 --seq 128 --steps 3 --profiled 2" "resnet50 --batch 8 --steps 3 --profiled 2")
else
  variants=("gpt2 --batch 2 --tag=-b2" "resnet50 --batch 32 --tag=-b32"
            "resnet50 --precision fp32 --batch 64 --tag=-fp32-b64"
            "gpt2 --precision fp32 --batch 4 --tag=-fp32-b4" "bert-large --batch 4 --tag=-b4"
            "bert-large --tag=-rerun" "llama-1b --batch 2 --tag=-b2")
  defaults=("gpt2" "resnet50" "bert-large" "gpt2-medium" "llama-1b" "gpt2-xl")
  if [ "$mode" = list ]; then
    IFS=';' read -r -a configs <<<"${CONFIGS:?list mode reads CONFIGS}"
  elif [ "$mode" = variants ]; then
    configs=("${variants[@]}")
  elif [ "$mode" = defaults ]; then
    configs=("${defaults[@]}")
  else
    configs=("${defaults[@]}" "${variants[@]}")
  fi
fi
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  python3 -c 'import torch, transformers, torchvision; print(torch.__version__, transformers.__version__, torchvision.__version__)'
  nproc; lscpu | grep 'Model name'
} >"$dir/host.txt" 2>&1
for config in "${configs[@]}"; do
  left=$((budget - 20 - ($(date +%s) - began)))
  if ((left < 10)); then echo "$config: skipped (budget spent)" | tee -a "$dir/stages.txt"; continue; fi
  t0=$(date +%s)
  # shellcheck disable=SC2086
  timeout -k 5 "$left" python3 "$here/export.py" $config --out "$dir" >>"$dir/export.log" 2>&1
  rc=$?
  echo "$config: rc $rc, $(($(date +%s) - t0)) s" | tee -a "$dir/stages.txt"
  grep -E '^[a-z0-9-]+: plain' "$dir/export.log" | tail -1
done
tar -C /tmp/models -czf "$out/$machine-models.tar.gz" "$machine-models"
tail -30 "$dir/export.log"
