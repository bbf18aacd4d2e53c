#!/usr/bin/env python3
"""Prints the headline figures of one node's calibration files (a folder of *.json from run_node.sh)."""
import glob
import json
import os
import sys
from collections import defaultdict


def load(folder):
    records = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            data = json.load(f)
        # A committed folder also holds the fitter's calibration.json (schema clustersim-fit-v2).
        if data.get("schema") != "clustersim-calibration-v1":
            continue
        for r in data["measurements"]:
            r["_file"] = os.path.basename(path)
            records.append(r)
    return records


def main(folder):
    rs = load(folder)
    for r in rs:
        if r["kind"] == "launch":
            print(f"launch {r['what']:15s} {r['time_us']:.2f} us")
    best = defaultdict(float)
    for r in rs:
        if r["kind"] == "gemm":
            best[r["dtype"]] = max(best[r["dtype"]], r["tflops"])
        if r["kind"] == "membw":
            best["membw GB/s"] = max(best["membw GB/s"], r["GBps"])
    for k, v in best.items():
        print(f"peak {k}: {v:.0f}" + (" TFLOP/s" if "GB" not in k else ""))
    copies = [r for r in rs if r["kind"] == "copy"]
    if copies:
        top = max(r["bytes"] for r in copies)
        groups = defaultdict(list)
        for r in copies:
            if r["bytes"] == top:
                groups[(r["direction"], r["memory"], r["bidirectional"])].append(r["GBps"])
        for k, v in sorted(groups.items()):
            print(f"copy {k[0]} {k[1]} {'bidir' if k[2] else 'oneway'} @{top >> 20} MiB: "
                  f"min {min(v):.1f} max {max(v):.1f} GB/s over {len(v)}")
    nccl = [r for r in rs if r["kind"] == "nccl"]
    if nccl:
        top = defaultdict(dict)
        for r in nccl:
            key = (r["op"], r["nranks"], r["forced_algo"], r["forced_proto"])
            if not top[key] or r["bytes"] > top[key]["bytes"]:
                top[key] = r
        for key, r in sorted(top.items()):
            print(f"nccl {key[0]:13s} n={key[1]} {key[2]}/{key[3]:7s} @{r['bytes']} B: "
                  f"busbw {r['busbw_GBps']:.1f} GB/s  chose {r.get('algo', '-')}/{r.get('proto', '-')}"
                  f" ch={r.get('channels', '-')}")
        for r in nccl:
            if r["op"] == "allreduce" and r["forced_algo"] == "default" and r["nranks"] == max(
                    x["nranks"] for x in nccl):
                print(f"  allreduce default n={r['nranks']} {r['bytes']:>11d} B {r['time_us']:9.1f} us"
                      f" {r.get('algo', '-')}/{r.get('proto', '-')} ch={r.get('channels', '-')}")


if __name__ == "__main__":
    main(sys.argv[1])
