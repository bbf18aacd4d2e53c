#!/usr/bin/env bash
# Seeds each fuzz target's corpus folder under $1 (default build-fuzz/corpus) with the files the
# repository ships and tests: topologies, test models, sweeps, flows, calibration and measurement
# files, published sets, the bad-input corpus (tests/data/bad/), a hand-written pair of sweep shard
# files (seeds/), and the inputs of earlier findings (tests/data/fuzz/<target>/). Copies only: the
# fuzzer adds what it finds to these folders, never to the sources.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-fuzz/corpus}

seed() {  # seed TARGET FILE...: copies the files that exist into $out/TARGET, named by their path
  local target=$1
  shift
  mkdir -p "$out/$target"
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$out/$target/seed-${f//\//_}"
  done
  return 0
}

shopt -s nullglob
# Not the topologies of thousands of servers (a count of 4 digits or more): one of them takes
# seconds to expand under ASan, past -timeout for its mutations; 128 servers take the same paths.
topologies=()
for f in topologies/*.yaml; do
  grep -qE 'count: *[0-9]{4,}' "$f" || topologies+=("$f")
done
seed fuzz_topology "${topologies[@]}" tests/data/topologies/*.yaml tests/data/bad/*.yaml \
  tests/data/bad/topology/*.yaml tests/data/flows/*.yaml tests/data/fuzz/fuzz_topology/*
seed fuzz_flows tests/data/flows/*.csv tests/data/bad/flows/* tests/data/fuzz/fuzz_flows/*
seed fuzz_calibration calibrate/data/*/calibration.json tests/data/bad/calibration/* \
  tests/data/fuzz/fuzz_calibration/*
# A few measurement files of each record kind; the small ones, so that mutations stay quick.
seed fuzz_measurements calibrate/data/h100x1/launch.json calibrate/data/h100x1-run2/copy.json \
  calibrate/data/h200x4/nccl-tree-ll-n2.json calibrate/data/h200x4/nccl-tree-simple-n3.json \
  calibrate/data/h200x4/gemm.json calibrate/data/h200x2-pace/calls1/nccl-default-n2.json \
  calibrate/data/h200x4-r11-parallel/tp-llama-1b-b1-n2.json \
  calibrate/data/h200x4-r11-parallel/pp-1f1b-llama-1b-mb2x4-n2.json \
  tests/data/bad_measurements/*/*.json tests/data/bad/measurements/* \
  tests/data/fuzz/fuzz_measurements/*
# The test models (tiny ones and one per error), and of the shipped models (110-500 KB of measured
# layers, up to seconds per run under ASan) only the smallest: it reaches the ~60 branches they
# miss, and more of them would slow every run without reaching more.
seed fuzz_model tests/data/models/*.yaml models/resnet50.yaml tests/data/bad/model/* \
  tests/data/fuzz/fuzz_model/*
seed fuzz_sweep sim/plan/examples/*.yaml tests/data/sweep/*.yaml tests/data/bad/sweep/* \
  tests/data/fuzz/fuzz_sweep/*
seed fuzz_published calibrate/published/*.yaml tests/data/bad/published/* \
  tests/data/fuzz/fuzz_published/*
# Shard files are written by a sweep run, none is shipped: a hand-written pair of shards.
seed fuzz_shards tests/fuzz/seeds/fuzz_shards/* tests/data/fuzz/fuzz_shards/*
for d in "$out"/*/; do
  echo "seed: $(ls "$d" | wc -l) files in $d"
done
