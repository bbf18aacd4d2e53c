#!/usr/bin/env bash
# Regenerates the fitted calibration file of the 4 x H200 data and the golden outputs of
# `clustersim validate` on it (host-paced run 1, gated run 3), and of `validate --ddp` on the
# 2 x H200 DDP runs. Run after a change meant to alter them; read the diff first.
# Usage: tests/golden/validate/refresh.sh [path/to/clustersim]   (default: build/sim/clustersim)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${1:-$root/build/sim/clustersim}
[ -x "$bin" ] || { echo "refresh.sh: no clustersim at $bin (build first or pass its path)" >&2; exit 2; }
"$bin" fit "$root/calibrate/data/h200x4" --topology "$root/topologies/h200-4gpu.yaml" \
  -o "$root/calibrate/data/h200x4/calibration.json"
"$bin" validate --topology "$root/topologies/h200-4gpu.yaml" --data "$root/calibrate/data/h200x4" \
  --calibration "$root/calibrate/data/h200x4/calibration.json" 2>/dev/null \
  > "$root/tests/golden/validate/h200x4.txt"
# Run 5 fitted on the GPUs' own time (gated records): the calibration for predicting GPU-side
# time (CUDA graphs, training steps) on another 4 x H200 machine.
"$bin" fit "$root/calibrate/data/h200x4-run5" --topology "$root/topologies/h200-4gpu.yaml" \
  --timing gated -o "$root/calibrate/data/h200x4-run5/calibration.json" >/dev/null
# Run 3 of the same machine on the GPUs' own time (gated records), fitted in memory.
"$bin" validate --topology "$root/topologies/h200-4gpu.yaml" --data "$root/calibrate/data/h200x4-run3" \
  --timing gated 2>/dev/null > "$root/tests/golden/validate/h200x4-run3-gated.txt"
# Fit on one machine, predict the others: the H200 runs with gated records.
data=$root/calibrate/data
"$bin" validate --topology "$root/topologies/h200-4gpu.yaml" --timing gated --cross \
  "$data/h200x4-run3" "$data/h200x4-run4" "$data/h200x4-run5" "$data/h200x2-run2" \
  "$data/h200x2-run3" 2>/dev/null > "$root/tests/golden/validate/cross-h200-gated.txt"
# Measured PyTorch DDP steps of the 2 x H200 node against predicted ones (NCCL's priors); run from
# the source tree, as the README's command is, so that --models' default finds models/.
(cd "$root" && "$bin" validate -t topologies/h200-4gpu.yaml --ddp calibrate/data/h200x2-r2-ddp \
  > tests/golden/validate/ddp-h200x2-r2.txt)
# Measured TP, TP + SP and PP steps of the 4 x H200 node against predicted ones.
(cd "$root" && "$bin" validate -t topologies/h200-4gpu.yaml --parallel \
  calibrate/data/h200x4-r11-parallel > tests/golden/validate/parallel-h200x4-r11.txt)
# The other machines' calibration files (no golden output: h200x2 has one rank count, the
# single-GPU machines no NCCL runs). Each is fitted on the topology closest to the machine.
for pair in h200x2:h200-4gpu h100x1:dgx-h100 h200x1:dgx-h200; do
  machine=${pair%%:*}
  [ -d "$root/calibrate/data/$machine" ] || continue
  "$bin" fit "$root/calibrate/data/$machine" --topology "$root/topologies/${pair#*:}.yaml" \
    -o "$root/calibrate/data/$machine/calibration.json" >/dev/null
done
echo "refreshed calibrate/data/*/calibration.json and tests/golden/validate/*.txt"
