"""Model specs from outside builders.MODELS: a Hugging Face config.json (`export.py --hf-config`)
or a builder function of your own (`export.py --builder module:function`).

The builder's contract. `module` is a module name importable from the current directory or
calibrate/models/, or a path to a .py file (`path/to/mine.py:make`). `function` is called with no
arguments, or as `function(layers=K)` when `--layers K` is given (build K blocks: a shallow
instance of a model too large for one GPU). It returns either
  - a `builders.ModelSpec`: build, inputs, loss and training defaults, used as they are
    (`--batch`, `--seq`, `--precision`, `--optimizer` still override); or
  - an `nn.Module`, a causal language model over token ids: `model(ids)` with `ids` a
    (batch, seq) int64 tensor of random tokens in [0, vocab) returns the logits
    (batch, seq, vocab), a tuple or list whose first item they are, or an object with
    `.logits`. The exporter adds next-token cross-entropy in fp32 outside the model. vocab is
    `--vocab`, else `model.config.vocab_size`, else `model.vocab_size`. Defaults: batch 2
    (at least 2: to_yaml.py learns how each op grows with the batch by halving it), seq 2048,
    bf16 autocast, AdamW.
Either way the model is built under `torch.device("cuda")` (parameters may be created on the
GPU at once) and trained with fp32 parameters; its repeated blocks should be the numbered
children of one container (`nn.ModuleList`), as `self.blocks.0`, `self.blocks.1`, ..., for
to_yaml.py to find them. `--depth N` records the full depth a shallow instance stands for.
"""
import importlib
import importlib.util
import json
import os

import torch
import torch.nn.functional as F

import builders


def from_hf_config(path, layers=None):
    """A spec from config.json (a file, or a folder holding one): AutoModelForCausalLM over it,
    with num_hidden_layers set to `layers` if given; the full depth is the config's."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    with open(path) as f:
        values = json.load(f)
    if "model_type" not in values:
        raise SystemExit(f"{path}: no model_type; is this a Hugging Face config.json?")
    full = values.get("num_hidden_layers")
    vocab = values.get("vocab_size")
    if full is None or vocab is None:
        raise SystemExit(f"{path}: num_hidden_layers and vocab_size are needed (a decoder's"
                         " config.json has both)")
    blocks = layers if layers is not None else full
    return builders.ModelSpec(
        source=f"transformers AutoModelForCausalLM from {path} (model_type"
        f" {values['model_type']}): {full} layers, {values.get('hidden_size')} wide, vocab"
        f" {vocab}, SDPA attention" + (f"; exported as a shallow instance of {blocks} layers"
                                       if blocks != full else ""),
        build=builders._on_gpu(builders.hf_causal_lm(values, layers=layers)), batch=2,
        seq=2048, precision="bf16", optimizer="adamw", make_batch=builders._tokens(vocab),
        loss=builders._lm_loss, sample_bytes=lambda seq: 8 * seq, blocks=blocks,
        full_depth=full)


def _import(target):
    if ":" not in target:
        raise SystemExit(f"--builder {target}: expected module:function")
    where, name = target.rsplit(":", 1)
    if where.endswith(".py"):
        spec = importlib.util.spec_from_file_location(
            os.path.splitext(os.path.basename(where))[0], where)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise SystemExit(f"--builder {target}: {where} has no {name}")
    return getattr(module, name)


def _logits(out):
    if isinstance(out, (tuple, list)):
        out = out[0]
    if hasattr(out, "logits"):
        out = out.logits
    return out


def _next_token_loss(model, batch):
    (ids,) = batch
    logits = _logits(model(ids))
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(),
                           ids[:, 1:].reshape(-1))


def from_builder(target, layers=None, vocab=None):
    """A spec from the user's function (the contract is this module's docstring)."""
    function = _import(target)
    kwargs = {"layers": layers} if layers is not None else {}
    try:  # called once here to see what it returns, without memory where it can be
        with torch.device("meta"):
            probe = function(**kwargs)
    except Exception:  # noqa: BLE001 (code that cannot run on the meta device)
        probe = function(**kwargs)
    if isinstance(probe, builders.ModelSpec):
        spec = probe
    elif isinstance(probe, torch.nn.Module):
        vocab = vocab or getattr(getattr(probe, "config", None), "vocab_size", None) or \
            getattr(probe, "vocab_size", None)
        if not vocab:
            raise SystemExit(f"--builder {target}: an nn.Module needs --vocab (or a"
                             " config.vocab_size / vocab_size attribute)")
        params = sum(p.numel() for p in probe.parameters())
        del probe
        spec = builders.ModelSpec(
            source=f"{type_name(function)} ({target}), {params / 1e6:.1f}M parameters as"
            f" built; random token ids in [0, {vocab}), next-token cross-entropy outside the"
            " model",
            build=builders._on_gpu(lambda: function(**kwargs)), batch=2, seq=2048,
            precision="bf16", optimizer="adamw", make_batch=builders._tokens(vocab),
            loss=_next_token_loss, sample_bytes=lambda seq: 8 * seq)
    else:
        raise SystemExit(f"--builder {target}: returned {type(probe).__name__}; expected a"
                         " builders.ModelSpec or a torch.nn.Module")
    if layers is not None and spec.blocks is None:
        spec.blocks = layers
    return spec


def type_name(function):
    return f"{function.__module__}.{function.__qualname__}"
