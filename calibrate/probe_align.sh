#!/usr/bin/env bash
# Ring collectives with per-rank chunks that are not multiples of 16 bytes, on 2 GPUs: all-gather
# and reduce-scatter (whose per-rank chunks sit at rank x chunk in the gathered buffer), with
# all-reduce and broadcast as controls (one buffer, no per-rank offsets), each as NCCL chooses and
# forced to Ring LL / LL128 / Simple. OFF = 0 is the plain ladder; OFF = 1 adds one float to every
# rank's count, so chunk bytes are 4 mod 16; OFF = 2 makes them 8 mod 16; OFF = 4 is 16-byte
# aligned again (a second control).
# Every size is gated (GPU time, no host floor). One folder per offset under $OUT (or
# /tmp/probe-align), each readable as a measurement folder, with NCCL's TUNING log per run.
#   [NRANKS="2 3"] [OFFSETS="0 1 2 4"] [FORCED=1] calibrate/probe_align.sh    (from the repository
#   root, on a machine with as many GPUs as the largest rank count; defaults: 2 ranks, offsets
#   0 1 2 4, the forced Ring runs on offsets 0 1 2)
set -u
source "$(dirname "$0")/probe_setup.sh" /tmp/probe-align
sweep=(--min-bytes=1024 --max-bytes=1073741824 --gated-max-bytes=1073741824)
run() {  # NRANKS OFFSET CONFIG OPS
  local n=$1 off=$2 config=$3 ops=$4 dir="$out/off$2"
  local tag=${config//\//-}-n$n
  tag=${tag,,}
  mkdir -p "$dir"
  local env_args=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$dir/nccl-$tag.log")
  [[ $config != default ]] && env_args+=(NCCL_ALGO="${config%/*}" NCCL_PROTO="${config#*/}")
  local t0=$(date +%s)
  env "${env_args[@]}" timeout 150 "$bin" "${sweep[@]}" --nranks="$n" --ops="$ops" \
    --chunk-offset-elements="$off" --out="$dir/nccl-$tag.json" >"$dir/nccl-$tag.stdout" \
    2>"$dir/nccl-$tag.stderr"
  echo "n$n off$off $config rc=$? $(($(date +%s) - t0)) s" | tee -a "$out/stages.txt"
  gzip -f "$dir/nccl-$tag.log" "$dir/nccl-$tag.stdout" 2>/dev/null
}
for n in ${NRANKS:-2}; do
  for off in ${OFFSETS:-0 1 2 4}; do
    run "$n" "$off" default allgather,reducescatter,allreduce,broadcast
  done
  [[ ${FORCED:-1} == 1 ]] || continue
  for off in 0 1 2; do
    for config in Ring/LL Ring/LL128 Ring/Simple; do
      run "$n" "$off" "$config" allgather,reducescatter
    done
  done
done
nvidia-smi -L >"$out/gpus.txt"
