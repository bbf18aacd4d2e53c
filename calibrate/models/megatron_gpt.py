"""Megatron-LM's GPT models of its weak-scaling table (Narayanan et al., SC21, Table 1) as Hugging
Face GPT2LMHeadModel, for `export.py --builder megatron_gpt:gpt_39_1b --layers 2` (issue 42).

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
