"""An example for `export.py --builder`: a GPT-style decoder made of torch.nn parts alone, its
blocks in one nn.ModuleList (user_models.py's docstring has the contract).

  python3 calibrate/models/export.py --builder example_builder:tiny_decoder --layers 2 \
      --depth 12 --seq 1024 --out DIR
"""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(self.ln_1(x)).view(b, s, 3, self.heads, w // self.heads).permute(
            2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, w))
        return x + self.mlp(self.ln_2(x))


class TinyDecoder(nn.Module):
    def __init__(self, vocab, width, heads, layers):
        super().__init__()
        self.vocab_size = vocab
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def tiny_decoder(layers=12):
    """GPT-2 small's shape (768 wide, 12 heads, 12 blocks), untied, 32000 tokens."""
    return TinyDecoder(vocab=32000, width=768, heads=12, layers=layers)


if __name__ == "__main__":
    print(sum(p.numel() for p in tiny_decoder().parameters()), torch.__version__)
