#!/usr/bin/env bash
# Ring collectives with per-rank chunks that are not multiples of 16 bytes, on 2 GPUs: all-gather
# and reduce-scatter (whose per-rank chunks sit at rank x chunk in the gathered buffer), with
# all-reduce and broadcast as controls (one buffer, no per-rank offsets), each as NCCL chooses and
# forced to Ring LL / LL128 / Simple. OFF = 0 is the plain ladder; OFF = 1 adds one float to every
# rank's count, so chunk bytes are 4 mod 16; OFF = 2 makes them 8 mod 16; OFF = 4 is 16-byte
# aligned again (a second control).
# Every size is gated (GPU time, no host floor). One folder per offset under $OUT (or
# /tmp/probe-align), each readable as a measurement folder, with NCCL's TUNING log per run.
#   calibrate/probe_align.sh    (on a machine of 2 or more GPUs, from the repository root)
set -u
source "$(dirname "$0")/probe_setup.sh" /tmp/probe-align
sweep=(--nranks=2 --min-bytes=1024 --max-bytes=1073741824 --gated-max-bytes=1073741824)
run() {  # OFFSET CONFIG OPS
  local off=$1 config=$2 ops=$3 dir="$out/off$1"
  local tag=${config//\//-}-n2
  tag=${tag,,}
  mkdir -p "$dir"
  local env_args=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$dir/nccl-$tag.log")
  [[ $config != default ]] && env_args+=(NCCL_ALGO="${config%/*}" NCCL_PROTO="${config#*/}")
  local t0=$(date +%s)
  env "${env_args[@]}" timeout 150 "$bin" "${sweep[@]}" --ops="$ops" --chunk-offset-elements="$off" \
    --out="$dir/nccl-$tag.json" >"$dir/nccl-$tag.stdout" 2>"$dir/nccl-$tag.stderr"
  echo "off$off $config rc=$? $(($(date +%s) - t0)) s" | tee -a "$out/stages.txt"
  gzip -f "$dir/nccl-$tag.log" 2>/dev/null
}
for off in 0 1 2 4; do
  run "$off" default allgather,reducescatter,allreduce,broadcast
done
for off in 0 1 2; do
  for config in Ring/LL Ring/LL128 Ring/Simple; do
    run "$off" "$config" allgather,reducescatter
  done
done
nvidia-smi -L >"$out/gpus.txt"
