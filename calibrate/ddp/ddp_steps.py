#!/usr/bin/env python3
"""PyTorch DDP training steps on every GPU of a node, one process per GPU, as users run them.

Run under torchrun (`torchrun --nproc-per-node=N calibrate/ddp/ddp_steps.py --out DIR ...`); one
JSON file per configuration, `DIR/<model>[-b<batch>]-n<N>.json` (schema clustersim-ddp-steps/1),
written by rank 0. For each configuration (a shipped model of calibrate/models/builders.py at its
defaults, or `model:batch`), in this order, each on a fresh model:

  plain     the training step without DDP, every rank stepping its own copy at once (the work
            a DDP step adds to, under the same host and GPU contention)
  ddp<cap>  DistributedDataParallel(bucket_cap_mb=cap) for each --caps (default 25 and 100)

Each: --warmup steps, then --steps timed steps from pinned host inputs copied non_blocking, each
ended by torch.cuda.synchronize() and timed on the host; the step's time is the slowest rank's
(every rank's list is kept), the figure the median over steps. Also: peak allocated memory, and
DDP's own record of its buckets (`_get_ddp_logging_data`).

Then, with --profile (after every timing: the profiler leaves CUPTI attached and slows later
launches), per configuration: each bucket size all-reduced alone (CUDA events, median of 20), and
--profiled DDP steps (first cap) under torch.profiler, from which each NCCL kernel's start and
duration and the compute stream's kernels are kept: each bucket's all-reduce while backward runs,
against the same bytes alone.

Settings follow calibrate/models/steps.py (the exporter): bf16 autocast, AdamW or SGD with
momentum 0.9 as the model's spec says, TF32 matmul off. NCCL_NVLS_ENABLE=0 is set by the driver
(run_ddp.sh).
"""
import argparse
import datetime
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import builders  # noqa: E402
from steps import make_optimizer, timed_steps, train_step  # noqa: E402

SCHEMA = "clustersim-ddp-steps/1"


def parse_config(text):
    name, _, batch = text.partition(":")
    if name not in builders.MODELS:
        raise SystemExit(f"ddp_steps: unknown model '{name}' (shipped: "
                         + ", ".join(builders.MODELS) + ")")
    spec = builders.MODELS[name]
    return name, spec, int(batch) if batch else spec.batch


def timed(step, steps, warmup):
    """steps.timed_steps, with every rank meeting at a barrier between warm-up and timing."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    return timed_steps(step, steps, 0)


def gather_times(times):
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, times)
    slowest = [max(per_step) for per_step in zip(*every)]
    return every, slowest


def run_variant(spec, batch, cap, args):
    """cap None: plain step; else DDP with that bucket cap. Returns the record's entry."""
    torch.manual_seed(0)
    model = spec.build().cuda()
    if cap is not None:
        model = DDP(model, device_ids=[torch.cuda.current_device()], bucket_cap_mb=cap)
    optimizer = make_optimizer(spec.optimizer, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))

    def step():
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        train_step(spec, model, optimizer, gpu, spec.precision)

    torch.cuda.reset_peak_memory_stats()
    times = timed(step, args.steps, args.warmup)
    every, slowest = gather_times(times)
    entry = {"step_ms_median": statistics.median(slowest), "step_ms": slowest,
             "rank_step_ms": every, "peak_allocated_bytes": torch.cuda.max_memory_allocated()}
    if cap is not None:
        try:
            data = model._get_ddp_logging_data()
            entry["ddp_buckets"] = {k: data.get(k) for k in
                                    ("bucket_sizes", "rebuilt_bucket_sizes", "bucket_cap_bytes")
                                    if k in data}
        except Exception as exc:  # the logging API is private
            entry["ddp_buckets"] = {"error": str(exc)}
    del model, optimizer
    torch.cuda.empty_cache()
    return entry


def run_buckets_only(spec, batch, cap):
    """DDP's rebuilt buckets after a few steps, untimed (for --profile-only)."""
    torch.manual_seed(0)
    model = DDP(spec.build().cuda(), device_ids=[torch.cuda.current_device()], bucket_cap_mb=cap)
    optimizer = make_optimizer(spec.optimizer, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))
    for _ in range(3):
        train_step(spec, model, optimizer, tuple(t.cuda(non_blocking=True) for t in host),
                   spec.precision)
    data = model._get_ddp_logging_data()
    del model, optimizer
    torch.cuda.empty_cache()
    return {k: data.get(k) for k in ("bucket_sizes", "rebuilt_bucket_sizes") if k in data}


def allreduce_alone(sizes_bytes, dtype=torch.float32, reps=20):
    """Each bucket's bytes all-reduced with nothing beside it: CUDA-event median, us."""
    out = []
    for size in sizes_bytes:
        x = torch.ones(max(1, int(size) // 4), dtype=dtype, device="cuda")
        for _ in range(3):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        samples = []
        for _ in range(reps):
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dist.all_reduce(x)
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1e3)
        out.append({"bytes": int(size), "us": statistics.median(samples)})
        del x
    return out


def profile_ddp(spec, batch, cap, steps):
    """Kernels of `steps` DDP steps under torch.profiler: NCCL kernels and the compute stream's."""
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    model = DDP(spec.build().cuda(), device_ids=[torch.cuda.current_device()], bucket_cap_mb=cap)
    optimizer = make_optimizer(spec.optimizer, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))

    def step():
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        train_step(spec, model, optimizer, gpu, spec.precision)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for i in range(steps):
            with torch.profiler.record_function(f"step#{i}"):
                step()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    steps_spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                         if e.get("cat") == "gpu_user_annotation"
                         and e.get("name", "").startswith("step#"))
    kernels = []
    for e in events:
        if e.get("cat") != "kernel":
            continue
        kernels.append({"name": e.get("name", "")[:120], "ts": e["ts"], "dur": e.get("dur", 0),
                        "stream": e.get("args", {}).get("stream")})
    kernels.sort(key=lambda k: k["ts"])
    del model, optimizer
    torch.cuda.empty_cache()
    nccl = [k for k in kernels if "nccl" in k["name"].lower()]
    compute = [k for k in kernels if "nccl" not in k["name"].lower()]
    return {"step_spans_us": steps_spans, "nccl_kernels": nccl,
            "compute_kernels": len(compute),
            "compute_kernel_spans": [[k["ts"], k["dur"], k["stream"]] for k in compute]}


def node_info():
    try:
        gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                              timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        gpus = []
    return {"gpus": gpus, "torch": torch.__version__, "cuda": torch.version.cuda,
            "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
            "nccl_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}


def write_json(path, record, compress=False):
    tmp = path + ".tmp"
    opener = gzip.open if compress else open
    with opener(tmp, "wt") as f:
        json.dump(record, f, indent=None if compress else 1)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--configs", default="gpt2,resnet50,bert-large,gpt2-medium,llama-1b,gpt2-xl")
    parser.add_argument("--caps", default="25,100")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profiled", type=int, default=3)
    parser.add_argument("--profile-only", action="store_true",
                        help="skip the timed steps: only the profiled ones, every rank writing its"
                        " own timeline (<tag>.rank<r>.timeline.json.gz)")
    args = parser.parse_args()
    if "RANK" not in os.environ:
        raise SystemExit("ddp_steps: run under torchrun (one process per GPU)")
    if not torch.cuda.is_available():
        print("ddp_steps: no CUDA GPU visible; nothing written", file=sys.stderr)
        sys.exit(1)
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    world = dist.get_world_size()
    rank = dist.get_rank()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    caps = [float(c) for c in args.caps.split(",")]
    configs = [parse_config(c) for c in args.configs.split(",")]
    os.makedirs(args.out, exist_ok=True)
    info = node_info()
    names = []
    bucket_records = {}
    for name, spec, batch in configs:
        tag = f"{name}{'' if batch == spec.batch else f'-b{batch}'}-n{world}"
        names.append((tag, name, spec, batch))
        t0 = time.time()
        record = {"schema": SCHEMA, "model": name, "batch": batch, "seq": spec.seq,
                  "precision": spec.precision, "optimizer": spec.optimizer,
                  "momentum": spec.momentum if spec.optimizer == "sgd" else None, "world_size": world,
                  "launch": "torchrun, one process per GPU", "steps": args.steps,
                  "warmup": args.warmup,
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds"),
                  "node": info, "variants": {}}
        if args.profile_only:
            bucket_records[tag] = run_buckets_only(spec, batch, caps[0])
            continue
        record["variants"]["plain"] = run_variant(spec, batch, None, args)
        for cap in caps:
            record["variants"][f"ddp{cap:g}"] = run_variant(spec, batch, cap, args)
        bucket_records[tag] = record["variants"][f"ddp{caps[0]:g}"].get("ddp_buckets", {})
        if rank == 0:
            write_json(os.path.join(args.out, tag + ".json"), record)
            v = record["variants"]
            print(f"{tag}: plain {v['plain']['step_ms_median']:.2f} ms, "
                  + ", ".join(f"ddp{c:g} {v[f'ddp{c:g}']['step_ms_median']:.2f}" for c in caps)
                  + f" ms ({time.time() - t0:.0f} s)", flush=True)
    if not args.profile or world < 2:
        dist.destroy_process_group()
        return
    for tag, name, spec, batch in names:
        buckets = bucket_records[tag]
        sizes = buckets.get("rebuilt_bucket_sizes") or buckets.get("bucket_sizes") or []
        if isinstance(sizes, str):
            sizes = [int(s) for s in sizes.split(",") if s.strip()]
        alone = allreduce_alone(sizes)
        prof = profile_ddp(spec, batch, caps[0], args.profiled)
        if rank == 0 or args.profile_only:
            name = tag + (f".rank{rank}" if args.profile_only else "") + ".timeline.json.gz"
            write_json(os.path.join(args.out, name),
                       {"schema": SCHEMA + "-timeline", "model": name, "batch": batch,
                        "world_size": world, "rank": rank, "bucket_cap_mb": caps[0],
                        "bucket_bytes": sizes,
                        "allreduce_alone": alone, **prof}, compress=True)
            print(f"{tag}: timeline {len(prof['nccl_kernels'])} NCCL kernels", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
