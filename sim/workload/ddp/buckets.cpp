// Bucket assignment by size, one open bucket per dtype.
#include "workload/ddp/buckets.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace cs::workload {

double bucket_cap_bytes(double bucket_cap_mb) {
  return std::floor(bucket_cap_mb * 1024.0 * 1024.0);
}

std::vector<Bucket> assign_buckets(const std::vector<GradTensor>& order, double cap_bytes,
                                   double first_cap_bytes) {
  std::vector<Bucket> closed;
  std::map<Dtype, Bucket> open;
  std::vector<Dtype> opened;       // dtypes in the order their current bucket was opened
  std::map<Dtype, int> closed_of;  // each dtype walks the limits on its own, as in PyTorch
  for (const GradTensor& g : order) {
    auto [it, fresh] = open.try_emplace(g.dtype);
    Bucket& bucket = it->second;
    if (fresh) {
      bucket.dtype = g.dtype;
      opened.push_back(g.dtype);
    }
    bucket.params.push_back(g.param);
    bucket.bytes += g.bytes;
    const double limit = closed_of[g.dtype] == 0 ? first_cap_bytes : cap_bytes;
    if (bucket.bytes >= limit) {
      ++closed_of[g.dtype];
      closed.push_back(std::move(bucket));
      open.erase(it);
      std::erase(opened, g.dtype);
    }
  }
  for (Dtype d : opened) closed.push_back(std::move(open[d]));
  return closed;
}

std::vector<Bucket> ddp_buckets(const std::vector<GradTensor>& in_order,
                                const std::vector<GradTensor>& ready, const DdpOptions& settings) {
  const double cap = bucket_cap_bytes(settings.bucket_cap_mb);
  const double first = settings.bucket_cap_set ? cap : kFirstBucketBytes;
  if (!settings.find_unused_parameters && !settings.first_step) {
    return assign_buckets(ready, cap, first);
  }
  // DDP's logged bucket_sizes on the H200 (calibrate/data/h200x1-overlap/ddp_options.json) are
  // these, byte for byte.
  const double none = std::numeric_limits<double>::infinity();
  std::vector<Bucket> buckets = settings.find_unused_parameters
                                    ? assign_buckets(in_order, cap, first)
                                    : assign_buckets(in_order, none, none);
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

}  // namespace cs::workload
