"""Kernel times per op: each recorded op runs inside a record_function range of its own, and
every kernel of torch.profiler's trace is matched to the range around its launch through the CUDA
runtime's correlation id."""
import bisect
import collections
import gzip
import json
import os
import statistics
import tempfile

import torch

from recorder import Recorder
from steps import train_step

def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def kernels_per_op(trace_events):
    """(step, op index) -> list of kernel durations (us), and the unattributed kernels."""
    annotations = collections.defaultdict(list)  # tid -> [(ts, end, step, index)]
    launches = {}
    gpu = []
    for e in trace_events:
        cat = e.get("cat", "")
        if cat == "user_annotation" and e.get("name", "").startswith("cs#"):
            _, step, index = e["name"].split("#")
            annotations[e["tid"]].append((e["ts"], e["ts"] + e.get("dur", 0), int(step),
                                          int(index)))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = (e["tid"], e["ts"])
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu.append(e)
    starts = {}
    for tid, spans in annotations.items():
        spans.sort()
        starts[tid] = [s[0] for s in spans]
    per_op = collections.defaultdict(list)
    unattributed = []
    for k in gpu:
        where = launches.get(k.get("args", {}).get("correlation"))
        hit = None
        if where and where[0] in annotations:
            spans = annotations[where[0]]
            i = bisect.bisect_right(starts[where[0]], where[1]) - 1
            # innermost span holding the launch: spans do not nest (the mode is not re-entered)
            while i >= 0 and not (spans[i][0] <= where[1] <= spans[i][1]):
                i -= 1
                if i >= 0 and where[1] - spans[i][0] > 1e7:
                    i = -1
            if i >= 0:
                hit = spans[i]
        if hit is None:
            unattributed.append({"name": k.get("name", "")[:80], "dur_us": k.get("dur", 0)})
        else:
            per_op[(hit[2], hit[3])].append(k.get("dur", 0))
    return per_op, unattributed


def profile_ops(spec, model, optimizer, gpu, precision, steps):
    """Per-op kernel counts and median GPU time over `steps` profiled steps."""
    from torch.profiler import ProfilerActivity, profile

    recorder = Recorder(model, annotate=True)
    step_ops = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for step in range(steps):
            recorder.step = step
            with recorder.recording():
                train_step(spec, model, optimizer, gpu, precision, recorder)
            torch.cuda.synchronize()
            step_ops.append(recorder.ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        per_op, unattributed = kernels_per_op(load_trace(path))
    summary = prof.key_averages().table(sort_by="cuda_time_total", row_limit=40)
    counts = [len(ops) for ops in step_ops]
    if len(set(counts)) != 1:
        raise SystemExit(f"export: profiled steps ran different op counts {counts}")
    ops = step_ops[-1]
    for index, op in enumerate(ops):
        times = [sum(per_op.get((s, index), [])) for s in range(steps)]
        kernels = [len(per_op.get((s, index), [])) for s in range(steps)]
        op["gpu_us"] = statistics.median(times)
        op["kernels"] = int(statistics.median(kernels))
    return ops, summary, unattributed, dict(recorder.saved)
