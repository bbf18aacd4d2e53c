#!/usr/bin/env bash
# Regenerates the golden outputs of `clustersim coll` under tests/golden/coll/ from a build. Run
# after a change meant to alter them, then read `git diff tests/golden/coll` before committing.
# Usage: tests/golden/coll/refresh.sh [path/to/clustersim]   (default: build/sim/clustersim)
# The cases here and in tests/collectives/test_coll_golden.cpp must match.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${1:-$root/build/sim/clustersim}
[ -x "$bin" ] || { echo "refresh.sh: no clustersim at $bin (build first or pass its path)" >&2; exit 2; }
out=$root/tests/golden/coll
topo=$root/topologies
unset NCCL_ALGO NCCL_PROTO NCCL_NVLS_ENABLE
# JSON outputs name the clustersim that wrote them; goldens hold VERSION there (tests/support/version_stamp.hpp).
unversioned='s/"clustersim_version": "[^"]*"/"clustersim_version": "VERSION"/'

"$bin" coll --topology "$topo/dgx-h100.yaml" --op allreduce -b 8 -e 1G -f 2 > "$out/dgx-h100-allreduce.txt"
"$bin" coll --topology "$topo/dgx-h100.yaml" --op allgather -b 1K -e 1G -f 4 --csv > "$out/dgx-h100-allgather.csv"
"$bin" coll --topology "$topo/dgx-h100.yaml" --op allreduce --ranks 0,1,2,3 -b 1M -e 1G -f 8 --algo ring --proto simple --json | sed -E "$unversioned" > "$out/dgx-h100-4gpu-ring-simple.json"
"$bin" coll --topology "$topo/dgx-h100-2node.yaml" --op allreduce -b 8 -e 1G -f 2 > "$out/dgx-h100-2node-allreduce.txt"
"$bin" coll --topology "$topo/dgx-h100-16node.yaml" --op allreduce -b 8 -e 1G -f 2 > "$out/dgx-h100-16node-allreduce.txt"
(cd "$root" && "$bin" compare calibrate/published/multinode.yaml) > "$out/compare-multinode.txt"
(cd "$root" && "$bin" compare calibrate/published/training.yaml) > "$out/compare-training.txt"
echo "refreshed $(ls "$out" | grep -v refresh.sh | tr '\n' ' ')"
