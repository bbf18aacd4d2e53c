"""The shipped models as PyTorch builds them, with their training defaults and inputs.

Weights are random (nothing is downloaded): a step's time does not depend on the values. Each
entry says where its architecture comes from. A model of your own is one more ModelSpec, or a
builder function (`export.py --builder`, user_models.py), or a Hugging Face config.json
(`export.py --hf-config`).

A model too large for one GPU is built as a shallow instance: `blocks` of its `full_depth`
identical transformer blocks; `to_yaml.py` writes it back at full depth (a `repeat:` block).
"""
import dataclasses
from typing import Callable, Optional

import torch
import torch.nn.functional as F


@dataclasses.dataclass
class ModelSpec:
    source: str
    build: Callable[[], torch.nn.Module]
    batch: int
    seq: Optional[int]
    precision: str
    optimizer: str
    make_batch: Callable  # (batch, seq) -> tuple of CPU tensors
    loss: Callable  # (model, gpu tensors) -> scalar loss
    sample_bytes: Callable  # seq -> input bytes per sample
    momentum: float = 0.9  # SGD's (optimizer "sgd" only)
    blocks: Optional[int] = None  # a shallow instance: the blocks built ...
    full_depth: Optional[int] = None  # ... of this many in the model it stands for

    def input_bytes_per_sample(self, seq):
        return self.sample_bytes(seq)


def _on_gpu(make):
    def build():
        with torch.device("cuda"):
            return make().train()

    return build


def _tokens(vocab):
    def make(batch, seq):
        g = torch.Generator().manual_seed(0)
        return (torch.randint(0, vocab, (batch, seq), generator=g),)

    return make


def _lm_loss(model, batch):
    (ids,) = batch
    return model(input_ids=ids, labels=ids).loss


def _hf(config_class, model_class, **config):
    def make():
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        cls = getattr(transformers, model_class)
        try:
            return cls._from_config(cfg, attn_implementation="sdpa")
        except (TypeError, AttributeError):
            cfg._attn_implementation = "sdpa"
            return cls(cfg)

    return make


def hf_causal_lm(values, layers=None):
    """A Hugging Face causal LM from config.json's values (a dict with `model_type`), with
    `num_hidden_layers` set to `layers` if given; SDPA attention, fp32 weights (the checkpoint's
    storage dtype, `torch_dtype` in config.json, is not the training's: autocast runs bf16 over
    fp32 master weights, as every export here)."""
    def make():
        import torch
        import transformers

        config = dict(values)
        for key in ("torch_dtype", "dtype", "transformers_version", "architectures"):
            config.pop(key, None)
        if layers is not None:
            config["num_hidden_layers"] = layers
        model_type = config.pop("model_type")
        try:
            cfg = transformers.AutoConfig.for_model(model_type, **config)
        except (TypeError, ValueError, KeyError) as exc:  # a RoPE dict this version refuses
            if "rope_scaling" not in config:
                raise
            print(f"hf_causal_lm: {exc!r}; built without rope_scaling (it changes the inverse "
                  "frequencies computed once, not the step's ops)", flush=True)
            config.pop("rope_scaling")
            cfg = transformers.AutoConfig.for_model(model_type, **config)
        try:
            model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")
        except (TypeError, ValueError):
            cfg._attn_implementation = "sdpa"
            model = transformers.AutoModelForCausalLM.from_config(cfg)
        if any(p.dtype != torch.float32 for p in model.parameters()):
            model = model.float()
        return model

    return make


def _resnet50():
    import torchvision

    return torchvision.models.resnet50(weights=None)


def _images(batch, seq):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(batch, 3, 224, 224, generator=g),
            torch.randint(0, 1000, (batch,), generator=g))


def _image_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)


def _mlp(width, depth):
    def make():
        layers = []
        for _ in range(depth):
            layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers)

    return make


def _vectors(width):
    def make(batch, seq):
        g = torch.Generator().manual_seed(0)
        return (torch.randn(batch, width, generator=g),)

    return make


def _mean_square(model, batch):
    (x,) = batch
    return model(x).float().pow(2).mean()


GPT2_VOCAB = 50257

# meta-llama/Llama-3.1-8B and meta-llama/Llama-3.1-70B on Hugging Face: the values of their
# config.json (huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json, and -70B's) that
# shape the step; bos/eos ids, use_cache and torch_dtype (bfloat16, the checkpoint's storage) are
# left out. 8B: 8.03B parameters; 70B: 70.6B (the model cards' figures; the parameters of the
# written model files add up to them, models/README.md).
LLAMA31_COMMON = {
    "model_type": "llama", "vocab_size": 128256, "max_position_embeddings": 131072,
    "hidden_act": "silu", "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
    "tie_word_embeddings": False, "initializer_range": 0.02, "pretraining_tp": 1,
}
LLAMA31_8B = dict(LLAMA31_COMMON, hidden_size=4096, intermediate_size=14336,
                  num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8)
LLAMA31_70B = dict(LLAMA31_COMMON, hidden_size=8192, intermediate_size=28672,
                   num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=8)


def _llama31(name, values, blocks, params):
    """A shallow instance of a Llama 3.1 model at batch 2 x 4096 (8192 tokens per GPU; batch 2
    because to_yaml.py learns how each op grows with the batch from a recording at half of it).
    Memory of one H200 (141 GB): fp32 weights, gradients and AdamW's two states are 16 bytes
    per parameter, plus autocast's bf16 weight copies, the activations, the loss's fp32 logits
    and, with DDP on one rank, a bucket copy of the gradients; models/README.md has the sums."""
    return ModelSpec(
        source=f"transformers LlamaForCausalLM, {name}'s config.json (Hugging Face"
        f" meta-llama/{name}): {params}, {values['num_hidden_layers']} layers,"
        f" {values['hidden_size']} wide, {values['num_attention_heads']} heads"
        f" ({values['num_key_value_heads']} KV heads), {values['intermediate_size']} FFN (SwiGLU),"
        f" vocab {values['vocab_size']}, untied embeddings, RMSNorm, RoPE (llama3 scaling), SDPA"
        f" attention; exported as a shallow instance of {blocks} layers",
        build=_on_gpu(hf_causal_lm(values, layers=blocks)), batch=2, seq=4096,
        precision="bf16", optimizer="adamw", make_batch=_tokens(values["vocab_size"]),
        loss=_lm_loss, sample_bytes=lambda seq: 8 * seq, blocks=blocks,
        full_depth=values["num_hidden_layers"])


MODELS = {
    "mlp-4096x8": ModelSpec(
        source="torch.nn.Sequential of 8 x (nn.Linear(4096, 4096), nn.ReLU()), 134M params, random"
        " fp32 inputs, mean-square loss; SGD without momentum (torch.optim.SGD's default): a"
        " GEMM-dominated model, for the work model",
        build=_on_gpu(_mlp(4096, 8)), batch=8192, seq=None, precision="bf16", optimizer="sgd",
        make_batch=_vectors(4096), loss=_mean_square, sample_bytes=lambda seq: 4096 * 4,
        momentum=0.0),
    "resnet50": ModelSpec(
        source="torchvision.models.resnet50(weights=None), 224x224 RGB fp32 inputs, ImageNet's"
        " 1000 classes, cross-entropy outside the model",
        build=_on_gpu(_resnet50), batch=128, seq=None, precision="bf16", optimizer="sgd",
        make_batch=_images, loss=_image_loss, sample_bytes=lambda seq: 3 * 224 * 224 * 4 + 8),
    "gpt2": ModelSpec(
        source="transformers GPT2LMHeadModel(GPT2Config()): 124M, 12 layers, 768 wide, 12 heads,"
        " vocab 50257, tied LM head, dropout 0.1, SDPA attention; labels = input ids",
        build=_on_gpu(_hf("GPT2Config", "GPT2LMHeadModel")), batch=8, seq=1024,
        precision="bf16", optimizer="adamw", make_batch=_tokens(GPT2_VOCAB), loss=_lm_loss,
        sample_bytes=lambda seq: 8 * seq),
    "gpt2-medium": ModelSpec(
        source="transformers GPT2LMHeadModel, gpt2-medium's config: 355M, 24 layers, 1024 wide,"
        " 16 heads, SDPA attention",
        build=_on_gpu(_hf("GPT2Config", "GPT2LMHeadModel", n_embd=1024, n_layer=24, n_head=16)),
        batch=8, seq=1024, precision="bf16", optimizer="adamw",
        make_batch=_tokens(GPT2_VOCAB), loss=_lm_loss, sample_bytes=lambda seq: 8 * seq),
    "gpt2-xl": ModelSpec(
        source="transformers GPT2LMHeadModel, gpt2-xl's config: 1.56B, 48 layers, 1600 wide,"
        " 25 heads, SDPA attention",
        build=_on_gpu(_hf("GPT2Config", "GPT2LMHeadModel", n_embd=1600, n_layer=48, n_head=25)),
        batch=4, seq=1024, precision="bf16", optimizer="adamw",
        make_batch=_tokens(GPT2_VOCAB), loss=_lm_loss, sample_bytes=lambda seq: 8 * seq),
    "bert-large": ModelSpec(
        source="transformers BertForMaskedLM, bert-large-uncased's config: 336M, 24 layers, 1024"
        " wide, 16 heads, 4096 FFN, vocab 30522, SDPA attention; MLM loss on every token",
        build=_on_gpu(_hf("BertConfig", "BertForMaskedLM", hidden_size=1024,
                          num_hidden_layers=24, num_attention_heads=16,
                          intermediate_size=4096)),
        batch=16, seq=512, precision="bf16", optimizer="adamw", make_batch=_tokens(30522),
        loss=_lm_loss, sample_bytes=lambda seq: 8 * seq),
    "llama-1b": ModelSpec(
        source="transformers LlamaForCausalLM, Llama-3.2-1B's shape: 1.24B, 16 layers, 2048"
        " wide, 32 heads (8 KV heads), 8192 FFN (SwiGLU), vocab 128256, tied embeddings, RMSNorm,"
        " RoPE, SDPA attention (no rope scaling)",
        build=_on_gpu(_hf("LlamaConfig", "LlamaForCausalLM", vocab_size=128256,
                          hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                          num_attention_heads=32, num_key_value_heads=8,
                          max_position_embeddings=4096, rope_theta=500000.0,
                          tie_word_embeddings=True)),
        batch=4, seq=2048, precision="bf16", optimizer="adamw", make_batch=_tokens(128256),
        loss=_lm_loss, sample_bytes=lambda seq: 8 * seq),
    "llama-3.1-8b": _llama31("Llama-3.1-8B", LLAMA31_8B, blocks=2, params="8.03B"),
    "llama-3.1-70b": _llama31("Llama-3.1-70B", LLAMA31_70B, blocks=2, params="70.6B"),
}
