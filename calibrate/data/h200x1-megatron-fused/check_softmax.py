"""Checks megatron_softmax.py's fused causal softmax against an fp32 reference and against the eager
version the h200x1-megatron-kernels exports ran (masked_fill_ + bf16 softmax, the softmax's
backward), times both at the 1.7B model's scores (2 x 24 x 2048 x 2048 bf16), and prints how the
exporter's recorder records the fused ops. Run from the repository root on a GPU."""
import os
import sys

import torch
import triton.testing

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "models"))
import megatron_gpt as mg  # noqa: E402
from megatron_softmax import (scaled_upper_triang_masked_softmax as fused,  # noqa: E402
                              scaled_upper_triang_masked_softmax_backward as fused_bwd)
from recorder import Recorder  # noqa: E402

torch.manual_seed(1)
dev = "cuda"
worst = 0.0
print("shape scale | fwd max|err| fused, eager vs fp32 | bwd max|err| fused, eager vs fp32 "
      "| fused vs eager fwd, bwd")
for (b, h, s, scale) in [(2, 24, 2048, 1.0), (1, 4, 1024, 0.5), (2, 3, 100, 2.0)]:
    x = (torch.randn(b, h, s, s, device=dev) * 3).bfloat16()
    g = torch.randn(b, h, s, s, device=dev).bfloat16()
    mask = torch.ones(s, s, dtype=torch.bool, device=dev).triu(1)
    ref = torch.softmax((x.float() * scale).masked_fill(mask, float("-inf")), -1)
    ref_grad = scale * ref * (g.float() - (g.float() * ref).sum(-1, keepdim=True))
    xf = x.clone().requires_grad_()
    y = fused(xf, scale)
    y.backward(g)
    xe = x.clone().requires_grad_()
    ye = mg._CausalSoftmax.apply(xe * scale, mask)
    ye.backward(g)
    row = [(y.float() - ref).abs().max().item(), (ye.float() - ref).abs().max().item(),
           (xf.grad.float() - ref_grad).abs().max().item(),
           (xe.grad.float() - ref_grad).abs().max().item(),
           (y.float() - ye.float()).abs().max().item(),
           (xf.grad.float() - xe.grad.float()).abs().max().item()]
    upper = y.float().masked_select(mask).abs().max().item()
    worst = max(worst, row[0], row[2] / max(1.0, ref_grad.abs().max().item()))
    print(f"{b}x{h}x{s}x{s} {scale} | " + " ".join(f"{v:.2e}" for v in row)
          + f" | above-diagonal max {upper:.1e}, finite {bool(torch.isfinite(y).all())}")
    del x, g, ref, ref_grad, xf, y, xe, ye
    torch.cuda.empty_cache()

try:
    small = torch.randn(1, 2, 64, 64, device=dev).bfloat16().requires_grad_()
    torch.library.opcheck(torch.ops.megatron.scaled_upper_triang_masked_softmax, (small, 0.5))
    print("opcheck: passed")
except Exception as e:  # noqa: BLE001
    print("opcheck:", type(e).__name__, str(e)[:300])

# Timing at the 1.7B model's scores.
x = torch.randn(2, 24, 2048, 2048, device=dev).bfloat16()
g = torch.randn_like(x)
y = fused(x, 1.0)
mask = torch.ones(2048, 2048, dtype=torch.bool, device=dev).triu(1)


def bench(fn):
    return 1e3 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


t = {"fused forward": bench(lambda: fused(x, 1.0)),
     "fused backward": bench(lambda: fused_bwd(g, y, 1.0)),
     "eager masked_fill_": bench(lambda: x.masked_fill_(mask, -10000.0)),
     "eager softmax": bench(lambda: torch.softmax(x, -1)),
     "eager softmax backward": bench(lambda: torch._softmax_backward_data(g, y, -1, y.dtype))}
full = 2 * x.numel() * 2
for k, v in t.items():
    print(f"{k}: {v:.1f} us ({full / v / 1e6:.2f} TB/s at one read + one write of the square)")

# What the recorder records for the fused ops (a small CoreAttention, forward and backward).
core = mg.CoreAttention(2, 64, 128, 0.1).cuda()
mixed = torch.randn(128, 2, 2 * 3 * 64, device=dev).bfloat16().requires_grad_()
rec = Recorder(core, annotate=False)
with rec.recording():
    core(mixed).sum().backward()
for op in rec.ops:
    if "softmax" in op["aten"]:
        print("recorded:", op["phase"], op["layer"], op["aten"], op["work"])
print("saved bytes per layer:", dict(rec.saved))
print(f"check: worst error {worst:.2e}", "OK" if worst < 2e-2 else "FAILED")
sys.exit(0 if worst < 2e-2 else 1)
