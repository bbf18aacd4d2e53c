"""Megatron-LM's scaled_upper_triang_masked_softmax (megatron/fused_kernels, the CUDA kernel behind
FusedScaleMaskSoftmax for causal self-attention) as a PyTorch custom op backed by Triton: one
kernel forward, softmax(scale * x) over the last axis with the causal (upper-triangular) mask,
bf16 in and out with fp32 math, reading the lower triangle of the scores once and writing every
element once (zeros above the diagonal); one kernel backward, grad_in = scale * y * (grad_out -
sum(grad_out * y)), reading y and grad_out (their lower triangles: y is 0 above the diagonal)
and writing grad_in once.

The recorder (recorder.py) sees each as one op, `megatron::scaled_upper_triang_masked_softmax`
and `megatron::scaled_upper_triang_masked_softmax_backward`, and records it by its fallback: a
memory op of the bytes of its tensor arguments plus its output (x + y forward; grad_out + y +
grad_in backward), whose name holds "softmax" (to_yaml.py: a reduction over the contiguous axis).
torch.profiler attributes the Triton kernel to the op's range as any other kernel.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _forward_kernel(x_ptr, y_ptr, scale, sq, sk, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = row % sq  # the query's position: keys 0..i are kept
    cols = tl.arange(0, BLOCK)
    base = row.to(tl.int64) * sk
    keep = cols <= i
    x = tl.load(x_ptr + base + cols, mask=keep, other=0.0).to(tl.float32)
    x = tl.where(keep, x * scale, float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=cols < sk)


@triton.jit
def _backward_kernel(g_ptr, y_ptr, dx_ptr, scale, sq, sk, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = row % sq
    cols = tl.arange(0, BLOCK)
    base = row.to(tl.int64) * sk
    keep = cols <= i
    g = tl.load(g_ptr + base + cols, mask=keep, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + base + cols, mask=keep, other=0.0).to(tl.float32)
    dx = scale * y * (g - tl.sum(g * y, axis=0))
    tl.store(dx_ptr + base + cols, dx.to(dx_ptr.dtype.element_ty), mask=cols < sk)


def _launch(kernel, out, *tensors, scale):
    sq, sk = out.shape[-2], out.shape[-1]
    if sq != sk:
        raise ValueError(f"causal softmax needs square scores, got {sq} x {sk}")
    block = triton.next_power_of_2(sk)
    kernel[(out.numel() // sk,)](*tensors, out, scale, sq, sk, BLOCK=block,
                                 num_warps=8 if block >= 2048 else 4)
    return out


@torch.library.custom_op("megatron::scaled_upper_triang_masked_softmax", mutates_args=())
def scaled_upper_triang_masked_softmax(x: torch.Tensor, scale: float) -> torch.Tensor:
    x = x.contiguous()
    return _launch(_forward_kernel, torch.empty_like(x), x, scale=scale)


@scaled_upper_triang_masked_softmax.register_fake
def _(x, scale):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("megatron::scaled_upper_triang_masked_softmax_backward",
                         mutates_args=())
def scaled_upper_triang_masked_softmax_backward(grad: torch.Tensor, y: torch.Tensor,
                                                scale: float) -> torch.Tensor:
    grad, y = grad.contiguous(), y.contiguous()
    return _launch(_backward_kernel, torch.empty_like(y), grad, y, scale=scale)


@scaled_upper_triang_masked_softmax_backward.register_fake
def _(grad, y, scale):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.scale = inputs[1]


def _backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return scaled_upper_triang_masked_softmax_backward(grad, y, ctx.scale), None


scaled_upper_triang_masked_softmax.register_autograd(_backward, setup_context=_setup_context)
