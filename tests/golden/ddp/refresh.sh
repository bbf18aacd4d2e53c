#!/usr/bin/env bash
# Regenerates the golden outputs of `clustersim ddp` under tests/golden/ddp/ from a build. Run
# after a change meant to alter them, then read `git diff tests/golden/ddp` before committing.
# Usage: tests/golden/ddp/refresh.sh [path/to/clustersim]   (default: build/sim/clustersim)
# The cases here and in tests/workload/test_ddp_cli.cpp must match.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${1:-$root/build/sim/clustersim}
[ -x "$bin" ] || { echo "refresh.sh: no clustersim at $bin (build first or pass its path)" >&2; exit 2; }
out=$root/tests/golden/ddp
topo=$root/topologies
models=$root/models

"$bin" ddp --topology "$topo/dgx-h100.yaml" --model "$models/gpt2.yaml" > "$out/gpt2-dgx-h100.txt"
"$bin" ddp --topology "$topo/dgx-h200.yaml" --model "$models/resnet50.yaml" --no-ddp --batch 64 --json > "$out/resnet50-h200-noddp-b64.json"
"$bin" ddp --topology "$topo/dgx-h100.yaml" --model "$models/bert-large.yaml" --compute work --pageable --csv > "$out/bert-large-h100-work.csv"
"$bin" ddp --topology "$topo/dgx-h100-2node.yaml" --model "$models/gpt2.yaml" -n 16 > "$out/gpt2-dgx-h100-2node-n16.txt"
"$bin" ddp --topology "$topo/dgx-h200.yaml" --model "$models/resnet50.yaml" -n 8 --find-unused-parameters --json > "$out/resnet50-dgx-h200-n8-unused.json"
"$bin" ddp --topology "$topo/dgx-h200.yaml" --model "$models/gpt2.yaml" -n 2 --batch 8 --strategy fsdp > "$out/gpt2-dgx-h200-n2-fsdp.txt"
"$bin" ddp --topology "$topo/dgx-h200.yaml" --model "$models/gpt2.yaml" -n 2 --batch 8 --strategy fsdp --grad-accum 4 --activation-checkpointing --json > "$out/gpt2-dgx-h200-n2-fsdp-accum4-ac.json"
"$bin" ddp --topology "$topo/dgx-h200.yaml" --model "$models/llama-1b.yaml" -n 2 --grad-accum 2 --activation-checkpointing > "$out/llama-1b-dgx-h200-n2-accum2-ac.txt"
"$bin" ddp --topology "$topo/dgx-h100-2node.yaml" --model "$models/llama-3.1-8b.yaml" --nodes 2 --batch 1 --tp 4 --pp 2 --grad-accum 8 > "$out/llama-3.1-8b-2node-tp4-pp2.txt"
"$bin" ddp --topology "$topo/dgx-h200.yaml" --model "$models/llama-1b.yaml" -n 0-3 --tp 2 --sequence-parallel --json > "$out/llama-1b-dgx-h200-tp2-sp.json"
echo "refreshed $(ls "$out" | grep -v refresh.sh | tr '\n' ' ')"
