#!/usr/bin/env python3
"""Fits the work model's efficiencies to the ops export.py timed on one GPU.

  python3 calibrate/models/fit_work.py calibrate/data/h200x1-models [--peaks h200]

Per op class, time = fixed + work / (efficiency x datasheet peak), by relative least squares
over every op of every default-settings export in the folder (files without a '-' tag):
GEMMs and convolutions by FLOPs at their dtype's peak, fused attention by FLOPs (backward 2.5x),
memory-bound ops by bytes against the HBM bandwidth with a fixed cost per kernel. Also prints the
median host time per kernel of each phase and the memory held outside PyTorch's allocator.
These are the priors of sim/workload/work/work_model.cpp, sim/workload/ddp/step_plan.cpp and
sim/workload/ddp/memory_check.cpp.
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import to_yaml  # noqa: E402  (the access classes, as the model files write them)

PEAKS = {  # NVIDIA datasheets, dense: FLOP/s per dtype and HBM bytes/s
    "h200": {"bf16": 989.4e12, "fp16": 989.4e12, "tf32": 494.7e12, "fp32": 67e12, "hbm": 4.8e12},
    "h100": {"bf16": 989.4e12, "fp16": 989.4e12, "tf32": 494.7e12, "fp32": 67e12, "hbm": 3.35e12},
}


MEMORY = ("elementwise", "reduction", "strided_reduction")
SHIPPED = ("resnet50", "gpt2", "gpt2-medium", "gpt2-xl", "bert-large", "llama-1b")


def flops(w, backward):
    if w["kind"] in ("gemm", "conv"):
        return 2.0 * w["m"] * w["n"] * w["k"] * w["batch"]
    if w["kind"] == "attention":
        f = 4.0 * w["batch"] * w["heads"] * w["seq_q"] * w["seq_kv"] * w["head_dim"]
        f *= 0.5 if w["causal"] else 1.0
        return f * (2.5 if backward else 1.0)
    return 0.0


def aligned(w):
    """Tensor-core GEMMs want every dimension a multiple of 16 bytes (8 bf16 elements); cuBLAS
    runs others on slower kernels (e.g. GPT-2's vocabulary of 50257)."""
    per = 16 // (2 if w["dtype"] in ("bf16", "fp16") else 4)
    return all(int(w[d]) % per == 0 for d in ("m", "n", "k"))


def weighted_fit(rows, power):
    """rows: (x1, x2, t) with t ~ a x1 + b x2; minimizes sum((a x1 + b x2 - t)^2 / t^power).
    power 1 (GEMMs, attention, convolutions) sits between a relative fit, which the many short
    ops steer, and a plain one; memory-bound ops take power 0, plain least squares: thousands of
    them at a few microseconds each would otherwise set a rate that the long ones (the logits'
    softmax, BatchNorm over a whole batch) miss by half, and a step's time is their sum."""
    s11 = s12 = s22 = r1 = r2 = 0.0
    for x1, x2, t in rows:
        w = t ** -power
        s11 += w * x1 * x1
        s12 += w * x1 * x2
        s22 += w * x2 * x2
        r1 += w * x1 * t
        r2 += w * x2 * t
    det = s11 * s22 - s12 * s12
    a = (r1 * s22 - r2 * s12) / det
    b = (s11 * r2 - s12 * r1) / det
    errors = [abs((a * x1 + b * x2) / t - 1) for x1, x2, t in rows]
    return a, b, statistics.median(errors)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--peaks", default="h200", choices=sorted(PEAKS))
    parser.add_argument("--files", nargs="*", help="fit these exports (names without .json)"
                        " instead of the shipped defaults")
    args = parser.parse_args()
    peaks = PEAKS[args.peaks]
    classes = {"gemm": [], "gemm-misaligned": [], "conv": [], "attention": [], "elementwise": [],
               "reduction": [], "strided_reduction": []}
    host = {"forward": [], "backward": [], "optimizer": []}
    outside = []
    for path in sorted(glob.glob(os.path.join(args.folder, "*.json")) +
                       glob.glob(os.path.join(args.folder, "*.json.gz"))):
        name = os.path.basename(path).split(".json")[0]
        if name not in (args.files or SHIPPED):  # tagged runs: not training data unless asked
            continue
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            raw = json.load(f)
        kernels = {"forward": 0, "backward": 0, "optimizer": 0}
        for op in raw["ops"]:
            kernels[op["phase"]] += op["kernels"]
            if op["kernels"] == 0 or op["gpu_us"] <= 0:
                continue
            w = op["work"]
            back = op["phase"] == "backward"
            if w["kind"] == "multi":
                parts = w["ops"]
                f = sum(flops(p, back) for p in parts)
                if f > 0:
                    dtype = parts[0]["dtype"]
                    classes["conv"].append((1.0 * len(parts), f / peaks[dtype], op["gpu_us"]))
                continue
            if w["kind"] == "gemm" and not aligned(w):
                classes["gemm-misaligned"].append((1.0, flops(w, back) / peaks[w["dtype"]],
                                                   op["gpu_us"]))
            elif w["kind"] in ("gemm", "conv", "attention"):
                classes[w["kind"]].append((1.0, flops(w, back) / peaks[w["dtype"]], op["gpu_us"]))
            elif w["kind"] == "memory":
                classes[to_yaml.access(w.get("aten", ""))].append((op["kernels"], w["bytes"] / peaks["hbm"], op["gpu_us"]))
        for phase in host:
            if kernels[phase]:
                host[phase].append(raw["host_us"][phase] / kernels[phase])
        if raw.get("outside_allocator_bytes"):
            outside.append(raw["outside_allocator_bytes"])
    for kind, rows in classes.items():
        if len(rows) < 2:
            continue
        try:
            a, b, err = weighted_fit(rows, 0 if kind in MEMORY else 1)
        except ZeroDivisionError:  # one shape only: nothing to separate the two terms
            continue
        if b <= 0:
            continue
        print(f"{kind:17s} ops {len(rows):6d}  fixed {a:7.3f} us  efficiency {1e6 / b:6.3f}"
              f"  median |error| per op {100 * err:5.1f}%")
    for phase, values in host.items():
        if values:
            print(f"host us/kernel {phase:9s} median {statistics.median(values):6.2f}"
                  f"  ({', '.join(f'{v:.2f}' for v in values)})")
    if outside:
        print(f"outside allocator bytes median {statistics.median(outside):.0f}"
              f" ({', '.join(str(v) for v in outside)})")


if __name__ == "__main__":
    main()
