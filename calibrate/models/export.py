#!/usr/bin/env python3
"""Measures a PyTorch model's training step on this GPU and records what clustersim needs of it.

One process, one GPU, as users run. For a shipped model (or a builder of your own, see
--builder) it writes one raw JSON file with:
  - the layers (modules, in the order their forward ops run) and their parameters in
    model.parameters() order;
  - every aten op of forward, backward and optimizer.step() with its work: GEMM and convolution
    shapes, attention dimensions, or bytes read + written; which dimension grows with batch and
    sequence (from two smaller recordings); bytes saved for backward per layer;
  - the GPU time and kernel count of each op (torch.profiler, kernels matched to ops through the
    CUDA runtime's correlation ids, median over several steps after warm-up);
  - the host time of each phase at a tiny batch (host-bound, so the CPU never waits on the GPU);
  - the measured step time without DDP and with DDP on one rank (NCCL), the input copy, and peak
    memory; these are for validation and are not written into the model file.
`to_yaml.py` turns one or more such files (one per GPU) into a clustersim model file.

  python3 calibrate/models/export.py gpt2 --out calibrate/data/h200x1-models [--batch B] ...
"""
import argparse
import bisect
import collections
import contextlib
import datetime
import gzip
import json
import math
import os
import statistics
import sys
import tempfile
import time
import weakref

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import builders  # noqa: E402

VIEW_OPS = {
    "view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "slice", "select",
    "unsqueeze", "squeeze", "as_strided", "detach", "alias", "split", "split_with_sizes",
    "unbind", "chunk", "_reshape_alias", "narrow", "view_as", "expand_as", "lift_fresh",
    "unflatten", "flatten", "numpy_T", "_local_scalar_dense", "empty", "empty_like",
    "empty_strided", "new_empty", "new_empty_strided", "resize_", "set_", "is_same_size",
}
GEMM_OPS = {"mm", "addmm", "bmm", "baddbmm"}


def tensors_in(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)


def nbytes(t):
    return t.numel() * t.element_size()


def gemm_dtype(dtype):
    if dtype == torch.bfloat16:
        return "bf16"
    if dtype == torch.float16:
        return "fp16"
    return "tf32" if torch.backends.cuda.matmul.allow_tf32 else "fp32"


def conv_dtype(dtype):
    if dtype in (torch.bfloat16, torch.float16):
        return gemm_dtype(dtype)
    return "tf32" if torch.backends.cudnn.allow_tf32 else "fp32"


def describe_op(func, args, kwargs, out):
    """The work of one aten op: a dict with kind and its figures."""
    name = func._schema.name.split("::")[-1]
    base = func.__name__.split(".")[0] if hasattr(func, "__name__") else name
    if name in GEMM_OPS:
        a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
        if a.dim() == 2:
            m, k = a.shape
            n = b.shape[1]
            batch = 1
        else:
            batch, m, k = a.shape
            n = b.shape[2]
        return {"kind": "gemm", "m": int(m), "n": int(n), "k": int(k), "batch": int(batch),
                "dtype": gemm_dtype(a.dtype), "_weight_arg": b}
    if name == "convolution":
        x, w = args[0], args[1]
        groups = int(args[8])
        y = out
        n_, c, *_ = x.shape
        k_out = w.shape[0]
        spatial_out = math.prod(y.shape[2:])
        kernel = math.prod(w.shape[1:])  # C/g * kh * kw
        return {"kind": "conv", "m": int(n_ * spatial_out), "n": int(k_out // groups),
                "k": int(kernel), "batch": groups, "dtype": conv_dtype(x.dtype), "_weight_arg": w}
    if name == "convolution_backward":
        grad_out, x, w = args[0], args[1], args[2]
        groups = int(args[9])
        mask = args[10]
        n_, c = x.shape[0], x.shape[1]
        k_out = w.shape[0]
        spatial_in = math.prod(x.shape[2:])
        spatial_out = math.prod(grad_out.shape[2:])
        rs = math.prod(w.shape[2:])
        ops = []
        if mask[0]:  # dgrad: input gradient, an implicit GEMM over the output channels
            ops.append({"kind": "conv", "m": int(n_ * spatial_in), "n": int(c // groups),
                        "k": int(k_out // groups * rs), "batch": groups,
                        "dtype": conv_dtype(x.dtype)})
        if mask[1]:  # wgrad: contracts over batch x output pixels
            ops.append({"kind": "conv", "m": int(k_out // groups), "n": int(c // groups * rs),
                        "k": int(n_ * spatial_out), "batch": groups,
                        "dtype": conv_dtype(x.dtype)})
        extra = nbytes(grad_out) if mask[2] else 0  # bias gradient: a reduction over grad_out
        return {"kind": "multi", "ops": ops, "bias_bytes": extra}
    if "scaled_dot_product" in name or name.startswith("_flash_attention") or \
            name.startswith("_efficient_attention") or name.startswith("_cudnn_attention"):
        q = args[1] if name.endswith("_backward") else args[0]
        k = args[2] if name.endswith("_backward") else args[1]
        arg_names = [a.name for a in func._schema.arguments]
        causal = False
        if "is_causal" in arg_names:
            i = arg_names.index("is_causal")
            causal = bool(kwargs.get("is_causal", args[i] if i < len(args) else False))
        if q.dim() == 4:  # (batch, heads, seq, head_dim)
            b, h, sq, d = q.shape
            skv = k.shape[2]
        else:
            b, h, sq, d = 1, q.shape[0], q.shape[1], q.shape[2]
            skv = k.shape[1]
        return {"kind": "attention", "batch": int(b), "heads": int(h), "seq_q": int(sq),
                "seq_kv": int(skv), "head_dim": int(d), "causal": causal,
                "dtype": gemm_dtype(q.dtype), "aten": name}
    if name in VIEW_OPS or base in VIEW_OPS:
        return {"kind": "view"}
    if name == "embedding":  # a gather: reads the rows it writes and the indices
        return {"kind": "memory", "bytes": int(2 * nbytes(out) + nbytes(args[1])), "aten": name}
    read = sum(nbytes(t) for t in tensors_in(args)) + sum(nbytes(t) for t in tensors_in(kwargs))
    written = sum(nbytes(t) for t in tensors_in(out))
    if name.endswith("_") and not name.startswith("_foreach"):
        written = 0  # in place: the output is the first input, already counted as read
        first = next(tensors_in(args), None)
        written = nbytes(first) if first is not None else 0
    if name.startswith("_foreach") and name.endswith("_"):
        written = sum(nbytes(t) for t in tensors_in(args[0]))
    return {"kind": "memory", "bytes": int(read + written), "aten": name}


class OrderedParents(dict):
    """ModuleTracker's set of running modules, kept in the order they were entered, so that the
    module entered last (the innermost, also in backward where a module's input feeds two
    branches) is the one an op belongs to."""

    def add(self, name):
        self.pop(name, None)
        self[name] = None

    def remove(self, name):
        del self[name]

    def discard(self, name):
        self.pop(name, None)

    def copy(self):
        return OrderedParents(self)


class Recorder:
    """Records every aten op under a dispatch mode, tagged with the layer and phase it ran in."""

    def __init__(self, model, annotate):
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils.module_tracker import ModuleTracker

        recorder = self
        self.tracker = ModuleTracker()
        self.ops = []
        self.saved = collections.defaultdict(int)  # layer -> bytes saved for backward
        self.saved_storages = set()
        self.phase = "forward"
        self.annotate = annotate
        self.step = 0
        self.param_names = {}
        self.derived = {}  # id(tensor) -> param name, through autocast casts
        self.param_storages = set()
        for pname, p in model.named_parameters():
            self.param_names[id(p)] = pname
            self.param_storages.add(p.untyped_storage().data_ptr())  # counted as parameters

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                index = len(recorder.ops)
                if recorder.annotate:
                    with torch.profiler.record_function(f"cs#{recorder.step}#{index}"):
                        out = func(*args, **kwargs)
                else:
                    out = func(*args, **kwargs)
                recorder.note(func, args, kwargs, out)
                return out

        self.mode = Mode()

    def layer(self):
        parents = [p for p in self.tracker.parents if p != "Global"]
        return parents[-1] if parents else "(outside)"

    def param_of(self, tensor):
        key = id(tensor)
        if key in self.param_names:
            return self.param_names[key]
        # Python reuses the id of a freed tensor: a link counts only while its tensor lives.
        link = self.derived.get(key)
        return link[1] if link and link[0]() is tensor else None

    def link(self, out, source):
        self.derived[id(out)] = (weakref.ref(out), source)

    def note(self, func, args, kwargs, out):
        name = func._schema.name.split("::")[-1]
        work = describe_op(func, args, kwargs, out)
        if name == "_to_copy" and isinstance(out, torch.Tensor):
            source = self.param_of(args[0])
            if source:
                self.link(out, source)
        if name in ("t", "transpose", "permute") and isinstance(out, torch.Tensor):
            source = self.param_of(args[0])
            if source:
                self.link(out, source)
        weight = work.pop("_weight_arg", None)
        if weight is not None:
            pname = self.param_of(weight)
            if pname:
                work["weight"] = pname
        phase = self.phase
        if phase != "optimizer":
            phase = "backward" if self.tracker.is_bw else "forward"
        self.ops.append({"phase": phase, "layer": self.layer(), "aten": name, "work": work})

    def pack(self, tensor):
        # One storage saved by several ops (a convolution's output that BatchNorm saves, then an
        # in-place ReLU's) is held once: count it at the first op that saves it.
        try:
            key = tensor.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):
            key = None
        if key in self.param_storages:
            return tensor
        if key is None or key not in self.saved_storages:
            if key is not None:
                self.saved_storages.add(key)
            self.saved[self.layer()] += tensor.untyped_storage().nbytes() if key else nbytes(tensor)
        return tensor

    @contextlib.contextmanager
    def recording(self):
        self.ops = []
        self.saved = collections.defaultdict(int)
        self.saved_storages = set()
        self.derived = {}
        self.tracker.parents = OrderedParents.fromkeys(["Global"])
        with self.tracker, self.mode, torch.autograd.graph.saved_tensors_hooks(self.pack,
                                                                                lambda t: t):
            yield


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


def make_optimizer(name, model):
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return torch.optim.AdamW(model.parameters(), lr=1e-4)


def record_work(spec, batch, seq, precision, optimizer_name):
    """Ops and saved bytes of one step at (batch, seq), no profiler."""
    torch.manual_seed(0)
    model = spec.build().cuda()
    optimizer = make_optimizer(optimizer_name, model)
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
    optimizer = make_optimizer(optimizer_name, model)
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
    optimizer = make_optimizer(optimizer_name, model)
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
    optimizer = make_optimizer(optimizer_name, model)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="a shipped model (" + ", ".join(builders.MODELS) + ")")
    parser.add_argument("--out", required=True, help="folder for <model>.json")
    parser.add_argument("--batch", type=int)
    parser.add_argument("--seq", type=int)
    parser.add_argument("--precision", choices=["bf16", "fp32"])
    parser.add_argument("--optimizer", choices=["sgd", "adamw"])
    parser.add_argument("--tag", default="", help="suffix of the output name (e.g. -b4)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--profiled", type=int, default=3, help="profiled steps")
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's defaults, stated
    torch.backends.cudnn.allow_tf32 = True
    spec = builders.MODELS[args.model]
    batch = args.batch or spec.batch
    seq = args.seq or spec.seq
    precision = args.precision or spec.precision
    optimizer_name = args.optimizer or spec.optimizer
    started = time.time()

    # Timings first, each on a fresh model: a profiler leaves CUPTI attached to the process, which
    # slows every later launch, so nothing is timed after it.
    # 1. Timed steps without DDP, and with DDP on one rank (NCCL, default bucket cap).
    times, peak, reserved, outside, returns = plain_steps(spec, precision, optimizer_name, batch, seq, args.steps, 5)
    ddp_times, ddp_peak, buckets = ddp_steps(spec, precision, optimizer_name, batch, seq, 25,
                                             args.steps, 5)
    # 2. Host time of each phase.
    host, host_samples = host_phases(spec, precision, optimizer_name, seq, args.steps)

    # 3. What grows with batch and sequence: the same step recorded smaller.
    smaller = {}
    if batch >= 2:
        smaller["batch"] = record_work(spec, batch // 2, seq, precision, optimizer_name)
    if seq and seq >= 2:
        smaller["seq"] = record_work(spec, batch, seq // 2, precision, optimizer_name)

    # 4. The profiled steps, last.
    torch.manual_seed(0)
    model = spec.build().cuda()
    optimizer = make_optimizer(optimizer_name, model)
    gpu = tuple(t.cuda() for t in spec.make_batch(batch, seq))
    for _ in range(3):
        train_step(spec, model, optimizer, gpu, precision)
    torch.cuda.synchronize()
    params, buffers, order_ok = layers_of(model)
    ops, summary, unattributed, saved = profile_ops(spec, model, optimizer, gpu, precision,
                                                   args.profiled)
    del model, optimizer, gpu
    torch.cuda.empty_cache()

    props = torch.cuda.get_device_properties(0)
    record = {
        "format": "clustersim-model-export/1",
        "model": args.model,
        "source": spec.source,
        "date": datetime.date.today().isoformat(),
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": props.total_memory,
        "sm_count": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "settings": {"batch": batch, "seq": seq, "precision": precision,
                     "optimizer": optimizer_name,
                     "input_bytes_per_sample": spec.input_bytes_per_sample(seq),
                     "input_pinned": True},
        "params": params,
        "buffers": buffers,
        "params_in_model_order": order_ok,
        "ops": ops,
        "saved_bytes": saved,
        "smaller": {k: {"ops": [{"phase": o["phase"], "layer": o["layer"], "aten": o["aten"],
                                 "work": o["work"]}
                                for o in v[0]], "saved_bytes": v[1]}
                    for k, v in smaller.items()},
        "host_us": host,
        "host_samples_us": host_samples,
        "unattributed_kernels": unattributed[:200],
        "unattributed_count": len(unattributed),
        "step_ms": {"plain": times, "ddp": ddp_times},
        "step_ms_median": {"plain": statistics.median(times), "ddp": statistics.median(ddp_times)},
        "peak_allocated_bytes": {"plain": peak, "ddp": ddp_peak},
        "peak_reserved_bytes": reserved,
        "outside_allocator_bytes": outside,
        # In the timed plain steps, when each phase's call returned (ms from the step's start):
        # the host's own time where the GPU never held it back (a launch queue that filled, a
        # synchronizing op), else later.
        "phase_returns_ms": returns,
        "ddp_buckets": buckets,
        "export_seconds": time.time() - started,
    }
    os.makedirs(args.out, exist_ok=True)
    name = f"{args.model}{args.tag}"
    path = os.path.join(args.out, f"{name}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(record, f, indent=0, default=str)
    os.replace(path + ".tmp", path)
    with open(os.path.join(args.out, f"{name}.profile.txt"), "w") as f:
        f.write(summary)
    gpu_total = sum(o["gpu_us"] for o in ops) / 1e3
    print(f"{name}: plain {statistics.median(times):.2f} ms, ddp {statistics.median(ddp_times):.2f}"
          f" ms, kernels {sum(o['kernels'] for o in ops)} ({gpu_total:.2f} ms GPU), unattributed"
          f" {len(unattributed)}, host fwd/bwd/opt {host['forward']:.0f}/{host['backward']:.0f}/"
          f"{host['optimizer']:.0f} us, peak {peak / 2**30:.2f} GiB, {time.time() - started:.0f} s",
          flush=True)


if __name__ == "__main__":
    main()
