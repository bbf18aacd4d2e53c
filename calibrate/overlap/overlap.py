#!/usr/bin/env python3
"""How much an NCCL-like kernel running beside compute slows each of them, on one GPU.

NCCL runs a collective as one CTA per channel that streams buffers through the GPU's memory. This
stands in for it with a copy kernel of C CTAs (512 threads each, as NCCL's Simple protocol uses)
that streams a 1 GiB buffer, on a second stream, and measures:
  - a bf16 GEMM loop (torch.matmul) alone and with the copy kernel running beside it;
  - an elementwise kernel loop (torch.add, memory-bound) alone and beside it;
  - the copy kernel's bandwidth alone and beside the GEMM loop;
for C in 0 (alone), 4, 8, 16, 24, 32 and a few GEMM shapes. Writes one JSON file.

  python3 calibrate/overlap/overlap.py --out calibrate/data/h200x1-overlap
"""
import argparse
import json
import os
import statistics

import cupy
import torch

COPY_SRC = r"""
extern "C" __global__ void stream_copy(const float4* __restrict__ src, float4* __restrict__ dst,
                                       long long n, int passes) {
  for (int p = 0; p < passes; ++p) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
      dst[i] = src[i];
    }
  }
}
"""


def timed(stream, fn):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record()
        fn()
        end.record()
    return start, end


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    dev = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(0)
    kernel = cupy.RawKernel(COPY_SRC, "stream_copy")
    n_vec = (1 << 30) // 16  # 1 GiB of float4
    src = cupy.ones(n_vec * 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    compute = torch.cuda.Stream()
    comm_torch = torch.cuda.Stream()  # the "NCCL" stream; CuPy launches onto the same stream
    comm = cupy.cuda.ExternalStream(comm_torch.cuda_stream)

    def copy(ctas, passes):
        with comm:
            kernel((ctas,), (512,), (src, dst, cupy.int64(n_vec), cupy.int32(passes)))

    shapes = [(8192, 8192, 8192), (8192, 3072, 768), (4096, 4096, 4096)]
    gemms = {s: (torch.randn(s[0], s[2], device=dev, dtype=torch.bfloat16),
                 torch.randn(s[2], s[1], device=dev, dtype=torch.bfloat16)) for s in shapes}
    ew_a = torch.randn(1 << 28, device=dev)  # 1 GiB fp32
    ew_b = torch.randn(1 << 28, device=dev)
    ew_c = torch.empty_like(ew_a)

    def gemm_loop(s, reps):
        a, b = gemms[s]
        return lambda: [torch.matmul(a, b) for _ in range(reps)]

    def ew_loop(reps):
        return lambda: [torch.add(ew_a, ew_b, out=ew_c) for _ in range(reps)]

    def measure(work, ctas, copy_passes):
        """The work's time on the compute stream, alone (ctas 0) or beside the copy kernel."""
        torch.cuda.synchronize()
        if ctas:
            copy(ctas, copy_passes)
        s, e = timed(compute, work)
        torch.cuda.synchronize()
        return s.elapsed_time(e)

    def copy_alone(ctas, passes):
        torch.cuda.synchronize()
        s, e = timed(comm_torch, lambda: copy(ctas, passes))
        torch.cuda.synchronize()
        return s.elapsed_time(e)

    results = {"gpu": torch.cuda.get_device_name(0), "sms": props.multi_processor_count,
               "torch": torch.__version__, "copy_bytes_per_pass": 2 * n_vec * 16,
               "threads_per_cta": 512, "rows": []}
    ctas_list = [4, 8, 16, 24, 32]
    # Warm-up.
    for s in shapes:
        measure(gemm_loop(s, 3), 0, 0)
    copy_alone(32, 1)
    # The copy kernel alone: bandwidth per CTA count.
    copy_bw = {}
    for c in ctas_list:
        t = statistics.median(copy_alone(c, 2) for _ in range(3))
        copy_bw[c] = 2 * 2 * n_vec * 16 / (t / 1e3)
        results["rows"].append({"what": "copy_alone", "ctas": c, "ms": t,
                                "GBps": copy_bw[c] / 1e9})
    for s in shapes:
        reps = max(3, int(2e13 / (2 * s[0] * s[1] * s[2])))  # ~25 ms of GEMMs
        alone = statistics.median(measure(gemm_loop(s, reps), 0, 0) for _ in range(3))
        results["rows"].append({"what": "gemm", "shape": s, "reps": reps, "ctas": 0,
                                "ms": alone})
        for c in ctas_list:
            # Enough passes that the copy outlasts the GEMM loop.
            passes = max(1, int(3 * alone / 1e3 * copy_bw[c] / (2 * n_vec * 16)) + 1)
            t = statistics.median(measure(gemm_loop(s, reps), c, passes) for _ in range(3))
            results["rows"].append({"what": "gemm", "shape": s, "reps": reps, "ctas": c,
                                    "ms": t, "slowdown": t / alone})
            print(f"gemm {s} ctas {c}: {t / alone:.3f}x", flush=True)
    reps = 20
    alone = statistics.median(measure(ew_loop(reps), 0, 0) for _ in range(3))
    results["rows"].append({"what": "elementwise", "reps": reps, "ctas": 0, "ms": alone,
                            "bytes": 3 * ew_a.numel() * 4 * reps})
    for c in ctas_list:
        passes = max(1, int(3 * alone / 1e3 * copy_bw[c] / (2 * n_vec * 16)) + 1)
        t = statistics.median(measure(ew_loop(reps), c, passes) for _ in range(3))
        results["rows"].append({"what": "elementwise", "reps": reps, "ctas": c, "ms": t,
                                "slowdown": t / alone})
        print(f"elementwise ctas {c}: {t / alone:.3f}x", flush=True)
    # The copy kernel beside a long GEMM loop (8192^3): its bandwidth then.
    s = shapes[0]
    for c in ctas_list:
        torch.cuda.synchronize()
        with torch.cuda.stream(compute):
            gemm_loop(s, 60)()
        st, en = timed(comm_torch, lambda: copy(c, 1))
        torch.cuda.synchronize()
        t = st.elapsed_time(en)
        bw = 2 * n_vec * 16 / (t / 1e3)
        results["rows"].append({"what": "copy_beside_gemm", "ctas": c, "ms": t,
                                "GBps": bw / 1e9, "slowdown": copy_bw[c] / bw})
        print(f"copy ctas {c} beside gemm: {copy_bw[c] / bw:.3f}x slower", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "overlap.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
