#!/usr/bin/env python3
"""The tables of a folder of tp_steps.py / pp_steps.py records (schema
clustersim-parallel-steps/1), as Markdown: per configuration the median step (ms, the slowest
rank's), peak memory (GiB allocated, the largest rank's; every rank's for pipelines), the loss
check and each phase's host time; then the profiles' collectives per step. Python's standard
library only.

  python3 calibrate/parallel/summarize_parallel.py DIR
"""
import glob
import gzip
import json
import os
import sys

SCHEMA = "clustersim-parallel-steps/1"
GIB = 2 ** 30


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(x, spec=".2f"):
    return "" if x is None else format(x, spec)


def tp_rows(rows):
    out = ["| variant | model | batch x seq | GPUs | step ms | peak GiB | loss unsharded |"
           " loss sharded | rel diff | loss first -> last | host fwd / bwd / opt ms |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r and "step_ms_median" not in r:
            out.append(f"| {r['variant']} | {r['model']} | {r['batch']} x {r['seq']} |"
                       f" {r['world_size']} | error | | | | | | |")
            continue
        lc = r.get("loss_check", {})
        ph = r.get("host_phase_return_ms", {})
        out.append(
            f"| {r['variant']} | {r['model']} | {r['batch']} x {r['seq']} | {r['world_size']} |"
            f" {fmt(r['step_ms_median'])} | {fmt(r['peak_allocated_bytes'] / GIB)} |"
            f" {fmt(lc.get('unsharded'), '.5f')} | {fmt(lc.get('sharded'), '.5f')} |"
            f" {fmt(lc.get('rel_diff'), '.1e')} |"
            f" {fmt(r.get('loss_first'), '.4f')} -> {fmt(r.get('loss_last'), '.4f')} |"
            f" {fmt(ph.get('forward'), '.1f')} / {fmt(ph.get('backward'), '.1f')} /"
            f" {fmt(ph.get('optimizer'), '.1f')} |")
    return out


def pp_rows(rows):
    out = ["| schedule | stages | micro-batches x size | batch x seq | step ms |"
           " peak GiB per rank | loss unsharded | first step loss | loss last |"
           " host schedule / opt ms (rank 0) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "step_ms_median" not in r:
            out.append(f"| {r.get('schedule')} | {r.get('stages')} | {r.get('micro_batches')} x"
                       f" {r.get('micro_batch_size')} | | error | | | | | |")
            continue
        lc = r.get("loss_check", {})
        peaks = ", ".join(f"{m['peak_allocated_bytes'] / GIB:.1f}" for m in r["rank_memory"])
        ph = r["rank_memory"][0].get("host_phase_return_ms", {})
        out.append(
            f"| {r['schedule']} | {r['stages']} | {r['micro_batches']} x"
            f" {r['micro_batch_size']} | {r['batch']} x {r['seq']} | {fmt(r['step_ms_median'])} |"
            f" {peaks} | {fmt(lc.get('unsharded'), '.5f')} |"
            f" {fmt(lc.get('pipeline_first_step'), '.5f')} | {fmt(r.get('loss_last'), '.4f')} |"
            f" {fmt(ph.get('schedule'), '.1f')} / {fmt(ph.get('optimizer'), '.1f')} |")
    return out


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: summarize_parallel.py DIR")
    folder = sys.argv[1]
    rows, profiles = [], []
    for path in sorted(glob.glob(os.path.join(folder, "*.json*"))):
        rec = load(path)
        if not isinstance(rec, dict):
            continue
        if rec.get("schema") == SCHEMA:
            rows.append(rec)
        elif rec.get("schema") == SCHEMA + "-profile":
            profiles.append(rec)
    if not rows:
        print(f"summarize_parallel: no {SCHEMA} record in {folder}")
        return
    tp = sorted((r for r in rows if r.get("kind") == "tp"),
                key=lambda r: (r["model"], r["batch"], r["world_size"], r["variant"]))
    pp = sorted((r for r in rows if r.get("kind") == "pp"),
                key=lambda r: (r.get("stages", 0), r.get("micro_batches", 0),
                               r.get("schedule", "")))
    if tp:
        print("Tensor parallelism and the unsharded model (median step, slowest rank; peak"
              " allocated, largest rank):\n")
        print("\n".join(tp_rows(tp)))
    if pp:
        print("\nPipeline parallelism (median step, slowest rank; peak allocated per rank):\n")
        print("\n".join(pp_rows(pp)))
    for p in profiles:
        print(f"\nProfile {p['variant']} {p['model']} b{p['batch']} n{p['world_size']}"
              f" (rank 0, {p['profiled_steps']} steps): per step")
        print("\n| collective | kernels | GPU us |\n|---|---|---|")
        for kind, s in sorted(p["summary_per_step"].items()):
            print(f"| {kind} | {s['kernels_per_step']:g} | {s['gpu_us_per_step']:.1f} |")
        print(f"\ncompute kernels {p['compute_kernel_us_per_step']:.1f} GPU us per step;"
              f" host records per step: {json.dumps(p.get('record_param_comms_per_step'))}")
    for r in rows:
        if "error" in r:
            print(f"\n{r.get('variant')} {r['model']} n{r['world_size']}: {r['error'][:400]}")
        if "error_bf16p" in r:
            print(f"\n{r.get('variant')} {r['model']} n{r['world_size']} (bf16 params):"
                  f" {r['error_bf16p'][:400]}")


if __name__ == "__main__":
    main()
