#!/usr/bin/env python3
"""Tensor-parallel training steps (PyTorch's DTensor TP API) on N GPUs, one process per GPU, and
the same model unsharded on one GPU.

Run under torchrun (`torchrun --nproc-per-node=N calibrate/parallel/tp_steps.py --out DIR ...`);
one JSON file per (variant, configuration), `DIR/<variant>-<model>-b<batch>-n<N>.json` (schema
clustersim-parallel-steps/1), written by rank 0. Variants:

  plain   the model unsharded, every rank stepping its own copy (run it at N=1)
  tp      parallelize_module over a 1-D mesh of all N ranks, torchtitan's Llama plan without
          sequence parallelism: per decoder layer q/k/v/gate/up ColwiseParallel, o/down
          RowwiseParallel (output Replicate: an all-reduce each); the embedding RowwiseParallel
          (input Replicate, output Replicate); lm_head ColwiseParallel (output Replicate: the
          logits all-gathered, no loss_parallel); the norms stay plain replicated tensors
  tp-sp   the same with sequence parallelism as torchtitan's apply_tp: the norms
          SequenceParallel(); the attention and the MLP behind PrepareModuleInput (Shard(1) ->
          Replicate, an all-gather); o/down RowwiseParallel(output_layouts=Shard(1)) (a
          reduce-scatter); the embedding RowwiseParallel(input Replicate, output Shard(1)); the
          final norm SequenceParallel; lm_head ColwiseParallel(input Shard(1), output Replicate)

Llama-1B ties its LM head to the embedding: both are sharded on the vocabulary (dim 0), and after
parallelize_module the LM head's weight is set to the embedding's DTensor again, so the tie holds
(one parameter, as unsharded). Every rank sees the same batch (TP replicates the input). The model
is called with position_ids = arange(seq) (what HF computes itself when none is given), because
under sequence parallelism the embedding's output holds seq/N positions and HF would otherwise
take its length for the sequence's.

Before parallelizing, the unsharded model's loss on the batch (train mode, no grad, bf16
autocast) is recorded beside the sharded model's on the same weights (loss_check): HF's attention
reshapes with view(..., -1, head_dim), so local heads work only if the two agree.

The step follows calibrate/models/steps.py's train_step: bf16 autocast over fp32 parameters,
loss.backward(), AdamW(lr=1e-4) step, zero_grad(set_to_none=True); TF32 matmul off. The optimizer
has two parameter groups under TP, DTensor parameters and plain ones (the tp variant's norms), so
that no foreach call mixes the two. --warmup steps, a barrier, --steps timed steps from the pinned
host batch copied non_blocking, each ended by torch.cuda.synchronize() and timed on the host; the
step's time is the slowest rank's; each phase's host return time (forward, backward, optimizer)
is kept per rank. Peak memory per rank (torch.cuda.max_memory_*, reset after the model is sharded
and its optimizer made). Each step's loss (rank 0's; every rank's in rank_memory).

If a variant raises under autocast, it is recorded with its error and run again with bf16
parameters and no autocast (`<variant>-bf16p`), so that one failure still leaves a timing.

--profile VARIANTS runs, after all timing, --profiled steps of those variants (last config)
under torch.profiler and writes `<variant>-<model>-b<batch>-n<N>.profile.json.gz`: each NCCL
kernel, the host's communication records with their sizes, and per step, per collective kind,
the kernel count and GPU time.
"""
import argparse
import gzip
import inspect
import json
import os
import re
import sys
import time
import traceback

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import autocast, clean, make_optimizer  # noqa: E402

VARIANTS = ("plain", "tp", "tp-sp")


def decoder_layers(model):
    return model.model.layers


def attn_takes_kwargs(layer):
    """Whether HF's decoder layer passes hidden_states to self_attn by keyword."""
    try:
        src = inspect.getsource(type(layer).forward)
    except (OSError, TypeError):
        return True
    return re.search(r"self\.self_attn\(\s*hidden_states\s*=", src) is not None


def apply_tp(model, mesh, sp):
    """torchtitan's Llama plan on HF's LlamaForCausalLM; returns the plan's description."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   RowwiseParallel, SequenceParallel,
                                                   parallelize_module)

    tied = model.lm_head.weight is model.model.embed_tokens.weight
    if sp:
        root = {"model.embed_tokens": RowwiseParallel(input_layouts=Replicate(),
                                                      output_layouts=Shard(1)),
                "model.norm": SequenceParallel(),
                "lm_head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())}
    else:
        root = {"model.embed_tokens": RowwiseParallel(input_layouts=Replicate()),
                "lm_head": ColwiseParallel(output_layouts=Replicate())}
    parallelize_module(model, mesh, root)
    kwargs = attn_takes_kwargs(decoder_layers(model)[0])
    for layer in decoder_layers(model):
        plan = {"self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
                "self_attn.v_proj": ColwiseParallel(), "mlp.gate_proj": ColwiseParallel(),
                "mlp.up_proj": ColwiseParallel()}
        if sp:
            if kwargs:
                attn = PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                                          desired_input_kwarg_layouts={
                                              "hidden_states": Replicate()})
            else:
                attn = PrepareModuleInput(input_layouts=(Shard(1),),
                                          desired_input_layouts=(Replicate(),))
            plan.update({
                "input_layernorm": SequenceParallel(),
                "self_attn": attn,
                "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1)),
                "post_attention_layernorm": SequenceParallel(),
                "mlp": PrepareModuleInput(input_layouts=(Shard(1),),
                                          desired_input_layouts=(Replicate(),)),
                "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1)),
            })
        else:
            plan.update({"self_attn.o_proj": RowwiseParallel(),
                         "mlp.down_proj": RowwiseParallel()})
        parallelize_module(layer, mesh, plan)
    if tied:  # both were sharded on dim 0 (the vocabulary): one parameter again
        model.lm_head.weight = model.model.embed_tokens.weight
    return {
        "plan": "torchtitan llama3 apply_tp (torchtitan/models/llama3/infra/parallelize.py)"
                " mapped onto HF LlamaForCausalLM",
        "sequence_parallel": sp,
        "layer": "q/k/v/gate/up ColwiseParallel(); o_proj/down_proj RowwiseParallel("
                 + ("output_layouts=Shard(1)); input_layernorm/post_attention_layernorm"
                    " SequenceParallel(); self_attn/mlp PrepareModuleInput(Shard(1) -> Replicate,"
                    " use_local_output=False)" if sp else "output Replicate); norms unsharded"),
        "self_attn_input": ("keyword hidden_states" if kwargs else "positional") if sp else None,
        "embedding": "RowwiseParallel(input_layouts=Replicate(), output_layouts="
                     + ("Shard(1))" if sp else "Replicate())"),
        "final_norm": "SequenceParallel()" if sp else "unsharded",
        "lm_head": "ColwiseParallel(" + ("input_layouts=Shard(1), " if sp else "")
                   + "output_layouts=Replicate())",
        "loss_parallel": False,
        "loss": "HF LlamaForCausalLM's own loss on the replicated (all-gathered) logits",
        "tied_embedding": tied,
        "tie_kept": (model.lm_head.weight is model.model.embed_tokens.weight) if tied else None,
    }


def local_elements(model):
    return sum((p.to_local() if hasattr(p, "to_local") else p).numel()
               for p in model.parameters())


def param_groups(model):
    from torch.distributed.tensor import DTensor

    params = list(model.parameters())
    dt = [p for p in params if isinstance(p, DTensor)]
    plain = [p for p in params if not isinstance(p, DTensor)]
    return [g for g in ({"params": dt}, {"params": plain}) if g["params"]], len(dt), len(plain)


def lm_loss(model, ids, pos):
    return model(input_ids=ids, labels=ids, position_ids=pos).loss


def loss_now(model, ids, pos, use_autocast):
    with torch.no_grad(), (autocast("bf16") if use_autocast else torch.autocast(
            "cuda", enabled=False)):
        return lm_loss(model, ids, pos).float().item()


def run(spec, batch, variant, mesh, args, bf16_params=False):
    clean()
    torch.manual_seed(0)
    model = spec.build().cuda()
    params = sum(p.numel() for p in model.parameters())
    if bf16_params:
        model = model.to(torch.bfloat16)
    use_autocast = not bf16_params
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))
    ids = host[0].cuda()
    pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
    entry = {"variant": variant + ("-bf16p" if bf16_params else ""),
             "param_dtype": "bfloat16" if bf16_params else "float32",
             "autocast": use_autocast, "params": params}
    if variant != "plain":
        unsharded = loss_now(model, ids, pos, use_autocast)
        entry["tp"] = apply_tp(model, mesh, sp=variant == "tp-sp")
        sharded = loss_now(model, ids, pos, use_autocast)
        entry["loss_check"] = {"unsharded": unsharded, "sharded": sharded,
                               "abs_diff": abs(sharded - unsharded),
                               "rel_diff": abs(sharded - unsharded) / max(abs(unsharded), 1e-30)}
        groups, n_dt, n_plain = param_groups(model)
        entry["optimizer_groups"] = {"dtensor_params": n_dt, "plain_params": n_plain}
        optimizer = torch.optim.AdamW(groups, lr=1e-4)
    else:
        entry["loss_check"] = {"unsharded": loss_now(model, ids, pos, use_autocast)}
        optimizer = make_optimizer(spec.optimizer, model, spec.momentum)
    del ids
    clean()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    setup = torch.cuda.memory_allocated()
    losses = []

    def step(mark):
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        with (autocast("bf16") if use_autocast else torch.autocast("cuda", enabled=False)):
            loss = lm_loss(model, gpu[0], pos)
        mark("forward")
        loss.backward()
        mark("backward")
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        mark("optimizer")
        losses.append(loss.detach())

    times, phases = common.timed_phases(step, args)
    loss_values = [float(x) for x in torch.stack(losses).float().cpu()]
    memory = common.rank_memory(setup, local_elements(model), phases, loss_values)
    entry.update(common.result(times, memory))
    entry["losses"] = loss_values
    entry["loss_first"], entry["loss_last"] = loss_values[0], loss_values[-1]
    entry["host_phase_return_ms"] = phases
    del model, optimizer
    clean()
    return entry


def profile(spec, batch, variant, mesh, args):
    clean()
    torch.manual_seed(0)
    model = spec.build().cuda()
    plan = apply_tp(model, mesh, sp=variant == "tp-sp") if variant != "plain" else None
    groups, _, _ = param_groups(model)
    optimizer = torch.optim.AdamW(groups, lr=1e-4)
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))
    pos = torch.arange(spec.seq, device="cuda").unsqueeze(0)

    def step(mark):
        gpu = tuple(t.cuda(non_blocking=True) for t in host)
        with autocast("bf16"):
            loss = lm_loss(model, gpu[0], pos)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    prof = common.profile_steps(step, args.profiled)
    del model, optimizer
    clean()
    return plan, prof


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--configs", default="llama-1b:1,llama-1b")
    parser.add_argument("--variants", default="tp,tp-sp")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--profile", default="", help="variants to profile (last config)")
    parser.add_argument("--profiled", type=int, default=3)
    parser.add_argument("--no-fallback", action="store_true")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    for v in variants + [v for v in args.profile.split(",") if v]:
        if v not in VARIANTS:
            raise SystemExit(f"tp_steps: unknown variant '{v}' ({', '.join(VARIANTS)})")
    configs = [common.parse_config(c) for c in args.configs.split(",") if c]
    _, rank, world = common.init("tp_steps")
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cuda", (world,))
    os.makedirs(args.out, exist_ok=True)
    info = common.node()
    for name, spec, batch in configs:
        for variant in variants:
            tag = f"{variant}-{name}-b{batch}-n{world}"
            t0 = time.time()
            record = common.base_record(name, spec, args, world, kind="tp", variant=variant,
                                        batch=batch, global_batch=batch,
                                        batch_note="per rank; under TP every rank sees the same"
                                        " batch, so the global batch is this", node=info)
            attempts = [False] if args.no_fallback else [False, True]
            for bf16 in attempts:
                try:
                    entry = run(spec, batch, variant, mesh, args, bf16_params=bf16)
                    record.update(entry)
                    record.pop("error", None)
                    break
                except Exception as exc:  # recorded; the bf16-parameter retry follows
                    clean()
                    record["error" if not bf16 else "error_bf16p"] = (
                        f"{type(exc).__name__}: {exc}"[:2000])
                    record["traceback" if not bf16 else "traceback_bf16p"] = (
                        traceback.format_exc()[-4000:])
                    print(f"{tag} (rank {rank}, bf16 params {bf16}): {type(exc).__name__}: "
                          f"{exc}"[:600], file=sys.stderr, flush=True)
                    dist.barrier()
            if rank == 0:
                common.write_json(os.path.join(args.out, tag + ".json"), record)
                if "step_ms_median" in record:
                    lc = record["loss_check"]
                    print(f"{tag}: {record['step_ms_median']:.2f} ms, peak "
                          f"{record['peak_allocated_bytes'] / 2**30:.2f} GiB, loss "
                          f"{lc.get('unsharded'):.5f} unsharded / {lc.get('sharded', float('nan')):.5f}"
                          f" sharded, step losses {record['loss_first']:.4f}.."
                          f"{record['loss_last']:.4f} ({time.time() - t0:.0f} s)", flush=True)
                else:
                    print(f"{tag}: failed ({time.time() - t0:.0f} s)", flush=True)
    for variant in [v for v in args.profile.split(",") if v]:
        name, spec, batch = configs[-1]
        tag = f"{variant}-{name}-b{batch}-n{world}"
        try:
            plan, prof = profile(spec, batch, variant, mesh, args)
        except Exception as exc:
            print(f"{tag} profile (rank {rank}): {type(exc).__name__}: {exc}"[:600],
                  file=sys.stderr, flush=True)
            continue
        if rank == 0:
            record = {"schema": common.SCHEMA + "-profile", "model": name, "variant": variant,
                      "batch": batch, "seq": spec.seq, "world_size": world, "rank": rank,
                      "tp": plan, "node": info, **prof}
            path = os.path.join(args.out, tag + ".profile.json.gz")
            common.write_json(path, record, compress=True)
            print(f"{tag}: profile, per step: " + json.dumps(
                {k: [v["kernels_per_step"], round(v["gpu_us_per_step"], 1)]
                 for k, v in prof["summary_per_step"].items()}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
