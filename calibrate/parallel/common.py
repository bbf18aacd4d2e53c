"""What tp_steps.py and pp_steps.py share: the record's common fields, the timed loop with each
phase's host time, the per-rank memory record, and the profiler's NCCL summary.

Uses calibrate/models/steps.py (the optimizer, the timing loop) and calibrate/ddp/ddp_steps.py
(the barrier before timing, every rank's times, the node's record, the JSON writer)."""
import collections
import datetime
import gc
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
sys.path.insert(0, os.path.join(HERE, "..", "ddp"))
import builders  # noqa: E402,F401  (re-exported for the scripts)
from steps import autocast, make_optimizer, timed_steps  # noqa: E402,F401
from ddp_steps import gather_times, node_info, parse_config, write_json  # noqa: E402,F401

SCHEMA = "clustersim-parallel-steps/1"


def init(what):
    """One process per GPU under torchrun: the NCCL group on GPU LOCAL_RANK, TF32 matmul off."""
    if "RANK" not in os.environ:
        raise SystemExit(f"{what}: run under torchrun (one process per GPU)")
    if not torch.cuda.is_available():
        print(f"{what}: no CUDA GPU visible; nothing written", file=sys.stderr)
        sys.exit(1)
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local),
                            timeout=datetime.timedelta(seconds=180))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    return local, dist.get_rank(), dist.get_world_size()


def node():
    info = node_info()
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except ImportError:
        info["transformers"] = None
    info["env"] = {k: v for k, v in os.environ.items()
                   if k.startswith(("TORCH_SYMM", "NVSHMEM_", "OMP_NUM"))}
    return info


def base_record(name, spec, args, world, **extra):
    return {"schema": SCHEMA, "model": name, "source": spec.source, "seq": spec.seq,
            "precision": "bf16 autocast over fp32 parameters", "autocast": True,
            "optimizer": "torch.optim.AdamW(lr=1e-4), foreach default", "tf32_matmul": False,
            "world_size": world, "launch": "torchrun, one process per GPU",
            "steps": args.steps, "warmup": args.warmup,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            **extra}


def clean():
    gc.collect()
    torch.cuda.empty_cache()


def timed_phases(step, args):
    """step(marks) runs one step, calling marks(name) after each phase's call returns; returns
    every rank's step times and the median host return time of each phase (ms from the step's
    start, before the synchronize). Warm-up, a barrier, then the timed steps (ddp_steps.timed)."""
    calls = collections.defaultdict(list)

    def one():
        t0 = time.perf_counter()
        step(lambda phase: calls[phase].append((time.perf_counter() - t0) * 1e3))

    for _ in range(args.warmup):
        one()
    torch.cuda.synchronize()
    dist.barrier()
    times = timed_steps(one, args.steps, 0)
    phases = {k: statistics.median(v[args.warmup:]) for k, v in calls.items()
              if len(v) > args.warmup}
    return times, phases


def rank_memory(setup_bytes, local_elements, phases, losses=None):
    mine = {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
            "allocated_after_setup_bytes": setup_bytes,
            "allocated_end_bytes": torch.cuda.memory_allocated(),
            "local_param_elements": local_elements, "host_phase_return_ms": phases}
    if losses is not None:
        mine["losses"] = losses
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    return every


def result(times, memory):
    every, slowest = gather_times(times)
    return {"step_ms_median": statistics.median(slowest), "step_ms": slowest,
            "rank_step_ms": every, "rank_memory": memory,
            "peak_allocated_bytes": max(m["peak_allocated_bytes"] for m in memory),
            "peak_reserved_bytes": max(m["peak_reserved_bytes"] for m in memory)}


def collective_kind(name):
    low = name.lower()
    for key, kind in (("allreduce", "all_reduce"), ("all_reduce", "all_reduce"),
                      ("allgather", "all_gather"), ("all_gather", "all_gather"),
                      ("reducescatter", "reduce_scatter"), ("reduce_scatter", "reduce_scatter"),
                      ("sendrecv", "send_recv"), ("send", "send_recv"), ("recv", "send_recv"),
                      ("broadcast", "broadcast"), ("alltoall", "all_to_all")):
        if key in low:
            return kind
    return "other"


COMM_ARGS = ("Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype",
             "In split size", "Out split size", "Process Group Name", "Process Group Ranks")


def profile_steps(step, steps, warmup=3):
    """`steps` steps under torch.profiler after `warmup` unprofiled ones; returns the NCCL kernels
    (name, ts, dur, stream), the host-side communication records (record_param_comms and nccl:*
    ranges with their sizes), per-step host spans and a per-step summary per collective kind."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(warmup):
        step(lambda phase: None)
    torch.cuda.synchronize()
    dist.barrier()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU],
                 record_shapes=True) as prof:
        for i in range(steps):
            with torch.profiler.record_function(f"step#{i}"):
                step(lambda phase: None)
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    del prof
    spans = sorted([e["ts"], e["ts"] + e["dur"]] for e in events
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("step#"))
    kernels, comms = [], []
    compute_us = 0.0
    for e in events:
        cat, name = e.get("cat"), e.get("name", "")
        if cat == "kernel":
            if "nccl" in name.lower():
                kernels.append({"name": name[:160], "kind": collective_kind(name),
                                "ts": e["ts"], "dur": e.get("dur", 0),
                                "stream": e.get("args", {}).get("stream")})
            else:
                compute_us += e.get("dur", 0)
        elif cat in ("cpu_op", "user_annotation") and (
                name == "record_param_comms" or name.startswith("nccl:")
                or name.startswith("c10d::")):
            a = e.get("args", {})
            comms.append({"name": name, "ts": e["ts"], "dur": e.get("dur", 0),
                          **{k: a[k] for k in COMM_ARGS if k in a}})
    kernels.sort(key=lambda k: k["ts"])
    comms.sort(key=lambda c: c["ts"])
    summary = {}
    for kind in sorted({k["kind"] for k in kernels}):
        mine = [k for k in kernels if k["kind"] == kind]
        summary[kind] = {"kernels_per_step": len(mine) / steps,
                         "gpu_us_per_step": sum(k["dur"] for k in mine) / steps,
                         "names": sorted({k["name"].split("(")[0] for k in mine})}
    by_name = collections.Counter()
    sizes = collections.defaultdict(collections.Counter)
    for c in comms:
        if c["name"] == "record_param_comms" and "Collective name" in c:
            by_name[c["Collective name"]] += 1
            sizes[c["Collective name"]][str(c.get("In msg nelems"))
                                        + "->" + str(c.get("Out msg nelems"))
                                        + " " + str(c.get("dtype"))] += 1
    return {"profiled_steps": steps, "step_spans_us": spans,
            "summary_per_step": summary,
            "record_param_comms_per_step": {k: v / steps for k, v in by_name.items()},
            "record_param_comms_sizes": {k: dict(v) for k, v in sizes.items()},
            "compute_kernel_us_per_step": compute_us / steps,
            "nccl_kernels": kernels, "comm_records": comms}
