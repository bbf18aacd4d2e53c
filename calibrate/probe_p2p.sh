#!/usr/bin/env bash
# The p2p rate at 64 KiB - 256 MiB on 2 GPUs, gated up to 256 MiB (GPU time, no host floor), under
# NCCL settings that each change one suspect of the rate's rise with size: the NVLink p2p chunk
# size (NCCL_P2P_NVL_CHUNKSIZE, default 512 KiB) and the p2p channel count
# (NCCL_MIN/MAX_P2P_NCHANNELS). Results: one JSON file per setting under $OUT (or /tmp/probe-p2p).
#   calibrate/probe_p2p.sh    (on a machine of 2 or more GPUs, from the repository root)
set -u
source "$(dirname "$0")/probe_setup.sh" /tmp/probe-p2p
sweep=(--nranks=2 --ops=sendrecv,alltoall --min-bytes=65536 --max-bytes=268435456
  --gated-max-bytes=268435456)
run() {  # NAME ENV...
  local name=$1
  shift
  local t0=$(date +%s)
  env "$@" "$bin" "${sweep[@]}" --out="$out/p2p-$name.json" >"$out/p2p-$name.log" 2>&1
  echo "$name rc=$? $(($(date +%s) - t0)) s"
}
run default
run chunk128k NCCL_P2P_NVL_CHUNKSIZE=131072
run chunk2m NCCL_P2P_NVL_CHUNKSIZE=2097152
run channels4 NCCL_MIN_P2P_NCHANNELS=4 NCCL_MAX_P2P_NCHANNELS=4
run channels32 NCCL_MIN_P2P_NCHANNELS=32 NCCL_MAX_P2P_NCHANNELS=32
nvidia-smi -L >"$out/gpus.txt"
