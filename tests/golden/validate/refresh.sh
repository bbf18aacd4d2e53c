#!/usr/bin/env bash
# Regenerates the fitted calibration file of the 4 x H200 data and the golden output of
# `clustersim validate` on it. Run after a change meant to alter them; read the diff first.
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
echo "refreshed calibrate/data/h200x4/calibration.json and tests/golden/validate/h200x4.txt"
