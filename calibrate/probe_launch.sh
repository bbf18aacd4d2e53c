#!/usr/bin/env bash
# Does it matter how the ranks are started? The same sweep on all GPUs of the machine, all six ops,
# 8 B - 256 MiB (gated up to 16 MiB), launched five ways, one folder each under $OUT (or
# /tmp/probe-launch): one process for all ranks (`single`, ncclCommInitAll; again last as
# `single-again`, the run-to-run spread), one process per GPU by `--procs=N` (`procs`), by
# torchrun's variables (`torchrun-env`: RANK / WORLD_SIZE / LOCAL_RANK set here, as torchrun sets
# them) and by mpirun's (`mpirun-env`: OMPI_COMM_WORLD_*), each with its own rendezvous directory.
# Then two runs that must fail at once: one rank more than GPUs, and a stale rendezvous file.
#   calibrate/probe_launch.sh    (from the repository root, on a machine of 1 or more GPUs)
set -u
source "$(dirname "$0")/probe_setup.sh" /tmp/probe-launch
n=$(nvidia-smi -L | grep -c '^GPU')
sweep=(--ops=allreduce,allgather,reducescatter,broadcast,alltoall,sendrecv --min-bytes=8
  --max-bytes=268435456)
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING

# run NAME COMMAND...: in $out/NAME, with NCCL's log and the program's output beside its JSON.
run() {
  local name=$1
  shift
  local dir="$out/$name"
  mkdir -p "$dir"
  local t0
  t0=$(date +%s%N)
  NCCL_DEBUG_FILE="$dir/nccl-default-n$n.log" timeout 120 "$@" "${sweep[@]}" \
    --out="$dir/nccl-default-n$n.json" >"$dir/stdout.txt" 2>"$dir/stderr.txt"
  printf '%s rc=%d %dms\n' "$name" $? $((($(date +%s%N) - t0) / 1000000)) | tee -a "$out/stages.txt"
}

# by_env STYLE: n processes started here with torchrun's (STYLE torchrun) or mpirun's variables.
by_env() {
  local rendezvous pids=() rank rc=0
  rendezvous=$(mktemp -d)
  for ((rank = 0; rank < n; ++rank)); do
    if [[ $1 == torchrun ]]; then
      RANK=$rank WORLD_SIZE=$n LOCAL_RANK=$rank LOCAL_WORLD_SIZE=$n "$bin" \
        --rendezvous="$rendezvous" "${@:2}" &
    else
      OMPI_COMM_WORLD_RANK=$rank OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_LOCAL_RANK=$rank "$bin" \
        --rendezvous="$rendezvous" "${@:2}" &
    fi
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  rm -rf "$rendezvous"
  return $rc
}
export -f by_env
export n bin

run single "$bin" --launch=single_process --nranks="$n"
run procs "$bin" --procs="$n"
run torchrun-env bash -c 'by_env torchrun "$@"' by_env
run mpirun-env bash -c 'by_env mpirun "$@"' by_env
run single-again "$bin" --launch=single_process --nranks="$n"

# Must fail within seconds, with one line saying why.
run fail-too-many-ranks "$bin" --procs=$((n + 1)) --rendezvous-timeout-s=10
stale=$(mktemp -d) && echo stale >"$stale/nccl-unique-id"
run fail-stale-rendezvous "$bin" --procs="$n" --rendezvous="$stale"
rm -rf "$stale"
nvidia-smi -L >"$out/gpus.txt"

# Every point's time_us side by side, then per timing the median and largest |ratio - 1| of each
# launch against `single` (single-again: the spread between two identical runs).
python3 - "$out" <<'PY' | tee "$out/compare.txt"
import json, os, statistics, sys
out = sys.argv[1]
runs = ["single", "procs", "torchrun-env", "mpirun-env", "single-again"]
points = {}
for run in runs:
    folder = os.path.join(out, run)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".json"):
            continue
        for m in json.load(open(os.path.join(folder, name)))["measurements"]:
            points.setdefault((m["timing"], m["op"], m["bytes"]), {})[run] = m
print("timing op bytes " + " ".join(runs) + "  (time_us; launch of each)")
for key in sorted(points):
    row = points[key]
    cells = ["%.2f/%s" % (row[r]["time_us"], row[r].get("launch", "-")[0]) if r in row else "-"
             for r in runs]
    print(*key, *cells)
for timing in ("host_paced", "gated"):
    for run in runs[1:]:
        ratios = [row[run]["time_us"] / row["single"]["time_us"] - 1
                  for (t, _, _), row in points.items() if t == timing and run in row and "single" in row]
        if ratios:
            worst = max(ratios, key=abs)
            print("%-10s %-13s vs single: %3d points, median |ratio-1| %.1f %%, largest %+.1f %%"
                  % (timing, run, len(ratios), 100 * statistics.median(map(abs, ratios)), 100 * worst))
PY
