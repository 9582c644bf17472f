// The order in which training visits the examples of a data set: WarpForge's own sampler, the same
// algorithm as python/warpforge/data/sampler.py, so that a PyTorch reference loop and the trainer
// see exactly the same batches (docs/data.md, "The sampler").
//
//   wf::train::Sampler sampler({.numExamples = n, .batchSize = 8, .seed = 0});
//   for (int64_t b = 0; b < sampler.numBatches(); ++b) dataset.batch(sampler.batch(epoch, b));
//
// Everything is unsigned 64-bit arithmetic (mod 2^64); no std:: distribution is used, since those
// differ between standard libraries.
#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace wf::train {

// Vigna's SplitMix64: state += 0x9E3779B97F4A7C15, then the finaliser
// z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t next();
  // Unbiased integer in [0, bound), bound > 0: draws until the output is >= 2^64 mod bound, then
  // takes it mod bound.
  uint64_t uniform(uint64_t bound);
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

// The generator of one epoch: SplitMix64(SplitMix64(seed).next() ^ epoch).
SplitMix64 epochGenerator(uint64_t seed, uint64_t epoch);

// The order of 0..n-1 in epoch `epoch` (from 0): Fisher-Yates driven by epochGenerator(seed,
// epoch): for i = n-1 down to 1, swap p[i] and p[uniform(i + 1)]. shuffle = false gives 0..n-1.
std::vector<int64_t> epochPermutation(uint64_t seed, uint64_t epoch, int64_t n, bool shuffle = true);

// Rank `rank`'s share of `indices`, as torch's DistributedSampler (drop_last=False) takes it:
// padded by repeating from the start to a multiple of worldSize, then positions rank, rank + W, ...
std::vector<int64_t> shardIndices(const std::vector<int64_t>& indices, int64_t rank, int64_t worldSize);

struct SamplerOptions {
  int64_t numExamples = 0;
  int64_t batchSize = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  bool dropLast = false;  // drop a final batch shorter than batchSize
  int64_t rank = 0;
  int64_t worldSize = 1;
};

class Sampler {
 public:
  // Checks the options (batchSize >= 1, 0 <= rank < worldSize, numExamples >= 0).
  static Expected<Sampler> create(const SamplerOptions& options);

  const SamplerOptions& options() const { return options_; }
  // Indices this rank visits per epoch (numExamples padded to a multiple of worldSize, divided).
  int64_t numIndices() const;
  // Batches per epoch on this rank.
  int64_t numBatches() const;
  // This rank's indices of epoch `epoch`, in order.
  std::vector<int64_t> epochIndices(uint64_t epoch) const;
  // Every batch of epoch `epoch` (epochIndices cut into batchSize pieces, the last one dropped
  // when shorter and dropLast).
  std::vector<std::vector<int64_t>> epochBatches(uint64_t epoch) const;
  // Batch `b` (0 <= b < numBatches()) of epoch `epoch`. Computes the epoch's order: callers
  // stepping through an epoch should take epochBatches() or epochIndices() once.
  std::vector<int64_t> batch(uint64_t epoch, int64_t b) const;

 private:
  explicit Sampler(const SamplerOptions& options) : options_(options) {}
  SamplerOptions options_;
};

}  // namespace wf::train
