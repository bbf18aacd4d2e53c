#!/bin/sh
# Regenerates the golden output of `clustersim flows` on the example matrix (its tables and its
# --trace file). Run it after a change
# that is meant to change the output, then review the diff: test_flows_cli.cpp derives the key
# times by hand, so a golden refresh can never hide a wrong number there.
# Usage: tests/data/flows/refresh_golden.sh path/to/clustersim
set -eu
binary=${1:?usage: refresh_golden.sh path/to/clustersim}
here=$(dirname "$0")
"$binary" flows --topology "$here/two-servers.yaml" --flows "$here/example.csv" \
  >"$here/example.golden.txt"
"$binary" flows --topology "$here/two-servers.yaml" --flows "$here/example.csv" \
  --fidelity analytical >"$here/example.analytical.golden.txt"
"$binary" flows --topology "$here/two-servers.yaml" --flows "$here/example.csv" \
  --trace "$here/example.trace.golden.json" >/dev/null
