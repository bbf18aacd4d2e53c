#!/usr/bin/env python3
"""Writes a clustersim model file (models/README.md) from export.py's raw JSON files.

  python3 calibrate/models/to_yaml.py -o models/gpt2.yaml FIRST.json [MORE.json ...]
  python3 calibrate/models/to_yaml.py -o models/llama-3.1-8b.yaml [--depth N] SHALLOW.json.gz

A shallow export (a few of a model's blocks; export.py records the full depth) is written at full
depth, its blocks as one `repeat:` block (depth.py says how the times are carried); `--depth N`
sets the depth, `--depth 0` writes the export as it ran. `--tp NAME=ROLE` (repeatable) writes
`tp: ROLE` into every layer whose name's last component is NAME (models/README.md, `tp`): the
tensor-parallel roles stated in the file rather than left to clustersim's rule by name.

FIRST gives the structure, the work and the training settings (recorded_at); every file,
FIRST included, adds one measurement: per-layer GPU times, optimizer and host times on its GPU at
its settings. Runs here or on the GPU machine; needs only PyYAML-free Python.
"""
import argparse
import difflib
import gzip
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from depth import Repeat  # noqa: E402
from yaml_text import flow, fmt, momentum_of  # noqa: E402

GPU_MODELS = {  # nvidia-smi's name -> the GPU model name the topologies use
    "NVIDIA H200": ("H200-SXM-141GB", "h200"),
    "NVIDIA H100 80GB HBM3": ("H100-SXM5-80GB", "h100"),
    "NVIDIA A100-SXM4-80GB": ("A100-SXM4-80GB", "a100"),
    "NVIDIA A100-SXM4-40GB": ("A100-SXM4-40GB", "a100"),
    "NVIDIA L40S": ("L40S", "l40s"),
}
DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def short(layer, root):
    if layer == root:
        return "(root)"  # ops of the top module itself, e.g. a language model's loss
    if layer.startswith(root + "."):
        return layer[len(root) + 1:]
    return layer  # "(outside)": ops outside the model, the loss of a torchvision model


def segments(ops, root):
    """Forward ops grouped into layers: maximal runs of one module, in the order they ran."""
    layers = []
    first_of = {}
    for op in ops:
        if op["phase"] != "forward" or op["kernels"] == 0:
            continue
        module = op["layer"]
        if not layers or layers[-1]["module"] != module:
            count = sum(1 for layer in layers if layer["module"] == module)
            name = short(module, root) + (f"#{count + 1}" if count else "")
            layers.append({"module": module, "name": name, "forward": [], "backward": []})
            first_of.setdefault(module, layers[-1])
        layers[-1]["forward"].append(op)
    return layers, first_of


def backward_owner(layers, first_of, module):
    if module in first_of:
        return first_of[module]
    # a module whose forward launched nothing (a parent of the modules that did): its backward
    # ops go to the last layer inside it, else a layer of its own at the end
    inside = [layer for layer in layers if layer["module"].startswith(module + ".")]
    if inside:
        return inside[-1]
    layer = {"module": module, "name": module, "forward": [], "backward": []}
    layers.append(layer)
    first_of[module] = layer
    return layer


def exponent(big, small):
    if big <= 0 or small <= 0:
        return 1.0
    return round(min(3.0, max(0.0, math.log2(big / small))), 2)


def grows(work, smaller):
    """Which GEMM dimension halved when batch (or seq) was halved."""
    if smaller is None:
        return "none"
    for dim in ("m", "n", "k", "batch"):
        if smaller.get(dim) and work[dim] == 2 * smaller[dim]:
            return dim
    return "none"


def match_smaller(ops, smaller_ops):
    """Pairs each op with its counterpart in a smaller run: the ops of each phase aligned by
    name (a run may add or drop an op, e.g. a clone that only one batch size needs)."""
    if smaller_ops is None:
        return {}

    def label(o):
        return o["work"].get("aten") or o["work"].get("kind")

    pairs = {}
    for phase in ("forward", "backward", "optimizer"):
        ours = [i for i, o in enumerate(ops)
                if o["phase"] == phase and o["work"].get("kind") != "view"]
        theirs = [o for o in smaller_ops
                  if o["phase"] == phase and o["work"].get("kind") != "view"]
        matcher = difflib.SequenceMatcher(None, [label(ops[i]) for i in ours],
                                          [label(o) for o in theirs], autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            for j in range(size):
                mine, other = ops[ours[a + j]], theirs[b + j]
                if other["work"].get("kind") == mine["work"].get("kind"):
                    pairs[ours[a + j]] = other["work"]
    return pairs


def op_entry(op, half_batch, half_seq, has_seq, layer_params):
    w = op["work"]
    kind = w["kind"]
    kernels = max(1, op["kernels"])
    if kind in ("gemm", "conv"):
        entry = {"op": kind, "m": w["m"], "n": w["n"], "k": w["k"], "batch": w["batch"],
                 "dtype": w["dtype"]}
        g = {"batch": grows(w, half_batch)}
        if has_seq:
            g["seq"] = grows(w, half_seq)
        entry["grows"] = g
        weight = w.get("weight", "")
        local = weight.rsplit(".", 1)[-1]
        # The exporter follows a parameter through its casts by object id, which Python reuses
        # once a tensor is freed: a link is kept only where the shape fits the parameter.
        fits = [p for p in layer_params if p["param"] == weight
                and p["elements"] == w["n"] * w["k"] * w["batch"]]
        if weight and fits:
            entry["weight"] = local
    elif kind == "attention":
        entry = {"op": "attention", "batch": w["batch"], "heads": w["heads"], "seq_q": w["seq_q"],
                 "seq_kv": w["seq_kv"], "head_dim": w["head_dim"], "causal": w["causal"],
                 "dtype": w["dtype"]}
    else:  # memory, and the bias reduction of a convolution's backward
        byt = w.get("bytes", 0)
        eb = exponent(byt, half_batch.get("bytes", 0)) if half_batch else 1.0
        es = (exponent(byt, half_seq.get("bytes", 0)) if half_seq else 1.0) if has_seq else 0.0
        entry = {"op": "memory", "bytes": byt, "scale": [eb, es]}
        if access(w.get("aten", "")) != "elementwise":
            entry["access"] = access(w.get("aten", ""))
    entry["kernels"] = kernels
    return entry


def expand_multi(op):
    """A convolution's backward is up to two implicit GEMMs (data and weight gradients)."""
    w = op["work"]
    if w.get("kind") != "multi":
        return [op]
    parts = [dict(op, work=sub, kernels=0) for sub in w["ops"]]
    if w.get("bias_bytes"):
        parts.append(dict(op, work={"kind": "memory", "bytes": w["bias_bytes"]}, kernels=0))
    if parts:
        parts[0]["kernels"] = op["kernels"]  # the kernels are counted once, on the first part
    return parts


REDUCTIONS = ("norm", "softmax", "sum", "mean", "pool", "nll_loss", "embedding_dense_backward",
              "var", "std", "amax", "max", "min", "cumsum")


def access(aten):
    """How an op walks memory (models/README.md): BatchNorm reduces across the batch and the
    spatial axes of NCHW tensors; the rest of REDUCTIONS over the contiguous axis."""
    if "batch_norm" in aten:
        return "strided_reduction"
    return "reduction" if any(r in aten for r in REDUCTIONS) else "elementwise"


def measurement_id(raw, first):
    gpu, prefix = GPU_MODELS.get(raw["gpu"], (None, None))
    if gpu is None:
        raise SystemExit(f"to_yaml: unknown GPU '{raw['gpu']}'; add it to GPU_MODELS")
    s, f = raw["settings"], first["settings"]
    tag = prefix
    if s["precision"] != f["precision"]:
        tag += "-" + s["precision"]
    if s["batch"] != f["batch"]:
        tag += f"-b{s['batch']}"
    if s.get("seq") != f.get("seq"):
        tag += f"-s{s['seq']}"
    if s["optimizer"] != f["optimizer"]:
        tag += "-" + s["optimizer"]
    return tag, gpu


def build(raws, sources, depth=None, blocks=None, tp=None):
    """The model file's text; with `depth`, the numbered blocks (`blocks`, their name prefix,
    else found) written as one repeat block of that many (depth.py); `tp` maps a layer name's last
    component to the tensor-parallel role written into those layers."""
    first = raws[0]
    root = next(iter(first["params"])).split(".")[0] if first["params"] else "model"
    ops = []
    for op in first["ops"]:
        ops.extend(expand_multi(op))
    has_seq = first["settings"].get("seq") is not None
    half_batch = match_smaller(first["ops"], first["smaller"].get("batch", {}).get("ops"))
    half_seq = match_smaller(first["ops"], first["smaller"].get("seq", {}).get("ops"))

    layers, first_of = segments(first["ops"], root)
    for op in first["ops"]:
        if op["phase"] == "backward" and op["kernels"] > 0:
            backward_owner(layers, first_of, op["layer"])["backward"].append(op)
    params = dict(first["params"])
    buffers = first.get("buffers", {})
    # A parameter of a module that runs no op of its own (BERT's cls.predictions.bias, tied to
    # its decoder's bias) goes to the last layer of that module's submodules in forward order:
    # the one that uses it, whose backward makes its gradient.
    has_layer = {layer["module"] for layer in layers}
    for module in list(params):
        if module in has_layer:
            continue
        users = [layer["module"] for layer in layers if layer["module"].startswith(module + ".")]
        if users:
            params[users[-1]] = params.get(users[-1], []) + params.pop(module)
    # measured GPU time per layer, for every file
    measured = []
    for raw in raws:
        mid, gpu = measurement_id(raw, first)
        per_layer = {}
        lay, fo = segments(raw["ops"], root)
        for op in raw["ops"]:
            if op["phase"] == "backward" and op["kernels"] > 0:
                backward_owner(lay, fo, op["layer"])["backward"].append(op)
        for layer in lay:
            per_layer[layer["name"]] = {
                "forward_us": round(sum(o["gpu_us"] for o in layer["forward"]), 3),
                "backward_us": round(sum(o["gpu_us"] for o in layer["backward"]), 3),
                "forward_kernels": sum(o["kernels"] for o in layer["forward"]),
                "backward_kernels": sum(o["kernels"] for o in layer["backward"])}
        opt = [o for o in raw["ops"] if o["phase"] == "optimizer"]
        s = raw["settings"]
        m = {"id": mid, "gpu": gpu, "batch": s["batch"]}
        if has_seq:
            m["seq"] = s["seq"]
        m.update({"precision": s["precision"], "optimizer": s["optimizer"]})
        if s["optimizer"] == "sgd":
            m["momentum"] = momentum_of(s)
        m.update({
                  "optimizer_us": round(sum(o["gpu_us"] for o in opt), 3),
                  "optimizer_kernels": sum(o["kernels"] for o in opt),
                  "host_us": {k: round(v, 1) for k, v in raw["host_us"].items()}})
        if "host_probe" in raw:  # exports from before the probe existed have none
            probe = raw["host_probe"]
            m["host"] = {"probe": probe["schema"],
                         **{f"{k}_us": round(v, 2) for k, v in probe["alone_us"].items()}}
        m["source"] = sources[raws.index(raw)]
        measured.append((m, per_layer))

    repeat, notes = None, []
    if depth is not None:
        repeat = Repeat([layer["name"] for layer in layers], depth, blocks)
        notes = repeat.scale(measured, first["params"], first.get("saved_bytes", {}), root)

    if tp:
        missing = set(tp) - {layer["name"].rsplit(".", 1)[-1] for layer in layers}
        if missing:
            raise SystemExit(f"to_yaml --tp: no layer is named ...{', ...'.join(sorted(missing))}")
        assemble_layer = lambda name, sec, meas, indent="  ": with_tp(  # noqa: E731
            assemble(name, sec, meas, indent), tp.get(name.rsplit(".", 1)[-1]))
    else:
        assemble_layer = assemble
    out = []
    s = first["settings"]
    out.append(f"# {first['model']}: written by calibrate/models/export.py + to_yaml.py from")
    for src in sources:
        out.append(f"#   {src}")
    out.append("# Work (shapes, bytes, saved activations) as recorded by PyTorch's dispatcher at")
    out.append("# recorded_at; measured times are kernel-time sums from torch.profiler (medians).")
    out.extend(notes)
    out.append(f"model: {first['model']}")
    out.append(f"source: {json.dumps(first['source'])}")
    out.append("settings:")
    out.append(f"  batch: {s['batch']}")
    if has_seq:
        out.append(f"  seq: {s['seq']}")
    out.append(f"  precision: {s['precision']}")
    out.append(f"  optimizer: {s['optimizer']}")
    if s["optimizer"] == "sgd":
        out.append(f"  momentum: {fmt(momentum_of(s))}")
    out.append(f"  input_bytes_per_sample: {s['input_bytes_per_sample']}")
    out.append(f"  input_pinned: {fmt(bool(s['input_pinned']))}")
    rec = {"batch": s["batch"]}
    if has_seq:
        rec["seq"] = s["seq"]
    rec["precision"] = s["precision"]
    out.append(f"recorded_at: {flow(rec)}")
    out.append("measurements:")
    for m, _ in measured:
        out.append(f"  - id: {m['id']}")
        for k, v in m.items():
            if k != "id":
                out.append(f"    {k}: {fmt(v)}")
    out.append("layers:")
    ctx = {"saved": first.get("saved_bytes", {}),
           "saved_b": first["smaller"].get("batch", {}).get("saved_bytes", {}),
           "saved_s": first["smaller"].get("seq", {}).get("saved_bytes", {}),
           "index_of": {id(o): i for i, o in enumerate(first["ops"])},
           "first_of": first_of, "params": params, "buffers": buffers,
           "half_batch": half_batch, "half_seq": half_seq, "has_seq": has_seq}
    if repeat is None:
        for layer in layers:
            out.extend(assemble_layer(layer["name"], layer_sections(layer, ctx),
                                measured_of(layer["name"], measured)))
    else:
        before, block_lines, after = repeat.write(
            layers, lambda layer: layer_sections(layer, ctx), assemble_layer, measured)
        for layer in before:
            out.extend(assemble_layer(layer["name"], layer_sections(layer, ctx),
                                measured_of(layer["name"], measured)))
        out.extend(block_lines)
        for layer in after:
            out.extend(assemble_layer(layer["name"], layer_sections(layer, ctx),
                                measured_of(layer["name"], measured)))
    return "\n".join(out) + "\n"


def layer_sections(layer, ctx):
    """A layer's lines but its name and measured times: params, buffers, activations, ops."""
    module = layer["module"]
    is_first = ctx["first_of"].get(module) is layer
    sec = {"params": [], "buffers": [], "activations": [], "forward": [], "backward": []}
    lp = ctx["params"].get(module, []) if is_first else []
    for p in lp:
        sec["params"].append(flow({"name": p["name"], "elements": p["elements"],
                                   "dtype": DTYPES.get(p["dtype"], p["dtype"])}))
    lb = ctx["buffers"].get(module, []) if is_first else []
    for b in lb:
        if b["dtype"] in DTYPES:
            sec["buffers"].append(flow({"name": b["name"], "elements": b["elements"],
                                        "dtype": DTYPES[b["dtype"]]}))
    saved, saved_b, saved_s = ctx["saved"], ctx["saved_b"], ctx["saved_s"]
    if is_first and saved.get(module):
        act = saved[module]
        eb = exponent(act, saved_b.get(module, 0)) if saved_b else 1.0
        es = (exponent(act, saved_s.get(module, 0)) if saved_s else 1.0) if ctx["has_seq"] else 0.0
        sec["activations"].append(flow({"bytes": act, "scale": [eb, es]}))
    for phase in ("forward", "backward"):
        for op in layer[phase]:
            i = ctx["index_of"][id(op)]
            for part_index, part in enumerate(expand_multi(op)):
                hb = ctx["half_batch"].get(i)
                hs = ctx["half_seq"].get(i)
                if op["work"].get("kind") == "multi":
                    hb = (hb or {}).get("ops", [None] * 3)[part_index] if hb and part_index < len(hb.get("ops", [])) else None
                    hs = None
                sec[phase].append(flow(op_entry(part, hb or {}, hs or {}, ctx["has_seq"], lp)))
    return sec


def measured_of(name, measured):
    return {m["id"]: per_layer[name] for m, per_layer in measured if name in per_layer}


def assemble(name, sec, meas, indent="  "):
    """A layer entry's lines, at `indent` (deeper inside a repeat block)."""
    out = [f"{indent}- name: {fmt(name)}"]
    for key in ("params", "buffers"):
        if sec[key]:
            out.append(f"{indent}  {key}:")
            out.extend(f"{indent}    - {line}" for line in sec[key])
    if sec["activations"]:
        out.append(f"{indent}  activations: {sec['activations'][0]}")
    for phase in ("forward", "backward"):
        if sec[phase]:
            out.append(f"{indent}  {phase}:")
            out.extend(f"{indent}    - {line}" for line in sec[phase])
    if meas:
        out.append(f"{indent}  measured:")
        out.extend(f"{indent}    {mid}: {flow(v)}" for mid, v in meas.items())
    return out


def with_tp(lines, role):
    """A layer entry's lines with `tp: role` after its name (unchanged without a role)."""
    if role is None:
        return lines
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    return [lines[0], f"{indent}  tp: {role}"] + lines[1:]


TP_ROLES = ("column", "row", "split", "vocab", "replicated")


def tp_roles(pairs):
    """`--tp NAME=ROLE` arguments as a dict."""
    roles = {}
    for pair in pairs or []:
        name, _, role = pair.partition("=")
        if not name or role not in TP_ROLES:
            raise SystemExit(f"to_yaml --tp {pair}: expected NAME=ROLE, ROLE one of"
                             f" {', '.join(TP_ROLES)}")
        roles[name] = role
    return roles


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--out", required=True)
    parser.add_argument("--depth", type=int,
                        help="write the numbered blocks as one repeat block of this many"
                        " (default: the full depth a shallow export recorded; 0: as exported)")
    parser.add_argument("--blocks", metavar="PREFIX",
                        help="with a depth: the blocks' name prefix (e.g. model.layers; default:"
                        " the most common prefix of numbered layers)")
    parser.add_argument("--tp", action="append", metavar="NAME=ROLE",
                        help="write `tp: ROLE` into the layers whose name ends in NAME"
                        " (repeatable; ROLE one of " + ", ".join(TP_ROLES) + ")")
    parser.add_argument("raw", nargs="+")
    args = parser.parse_args()
    raws = []
    for path in args.raw:
        # Exports may be committed gzipped (<model>.json.gz).
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            raws.append(json.load(f))
    sources = [os.path.relpath(p) for p in args.raw]
    depth = args.depth
    if depth is None and raws[0].get("depth"):
        depth = raws[0]["depth"]["full"]
    text = build(raws, sources, depth or None, args.blocks, tp_roles(args.tp))
    with open(args.out + ".tmp", "w") as f:
        f.write(text)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
