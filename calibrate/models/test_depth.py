"""Tests of to_yaml.py's depth (depth.py) on a small fake export; no torch, no GPU.

  python3 -m unittest calibrate/models/test_depth.py     (from the repository root)

With the simulator built (build/sim/clustersim), the written files are also loaded and run.
"""
import copy
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import to_yaml  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WIDTH, TOKENS = 64, 512  # batch 2 x seq 256


def gemm(phase, layer, m, n, k, us, weight=None):
    work = {"kind": "gemm", "m": m, "n": n, "k": k, "batch": 1, "dtype": "bf16"}
    if weight:
        work["weight"] = weight
    return {"phase": phase, "layer": layer, "aten": "mm", "work": work, "gpu_us": us,
            "kernels": 1}


def memory(phase, layer, nbytes, us, kernels=1):
    return {"phase": phase, "layer": layer, "aten": "add",
            "work": {"kind": "memory", "bytes": nbytes, "aten": "add"}, "gpu_us": us,
            "kernels": kernels}


def fake_export(blocks=2, times=(10.0, 12.0), tokens=TOKENS):
    """M.embed, blocks x (M.blocks.b.attn, M.blocks.b.mlp), M.head; AdamW over 2 + 2 * blocks
    tensors. Block b's GEMMs take times[b] us."""
    ops = [memory("forward", "M.embed", tokens * WIDTH * 4, 3.0)]
    params = {"M.embed": [{"name": "weight", "elements": 1000 * WIDTH, "dtype": "float32",
                           "param": "embed.weight"}]}
    saved = {}
    for b in range(blocks):
        for part, n in (("attn", WIDTH), ("mlp", 4 * WIDTH)):
            layer = f"M.blocks.{b}.{part}"
            ops.append(gemm("forward", layer, tokens, n, WIDTH, times[b],
                            f"blocks.{b}.{part}.weight"))
            params[layer] = [{"name": "weight", "elements": n * WIDTH, "dtype": "float32",
                              "param": f"blocks.{b}.{part}.weight"}]
            saved[layer] = tokens * WIDTH * 2 + (128 if b == 0 and part == "attn" else 0)
    ops.append(gemm("forward", "M.head", tokens, 1000, WIDTH, 20.0, "head.weight"))
    params["M.head"] = [{"name": "weight", "elements": 1000 * WIDTH, "dtype": "float32",
                         "param": "head.weight"}]
    ops.append(memory("backward", "M.head", tokens * 1000 * 4, 5.0))
    for b in reversed(range(blocks)):
        for part, n in (("mlp", 4 * WIDTH), ("attn", WIDTH)):
            layer = f"M.blocks.{b}.{part}"
            ops.append(gemm("backward", layer, tokens, WIDTH, n, 2 * times[b]))
            ops.append(gemm("backward", layer, n, WIDTH, tokens, 2 * times[b]))
    ops.append(memory("backward", "M.embed", 1000 * WIDTH * 4, 4.0, kernels=2))
    ops.append(memory("optimizer", "(outside)", 16 * 100000, 50.0, kernels=4))
    return {
        "model": "fake", "source": "a fake export", "gpu": "NVIDIA H200",
        "settings": {"batch": 2, "seq": tokens // 2, "precision": "bf16", "optimizer": "adamw",
                     "input_bytes_per_sample": 8 * tokens // 2, "input_pinned": True},
        "params": params, "buffers": {}, "ops": ops, "saved_bytes": saved,
        "smaller": {"batch": {"ops": halved(ops), "saved_bytes": {}},
                    "seq": {"ops": halved(ops), "saved_bytes": {}}},
        "host_us": {"forward": 100.0, "backward": 200.0, "optimizer": 40.0},
        "depth": {"blocks": blocks, "full": 6}}


def halved(ops):
    out = []
    for op in ops:
        work = dict(op["work"])
        if work["kind"] == "gemm":
            if work["m"] == TOKENS:
                work["m"] //= 2
            elif work["k"] == TOKENS:
                work["k"] //= 2
        elif work["kind"] == "memory":
            work["bytes"] //= 2
        out.append({"phase": op["phase"], "layer": op["layer"], "aten": op["aten"], "work": work})
    return out


def measurement_value(text, key):
    return float(re.search(rf"^    {key}: ([0-9.]+)$", text, re.M).group(1))


class DepthTest(unittest.TestCase):
    def test_flat_without_depth(self):
        text = to_yaml.build([fake_export()], ["fake.json"])
        self.assertNotIn("repeat", text)
        self.assertIn("- name: blocks.1.mlp", text)

    def test_repeat_holds_the_block_and_medians(self):
        text = to_yaml.build([fake_export()], ["fake.json"], depth=6)
        self.assertIn("  - repeat: 6\n    layers:\n      - name: \"blocks.{i}.attn\"", text)
        self.assertNotIn("blocks.0", text)
        self.assertNotIn("blocks.1", text)
        # forward: the median of 10 and 12 us; backward: of 2 x (20 + 20) and 2 x (24 + 24)
        self.assertIn("h200: {forward_us: 11, backward_us: 44, forward_kernels: 1,"
                      " backward_kernels: 2}", text)
        # the head after the block, at the top level again
        self.assertIn("\n  - name: head\n", text)

    def test_measurement_scaled_to_depth(self):
        raw = fake_export()
        text = to_yaml.build([raw], ["fake.json"], depth=6)
        exported = sum(p["elements"] for plist in raw["params"].values() for p in plist)
        block = 5 * WIDTH * WIDTH
        ratio = (exported + 4 * block) / exported
        self.assertAlmostEqual(measurement_value(text, "optimizer_us"), 50.0 * ratio, places=2)
        self.assertEqual(int(measurement_value(text, "optimizer_kernels")), round(4 * ratio))
        host = re.search(r"host_us: \{forward: ([0-9.]+), backward: ([0-9.]+), optimizer: "
                         r"([0-9.]+)\}", text)
        # forward kernels: embed 1 + 2 per block + head 1 = 6 exported, 14 at depth 6
        self.assertAlmostEqual(float(host.group(1)), 100.0 * 14 / 6, places=1)
        # backward: head 1 + 4 per block + embed 2 = 11 exported, 27 at depth 6
        self.assertAlmostEqual(float(host.group(2)), 200.0 * 27 / 11, places=1)
        self.assertAlmostEqual(float(host.group(3)), 40.0 * ratio, places=1)
        self.assertIn("block 0 131200 bytes, block 1 131072", text)

    def test_same_depth_changes_no_host_cost(self):
        text = to_yaml.build([fake_export()], ["fake.json"], depth=2)
        self.assertIn("host_us: {forward: 100, backward: 200, optimizer: 40}", text)

    def test_unequal_blocks_refused(self):
        raw = fake_export()
        for op in raw["ops"]:
            if op["layer"] == "M.blocks.0.mlp" and op["phase"] == "forward":
                op["work"]["n"] = 3 * WIDTH
        with self.assertRaisesRegex(SystemExit, "blocks.0.mlp differs from blocks.1.mlp in its"
                                    " forward"):
            to_yaml.build([raw], ["fake.json"], depth=6)

    def test_no_blocks_refused(self):
        raw = fake_export(blocks=1)
        for op in raw["ops"]:
            op["layer"] = op["layer"].replace("blocks.0.", "")
        raw["params"] = {k.replace("blocks.0.", ""): v for k, v in raw["params"].items()}
        with self.assertRaisesRegex(SystemExit, "no numbered blocks"):
            to_yaml.build([raw], ["fake.json"], depth=6)

    def test_two_measurements(self):
        other = copy.deepcopy(fake_export(times=(20.0, 22.0)))
        other["gpu"] = "NVIDIA H100 80GB HBM3"
        text = to_yaml.build([fake_export(), other], ["a.json", "b.json"], depth=6)
        self.assertIn("h100: {forward_us: 21, backward_us: 84,", text)

    def test_tp_roles_written_flat_and_in_the_repeat(self):
        roles = {"attn": "column", "mlp": "row", "embed": "vocab"}
        flat = to_yaml.build([fake_export()], ["fake.json"], tp=roles)
        self.assertIn("  - name: blocks.1.mlp\n    tp: row\n", flat)
        self.assertIn("  - name: embed\n    tp: vocab\n", flat)
        self.assertNotIn("tp: ", flat.split("- name: head")[1])
        deep = to_yaml.build([fake_export()], ["fake.json"], depth=6, tp=roles)
        self.assertIn("      - name: \"blocks.{i}.attn\"\n        tp: column\n", deep)
        plain = to_yaml.build([fake_export()], ["fake.json"], depth=6)
        self.assertEqual(deep.count("\n"), plain.count("\n") + 3)  # embed, attn, mlp

    def test_tp_role_of_no_layer_refused(self):
        with self.assertRaisesRegex(SystemExit, "no layer is named ...c_attn"):
            to_yaml.build([fake_export()], ["fake.json"], tp={"c_attn": "column"})
        with self.assertRaisesRegex(SystemExit, "expected NAME=ROLE"):
            to_yaml.tp_roles(["attn=diagonal"])

    @unittest.skipUnless(os.path.exists(os.path.join(ROOT, "build/sim/clustersim")),
                         "the simulator is not built")
    def test_loads_and_runs_as_deep_as_flat(self):
        """The repeat of 2 over a 2-block export predicts what the flat file does, and depth 6
        more."""
        steps = {}
        with tempfile.TemporaryDirectory() as tmp:
            for depth in (None, 2, 6):
                path = os.path.join(tmp, f"d{depth}.yaml")
                with open(path, "w") as f:
                    f.write(to_yaml.build([fake_export(times=(10.0, 10.0))], ["fake.json"],
                                          depth=depth))
                out = subprocess.run(
                    [os.path.join(ROOT, "build/sim/clustersim"), "ddp", "-m", path, "-t",
                     os.path.join(ROOT, "topologies/dgx-h200.yaml"), "--json"],
                    capture_output=True, text=True, check=True).stdout
                steps[depth] = float(re.search(r'"step_ms": ([0-9.e+-]+)', out).group(1))
        self.assertAlmostEqual(steps[None], steps[2], delta=1e-6 + 1e-3 * steps[None])
        self.assertGreater(steps[6], steps[2])


if __name__ == "__main__":
    unittest.main()
