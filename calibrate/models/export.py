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
  python3 calibrate/models/export.py --hf-config config.json --layers 2 --name mine --out DIR
  python3 calibrate/models/export.py --builder mymodels:make --layers 2 --depth 48 --vocab V ...

The model is one of three: a shipped name (builders.MODELS); `--hf-config PATH`, a Hugging Face
config.json of any decoder (AutoModelForCausalLM over it, random weights, `--layers K` building K
of its num_hidden_layers); or `--builder module:function`, your own nn.Module or ModelSpec
factory (the contract: user_models.py's docstring). A shallow instance (a few blocks of a model
too large for one GPU) records its full depth, and to_yaml.py writes the model back at that depth.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import builders  # noqa: E402
import user_models  # noqa: E402
from host_probe import probe_in_process  # noqa: E402
from profiling import profile_ops  # noqa: E402
from steps import (ddp_steps, host_phases, layers_of, make_optimizer, plain_steps,  # noqa: E402
                   record_work, train_step)

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?",
                        help="a shipped model (" + ", ".join(builders.MODELS) + ")")
    parser.add_argument("--hf-config", metavar="PATH",
                        help="a Hugging Face config.json (or its folder) of a decoder, instead")
    parser.add_argument("--builder", metavar="MODULE:FUNCTION",
                        help="your own model factory, instead (user_models.py's docstring)")
    parser.add_argument("--layers", type=int,
                        help="with --hf-config or --builder: build this many blocks (a shallow"
                        " instance)")
    parser.add_argument("--depth", type=int,
                        help="the full depth a shallow instance stands for (default: the"
                        " config's num_hidden_layers, or the shipped spec's)")
    parser.add_argument("--vocab", type=int, help="with --builder and an nn.Module: token ids"
                        " in [0, vocab)")
    parser.add_argument("--name", help="the model's name (default: the shipped name, the"
                        " config file's folder or stem, or the builder function's name)")
    parser.add_argument("--out", required=True, help="folder for <name><tag>.json")
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
    spec, name = resolve(parser, args)
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
    # 2. Host time of each phase, and the host probe right after it (calibrate/host/), so that
    # these host times mean "on a host this fast" and can be carried to another host.
    host, host_samples = host_phases(spec, precision, optimizer_name, seq, args.steps)
    host_probe = probe_in_process()

    # 3. What grows with batch and sequence: the same step recorded smaller.
    smaller = {}
    if batch >= 2:
        smaller["batch"] = record_work(spec, batch // 2, seq, precision, optimizer_name)
    if seq and seq >= 2:
        smaller["seq"] = record_work(spec, batch, seq // 2, precision, optimizer_name)

    # 4. The profiled steps, last.
    torch.manual_seed(0)
    model = spec.build().cuda()
    optimizer = make_optimizer(optimizer_name, model, spec.momentum)
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
        "model": name,
        "source": spec.source,
        "date": datetime.date.today().isoformat(),
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": props.total_memory,
        "sm_count": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "settings": {"batch": batch, "seq": seq, "precision": precision,
                     "optimizer": optimizer_name,
                     "momentum": spec.momentum if optimizer_name == "sgd" else None,
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
        # A shallow instance: the blocks built and the depth of the model it stands for.
        "depth": ({"blocks": spec.blocks, "full": spec.full_depth}
                  if spec.full_depth is not None else None),
        "host_us": host,
        "host_samples_us": host_samples,
        "host_probe": host_probe,
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
    name = f"{name}{args.tag}"
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


def resolve(parser, args):
    """The spec and the model's name from the one source the arguments name."""
    chosen = [x for x in (args.model, args.hf_config, args.builder) if x]
    if len(chosen) != 1:
        parser.error("name one model: a shipped name, --hf-config PATH or --builder M:F")
    if args.model:
        if args.model not in builders.MODELS:
            parser.error(f"unknown model {args.model}; shipped: {', '.join(builders.MODELS)}")
        if args.layers is not None or args.vocab is not None:
            parser.error("--layers and --vocab go with --hf-config or --builder")
        spec = builders.MODELS[args.model]
        name = args.model
    elif args.hf_config:
        spec = user_models.from_hf_config(args.hf_config, args.layers)
        stem = os.path.basename(os.path.normpath(args.hf_config))
        if stem == "config.json":
            stem = os.path.basename(os.path.dirname(os.path.abspath(args.hf_config)))
        name = args.name or os.path.splitext(stem)[0]
    else:
        spec = user_models.from_builder(args.builder, args.layers, args.vocab)
        name = args.name or args.builder.rsplit(":", 1)[1]
    if args.depth is not None:
        spec.full_depth = args.depth
        spec.blocks = spec.blocks or args.layers
    return spec, (args.name or name)


if __name__ == "__main__":
    main()
