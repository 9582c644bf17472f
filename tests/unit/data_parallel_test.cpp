// DDP's gradient bucket assignment (train/data_parallel.h), against torch's
// compute_bucket_assignment_by_size worked by hand; python/tests/test_distributed_training.py
// checks a whole model against torch's own function.
#include <gtest/gtest.h>

#include <vector>

#include "train/data_parallel.h"

namespace wf::train {
namespace {

using Buckets = std::vector<std::vector<size_t>>;
constexpr int64_t kMB = 1024 * 1024;

std::vector<BucketTensor> f32(std::initializer_list<int64_t> bytes) {
  std::vector<BucketTensor> out;
  for (int64_t b : bytes) out.push_back({ElementType::kF32, b});
  return out;
}

TEST(DataParallelBuckets, FirstBucketSmallThenCap) {
  const std::vector<int64_t> limits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
  // 0.5 MB + 0.5 MB reaches the 1 MB first bucket exactly (>=: it closes); then 25 MB buckets.
  auto t = f32({kMB / 2, kMB / 2, 10 * kMB, 10 * kMB, 10 * kMB, 3 * kMB, 30 * kMB, kMB});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0, 1}, {2, 3, 4}, {5, 6}, {7}}));
}

TEST(DataParallelBuckets, OneLargeTensorClosesTheFirstBucketAlone) {
  const std::vector<int64_t> limits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
  auto t = f32({40 * kMB, 4, 4});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0}, {1, 2}}));
}

TEST(DataParallelBuckets, SmallModelIsOneBucket) {
  const std::vector<int64_t> limits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
  auto t = f32({64, 1024, 64, 4096});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0, 1, 2, 3}}));
}

TEST(DataParallelBuckets, ElementTypesBucketApartWithTheirOwnLimits) {
  // Each type keeps its own open bucket and its own place in the limits; the open buckets close
  // at the end in order of their type's first tensor.
  std::vector<BucketTensor> t = {{ElementType::kF32, kMB}, {ElementType::kBF16, kMB / 4}, {ElementType::kF32, kMB},
                                 {ElementType::kBF16, kMB}, {ElementType::kF32, 2}};
  const std::vector<int64_t> limits = {kMB, 4 * kMB};
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0}, {1, 3}, {2, 4}}));
}

TEST(DataParallelBuckets, OneLimitOnly) {
  const std::vector<int64_t> limits = {100};
  auto t = f32({60, 60, 60, 40, 10});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0, 1}, {2, 3}, {4}}));
}

}  // namespace
}  // namespace wf::train
