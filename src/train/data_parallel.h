// Data-parallel train steps (docs/distributed.md, "Data-parallel training"): the arithmetic of
// PyTorch's DistributedDataParallel written into the train-step program, so that a backend runs
// the gradient all-reduce as StableHLO collectives of the job (CompileOptions::job).
//
//   Module m = *pkg.buildTrainModule();
//   addDataParallelSteps(pkg, m, {.worldSize = 2});   // adds @train_step_dp, @train_step_accumulate_dp
//
// @train_step_dp has train_step's signature. It computes this rank's loss and gradients, then, per
// gradient bucket (DDP's Reducer: the parameters in reverse order of registration, buckets of at
// most 25 MB after a first one of 1 MB), divides each gradient by the world size and sums the
// bucket over the ranks with one variadic `stablehlo.all_reduce` (replica_groups = every rank,
// body = add): DDP's allreduce_hook, `grad.div_(world_size)` then an all-reduce sum. The value and
// grad is inlined into the step, and each bucket's division and all_reduce follow right after the
// op that computes its last gradient, buckets in the order backward completes them: a backend
// running the ops in order starts a bucket's all-reduce while the rest of the backward pass runs
// (DDP's Reducer launches a bucket once its last gradient is ready). The optimizer update then
// runs on the averaged gradients, the same on every rank. Buffers the loss updates (BatchNorm's
// running statistics) are broadcast from rank 0 before the forward pass, as DDP's
// broadcast_buffers does.
//
// @train_step_accumulate_dp has train_step_accumulate's signature: the micro-batches before the
// last add grad / K to this rank's accumulators without any communication (DDP's no_sync); the
// last one all-reduces the accumulated gradients (bucketed as above) and updates, inside a
// stablehlo.if on `micro_batch == micro_batches - 1`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"
#include "train/training_package.h"

namespace wf::train {

// torch.nn.parallel.DistributedDataParallel's bucket_cap_mb default (25 MB) and
// torch.distributed._DEFAULT_FIRST_BUCKET_BYTES (1 MB).
inline constexpr int64_t kDdpBucketCapBytes = 25 * 1024 * 1024;
inline constexpr int64_t kDdpFirstBucketBytes = 1024 * 1024;

// One gradient for bucket assignment: its element type and size in bytes.
struct BucketTensor {
  ElementType dtype = ElementType::kF32;
  int64_t bytes = 0;
};

// torch's compute_bucket_assignment_by_size (torch/csrc/distributed/c10d/reducer.cpp) for tensors
// given in the order their gradients become ready, which is how DDP rebuilds its buckets after
// the first iteration: each tensor joins the open bucket of its element type; a bucket closes
// once its bytes reach the current limit, and that type then moves on to the next limit of
// `limits` (staying at the last). Open buckets close at the end, in order of their type's first
// tensor. Returns, per bucket in order, the positions in `tensors` it holds.
std::vector<std::vector<size_t>> assignBuckets(std::span<const BucketTensor> tensors, std::span<const int64_t> limits);

struct DataParallelOptions {
  int64_t worldSize = 1;
  // DDP's default: a first bucket of 1 MB, then buckets of 25 MB.
  std::vector<int64_t> bucketLimits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
};

// The gradient buckets of a package: the optimized parameters in reverse order of registration
// (the loss program's argument order, which is the model's named_parameters() order), assigned
// by assignBuckets. Each bucket lists indices into pkg.paramArguments(), in bucket order.
std::vector<std::vector<size_t>> gradientBuckets(const TrainingPackage& pkg, const DataParallelOptions& options);

// Adds @train_step_dp and @train_step_accumulate_dp (above) to `module`, a module of
// pkg.buildTrainModule(), and verifies it.
Status addDataParallelSteps(const TrainingPackage& pkg, Module& module, const DataParallelOptions& options);

}  // namespace wf::train
