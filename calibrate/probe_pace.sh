#!/usr/bin/env bash
# Does NCCL's rate at 1 MiB - 1 GiB depend on how long the GPUs have been busy? The same 2-GPU
# sweep (send/recv, all-gather, all-reduce, broadcast; host-paced, whose calls from 1 MiB up are
# GPU-bound) timed with the default calls per region and with 16 times as many, so that a 16 MiB
# region lasts ~10 ms instead of ~0.6 ms. One folder per setting under $OUT (or /tmp/probe-pace).
#   calibrate/probe_pace.sh    (on a machine of 2 or more GPUs, from the repository root)
set -u
source "$(dirname "$0")/probe_setup.sh" /tmp/probe-pace
sweep=(--nranks=2 --ops=sendrecv,allgather,allreduce,broadcast --min-bytes=1048576
  --max-bytes=1073741824 --gated-max-bytes=0)
for scale in 1 16 1; do
  dir="$out/calls$scale"
  [[ -e $dir ]] && dir="$out/calls$scale-again"
  mkdir -p "$dir"
  t0=$(date +%s)
  env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$dir/nccl-default-n2.log" \
    timeout 200 "$bin" "${sweep[@]}" --calls-scale="$scale" --out="$dir/nccl-default-n2.json" \
    >"$dir/nccl-default-n2.stdout" 2>"$dir/nccl-default-n2.stderr"
  echo "calls x$scale rc=$? $(($(date +%s) - t0)) s" | tee -a "$out/stages.txt"
  gzip -f "$dir/nccl-default-n2.log" "$dir/nccl-default-n2.stdout"
done
nvidia-smi -L >"$out/gpus.txt"
nvidia-smi -q -d CLOCK,PERFORMANCE >"$out/clocks.txt" 2>&1
