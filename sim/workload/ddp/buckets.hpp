// DDP's gradient buckets: which gradients are all-reduced together, formed as PyTorch's
// compute_bucket_assignment_by_size forms them (models/README.md, "DDP's buckets"; PyTorch
// torch/csrc/distributed/c10d/reducer.cpp).
#pragma once

#include <vector>

#include "workload/model/model.hpp"

namespace cs::workload {

// One gradient, as DDP sees it: the parameter's index in model.parameters() order, its bytes and
// its dtype (buckets never mix dtypes).
struct GradTensor {
  int param = 0;
  double bytes = 0;
  Dtype dtype = Dtype::fp32;
};

struct Bucket {
  std::vector<int> params;  // in the order they were added (gradient-ready order)
  double bytes = 0;
  Dtype dtype = Dtype::fp32;
};

// Buckets in the order DDP launches them. `order` lists the gradients as they are added: the
// rebuilt buckets of steady state follow the order gradients became ready in the first step.
// Each dtype has one open bucket; a tensor joins it and the bucket closes once its bytes reach
// the current limit, so a bucket overshoots by at most one tensor. A dtype's first bucket takes
// `first_cap_bytes` as its limit, every later one `cap_bytes` (PyTorch: [1 MiB, bucket_cap_mb]
// with the default cap; a user-set cap applies to all). Open buckets close at the end in the order
// they were opened.
std::vector<Bucket> assign_buckets(const std::vector<GradTensor>& order, double cap_bytes,
                                   double first_cap_bytes);

// PyTorch's cap: bucket_cap_mb is in MiB (int(bucket_cap_mb * 1024 * 1024)).
double bucket_cap_bytes(double bucket_cap_mb);
// dist._DEFAULT_FIRST_BUCKET_BYTES: 1 MiB.
inline constexpr double kFirstBucketBytes = 1024.0 * 1024.0;
// DDP's default bucket_cap_mb.
inline constexpr double kDefaultBucketCapMb = 25.0;

// PyTorch DDP's own options (DistributedDataParallel's arguments and the step it is at), held
// once: the strategy's options beside the training's (TrainingOptions, step_plan.hpp).
struct DdpOptions {
  bool enabled = true;  // false: the plain step, without the DDP wrapper
  double bucket_cap_mb = kDefaultBucketCapMb;
  bool bucket_cap_set = false;  // bucket_cap_mb given by the user: no 1 MiB first bucket then
  bool gradient_as_bucket_view = false;
  bool broadcast_buffers = true;  // DDP's default: rank 0's buffers broadcast before forward
  // find_unused_parameters=True: a walk of the autograd graph after each forward, extra work in
  // each gradient's hook, and the constructor's buckets kept (never rebuilt).
  bool find_unused_parameters = false;
  // The first step instead of steady state: before DDP rebuilds its buckets (without
  // find_unused_parameters the constructor makes one bucket per dtype).
  bool first_step = false;
};

// The buckets of a step, `in_order` listing the gradients in model.parameters() order and
// `ready` in the order backward makes them ready. Steady state: rebuilt over `ready` with limits
// [1 MiB, cap] (the cap throughout when set by the user). The constructor's buckets, used by the
// first step and kept under find_unused_parameters (never rebuilt): assigned over `in_order`, the
// list then reversed (DDP's _ddp_init_helper), with those limits under find_unused_parameters and
// none otherwise (one bucket per dtype).
std::vector<Bucket> ddp_buckets(const std::vector<GradTensor>& in_order,
                                const std::vector<GradTensor>& ready, const DdpOptions& settings);

}  // namespace cs::workload
