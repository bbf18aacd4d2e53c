#!/usr/bin/env bash
# Regenerates the golden outputs under tests/golden/ from the current build. Run after a change
# that is meant to alter an output, then read the diff (git diff tests/golden) before committing.
# Usage: tests/golden/refresh.sh [path/to/clustersim]   (default: build/sim/clustersim)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build/sim/clustersim}
[ -x "$bin" ] || { echo "refresh.sh: no clustersim at $bin (build first or pass its path)" >&2; exit 2; }

# clustersim topo: one text and one JSON summary per shipped topology.
mkdir -p "$root/tests/golden/topo"
for file in "$root"/topologies/*.yaml; do
  name=$(basename "$file" .yaml)
  "$bin" topo "$file" > "$root/tests/golden/topo/$name.txt"
  "$bin" topo --json "$file" > "$root/tests/golden/topo/$name.json"
  echo "refreshed tests/golden/topo/$name.{txt,json}"
done
