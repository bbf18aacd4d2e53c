"""Megatron-LM's GPT models of its weak-scaling table (Narayanan et al., SC21, Table 1) as Hugging
Face GPT2LMHeadModel, for `export.py --builder megatron_gpt:gpt_39_1b --layers 2` (issue 42); and
the same models with Megatron-LM's own kernels in plain PyTorch, `megatron_block_39_1b` etc. (the
comment before them; models/megatron-gpt-*.yaml are written from these).

GPT-2's architecture is Megatron-LM's GPT: learned position embeddings, pre-LayerNorm blocks,
a GELU MLP of 4 x hidden, the output layer tied to the input embedding. Table 1's models: vocabulary
51,200, sequence 2048 (the paper's section 5.1); heads, hidden size and layers per row (Table 1, as
transcribed in github.com/SotaroKaneda/MLCarbon, data/megatron_table.csv). Batch 2 x 2048 (to_yaml.py
learns how each op grows with the batch from the step recorded at half of it), bf16 autocast,
AdamW, fp32 weights. The models are too large for one GPU with AdamW: each is exported as a shallow
instance of a few blocks (`--layers K`) and written at full depth by to_yaml.py.
"""
import builders

VOCAB = 51200
SEQ = 2048
# parameters (billions, as Table 1 prints them) -> (attention heads, hidden size, layers)
TABLE1 = {
    "1.7b": (24, 2304, 24), "3.6b": (32, 3072, 30), "7.5b": (32, 4096, 36),
    "18.4b": (48, 6144, 40), "39.1b": (64, 8192, 48), "76.1b": (80, 10240, 60),
    "145.6b": (96, 12288, 80), "310.1b": (128, 16384, 96), "529.6b": (128, 20480, 105),
    "1008b": (160, 25600, 128),
}


def spec(row, layers=None):
    """Table 1's row `row` with `layers` of its blocks built (all of them if None)."""
    heads, hidden, depth = TABLE1[row]
    blocks = layers or depth
    return builders.ModelSpec(
        source=f"transformers GPT2LMHeadModel as Megatron-LM's GPT of Narayanan et al. (SC21)"
        f" Table 1, row {row}: {depth} layers, {hidden} wide, {heads} heads, MLP {4 * hidden}"
        f" (GELU), vocab {VOCAB}, {SEQ} learned positions, LayerNorm, tied LM head, dropout 0.1,"
        f" SDPA attention" + (f"; exported as a shallow instance of {blocks} layers"
                              if blocks != depth else ""),
        build=builders._on_gpu(builders._hf(
            "GPT2Config", "GPT2LMHeadModel", vocab_size=VOCAB, n_positions=SEQ, n_embd=hidden,
            n_layer=blocks, n_head=heads)),
        batch=2, seq=SEQ, precision="bf16", optimizer="adamw", make_batch=builders._tokens(VOCAB),
        loss=builders._lm_loss, sample_bytes=lambda seq: 8 * seq, blocks=blocks,
        full_depth=depth)


def _row(row):
    def build(layers=None):
        return spec(row, layers)

    build.__name__ = "gpt_" + row.replace(".", "_")
    return build


for _r in TABLE1:
    globals()["gpt_" + _r.replace(".", "_")] = _row(_r)


# --- Megatron-LM's own kernels, as far as plain PyTorch eager allows (`megatron_block_*`) -------
#
# The builders above run Hugging Face's GPT-2, whose kernels are not Megatron-LM's: `gelu_new` is
# ~9 unfused fp32 elementwise kernels forward and 14 backward, attention is SDPA's flash kernel,
# and under autocast the residual stream and the LayerNorms are fp32. The builders below build
# the same Table 1 models as Megatron-LM ran them in 2021 (NVIDIA/Megatron-LM at 3d718bf, Aug
# 2021: megatron/model/transformer.py, language_model.py, gpt_model.py, fused_softmax.py,
# fused_bias_gelu.py, mpu/cross_entropy.py), with Megatron's module names, so that the
# simulator's tensor-parallel rule by name reads them as Megatron splits them:
#   - embedding: word + learned position embeddings, embedding dropout, then the transpose to
#     [seq, batch, hidden] that Megatron's ParallelTransformer makes (here that copy also casts
#     the fp32 sum to bf16: the weights are fp32 under autocast, Megatron's were bf16);
#   - each block (pre-LN, residual stream in bf16 as Megatron's without
#     --fp32-residual-connection): input_layernorm; self_attention.query_key_value, one fused
#     QKV Linear; self_attention.core_attention: baddbmm for Q K^T with the 1/sqrt(d) scale as
#     its alpha, then Megatron's scaled_upper_triang_masked_softmax: scale, causal mask and
#     softmax as one bf16-in, bf16-out kernel each way (megatron_softmax.py: a custom op backed
#     by Triton, fp32 math, reading the lower triangle and writing the whole square once; its
#     scale is 1 here, Megatron's is the layer number with query-key layer scaling, which
#     divides baddbmm's alpha by it as well: the same work), attention dropout 0.1, bmm with V,
#     the permute back to [seq, batch, hidden] (one copy, as Megatron's);
#     self_attention.dense; hidden dropout 0.1 and the residual add (Megatron's jit-fused
#     bias_dropout_add is one kernel; here the bias is in the GEMM and dropout and add are two);
#     post_attention_layernorm; mlp.dense_h_to_4h (4h, bias in the GEMM), mlp.activation_func,
#     the tanh GeLU as one kernel (F.gelu(approximate='tanh'); Megatron's jit fuses the bias in),
#     mlp.dense_4h_to_h; hidden dropout and residual add again;
#   - the LayerNorms run in bf16 (apex's fused LayerNorm: bf16 in and out, fp32 inside), their
#     fp32 weights cast to bf16 each step (two tiny kernels forward, two back);
#   - final_layernorm, the transpose back to [batch, seq, hidden], the logits as the root's GEMM
#     with the word embeddings (tied head), and Megatron's vocab-parallel cross-entropy on the
#     logits cast to fp32, as its autograd function computes it on one rank (max, subtract,
#     gather the target logit, exp, sum, log, divide; backward: subtract one at the targets and
#     scale, in place), its three all-reduces left out (TP 1).
# Dropout everywhere is PyTorch's (Megatron's attention dropout was torch's too).
import math  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from megatron_softmax import scaled_upper_triang_masked_softmax  # noqa: E402
from torch import nn  # noqa: E402

BF16 = torch.bfloat16


def _no_autocast():
    return torch.autocast("cuda", enabled=False)


class LayerNorm(nn.LayerNorm):
    """apex's fused LayerNorm as Megatron ran it on a bf16 model: bf16 in, bf16 out, one kernel
    each way (the weights, fp32 here, cast to bf16 first)."""

    def forward(self, x):
        with _no_autocast():
            return F.layer_norm(x, self.normalized_shape, self.weight.to(x.dtype),
                                self.bias.to(x.dtype), self.eps)


class _CausalSoftmax(torch.autograd.Function):
    """Megatron's ScaledUpperTriangMaskedSoftmax (fused_softmax.py) in eager, as the exports of
    calibrate/data/h200x1-megatron-kernels ran it: forward the causal mask in place and a bf16
    softmax (two full-size kernels where Megatron's CUDA kernel is one), backward the softmax's
    backward alone. CoreAttention now runs megatron_softmax.py's fused op; this stays as the
    reference its check compares with (calibrate/data/h200x1-megatron-fused/check_softmax.py)."""

    @staticmethod
    def forward(ctx, scores, mask):
        probs = torch.softmax(scores.masked_fill_(mask, -10000.0), dim=-1)
        ctx.save_for_backward(probs)
        return probs

    @staticmethod
    def backward(ctx, grad):
        (probs,) = ctx.saved_tensors
        return torch._softmax_backward_data(grad, probs, -1, probs.dtype), None


class Gelu(nn.Module):
    """The tanh GeLU as one kernel each way (F.gelu(approximate='tanh')); Megatron's
    bias_gelu_impl (fused_bias_gelu.py, torch.jit) also adds the Linear's bias in that kernel.
    A module of its own, so that the profiler's backward of dense_4h_to_h stays that layer's."""

    def forward(self, x):
        with _no_autocast():
            return F.gelu(x, approximate="tanh")


class CoreAttention(nn.Module):
    """Megatron-LM 2021's attention (no flash kernel) on [seq, batch, heads, 3 x head_dim] QKV."""

    def __init__(self, heads, head_dim, seq, dropout):
        super().__init__()
        self.heads, self.head_dim, self.dropout = heads, head_dim, dropout

    def forward(self, mixed):
        s, b = mixed.shape[0], mixed.shape[1]
        np_, hn = self.heads, self.head_dim
        with _no_autocast():
            mixed = mixed.view(s, b, np_, 3 * hn)
            q, k, v = torch.split(mixed, hn, dim=-1)
            q = q.reshape(s, b * np_, hn)  # views: (b, np) merge without a copy
            k = k.reshape(s, b * np_, hn)
            v = v.reshape(s, b * np_, hn)
            scores = torch.empty(b * np_, s, s, dtype=q.dtype, device=q.device)
            scores = torch.baddbmm(scores, q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2),
                                   beta=0.0, alpha=1.0 / math.sqrt(hn))
            probs = scaled_upper_triang_masked_softmax(scores.view(b, np_, s, s), 1.0)
            probs = F.dropout(probs, self.dropout, self.training)
            context = torch.bmm(probs.view(b * np_, s, s), v.transpose(0, 1))
            context = context.view(b, np_, s, hn).permute(2, 0, 1, 3).contiguous()
            return context.view(s, b, np_ * hn)


class ParallelAttention(nn.Module):
    def __init__(self, hidden, heads, seq, dropout):
        super().__init__()
        self.query_key_value = nn.Linear(hidden, 3 * hidden)
        self.core_attention = CoreAttention(heads, hidden // heads, seq, dropout)
        self.dense = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.dense(self.core_attention(self.query_key_value(x)))


class ParallelMLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(hidden, 4 * hidden)
        self.activation_func = Gelu()
        self.dense_4h_to_h = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        return self.dense_4h_to_h(self.activation_func(self.dense_h_to_4h(x)))


class ParallelTransformerLayer(nn.Module):
    def __init__(self, hidden, heads, seq, dropout):
        super().__init__()
        self.hidden_dropout = dropout
        self.input_layernorm = LayerNorm(hidden, eps=1e-5)
        self.self_attention = ParallelAttention(hidden, heads, seq, dropout)
        self.post_attention_layernorm = LayerNorm(hidden, eps=1e-5)
        self.mlp = ParallelMLP(hidden)

    def forward(self, x):
        out = self.self_attention(self.input_layernorm(x))
        x = x + F.dropout(out, self.hidden_dropout, self.training)
        out = self.mlp(self.post_attention_layernorm(x))
        return x + F.dropout(out, self.hidden_dropout, self.training)


class ParallelTransformer(nn.Module):
    def __init__(self, hidden, heads, seq, layers, dropout):
        super().__init__()
        self.layers = nn.ModuleList(ParallelTransformerLayer(hidden, heads, seq, dropout)
                                    for _ in range(layers))
        self.final_layernorm = LayerNorm(hidden, eps=1e-5)

    def forward(self, x):  # x: [batch, seq, hidden], the embeddings (fp32 under autocast)
        x = x.transpose(0, 1).to(BF16, memory_format=torch.contiguous_format)
        for layer in self.layers:
            x = layer(x)
        x = x.transpose(0, 1).contiguous()
        return self.final_layernorm(x)


class Embedding(nn.Module):
    def __init__(self, vocab, hidden, seq, dropout):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(seq, hidden)
        self.embedding_dropout = nn.Dropout(dropout)

    def forward(self, ids, positions):
        return self.embedding_dropout(self.word_embeddings(ids) +
                                      self.position_embeddings(positions))


class TransformerLanguageModel(nn.Module):
    def __init__(self, vocab, hidden, heads, seq, layers, dropout):
        super().__init__()
        self.embedding = Embedding(vocab, hidden, seq, dropout)
        self.encoder = ParallelTransformer(hidden, heads, seq, layers, dropout)

    def forward(self, ids, positions):
        return self.encoder(self.embedding(ids, positions))


class _VocabParallelCrossEntropy(torch.autograd.Function):
    """megatron/mpu/cross_entropy.py on one tensor-parallel rank (its all-reduces left out)."""

    @staticmethod
    def forward(ctx, logits, target):
        logits_max = torch.max(logits, dim=-1)[0]
        logits.sub_(logits_max.unsqueeze(dim=-1))
        vocab = logits.size(-1)
        target_mask = (target < 0) | (target >= vocab)
        masked_target = target.clone()
        masked_target[target_mask] = 0
        logits_2d = logits.view(-1, vocab)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(0, logits_2d.size(0), device=logits.device)
        predicted = logits_2d[arange_1d, masked_target_1d].clone().contiguous().view_as(target)
        predicted[target_mask] = 0.0
        exp_logits = logits
        torch.exp(logits, out=exp_logits)
        sum_exp = exp_logits.sum(dim=-1)
        loss = torch.log(sum_exp) - predicted
        exp_logits.div_(sum_exp.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        grad_2d = softmax.view(-1, softmax.size(-1))
        arange_1d = torch.arange(0, grad_2d.size(0), device=grad_2d.device)
        grad_2d[arange_1d, masked_target_1d] -= (1.0 - target_mask.view(-1).float())
        softmax.mul_(grad_output.unsqueeze(dim=-1))
        return softmax, None


class GPTModel(nn.Module):
    """Megatron-LM's GPTModel (2021) with tensor parallelism 1: the module tree and names of
    megatron/model/gpt_model.py, its ops in plain PyTorch (the comment above)."""

    def __init__(self, vocab, hidden, heads, seq, layers, dropout=0.1):
        super().__init__()
        self.vocab_size = vocab
        self.language_model = TransformerLanguageModel(vocab, hidden, heads, seq, layers,
                                                       dropout)

    def forward(self, ids, labels):
        b, s = ids.shape
        positions = torch.arange(s, device=ids.device).unsqueeze(0).expand(b, s)
        out = self.language_model(ids, positions)  # [batch, seq, hidden], bf16
        logits = F.linear(out, self.language_model.embedding.word_embeddings.weight)
        with _no_autocast():
            losses = _VocabParallelCrossEntropy.apply(logits.float(), labels)
            return losses.mean()


def _tokens_and_labels(batch, seq):
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (batch, seq + 1), generator=g)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def _megatron_loss(model, batch):
    ids, labels = batch
    return model(ids, labels)


def megatron_spec(row, layers=None):
    """Table 1's row `row` as Megatron-LM's GPTModel in plain PyTorch, `layers` blocks built."""
    heads, hidden, depth = TABLE1[row]
    blocks = layers or depth
    return builders.ModelSpec(
        source=f"Megatron-LM's GPTModel (2021: NVIDIA/Megatron-LM 3d718bf) in plain PyTorch"
        f" eager (calibrate/models/megatron_gpt.py, megatron_block_*) as Narayanan et al. (SC21)"
        f" Table 1, row {row}: {depth} layers, {hidden} wide, {heads} heads, MLP {4 * hidden}"
        f" (tanh GeLU, one kernel), vocab {VOCAB}, {SEQ} learned positions, bf16 LayerNorms and"
        f" residual stream, fused QKV Linear, attention as baddbmm, Megatron's"
        f" fused scale-causal-mask-softmax (one Triton kernel each way), dropout 0.1, bmm,"
        f" hidden dropout 0.1, tied head, Megatron's vocab-parallel"
        f" cross-entropy (TP 1)" + (f"; exported as a shallow instance of {blocks} layers"
                                   if blocks != depth else ""),
        build=builders._on_gpu(lambda: GPTModel(VOCAB, hidden, heads, SEQ, blocks)),
        batch=2, seq=SEQ, precision="bf16", optimizer="adamw", make_batch=_tokens_and_labels,
        loss=_megatron_loss, sample_bytes=lambda seq: 16 * seq, blocks=blocks, full_depth=depth)


def _megatron_row(row):
    def build(layers=None):
        return megatron_spec(row, layers)

    build.__name__ = "megatron_block_" + row.replace(".", "_")
    return build


for _r in TABLE1:
    globals()["megatron_block_" + _r.replace(".", "_")] = _megatron_row(_r)
