#!/usr/bin/env bash
# Regenerates the golden outputs of `clustersim plan` under tests/golden/plan/ from a build. Run
# after a change meant to alter them, then read `git diff tests/golden/plan` before committing.
# Usage: tests/golden/plan/refresh.sh [path/to/clustersim]   (default: build/sim/clustersim)
# Runs from the repository root with relative paths, as tests/plan/test_plan_cli.cpp does, since
# a candidate that does not fit names the model file. The cases there and here must match.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${1:-$root/build/sim/clustersim}
[ -x "$bin" ] || { echo "refresh.sh: no clustersim at $bin (build first or pass its path)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
cd "$root"
out=tests/golden/plan
# JSON outputs name the clustersim that wrote them; goldens hold VERSION there (tests/support/version_stamp.hpp).
unversioned='s/"clustersim_version": "[^"]*"/"clustersim_version": "VERSION"/'
aws="-t topologies/aws-p4d.24xlarge.yaml -t topologies/aws-p5.48xlarge.yaml -t topologies/aws-g6e.48xlarge.yaml"

"$bin" plan -m models/gpt2-xl.yaml $aws --nodes 8,16,32 --tokens 300B --batch 1 > "$out/gpt2-xl-aws-300b.txt"
"$bin" plan -m models/gpt2-xl.yaml $aws -t topologies/dgx-h100-16node.yaml --nodes 4 --tokens 30B --max-cost 4000 --csv > "$out/gpt2-xl-batch4-max-cost.csv"
"$bin" plan -m models/gpt2.yaml -t topologies/dgx-h100-16node.yaml --price dgx-h100=40 --nodes 1,2 --global-batch 64 --samples 1M --json | sed -E "$unversioned" > "$out/gpt2-dgx-price-global-batch.json"
"$bin" plan -m models/llama-3.1-8b.yaml -t topologies/aws-p5.48xlarge.yaml -t topologies/aws-p4d.24xlarge.yaml --nodes 4,16 --tokens 1T --global-batch 512 --strategy auto --csv > "$out/llama-3.1-8b-auto-1t.csv"
"$bin" plan -m models/llama-3.1-70b.yaml -t topologies/dgx-h100-2048node-superpod.yaml --nodes 64 --tokens 1T --global-batch 1024 --tp 8 --pp 4 --batch 1 --tp-impl megatron --activation-checkpointing --price dgx-h100=55.04 > "$out/llama-3.1-70b-tp8-pp4.txt"
echo "refreshed $(ls "$out" | grep -v refresh.sh | tr '\n' ' ')"
