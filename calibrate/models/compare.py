#!/usr/bin/env python3
"""Predicted against measured training steps: every export.py run under the given folders,
predicted by `clustersim ddp` three ways, plain step and DDP on one GPU.

  python3 calibrate/models/compare.py [--bin build/sim/clustersim] DATA_FOLDER...

  same GPU:  layer times measured on this GPU model at the model file's default settings, scaled
             through the work model to the run's batch, sequence and precision;
  other GPU: layer times measured on the other GPU model, carried over by the work model;
  work:      no measured times at all: FLOPs, bytes and the fitted efficiencies.
Prints a Markdown table and the median |error| of each column, apart for the runs at the model
files' default settings and those at other batches, precisions or reruns (tagged files).
"""
import argparse
import gzip
import json
import os
import statistics
import tempfile
import subprocess

TOPOLOGY = {"NVIDIA H200": ("topologies/dgx-h200.yaml", "h200", "h100"),
            "NVIDIA H100 80GB HBM3": ("topologies/dgx-h100.yaml", "h100", "h200")}


def predict(binary, topology, model, settings, ddp, extra):
    cmd = [binary, "ddp", "--topology", topology, "--model", model, "--json",
           "--batch", str(settings["batch"]), "--precision", settings["precision"],
           "--optimizer", settings["optimizer"]] + extra
    if settings.get("seq"):
        cmd += ["--seq", str(settings["seq"])]
    if not ddp:
        cmd.append("--no-ddp")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)["step_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="build/sim/clustersim")
    parser.add_argument("--host-probes", action="store_true",
                        help="predict each export that has a host probe on that host")
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args()
    errors = {}
    print("| model | GPU | batch | prec | step | measured ms | same GPU | other GPU | work |")
    print("|---|---|---|---|---|---|---|---|---|")
    for folder in args.folders:
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".json", ".json.gz")):
                continue
            path = os.path.join(folder, name)
            with (gzip.open(path, "rt") if name.endswith(".gz") else open(path)) as f:
                raw = json.load(f)
            if raw.get("format") != "clustersim-model-export/1":
                continue
            depth = raw.get("depth")
            if depth and depth["blocks"] != depth["full"]:
                continue  # a shallow instance: its model file is written at full depth
            topology, same, other = TOPOLOGY[raw["gpu"]]
            model = os.path.join("models", raw["model"] + ".yaml")
            s = raw["settings"]
            # With --host-probes, an export that carries its host's probe is predicted on that
            # host (clustersim ddp --host-probe), as a user passes the probe of the node.
            host_args = []
            if args.host_probes and "host_probe" in raw:
                probe = os.path.join(tempfile.gettempdir(), f"cs-compare-probe-{os.getpid()}.json")
                summary = {c: {"alone_us": v} for c, v in raw["host_probe"]["alone_us"].items()}
                with open(probe, "w") as f:
                    json.dump({"schema": raw["host_probe"]["schema"], "world_size": 1,
                               "summary": summary}, f)
                host_args = ["--host-probe", probe]
            for ddp in (False, True):
                measured = raw["step_ms_median"]["ddp" if ddp else "plain"]
                cells = []
                for column, extra in (("same GPU", ["--measurement", same]),
                                      ("other GPU", ["--measurement", other]),
                                      ("work", ["--compute", "work"])):
                    p = predict(args.bin, topology, model, s, ddp, extra + host_args)
                    if p is None:
                        cells.append("-")
                        continue
                    e = 100 * (p / measured - 1)
                    group = "defaults" if name.split(".json")[0] == raw["model"] else "other settings"
                    errors.setdefault((group, column), []).append(abs(e))
                    cells.append(f"{p:.1f} ({e:+.1f}%)")
                tag = name.split(".json")[0][len(raw["model"]):] or ""
                print(f"| {raw['model']}{tag} | {same.upper()} | {s['batch']} | {s['precision']} |"
                      f" {'DDP' if ddp else 'plain'} | {measured:.1f} | " + " | ".join(cells) + " |")
    print()
    for (group, column), values in errors.items():
        print(f"{group}, {column}: median |error| {statistics.median(values):.1f}% over"
              f" {len(values)} steps, worst {max(values):.1f}%")


if __name__ == "__main__":
    main()
