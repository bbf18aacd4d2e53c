"""The shipped models as PyTorch builds them, with their training defaults and inputs.

Weights are random (nothing is downloaded): a step's time does not depend on the values. Each
entry says where its architecture comes from. A model of your own is one more ModelSpec.
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
}
