// DDP's bucket assignment, derived by hand.
#include <doctest/doctest.h>

#include "workload/ddp/buckets.hpp"

namespace cs::workload {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST_CASE("buckets: the 1 MiB first bucket, the cap, overshoot by one tensor") {
  // Gradients in ready order: 0.6, 0.6, 10, 20 and 5 MiB, cap 25 MiB, first bucket 1 MiB.
  // Bucket 0 closes at 1.2 MiB (>= 1 MiB after the second tensor). Bucket 1 takes 10 MiB, then
  // 20 MiB: 30 MiB >= 25 closes it, one tensor past the cap. The 5 MiB tensor is left in an open
  // bucket, closed at the end.
  const std::vector<GradTensor> order = {
      {4, 0.6 * kMiB}, {3, 0.6 * kMiB}, {2, 10 * kMiB}, {1, 20 * kMiB}, {0, 5 * kMiB}};
  const std::vector<Bucket> b = assign_buckets(order, bucket_cap_bytes(25), kFirstBucketBytes);
  REQUIRE(b.size() == 3);
  CHECK(b[0].params == std::vector<int>{4, 3});
  CHECK(b[0].bytes == doctest::Approx(1.2 * kMiB));
  CHECK(b[1].params == std::vector<int>{2, 1});
  CHECK(b[1].bytes == doctest::Approx(30 * kMiB));
  CHECK(b[2].params == std::vector<int>{0});
}

TEST_CASE("buckets: a user-set cap applies to the first bucket too, dtypes never mix") {
  // Cap 2 MiB for all: fp32 tensors of 1.5 MiB each close a bucket every second tensor; the bf16
  // tensor opens a bucket of its own, closed at the end after the open fp32 one.
  const std::vector<GradTensor> order = {{0, 1.5 * kMiB, Dtype::fp32},
                                         {1, 1.0 * kMiB, Dtype::bf16},
                                         {2, 1.5 * kMiB, Dtype::fp32},
                                         {3, 1.5 * kMiB, Dtype::fp32}};
  const std::vector<Bucket> b = assign_buckets(order, bucket_cap_bytes(2), bucket_cap_bytes(2));
  REQUIRE(b.size() == 3);
  CHECK(b[0].params == std::vector<int>{0, 2});
  CHECK(b[1].params == std::vector<int>{1});
  CHECK(b[1].dtype == Dtype::bf16);
  CHECK(b[2].params == std::vector<int>{3});
}

}  // namespace
}  // namespace cs::workload
