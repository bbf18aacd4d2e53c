#!/usr/bin/env python3
"""PyTorch FSDP2 (fully_shard) training steps on every GPU of a node, one process per GPU, as
users run them; beside the same model without a wrapper and under DDP.

Run under torchrun (`torchrun --nproc-per-node=N calibrate/fsdp/fsdp_steps.py --out DIR ...`);
one JSON file per configuration, `DIR/<model>[-b<batch>]-n<N>.json` (schema
clustersim-fsdp-steps/1), written by rank 0. For each configuration (a shipped model of
calibrate/models/builders.py at its defaults, or `model:batch`), each variant on a fresh model
built from the same seed, in the order --variants gives:

  plain           the step without a wrapper, every rank stepping its own copy at once
  ddp25           DistributedDataParallel at its default bucket cap (25 MiB)
  fsdp            fully_shard on each block (the model's largest nn.ModuleList: GPT-2's
                  transformer.h, Llama's model.layers), then on the root, with
                  MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) and
                  reshard_after_forward=True
  fsdp-noreshard  the same with reshard_after_forward=False
  fsdp-default    the same with reshard_after_forward left at None, fully_shard's default: True
                  for the blocks, False for the root (FSDP's lazy init decides)
  fsdp-ac         fsdp, each block first wrapped in checkpoint_wrapper (non-reentrant
                  activation checkpointing); the model's config gets use_cache=False (HF's
                  key/value cache would grow again in the recompute)
  NAME#2          NAME again (the spread between two runs of one variant)

Modifiers after a base name (plain, ddp25, fsdp, fsdp-noreshard, fsdp-default), in this order:
  -ac             each block wrapped in checkpoint_wrapper first, as fsdp-ac (plain-ac, ddp25-ac)
  -accumK         gradient accumulation: each step is K micro-batches of the batch, each copied
                  from the pinned host batch and its loss divided by K, the gradients synchronised
                  in the last one only (DDP's no_sync() around the others; FSDP2's
                  set_requires_gradient_sync(False) before them, True before the last), then one
                  optimizer step (plain-accum4, ddp25-accum4, fsdp-ac-accum4)

Each: --warmup steps, then --steps timed steps from pinned host inputs copied non_blocking, each
ended by torch.cuda.synchronize() and timed on the host (calibrate/models/steps.py timed_steps,
with a barrier before timing); the step's time is the slowest rank's (every rank's list is kept),
the figure the median over steps. Per rank also the host time of each
step's calls, until train_step returns, before the synchronize (host_call_ms: near the step's
time, the host sets the pace). Per rank: peak allocated and reserved memory over the warm-up
and timed steps (the peaks are reset once the model is wrapped and its optimizer made, after
torch.cuda.empty_cache()), the memory allocated then and after the last step, and the parameter
elements the rank holds. After timing, one forward in eval mode without grad gives each rank's
loss: every variant starts from the same weights and sees the same batch, so plain and DDP agree
with each other, and the FSDP variants with each other and across GPU counts (a check that the
sharded optimizer steps the real weights); the two groups differ a little, since FSDP's bf16
parameters make the embeddings' output, and so the residual stream, bf16 where autocast alone
keeps them fp32.

With --profile (after every timing: the profiler leaves CUPTI attached and slows later launches),
per configuration --profiled fsdp steps under torch.profiler on every rank; rank 0 keeps each
NCCL kernel's name, stream, start and duration, FSDP's own annotated ranges (FSDP::...), the step
ranges (on the host, from the step's first call to the synchronize; and torch.profiler's GPU
annotation of them, which covers only part of each step's kernels) and every other kernel's start, duration, stream and name index, gzipped
(`<tag>.fsdp-timeline.json.gz`, at most --profile-max-bytes, else the other kernels are dropped).

Settings follow calibrate/models/steps.py and calibrate/ddp/ddp_steps.py: bf16 autocast (kept for
FSDP too, on top of its bf16 parameters, so every variant runs the same step function), AdamW or
SGD as the model's spec says, TF32 matmul off. NCCL_NVLS_ENABLE=0 is set by the driver
(run_fsdp.sh).
"""
import argparse
import datetime
import gc
import contextlib
import gzip
import json
import os
import re
import statistics
import sys
import tempfile
import time
import traceback

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
sys.path.insert(0, os.path.join(HERE, "..", "ddp"))
from steps import autocast, make_optimizer, train_step  # noqa: E402
from ddp_steps import gather_times, node_info, parse_config, timed, write_json  # noqa: E402

SCHEMA = "clustersim-fsdp-steps/1"
BASE_VARIANTS = ("plain", "ddp25", "fsdp", "fsdp-noreshard", "fsdp-default", "fsdp-ac")
VARIANT = re.compile(r"(plain|ddp25|fsdp|fsdp-noreshard|fsdp-default)(-ac)?(?:-accum([1-9][0-9]*))?")


def parse_variant(variant):
    """'fsdp-ac-accum4#2' -> ('fsdp', True, 4); SystemExit for a name outside the grammar."""
    match = VARIANT.fullmatch(variant.split("#")[0])
    if match is None:
        raise SystemExit(f"fsdp_steps: unknown variant '{variant}' (bases: plain, ddp25, fsdp, "
                         "fsdp-noreshard, fsdp-default; then -ac, -accumK, #2)")
    return match.group(1), match.group(2) is not None, int(match.group(3) or 1)


def block_list(model):
    """The model's block list: the nn.ModuleList holding the most parameters, and its path."""
    best = None
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) > 0:
            count = sum(p.numel() for p in module.parameters())
            if best is None or count > best[2]:
                best = (name, module, count)
    if best is None:
        raise RuntimeError("fsdp_steps: the model has no nn.ModuleList of blocks")
    return best


def apply_checkpointing(model):
    """Each block in checkpoint_wrapper (non-reentrant), HF's key/value cache off."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        CheckpointImpl, checkpoint_wrapper)
    _, blocks, _ = block_list(model)
    if hasattr(model, "config") and hasattr(model.config, "use_cache"):
        model.config.use_cache = False
    for i in range(len(blocks)):
        blocks[i] = checkpoint_wrapper(blocks[i], checkpoint_impl=CheckpointImpl.NO_REENTRANT)
    return {"activation_checkpointing": "checkpoint_wrapper, NO_REENTRANT",
            "use_cache": getattr(getattr(model, "config", None), "use_cache", None)}


def apply_fsdp(model, mesh, reshard, checkpoint):
    """fully_shard on each block (after checkpoint_wrapper with `checkpoint`), then the root."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    path, blocks, block_params = block_list(model)
    total = sum(p.numel() for p in model.parameters())
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    if checkpoint:
        apply_checkpointing(model)
    for block in blocks:
        fully_shard(block, mesh=mesh, reshard_after_forward=reshard, mp_policy=policy)
    fully_shard(model, mesh=mesh, reshard_after_forward=reshard, mp_policy=policy)
    return {"wrapper": "torch.distributed.fsdp.fully_shard", "blocks": path,
            "block_count": len(blocks), "block_params": block_params,
            "root_params": total - block_params, "reshard_after_forward": reshard,
            "param_dtype": "bfloat16", "reduce_dtype": "float32",
            "activation_checkpointing": "checkpoint_wrapper, NO_REENTRANT" if checkpoint else None,
            "use_cache": getattr(getattr(model, "config", None), "use_cache", None)}


def root_reshards(model):
    """Whether the root's parameter group reshards after forward, as FSDP's lazy init left it
    (private attributes; None when they are not there)."""
    try:
        state = model._get_fsdp_state()
        groups = getattr(state, "_fsdp_param_groups", None)
        if groups is None:
            group = getattr(state, "_fsdp_param_group", None)
            groups = [group] if group is not None else []
        return [g.post_forward_mesh_info is not None for g in groups]
    except Exception:  # private API
        return None


def local_elements(model):
    total = 0
    for p in model.parameters():
        local = p.to_local() if hasattr(p, "to_local") else p
        total += local.numel()
    return total


def build(spec, variant, mesh):
    """The model of one variant, wrapped; returns (model, description)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    base, checkpoint, accum = parse_variant(variant)
    torch.manual_seed(0)
    model = spec.build().cuda()
    params = sum(p.numel() for p in model.parameters())  # each tied parameter once
    extra = {"grad_accum": accum}
    if base.startswith("fsdp"):
        reshard = {"fsdp-noreshard": False, "fsdp-default": None}.get(base, True)
        wrap = apply_fsdp(model, mesh, reshard=reshard, checkpoint=checkpoint)
        return model, {**wrap, "params": params, **extra}
    if checkpoint:
        extra.update(apply_checkpointing(model))
    if base == "plain":
        return model, {"wrapper": None, "params": params, **extra}
    return (DDP(model, device_ids=[torch.cuda.current_device()]),
            {"wrapper": "DistributedDataParallel", "bucket_cap_mb": "default (25)",
             "params": params, **extra})


def accumulated_step(spec, model, optimizer, host, precision, micro, base):
    """`micro` micro-batches, the gradients synchronised in the last, then one optimizer step."""
    for i in range(micro):
        last = i == micro - 1
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        if base.startswith("fsdp"):
            model.set_requires_gradient_sync(last)
        skip = model.no_sync() if base == "ddp25" and not last else contextlib.nullcontext()
        with skip:
            with autocast(precision):
                loss = spec.loss(model, gpu) / micro
            loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def eval_loss(spec, model, gpu):
    model.eval()
    with torch.no_grad(), autocast(spec.precision):
        loss = spec.loss(model, gpu).float().item()
    model.train()
    return loss


def run_variant(spec, batch, variant, mesh, args):
    gc.collect()
    torch.cuda.empty_cache()
    model, wrap = build(spec, variant.split("#")[0], mesh)
    base, _, micro = parse_variant(variant)
    optimizer = make_optimizer(spec.optimizer, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    setup = torch.cuda.memory_allocated()

    calls = []  # host time of each step's calls, until train_step returns (before the sync)

    def step():
        t0 = time.perf_counter()
        if micro == 1:
            gpu = tuple(t.cuda(non_blocking=True) for t in host)
            train_step(spec, model, optimizer, gpu, spec.precision)
        else:
            accumulated_step(spec, model, optimizer, host, spec.precision, micro, base)
        calls.append((time.perf_counter() - t0) * 1e3)

    times = timed(step, args.steps, args.warmup)
    mine = {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
            "allocated_after_setup_bytes": setup,
            "allocated_end_bytes": torch.cuda.memory_allocated(),
            "local_param_elements": local_elements(model),
            "host_call_ms": calls[-args.steps:]}
    if str(wrap.get("wrapper")).endswith("fully_shard"):
        wrap["root_reshards_after_forward"] = root_reshards(model)
    if wrap.get("wrapper") == "DistributedDataParallel":
        try:
            data = model._get_ddp_logging_data()
            wrap["ddp_buckets"] = {k: data.get(k) for k in
                                   ("bucket_sizes", "rebuilt_bucket_sizes", "bucket_cap_bytes")
                                   if k in data}
        except Exception as exc:  # the logging API is private
            wrap["ddp_buckets"] = {"error": str(exc)}
    mine["eval_loss"] = eval_loss(spec, model, tuple(t.cuda() for t in host))
    every, slowest = gather_times(times)
    memory = [None] * dist.get_world_size()
    dist.all_gather_object(memory, mine)
    del model, optimizer
    gc.collect()
    torch.cuda.empty_cache()
    return {**wrap, "step_ms_median": statistics.median(slowest), "step_ms": slowest,
            "rank_step_ms": every, "rank_memory": memory,
            "peak_allocated_bytes": max(m["peak_allocated_bytes"] for m in memory),
            "peak_reserved_bytes": max(m["peak_reserved_bytes"] for m in memory),
            "eval_loss": [m["eval_loss"] for m in memory],
            "host_call_ms_median": [statistics.median(m["host_call_ms"]) for m in memory]}


def profile_fsdp(spec, batch, mesh, steps):
    """`steps` fsdp steps under torch.profiler: NCCL kernels, FSDP's ranges, the other kernels."""
    from torch.profiler import ProfilerActivity, profile

    gc.collect()
    torch.cuda.empty_cache()
    model, wrap = build(spec, "fsdp", mesh)
    optimizer = make_optimizer(spec.optimizer, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))

    def step():
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        train_step(spec, model, optimizer, gpu, spec.precision)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    dist.barrier()
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
    del model, optimizer, prof
    gc.collect()
    torch.cuda.empty_cache()
    spans = {cat: sorted([e["ts"], e["ts"] + e["dur"]] for e in events
                         if e.get("cat") == cat and e.get("name", "").startswith("step#"))
             for cat in ("user_annotation", "gpu_user_annotation")}
    nccl, other, names, ranges = [], [], {}, []
    for e in events:
        cat, name = e.get("cat"), e.get("name", "")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            stream = e.get("args", {}).get("stream")
            if cat == "kernel" and "nccl" in name.lower():
                nccl.append({"name": name[:120], "ts": e["ts"], "dur": e.get("dur", 0),
                             "stream": stream})
            else:
                index = names.setdefault(name[:100] if cat == "kernel" else cat, len(names))
                other.append([e["ts"], e.get("dur", 0), stream, index])
        elif cat in ("user_annotation", "gpu_user_annotation") and name.startswith("FSDP::"):
            ranges.append([name, "gpu" if cat.startswith("gpu") else "cpu", e["ts"],
                           e.get("dur", 0)])
    nccl.sort(key=lambda k: k["ts"])
    other.sort()
    ranges.sort(key=lambda r: r[2])
    return wrap, {"step_spans_us": spans["user_annotation"],
                  "gpu_step_spans_us": spans["gpu_user_annotation"], "nccl_kernels": nccl, "fsdp_ranges": ranges,
                  "other_kernels": other, "other_kernel_names": list(names),
                  "streams": sorted({k["stream"] for k in nccl} | {k[2] for k in other},
                                    key=lambda s: (s is None, s))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--configs", default="gpt2,llama-1b,gpt2-xl")
    parser.add_argument("--variants", default=",".join(BASE_VARIANTS))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profiled", type=int, default=3)
    parser.add_argument("--profile-max-bytes", type=int, default=2_000_000)
    args = parser.parse_args()
    if "RANK" not in os.environ:
        raise SystemExit("fsdp_steps: run under torchrun (one process per GPU)")
    if not torch.cuda.is_available():
        print("fsdp_steps: no CUDA GPU visible; nothing written", file=sys.stderr)
        sys.exit(1)
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local),
                            timeout=datetime.timedelta(seconds=300))
    from torch.distributed.device_mesh import init_device_mesh

    world, rank = dist.get_world_size(), dist.get_rank()
    mesh = init_device_mesh("cuda", (world,))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        parse_variant(v)
    configs = [parse_config(c) for c in args.configs.split(",") if c]
    os.makedirs(args.out, exist_ok=True)
    info = node_info()
    tags = []
    for name, spec, batch in configs:
        tag = f"{name}{'' if batch == spec.batch else f'-b{batch}'}-n{world}"
        tags.append((tag, spec, batch))
        t0 = time.time()
        record = {"schema": SCHEMA, "model": name, "source": spec.source, "batch": batch,
                  "global_batch": batch * world, "seq": spec.seq, "precision": spec.precision,
                  "autocast": spec.precision == "bf16", "optimizer": spec.optimizer,
                  "momentum": spec.momentum if spec.optimizer == "sgd" else None,
                  "world_size": world, "params": None,
                  "launch": "torchrun, one process per GPU", "steps": args.steps,
                  "warmup": args.warmup,
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds"),
                  "node": info, "variants": {}}
        for variant in variants:
            try:
                entry = run_variant(spec, batch, variant, mesh, args)
            except Exception as exc:  # one variant's failure is recorded, the rest still run
                gc.collect()
                torch.cuda.empty_cache()
                entry = {"error": f"{type(exc).__name__}: {exc}"[:2000],
                         "traceback": traceback.format_exc()[-4000:]}
                print(f"{tag} {variant} (rank {rank}): {entry['error']}", file=sys.stderr,
                      flush=True)
            record["variants"][variant] = entry
            if rank == 0 and "step_ms_median" in entry:
                print(f"{tag} {variant}: {entry['step_ms_median']:.2f} ms, peak"
                      f" {entry['peak_allocated_bytes'] / 2**30:.1f} GiB allocated,"
                      f" {entry['peak_reserved_bytes'] / 2**30:.1f} GiB reserved", flush=True)
            if record["params"] is None and "params" in entry:
                record["params"] = entry["params"]
        if rank == 0:
            write_json(os.path.join(args.out, tag + ".json"), record)
            print(f"{tag}: written ({time.time() - t0:.0f} s)", flush=True)
    if args.profile and "fsdp" in [v.split("#")[0] for v in variants]:
        for tag, spec, batch in tags:
            try:
                wrap, prof = profile_fsdp(spec, batch, mesh, args.profiled)
            except Exception as exc:
                print(f"{tag} profile (rank {rank}): {type(exc).__name__}: {exc}",
                      file=sys.stderr, flush=True)
                continue
            if rank != 0:
                continue
            record = {"schema": SCHEMA + "-timeline", "model": tag, "batch": batch,
                      "seq": spec.seq, "world_size": world, "rank": rank, "variant": "fsdp",
                      "steps": args.profiled, "wrap": wrap, **prof}
            path = os.path.join(args.out, tag + ".fsdp-timeline.json.gz")
            write_json(path, record, compress=True)
            if os.path.getsize(path) > args.profile_max_bytes:
                record["other_kernels_dropped"] = len(record["other_kernels"])
                record["other_kernels"] = []
                write_json(path, record, compress=True)
            print(f"{tag}: fsdp timeline, {len(prof['nccl_kernels'])} NCCL kernels,"
                  f" {len(prof['other_kernels'])} others, {os.path.getsize(path)} bytes",
                  flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
