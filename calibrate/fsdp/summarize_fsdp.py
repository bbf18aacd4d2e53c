#!/usr/bin/env python3
"""The table of a folder of fsdp_steps.py records (schema clustersim-fsdp-steps/1): per model and
GPU count, each variant's median step (ms, the slowest rank's) and peak memory (GiB, the largest
rank's allocated / reserved), as Markdown. Python's standard library only.

  python3 calibrate/fsdp/summarize_fsdp.py DIR
"""
import glob
import json
import os
import sys

SCHEMA = "clustersim-fsdp-steps/1"
ORDER = ("plain", "ddp25", "fsdp", "fsdp-noreshard", "fsdp-default", "fsdp-ac", "fsdp#2")


def records(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        try:
            with open(path) as f:
                record = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("schema") == SCHEMA:
            out.append(record)
    out.sort(key=lambda r: (r["model"], r["batch"], r["world_size"]))
    return out


def cell(entry, what):
    if entry is None:
        return ""
    if "error" in entry:
        return "error"
    if what == "ms":
        return f"{entry['step_ms_median']:.1f}"
    if what == "host":
        host = entry.get("host_call_ms_median")
        return f"{max(host):.1f}" if host else ""
    return (f"{entry['peak_allocated_bytes'] / 2**30:.1f} / "
            f"{entry['peak_reserved_bytes'] / 2**30:.1f}")


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: summarize_fsdp.py DIR")
    rows = records(sys.argv[1])
    if not rows:
        print(f"summarize_fsdp: no {SCHEMA} record in {sys.argv[1]}")
        return
    seen = {v for r in rows for v in r["variants"]}
    variants = [v for v in ORDER if v in seen] + sorted(seen - set(ORDER))
    print("Median step, ms (slowest rank):\n")
    print("| model | batch x seq | GPUs | " + " | ".join(variants) + " |")
    print("|---|---|---|" + "---|" * len(variants))
    for r in rows:
        print(f"| {r['model']} | {r['batch']} x {r['seq']} | {r['world_size']} | "
              + " | ".join(cell(r["variants"].get(v), "ms") for v in variants) + " |")
    print("\nPeak memory, GiB allocated / reserved (largest rank):\n")
    print("| model | batch | GPUs | " + " | ".join(variants) + " |")
    print("|---|---|---|" + "---|" * len(variants))
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['world_size']} | "
              + " | ".join(cell(r["variants"].get(v), "mem") for v in variants) + " |")
    if any("host_call_ms_median" in e for r in rows for e in r["variants"].values()):
        print("\nHost time of the step's calls, ms (median, largest rank; before the sync):\n")
        print("| model | batch | GPUs | " + " | ".join(variants) + " |")
        print("|---|---|---|" + "---|" * len(variants))
        for r in rows:
            print(f"| {r['model']} | {r['batch']} | {r['world_size']} | "
                  + " | ".join(cell(r["variants"].get(v), "host") for v in variants) + " |")
    errors = [(r["model"], r["batch"], r["world_size"], v, e["error"]) for r in rows
              for v, e in r["variants"].items() if "error" in e]
    for model, batch, world, variant, error in errors:
        print(f"\n{model} b{batch} n{world} {variant}: {error[:300]}")
    losses = []
    for r in rows:
        for v, e in r["variants"].items():
            if "eval_loss" in e:
                losses.append(f"{r['model']} b{r['batch']} n{r['world_size']} {v}: "
                              + ", ".join(f"{x:.4f}" for x in e["eval_loss"]))
    if losses:
        print("\nLoss after the timed steps (eval, per rank):")
        print("\n".join(losses))


if __name__ == "__main__":
    main()
