"""What one training step asks of the GPU, op by op: a dispatch mode records every aten op with
its work (GEMM and convolution shapes, attention dimensions, bytes read and written) and the
module it ran in, and the bytes each module saves for backward."""
import collections
import contextlib
import math
import weakref

import torch

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
