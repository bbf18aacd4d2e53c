// Bucket assignment by size, one open bucket per dtype.
#include "workload/buckets.hpp"

#include <cmath>
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

}  // namespace cs::workload
