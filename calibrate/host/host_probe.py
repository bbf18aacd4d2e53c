#!/usr/bin/env python3
"""How fast this node's host dispatches PyTorch work: the host probe (schema clustersim-host-probe/1).

PyTorch eager, one process per GPU as users run (torchrun, or this script starting the processes
itself with --procs). For each class of op, the host time of one call in a loop of back-to-back
calls on tiny tensors, so the GPU finishes each kernel long before the host has launched the next
and the loop times the host alone (PyTorch's dispatcher, autocast, autograd, the CUDA driver):

  launch       torch.cuda._sleep(0): one kernel through the CUDA driver, almost no ATen
  elementwise  x.add_(1) on a one-element tensor: one ATen op, one kernel
  linear       nn.Linear(64, 64) forward under bf16 autocast with autograd recording
  conv         nn.Conv2d(8, 8, 3) forward under bf16 autocast with autograd recording (cuDNN)
  autograd     one node of backward: a chain of 64 multiplications, loss.backward() / 64
  foreach      torch._foreach_mul_ over 16 tensors: one multi_tensor_apply kernel (optimizers)
  nccl         dist.all_reduce of one float (NCCL, every rank at once; needs the process group)

Each class is timed `alone` (only rank 0 runs, the other processes wait in a barrier) and `all`
(every rank at once, started together), twice each, alternating, so that drift of the host hits
both alike. Per (class, phase, rank): regions of --calls calls, --regions regions after a warm-up,
median microseconds per call. The file records the node (CPU model, cores, GPUs, versions).

  python3 calibrate/host/host_probe.py --out host_probe.json            # every GPU, one process each
  python3 calibrate/host/host_probe.py --out host_probe.json --procs 1  # one GPU
  torchrun --nproc-per-node=N calibrate/host/host_probe.py --out host_probe.json

Exit 1 with one line on stderr when there is no GPU (nothing is written); the output is written
to FILE.tmp and renamed, so it is whole or absent.
"""
import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

SCHEMA = "clustersim-host-probe/1"
CLASSES = ["launch", "elementwise", "linear", "conv", "autograd", "foreach", "nccl"]
CHAIN = 64  # autograd nodes per backward call


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def gpu_list():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                              timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return []


def make_ops(torch, dist, world):
    """Each class: (setup() -> state, call(state) -> None, calls per timed call)."""
    nn = torch.nn
    dev = torch.device("cuda", torch.cuda.current_device())

    def launch():
        return None, lambda s: torch.cuda._sleep(0)

    def elementwise():
        x = torch.zeros(1, device=dev)
        return x, lambda s: s.add_(1.0)

    def linear():
        layer = nn.Linear(64, 64, device=dev)
        x = torch.randn(8, 64, device=dev)

        def call(s):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                layer(x)

        return None, call

    def conv():
        layer = nn.Conv2d(8, 8, 3, padding=1, device=dev)
        x = torch.randn(1, 8, 8, 8, device=dev)

        def call(s):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                layer(x)

        return None, call

    def foreach():
        ts = [torch.randn(16, device=dev) for _ in range(16)]
        return ts, lambda s: torch._foreach_mul_(s, 1.0)

    def nccl():
        x = torch.ones(1, device=dev)
        return x, lambda s: dist.all_reduce(s)

    ops = {"launch": launch, "elementwise": elementwise, "linear": linear, "conv": conv,
           "foreach": foreach}
    if dist is not None:
        ops["nccl"] = nccl
    return ops


def time_calls(torch, call, state, calls, regions):
    """Median host microseconds per call over `regions` regions of `calls` calls (GPU drained
    before each region, so the launch queue never fills)."""
    for _ in range(3):
        for _ in range(calls):
            call(state)
    torch.cuda.synchronize()
    per_call = []
    for _ in range(regions):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            call(state)
        per_call.append((time.perf_counter() - t0) * 1e6 / calls)
    torch.cuda.synchronize()
    return statistics.median(per_call)


def time_autograd(torch, calls, regions):
    """Backward through a chain of CHAIN multiplications: host microseconds per node. The forward
    is built before each timed backward and not timed."""
    dev = torch.device("cuda", torch.cuda.current_device())
    w = torch.ones(1, device=dev, requires_grad=True)

    def chain():
        y = w
        for _ in range(CHAIN):
            y = y * 1.0001
        return y

    for _ in range(5):
        chain().backward()
    torch.cuda.synchronize()
    per_node = []
    for _ in range(regions):
        roots = [chain() for _ in range(max(1, calls // CHAIN))]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for r in roots:
            r.backward()
        per_node.append((time.perf_counter() - t0) * 1e6 / (len(roots) * CHAIN))
    torch.cuda.synchronize()
    return statistics.median(per_node)


def measure_class(torch, ops, cls, calls, regions):
    """Host microseconds per call of one class (per node for autograd)."""
    if cls == "autograd":
        return time_autograd(torch, calls, regions)
    state, call = ops[cls]()
    return time_calls(torch, call, state, calls, regions)


def probe_in_process(calls=256, regions=25):
    """The probe of this process alone (the exporter's use): {"alone_us": {class: us}, ...}, the
    classes this process can time (nccl when a process group is initialized)."""
    import torch
    import torch.distributed as dist

    group = dist if dist.is_available() and dist.is_initialized() else None
    ops = make_ops(torch, group, group.get_world_size() if group else 1)
    figures = {}
    for cls in CLASSES:
        if cls == "nccl" and group is None:
            continue
        figures[cls] = statistics.median(
            [measure_class(torch, ops, cls, calls, regions) for _ in range(2)])
    return {"schema": SCHEMA, "cpu": cpu_model(), "cpus": os.cpu_count(), "alone_us": figures}


def probe(rank, world, args):
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        if rank == 0:
            print("host_probe: no CUDA GPU visible (torch.cuda.is_available() is False);"
                  " nothing written", file=sys.stderr)
        sys.exit(1)
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=torch.device("cuda", local))
    # A CPU group for the barriers, so that waiting ranks never touch their GPU.
    cpu_group = dist.new_group(backend="gloo")
    ops = make_ops(torch, dist, world)
    results = {c: {"alone": [], "all": []} for c in CLASSES}
    for _ in range(2):
        for phase in ("alone", "all"):
            for cls in CLASSES:
                if cls == "nccl" and phase == "alone" and world > 1:
                    continue  # a collective needs every rank
                dist.barrier(group=cpu_group)
                if phase == "alone" and rank != 0:
                    continue
                results[cls][phase].append(
                    measure_class(torch, ops, cls, args.calls, args.regions))
    dist.barrier(group=cpu_group)
    gathered = [None] * world
    dist.all_gather_object(gathered, {"rank": rank, "local_rank": local,
                                      "gpu": torch.cuda.get_device_name(local),
                                      "results": results}, group=cpu_group)
    if rank == 0:
        write(args, world, gathered, torch)
    dist.barrier(group=cpu_group)
    dist.destroy_process_group()


def write(args, world, gathered, torch):
    rows = []
    for g in gathered:
        for cls in CLASSES:
            for phase in ("alone", "all"):
                vals = g["results"][cls][phase]
                if not vals:
                    continue
                rows.append({"class": cls, "phase": phase, "rank": g["rank"],
                             "us": statistics.median(vals), "repeats_us": vals})
    # The node's figure per class: rank 0 alone (one process, as the exporter's host times), and
    # with every rank at once the median over ranks (nccl: every rank at once only).
    summary = {}
    for cls in CLASSES:
        alone = [r["us"] for r in rows if r["class"] == cls and r["phase"] == "alone"]
        both = [r["us"] for r in rows if r["class"] == cls and r["phase"] == "all"]
        entry = {}
        if alone:
            entry["alone_us"] = alone[0]
        if both:
            entry["all_us"] = statistics.median(both)
        if entry:
            summary[cls] = entry
    record = {
        "schema": SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "node": {"hostname": socket.gethostname(), "cpu": cpu_model(), "cpus": os.cpu_count(),
                 "gpus": gpu_list(), "torch": torch.__version__, "cuda": torch.version.cuda,
                 "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
                 "python": platform.python_version()},
        "world_size": world,
        "calls_per_region": args.calls,
        "regions": args.regions,
        "autograd_chain": CHAIN,
        "summary": summary,
        "rows": rows,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(record, f, indent=1)
    os.replace(args.out + ".tmp", args.out)
    print(f"host_probe: {world} process(es), {record['node']['cpu']}")
    for cls, e in summary.items():
        print(f"  {cls:12s} alone {e.get('alone_us', float('nan')):7.2f} us"
              f"   all ranks {e.get('all_us', float('nan')):7.2f} us")


def spawned(rank, world, args):
    os.environ["LOCAL_RANK"] = str(rank)
    probe(rank, world, args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output JSON file")
    parser.add_argument("--procs", type=int, default=0,
                        help="processes to start, one per GPU (0: every GPU); ignored under"
                        " torchrun")
    parser.add_argument("--calls", type=int, default=256, help="calls per timed region")
    parser.add_argument("--regions", type=int, default=25, help="timed regions per figure")
    parser.add_argument("--port", type=int, default=29561)
    args = parser.parse_args()
    if args.calls < CHAIN or args.regions < 1 or args.procs < 0:
        parser.error(f"--calls must be >= {CHAIN}, --regions >= 1, --procs >= 0")
    if "RANK" in os.environ:
        probe(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus == 0:
        print("host_probe: no CUDA GPU visible (torch.cuda.is_available() is False); nothing"
              " written", file=sys.stderr)
        sys.exit(1)
    procs = args.procs or gpus
    if procs > gpus:
        print(f"host_probe: --procs {procs} but only {gpus} GPU(s) visible", file=sys.stderr)
        sys.exit(2)
    import torch.multiprocessing as mp

    mp.start_processes(spawned, args=(procs, args), nprocs=procs, start_method="spawn")


if __name__ == "__main__":
    main()
