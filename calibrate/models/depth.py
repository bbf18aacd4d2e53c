"""A shallow export written at full depth (to_yaml.py --depth): the model's numbered blocks
(`model.layers.0`, `model.layers.1`, ...; the layers whose names share the prefix before their
first number, the most common such prefix unless one is named) become one `repeat: N` block whose
layer names hold `{i}` (models/README.md).

- Work (ops, params, activations): the last exported block's. The blocks must have the same
  layers, params and ops; where they do not, the model is not one block repeated and nothing is
  written. Bytes the first block alone saves for backward (a tensor every block uses, saved once
  at its first use: Llama's RoPE cos/sin) are not carried; the file's header says how many.
- Measured times: each layer's median over the exported blocks, field by field. In the export
  of llama-1b (calibrate/data/h200x2r3-models) the 16 blocks' forward and backward sums lie
  within 0.3 % and 0.9 % of each other, the first and the last block no different from the
  rest, so no block is special; the blocks of the shallow Llama-3.1 exports
  (calibrate/data/h200x1-llama31) differ by up to 4 % in backward, block to block and run to
  run. The median keeps one block's outlier out once there are three (with two it is the mean).
- Per measurement, what the whole model's step scales: `optimizer_us`, `optimizer_kernels` and
  `host_us.optimizer` by the ratio of the parameters' elements at full depth to the export's
  (AdamW's and SGD's foreach kernels stream every element, and PyTorch's multi_tensor_apply
  launches one kernel per 320 chunks of 65536 elements, so for large tensors both the time and
  the launches grow with the elements; a model of many small tensors, whose launches follow the
  tensor count, gets too few launches); `host_us.forward` and `.backward` by the ratio of the
  phase's kernels at full depth to the export's, so that clustersim's host cost per kernel (a
  phase's host time over its kernels) stays the measured one.
"""
import re
import statistics

NUMBERED = re.compile(r"^(?P<prefix>.+?)\.(?P<index>\d+)(?P<rest>[.#].*)?$")
FIELDS = ("forward_us", "backward_us", "forward_kernels", "backward_kernels")


def short(module, root):
    return module[len(root) + 1:] if module.startswith(root + ".") else module


class Repeat:
    """The blocks among a model's layers (in forward order) and the depth to write them at."""

    def __init__(self, names, depth, prefix=None):
        found = {}
        for pos, name in enumerate(names):
            m = NUMBERED.match(name)
            if m:
                found.setdefault(m["prefix"], []).append((pos, int(m["index"]), m["rest"] or ""))
        if prefix is None:
            if not found:
                raise SystemExit("to_yaml --depth: no numbered blocks among the layers (names"
                                 " such as model.layers.0.mlp)")
            prefix = max(found, key=lambda p: len(found[p]))
        elif prefix not in found:
            raise SystemExit(f"to_yaml --blocks {prefix}: no layer is named {prefix}.N...; "
                             f"numbered prefixes: {', '.join(found) or 'none'}")
        entries = found[prefix]
        positions = [e[0] for e in entries]
        indices = [e[1] for e in entries]
        if positions != list(range(positions[0], positions[-1] + 1)) or indices != sorted(indices):
            raise SystemExit(f"to_yaml --depth: the layers of {prefix}.N are not one run in"
                             " forward order, block after block")
        count = indices[-1] + 1
        if sorted(set(indices)) != list(range(count)):
            raise SystemExit(f"to_yaml --depth: {prefix} has blocks {sorted(set(indices))}, not"
                             f" 0 .. {count - 1}")
        rests = [[e[2] for e in entries if e[1] == b] for b in range(count)]
        for b in range(count):
            if rests[b] != rests[-1]:
                raise SystemExit(f"to_yaml --depth: block {prefix}.{b} has other layers than"
                                 f" {prefix}.{count - 1}: {rests[b]} against {rests[-1]}")
        if depth < 1:
            raise SystemExit("to_yaml --depth: at least 1")
        self.prefix, self.blocks, self.depth = prefix, count, depth
        self.first, self.last = positions[0], positions[-1]
        self.rests = rests[-1]
        self.rep = count - 1  # the block whose work is written

    def name(self, block, rest):
        return f"{self.prefix}.{block}{rest}"

    def block_of(self, short_name):
        m = NUMBERED.match(short_name)
        return int(m["index"]) if m and m["prefix"] == self.prefix else None

    def medians(self, per_layer):
        """rest -> the median of each measured field over the blocks that have it."""
        out = {}
        for rest in self.rests:
            rows = [per_layer[self.name(b, rest)] for b in range(self.blocks)
                    if self.name(b, rest) in per_layer]
            if rows:
                med = {f: statistics.median(r[f] for r in rows) for f in FIELDS}
                out[rest] = {f: (round(v, 3) if f.endswith("_us") else int(round(v)))
                             for f, v in med.items()}
        return out

    def scale(self, measured, params, saved, root):
        """Scales each measurement to full depth (the module docstring); returns the header's
        comment lines."""
        elements = [0] * self.blocks
        total = 0
        for module, plist in params.items():
            n = sum(p["elements"] for p in plist)
            total += n
            b = self.block_of(short(module, root))
            if b is not None:
                elements[b] += n
        full = total - sum(elements) + self.depth * elements[self.rep]
        ratio = full / total
        notes = [
            f"# Depth: exported with {self.blocks} of the blocks {self.prefix}.N and written"
            f" with {self.depth}: a",
            f"# repeat block ({self.prefix}.{{i}}) holding block {self.rep}'s ops, params and"
            " activations and each",
            f"# layer's median measured times over the {self.blocks} exported blocks"
            " (calibrate/models/depth.py).",
            f"# Parameters: {total} exported, {full} at depth {self.depth} (x {ratio:.4f}):"
            " each measurement's",
            "# optimizer_us, optimizer_kernels and host_us.optimizer are the export's times"
            " that ratio;"]
        for m, per_layer in measured:
            med = self.medians(per_layer)
            kernel_ratio = {}
            for phase in ("forward", "backward"):
                key = f"{phase}_kernels"
                exported = sum(v[key] for v in per_layer.values())
                in_blocks = sum(per_layer[self.name(b, r)][key] for b in range(self.blocks)
                                for r in self.rests if self.name(b, r) in per_layer)
                at_depth = exported - in_blocks + self.depth * sum(v[key] for v in med.values())
                kernel_ratio[phase] = at_depth / exported if exported else 1.0
                m["host_us"][phase] = round(m["host_us"][phase] * kernel_ratio[phase], 1)
            m["optimizer_us"] = round(m["optimizer_us"] * ratio, 3)
            m["optimizer_kernels"] = int(round(m["optimizer_kernels"] * ratio))
            m["host_us"]["optimizer"] = round(m["host_us"]["optimizer"] * ratio, 1)
            notes.append(f"# {m['id']}: host_us.forward x {kernel_ratio['forward']:.4f} and"
                         f" .backward x {kernel_ratio['backward']:.4f} (their kernels at depth"
                         " over the export's).")
        per_block = [0] * self.blocks
        for module, n in saved.items():
            b = self.block_of(short(module, root))
            if b is not None:
                per_block[b] += n
        if self.blocks > 1 and per_block[0] != per_block[self.rep]:
            notes.append(f"# Saved for backward: block 0 {per_block[0]} bytes, block {self.rep}"
                         f" {per_block[self.rep]}; the difference, once per step, is not carried.")
        return notes

    def write(self, layers, sections, assemble, measured):
        """(layers before the blocks, the repeat block's lines, layers after); `sections` gives a
        layer's lines but name and times, `assemble` a layer entry from them."""
        rep_layers = layers[self.first:self.last + 1]
        per_block = len(self.rests)
        lines = [f"  - repeat: {self.depth}", "    layers:"]
        medians = [(m["id"], self.medians(per_layer)) for m, per_layer in measured]
        for j, rest in enumerate(self.rests):
            ours = sections(rep_layers[self.rep * per_block + j])
            for b in range(self.blocks - 1):
                theirs = sections(rep_layers[b * per_block + j])
                diff = next((k for k in ("params", "buffers", "forward", "backward")
                             if ours[k] != theirs[k]), None)
                if diff:
                    raise SystemExit(f"to_yaml --depth: {self.name(b, rest)} differs from"
                                     f" {self.name(self.rep, rest)} in its {diff}; not one block"
                                     " repeated")
            meas = {mid: med[rest] for mid, med in medians if rest in med}
            lines.extend(assemble(f"{self.prefix}.{{i}}{rest}", ours, meas, indent="      "))
        return layers[:self.first], lines, layers[self.last + 1:]
