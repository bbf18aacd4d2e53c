#!/usr/bin/env python3
"""What DDP's find_unused_parameters=True costs on one rank, as users run it (one process, NCCL).

With it, DDP walks the autograd graph from the forward's outputs at every step (on the host,
before backward) and never rebuilds its buckets. For each model given: the autograd graph's node
count and, for find_unused_parameters False and True stepped in turn (40 steps each after 5),
the median host time of the forward call and of the step, at batch 1 with a short sequence
(host-bound: the walk shows up whole) and at the model's default batch; DDP's own bucket record
for both. Writes ddp_options.json.

  python3 calibrate/models/ddp_options.py --out DIR gpt2 resnet50 bert-large
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import builders  # noqa: E402
from steps import autocast, make_optimizer  # noqa: E402


def autograd_nodes(loss):
    seen, todo = set(), [loss.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        todo.extend(f for f, _ in fn.next_functions)
    return len(seen)


def run(spec, batch, seq, steps=40, warmup=5):
    """Two DDP wrappers of the same model, find_unused_parameters False and True, stepped in
    turn (so that drift of the host's speed hits both alike). Per wrapper: the host time of the
    forward call (DDP's walk of the graph happens inside it, before it returns), the step time,
    the autograd graph's node count and DDP's bucket record."""
    wrappers = {}
    for find_unused in (False, True):
        torch.manual_seed(0)
        model = DDP(spec.build().cuda(), device_ids=[0], find_unused_parameters=find_unused)
        wrappers[find_unused] = (model, make_optimizer(spec.optimizer, model, spec.momentum))
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, seq))
    forward_ms = {False: [], True: []}
    step_ms = {False: [], True: []}
    nodes = {}
    for i in range(warmup + steps):
        for find_unused, (model, optimizer) in wrappers.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            gpu = tuple(t.cuda(non_blocking=True) for t in host)
            with autocast(spec.precision):
                loss = spec.loss(model, gpu)
            t1 = time.perf_counter()
            if find_unused not in nodes:
                nodes[find_unused] = autograd_nodes(loss)
                t1 = t0 = None  # the count's own time is not the step's
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            if i >= warmup and t0 is not None:
                forward_ms[find_unused].append((t1 - t0) * 1e3)
                step_ms[find_unused].append((t2 - t0) * 1e3)
    rows = []
    for find_unused, (model, _) in wrappers.items():
        data = model._get_ddp_logging_data()
        rows.append({"batch": batch, "seq": seq, "find_unused_parameters": find_unused,
                     "forward_host_ms": statistics.median(forward_ms[find_unused]),
                     "step_ms": statistics.median(step_ms[find_unused]),
                     "step_ms_all": step_ms[find_unused], "autograd_nodes": nodes[find_unused],
                     "buckets": {k: data.get(k) for k in ("bucket_sizes", "rebuilt_bucket_sizes")
                                 if k in data}})
    del wrappers
    torch.cuda.empty_cache()
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    rows = []
    for name in args.models:
        spec = builders.MODELS[name]
        for batch, seq in ((1, min(spec.seq, 32) if spec.seq else None), (spec.batch, spec.seq)):
            for row in run(spec, batch, seq):
                row["model"] = name
                rows.append(row)
                print(f"{name} batch {batch} find_unused {row['find_unused_parameters']}: step"
                      f" {row['step_ms']:.3f} ms, forward on the host {row['forward_host_ms']:.3f}"
                      f" ms, {row['autograd_nodes']} autograd nodes", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ddp_options.json"), "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "rows": rows}, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
