#!/usr/bin/env python3
"""Predictions of a DDP measurement folder made before its step times are read.

Reads only each file's configuration (model, batch, GPU count, variants), never its times, runs
`clustersim ddp --csv` for every variant (plain = --no-ddp, ddp<cap> = --bucket-cap-mb cap) with
NCCL_NVLS_ENABLE=0 as the runs had it, and writes one CSV a folder:
model,batch,gpus,variant,calibration,predicted_ms. Commit it before looking at the measurements;
`clustersim validate --ddp` compares later.

  python3 calibrate/ddp/predict_blind.py DIR --topology T [--calibration CAL] [--host-probe] --out CSV
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("-t", "--topology", required=True)
    p.add_argument("--calibration")
    p.add_argument("--binary", default="build/sim/clustersim")
    p.add_argument("--compute", choices=["measured", "work"], default="measured",
                   help="layer times from the model file's measurements, or from work alone")
    p.add_argument("--host-probe", action="store_true",
                   help="pass the folder's host_probe-n<N>.json (the node's host) as --host-probe")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for path in sorted(glob.glob(os.path.join(args.dir, "*-n[0-9]*.json"))):
        with open(path) as f:
            rec = json.load(f)
        if rec.get("schema") != "clustersim-ddp-steps/1":
            continue
        config = {k: rec[k] for k in ("model", "batch", "world_size")}
        for variant in rec["variants"]:  # names only
            cmd = [args.binary, "ddp", "-t", args.topology, "-m", f"models/{config['model']}.yaml",
                   "-n", str(config["world_size"]), "--batch", str(config["batch"]), "--csv"]
            if variant == "plain":
                cmd.append("--no-ddp")
            else:
                cmd += ["--bucket-cap-mb", variant[len("ddp"):]]
            if args.calibration:
                cmd += ["--calibration", args.calibration]
            cmd += ["--compute", args.compute]
            if args.host_probe:
                cmd += ["--host-probe",
                        os.path.join(args.dir, f"host_probe-n{config['world_size']}.json")]
            env = dict(os.environ, NCCL_NVLS_ENABLE="0")
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if out.returncode != 0:
                sys.exit(f"{' '.join(cmd)}: {out.stderr.strip()}")
            row = next(csv.DictReader(out.stdout.splitlines()))
            rows.append({"model": config["model"], "batch": config["batch"],
                         "gpus": config["world_size"], "variant": variant,
                         "calibration": os.path.basename(os.path.dirname(args.calibration))
                         if args.calibration else "none",
                         "host": "probe" if args.host_probe else "reference",
                         "compute": args.compute,
                         "predicted_ms": row["step_ms"]})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} predictions -> {args.out}")


if __name__ == "__main__":
    main()
