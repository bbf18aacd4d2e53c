#!/usr/bin/env python3
"""Both sides of overlap, each measured while the other side is already running, on one GPU.

NCCL runs a collective as one CTA per channel (512 threads with the Simple protocol). Over NVLink
or a NIC a channel moves far less than a CTA can copy, so its CTAs are paced by the link: this
stands in for it with a copy kernel of C CTAs whose every CTA copies 64 KiB chunks no faster than
a set rate (read from %globaltimer), or unpaced. Measured, for C in 4-32 and the rates below:
  - comm side: the copy's time while a long loop of one kind of compute kernel (three bf16 GEMM
    shapes, a memory-bound add) runs on the compute stream, against the copy alone;
  - compute side: a short loop of that compute kernel while a long copy runs beside it, against
    the loop alone.
Each sample starts its timed part after a spin kernel on its stream, so that the other side is
in steady state; 9 samples, median and spread. Writes beside.json.

  python3 calibrate/overlap/beside.py --out calibrate/data/h200x1-overlap
"""
import argparse
import json
import os
import statistics
import sys

import cupy
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overlap import timed  # noqa: E402  (events around work on a stream)

PACED_SRC = r"""
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Each CTA copies its own contiguous slice of `slice` float4, `passes` times, in chunks of
// blockDim.x float4 x 8; with bytes_per_ns > 0 it waits before each chunk until its rate would
// not pass bytes_per_ns.
extern "C" __global__ void paced_copy(const float4* __restrict__ src, float4* __restrict__ dst,
                                      long long slice, int passes, double bytes_per_ns) {
  __shared__ unsigned long long t0;
  const long long base = blockIdx.x * slice;
  const int chunk = blockDim.x * 8;
  if (threadIdx.x == 0) t0 = now_ns();
  __syncthreads();
  long long done = 0;
  for (int p = 0; p < passes; ++p) {
    for (long long off = 0; off < slice; off += chunk, done += chunk) {
      if (bytes_per_ns > 0) {
        if (threadIdx.x == 0) {
          const double due = (double)done * 16.0 / bytes_per_ns;
          while ((double)(now_ns() - t0) < due) { }
        }
        __syncthreads();
      }
      for (int k = 0; k < 8; ++k) {
        const long long i = off + k * blockDim.x + threadIdx.x;
        if (i < slice) dst[base + i] = src[base + i];
      }
    }
  }
}
"""

THREADS = 512
CTAS = [4, 8, 16, 24, 32]
RATES_GBPS = [10.0, 25.0, 0.0]  # per CTA; 0: unpaced
SAMPLES = 9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    dev = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(0)
    kernel = cupy.RawKernel(PACED_SRC, "paced_copy")
    total_vec = (2 << 30) // 16  # 2 GiB of float4 each way
    src = cupy.ones(total_vec * 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    compute = torch.cuda.Stream()
    comm_t = torch.cuda.Stream()
    comm = cupy.cuda.ExternalStream(comm_t.cuda_stream)
    clock_hz = 1.98e9  # H100 and H200 SXM boost clock; the spin only needs to be roughly long

    def copy(ctas, rate, seconds):
        """Enqueue the copy on the comm stream, sized to take about `seconds` alone."""
        per_cta_rate = rate * 1e9 if rate > 0 else unpaced_rate[ctas]
        want = int(per_cta_rate * seconds / 16)  # float4 per CTA
        slice_ = min(want, total_vec // ctas)
        passes = max(1, round(want / slice_))
        with comm:
            kernel((ctas,), (THREADS,),
                   (src, dst, cupy.int64(slice_), cupy.int32(passes), cupy.float64(rate)))
        return slice_ * passes * 16 * ctas

    shapes = [(8192, 8192, 8192), (8192, 3072, 768), (4096, 4096, 4096)]
    mats = {s: (torch.randn(s[0], s[2], device=dev, dtype=torch.bfloat16),
                torch.randn(s[2], s[1], device=dev, dtype=torch.bfloat16)) for s in shapes}
    ew = [torch.randn(1 << 26, device=dev) for _ in range(3)]  # 256 MiB each

    def kernel_alone_ms(kind):
        with torch.cuda.stream(compute):
            for _ in range(3):
                run_one(kind)
            torch.cuda.synchronize()
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(10):
                run_one(kind)
            e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / 10

    def run_one(kind):
        if kind == "elementwise":
            torch.add(ew[0], ew[1], out=ew[2])
        else:
            a, b = mats[kind]
            torch.matmul(a, b)

    def spin(stream, ms):
        with torch.cuda.stream(stream):
            torch.cuda._sleep(int(ms * 1e-3 * clock_hz))

    # The copy's own rate per CTA, unpaced: 32 MiB per CTA.
    unpaced_rate = {}
    for c in CTAS:
        for _ in range(2):
            unpaced_rate[c] = (32 << 20) / 1e-3  # sizes the copy at 32 MiB per CTA
            s, e = timed(comm_t, lambda c=c: copy(c, 0.0, 1e-3))
            torch.cuda.synchronize()
        unpaced_rate[c] = (32 << 20) / (s.elapsed_time(e) * 1e-3)

    kinds = ["elementwise"] + list(shapes)
    kernel_ms = {str(k): kernel_alone_ms(k) for k in kinds}
    results = {"gpu": torch.cuda.get_device_name(0), "sms": props.multi_processor_count,
               "torch": torch.__version__, "threads_per_cta": THREADS,
               "unpaced_GBps_per_cta": {str(c): unpaced_rate[c] / 1e9 for c in CTAS},
               "kernel_ms": kernel_ms, "rows": []}
    copy_s = 1e-3  # the timed copy takes about 1 ms alone
    for c in CTAS:
        for rate in RATES_GBPS:
            alone = []
            for _ in range(SAMPLES):
                spin(comm_t, 1.0)
                s, e = timed(comm_t, lambda: copy(c, rate, copy_s))
                torch.cuda.synchronize()
                alone.append(s.elapsed_time(e))
            alone_ms = statistics.median(alone)
            for kind in kinds:
                reps = max(4, int(8.0 / kernel_ms[str(kind)]))  # ~8 ms of compute
                # Comm side: compute loop first, the copy 2 ms into it.
                comm_ms = []
                for _ in range(SAMPLES):
                    with torch.cuda.stream(compute):
                        for _ in range(reps):
                            run_one(kind)
                    spin(comm_t, 2.0)
                    s, e = timed(comm_t, lambda: copy(c, rate, copy_s))
                    torch.cuda.synchronize()
                    comm_ms.append(s.elapsed_time(e))
                # Compute side: a long copy first, a short compute loop 1 ms into it.
                short = max(2, int(2.0 / kernel_ms[str(kind)]))
                comp_ms = []
                comp_alone = []
                for _ in range(SAMPLES):
                    copy(c, rate, 6e-3)
                    spin(compute, 1.0)
                    s, e = timed(compute, lambda: [run_one(kind) for _ in range(short)])
                    torch.cuda.synchronize()
                    comp_ms.append(s.elapsed_time(e))
                    spin(compute, 0.2)
                    s, e = timed(compute, lambda: [run_one(kind) for _ in range(short)])
                    torch.cuda.synchronize()
                    comp_alone.append(s.elapsed_time(e))
                row = {"ctas": c, "rate_GBps_per_cta": rate, "kind": str(kind),
                       "copy_alone_ms": alone_ms, "copy_beside_ms": statistics.median(comm_ms),
                       "copy_beside_spread_ms": [min(comm_ms), max(comm_ms)],
                       "comm_slowdown": statistics.median(comm_ms) / alone_ms,
                       "compute_alone_ms": statistics.median(comp_alone),
                       "compute_beside_ms": statistics.median(comp_ms),
                       "compute_slowdown": statistics.median(comp_ms) /
                       statistics.median(comp_alone)}
                results["rows"].append(row)
                print(f"ctas {c} rate {rate} {kind}: comm {row['comm_slowdown']:.3f}x "
                      f"compute {row['compute_slowdown']:.3f}x", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "beside.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
