"""The timed parts of an export: training steps with and without DDP (one rank), each phase's
host time, the step recorded at other settings, and the model's parameters in order."""
import collections
import contextlib
import os
import statistics
import time

import torch

from recorder import Recorder

def autocast(precision):
    if precision == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train_step(spec, model, optimizer, batch_gpu, precision, recorder=None):
    if recorder:
        recorder.phase = "forward"
    with autocast(precision):
        loss = spec.loss(model, batch_gpu)
    loss.backward()
    if recorder:
        recorder.phase = "optimizer"
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def make_optimizer(name, model, momentum=0.9):
    """AdamW, or SGD with `momentum` (the shipped SGD model, ResNet-50, runs 0.9; PyTorch's
    default is 0, which a model spec can ask for)."""
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=momentum)
    return torch.optim.AdamW(model.parameters(), lr=1e-4)


def record_work(spec, batch, seq, precision, optimizer_name):
    """Ops and saved bytes of one step at (batch, seq), no profiler."""
    torch.manual_seed(0)
    model = spec.build().cuda()
    optimizer = make_optimizer(optimizer_name, model, spec.momentum)
    host = spec.make_batch(batch, seq)
    gpu = tuple(t.cuda() for t in host)
    train_step(spec, model, optimizer, gpu, precision)  # optimizer state exists from here
    recorder = Recorder(model, annotate=False)
    with recorder.recording():
        train_step(spec, model, optimizer, gpu, precision, recorder)
    torch.cuda.synchronize()
    ops, saved = recorder.ops, dict(recorder.saved)
    del model, optimizer, gpu, recorder
    torch.cuda.empty_cache()
    return ops, saved


def timed_steps(step, count, warmup):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def host_phases(spec, precision, optimizer_name, seq, steps):
    """CPU time of each phase at batch 1 and a short sequence: there the GPU finishes each kernel
    before the host launches the next, so the CPU never waits on a full launch queue."""
    torch.manual_seed(0)
    model = spec.build().cuda()
    optimizer = make_optimizer(optimizer_name, model, spec.momentum)
    host = spec.make_batch(1, min(seq, 32) if seq else None)
    gpu = tuple(t.cuda() for t in host)
    phases = collections.defaultdict(list)
    for i in range(steps + 5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with autocast(precision):
            loss = spec.loss(model, gpu)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        t5 = time.perf_counter()
        torch.cuda.synchronize()
        if i >= 5:
            phases["forward"].append((t1 - t0) * 1e6)
            phases["backward"].append((t3 - t2) * 1e6)
            phases["optimizer"].append((t5 - t4) * 1e6)
    del model, optimizer, gpu
    torch.cuda.empty_cache()
    return {k: statistics.median(v) for k, v in phases.items()}, dict(phases)


def ddp_steps(spec, precision, optimizer_name, batch, seq, bucket_cap_mb, count, warmup):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        dist.init_process_group("nccl", rank=0, world_size=1,
                                device_id=torch.device("cuda", 0))
    torch.manual_seed(0)
    model = DDP(spec.build().cuda(), device_ids=[0], bucket_cap_mb=bucket_cap_mb)
    optimizer = make_optimizer(optimizer_name, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, seq))

    def step():
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        train_step(spec, model, optimizer, gpu, precision)

    torch.cuda.reset_peak_memory_stats()
    times = timed_steps(step, count, warmup)
    peak = torch.cuda.max_memory_allocated()
    buckets = None
    try:
        logging_data = model._get_ddp_logging_data()
        buckets = {k: logging_data.get(k) for k in ("bucket_sizes", "rebuilt_bucket_sizes",
                                                     "num_buckets_reduced", "comm_hook")
                   if k in logging_data}
    except Exception as exc:  # the logging API is private and may change
        buckets = {"error": str(exc)}
    del model, optimizer
    torch.cuda.empty_cache()
    return times, peak, buckets


def plain_steps(spec, precision, optimizer_name, batch, seq, count, warmup):
    torch.manual_seed(0)
    model = spec.build().cuda()
    optimizer = make_optimizer(optimizer_name, model, spec.momentum)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, seq))

    calls = collections.defaultdict(list)  # when each phase's call returned, from step start

    def step():
        t0 = time.perf_counter()
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        with autocast(precision):
            loss = spec.loss(model, gpu)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        for phase, t in (("forward", t1), ("backward", t2), ("optimizer", t3)):
            calls[phase].append((t - t0) * 1e3)

    torch.cuda.reset_peak_memory_stats()
    times = timed_steps(step, count, warmup)
    returns = {k: statistics.median(v[warmup:]) for k, v in calls.items()}
    peak = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    # What the GPU holds beyond PyTorch's caching allocator: the CUDA context, cuBLAS/cuDNN
    # workspaces and handles.
    free, total = torch.cuda.mem_get_info()
    outside = total - free - torch.cuda.memory_reserved()
    del model, optimizer
    torch.cuda.empty_cache()
    return times, peak, reserved, outside, returns


def layers_of(model):
    """Parameters and buffers per module, in model.parameters() order (no duplicates)."""
    root = type(model).__name__
    seen = set()
    params = collections.OrderedDict()
    for mname, module in model.named_modules():
        full = root if not mname else f"{root}.{mname}"
        for pname, p in module.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            params.setdefault(full, []).append(
                {"name": pname, "elements": p.numel(), "dtype": str(p.dtype).replace("torch.", ""),
                 "param": f"{mname}.{pname}" if mname else pname})
    order = [f"{mname}.{pname}" if mname else pname for mname, m in model.named_modules()
             for pname, _ in m.named_parameters(recurse=False)]
    expected = [n for n, _ in model.named_parameters()]
    buffers = collections.OrderedDict()
    for mname, module in model.named_modules():
        full = root if not mname else f"{root}.{mname}"
        for bname, b in module.named_buffers(recurse=False):
            buffers.setdefault(full, []).append(
                {"name": bname, "elements": b.numel(), "dtype": str(b.dtype).replace("torch.", "")})
    return params, buffers, order == expected or [n for n in order if n in set(expected)] == expected
