#!/usr/bin/env python3
"""Pipeline-parallel training steps (torch.distributed.pipelining, manual stages) on N GPUs, one
process per GPU and one stage per process.

Run under torchrun (`torchrun --nproc-per-node=N calibrate/parallel/pp_steps.py --out DIR ...`);
one JSON file per configuration, `DIR/pp-<schedule>-<model>-mb<size>x<count>-n<N>.json` (schema
clustersim-parallel-steps/1), written by rank 0.

Stages: every rank builds the whole model from seed 0 (builders.py, random weights, on its GPU),
then keeps its contiguous slice of the decoder layers (layers split evenly, N stages; Llama-1B's 16
layers are 4 stages of 4 or 2 of 8); stage 0 also keeps the embedding, the last stage the final
norm, the LM head and the loss. The rest of the model is dropped before timing. Llama-1B ties its
LM head to the embedding; a tie cannot cross stages, so the last stage's LM head is a copy of the
embedding's weight, its own parameter (as untied models, and torchtitan's Llama, run): the
pipeline's model has one vocab x hidden matrix more than the unsharded one.

Each stage's forward: the embedding (stage 0), rotary position embeddings for positions
0..seq-1, its decoder layers called as HF's LlamaModel calls them (attention_mask None: SDPA's
causal path, as HF takes for an unpadded batch; no key/value cache), then (last stage) the norm
and the LM head. The loss (last stage): cross-entropy of the fp32 logits against the next token,
the mean over the micro-batch's tokens: HF's ForCausalLMLoss for an unpadded batch.

Schedules: ScheduleGPipe and Schedule1F1B (PipelineStage, runtime shape inference on the first
step), n_microbatches from --microbatches, each micro-batch --mb samples of the model's sequence;
the global batch is mb x n_microbatches. A step: the batch copied from pinned host memory
(stage 0 the inputs, the last stage the targets), schedule.step() under bf16 autocast (fp32
parameters, as calibrate/models/steps.py's train_step), AdamW(lr=1e-4) step, zero_grad; TF32 off.
The schedule scales the gradients by 1/n_microbatches (its default): the mean loss's gradient.

--warmup steps, a barrier, --steps timed steps each ended by torch.cuda.synchronize() and timed on
the host; the step's time is the slowest rank's. Per rank: peak memory (reset once the stage is
built and its optimizer made) and each phase's host return time (schedule, optimizer). Losses:
the last stage's mean over micro-batches, per step. loss_check: the unsharded model's loss on the
same batch (HF's own loss, one micro-batch at a time under autocast, no grad, averaged; computed
on the last stage's rank before the model is sliced) beside the pipeline's first step's.
"""
import argparse
import inspect
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import autocast, clean  # noqa: E402

SCHEDULES = {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B"}


class Stage(nn.Module):
    """A contiguous slice of HF LlamaForCausalLM's decoder layers, with the embedding on the first
    stage and the final norm and LM head on the last."""

    def __init__(self, model, lo, hi, first, last):
        super().__init__()
        inner = model.model
        self.embed = inner.embed_tokens if first else None
        self.layers = nn.ModuleList(inner.layers[lo:hi])
        self.rotary = inner.rotary_emb
        self.norm = inner.norm if last else None
        self.head = None
        if last:
            weight = model.lm_head.weight
            head = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device=weight.device,
                             dtype=weight.dtype)
            with torch.no_grad():
                head.weight.copy_(weight)  # its own parameter even where the model ties it
            self.head = head

    def forward(self, x):
        h = self.embed(x) if self.embed is not None else x
        pos = torch.arange(h.shape[1], device=h.device).unsqueeze(0)
        pe = self.rotary(h, pos)
        for layer in self.layers:
            out = layer(h, attention_mask=None, position_ids=pos, position_embeddings=pe)
            h = out[0] if isinstance(out, tuple) else out
        if self.head is not None:
            h = self.head(self.norm(h))
        return h


def next_token_loss(logits, target):
    return F.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]),
                           target[:, 1:].reshape(-1))


def reference_loss(model, ids, micro):
    vals = []
    with torch.no_grad(), autocast("bf16"):
        for chunk in torch.tensor_split(ids, micro):
            vals.append(model(input_ids=chunk, labels=chunk).loss.float().item())
    return sum(vals) / len(vals)


def run(spec, schedule_name, micro, mb, args, rank, world, local):
    from torch.distributed import pipelining

    clean()
    torch.manual_seed(0)
    model = spec.build().cuda()
    if hasattr(model.config, "use_cache"):
        model.config.use_cache = False
    params_unsharded = sum(p.numel() for p in model.parameters())
    layers = len(model.model.layers)
    bounds = [round(i * layers / world) for i in range(world + 1)]
    lo, hi = bounds[rank], bounds[rank + 1]
    first, last = rank == 0, rank == world - 1
    batch = mb * micro
    host = tuple(t.pin_memory() for t in spec.make_batch(batch, spec.seq))
    check = {}
    if last:
        check["unsharded"] = reference_loss(model, host[0].cuda(), micro)
    stage_mod = Stage(model, lo, hi, first, last)
    tied = model.lm_head.weight is model.model.embed_tokens.weight
    del model
    clean()
    stage = pipelining.PipelineStage(stage_mod, rank, world, torch.device("cuda", local))
    cls = getattr(pipelining, SCHEDULES[schedule_name])
    schedule = cls(stage, n_microbatches=micro, loss_fn=next_token_loss)
    optimizer = torch.optim.AdamW(stage_mod.parameters(), lr=1e-4)
    local_params = sum(p.numel() for p in stage_mod.parameters())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    setup = torch.cuda.memory_allocated()
    losses = []
    # Newer releases can skip merging the last stage's outputs (the logits of every micro-batch
    # concatenated) into the step's return value; nothing here uses it.
    extra = ({"return_outputs": False}
             if "return_outputs" in inspect.signature(schedule.step).parameters else {})

    def step(mark):
        gpu = host[0].cuda(non_blocking=True) if (first or last) else None
        out = []
        with autocast("bf16"):
            if first and last:
                schedule.step(gpu, target=gpu, losses=out, **extra)
            elif first:
                schedule.step(gpu, **extra)
            elif last:
                schedule.step(target=gpu, losses=out, **extra)
            else:
                schedule.step(**extra)
        mark("schedule")
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        mark("optimizer")
        if out:
            losses.append(torch.stack([x.detach().float() for x in out]).mean())

    times, phases = common.timed_phases(step, args)
    loss_values = [float(x) for x in torch.stack(losses).cpu()] if losses else None
    memory = common.rank_memory(setup, local_params, phases, loss_values)
    entry = common.result(times, memory)
    last_losses = memory[-1].get("losses") or []
    every_check = [None] * world
    dist.all_gather_object(every_check, check)
    unsharded = every_check[-1].get("unsharded")
    entry.update({
        "schedule": SCHEDULES[schedule_name], "stages": world, "micro_batches": micro,
        "micro_batch_size": mb, "batch": batch, "global_batch": batch,
        "layers": layers, "stage_layers": [[bounds[i], bounds[i + 1]] for i in range(world)],
        "params_unsharded": params_unsharded,
        "stage_params": [m["local_param_elements"] for m in memory],
        "tied_embedding": tied,
        "lm_head": "the last stage's own copy of the embedding's weight" if tied else "untied",
        "loss": "cross-entropy of fp32 logits against the next token, mean per micro-batch;"
                " the step's loss is the mean over micro-batches (last stage)",
        "losses": last_losses,
        "loss_first": last_losses[0] if last_losses else None,
        "loss_last": last_losses[-1] if last_losses else None,
        "loss_check": {"unsharded": unsharded,
                       "pipeline_first_step": last_losses[0] if last_losses else None},
        "scale_grads": "schedule default (gradients divided by n_microbatches)",
        "step_kwargs": extra,
    })
    if unsharded is not None and last_losses:
        diff = abs(last_losses[0] - unsharded)
        entry["loss_check"].update({"abs_diff": diff, "rel_diff": diff / max(abs(unsharded),
                                                                             1e-30)})
    del schedule, stage, stage_mod, optimizer
    clean()
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--model", default="llama-1b")
    parser.add_argument("--configs", default="gpipe:4,1f1b:4,gpipe:8,1f1b:8",
                        help="schedule:n_microbatches, comma-separated")
    parser.add_argument("--mb", type=int, default=2, help="micro-batch size (samples)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    configs = []
    for c in args.configs.split(","):
        sched, _, micro = c.partition(":")
        if sched not in SCHEDULES or not micro.isdigit():
            raise SystemExit(f"pp_steps: bad config '{c}' (schedule:n_microbatches, schedules "
                             + ", ".join(SCHEDULES) + ")")
        configs.append((sched, int(micro)))
    name, spec, _ = common.parse_config(args.model)
    local, rank, world = common.init("pp_steps")
    os.makedirs(args.out, exist_ok=True)
    info = common.node()
    for sched, micro in configs:
        tag = f"pp-{sched}-{name}-mb{args.mb}x{micro}-n{world}"
        t0 = time.time()
        record = common.base_record(name, spec, args, world, kind="pp", variant=f"pp-{sched}",
                                    node=info)
        try:
            record.update(run(spec, sched, micro, args.mb, args, rank, world, local))
        except Exception as exc:
            clean()
            record.update({"schedule": SCHEDULES[sched], "stages": world, "micro_batches": micro,
                           "micro_batch_size": args.mb, "batch": args.mb * micro,
                           "error": f"{type(exc).__name__}: {exc}"[:2000],
                           "traceback": traceback.format_exc()[-4000:]})
            print(f"{tag} (rank {rank}): {type(exc).__name__}: {exc}"[:600], file=sys.stderr,
                  flush=True)
        if rank == 0:
            common.write_json(os.path.join(args.out, tag + ".json"), record)
            if "step_ms_median" in record:
                lc = record["loss_check"]
                print(f"{tag}: {record['step_ms_median']:.2f} ms, peak per rank "
                      + ", ".join(f"{m['peak_allocated_bytes'] / 2**30:.2f}"
                                  for m in record["rank_memory"])
                      + f" GiB, loss unsharded {lc['unsharded']} / first step "
                      f"{lc['pipeline_first_step']} ({time.time() - t0:.0f} s)", flush=True)
            else:
                print(f"{tag}: failed ({time.time() - t0:.0f} s)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
