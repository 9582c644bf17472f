#include "train/sampler.h"

#include <algorithm>
#include <string>
#include <utility>

namespace wf::train {

uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::uniform(uint64_t bound) {
  // 2^64 mod bound, in 64-bit arithmetic: (2^64 - bound) mod bound.
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    uint64_t r = next();
    if (r >= threshold) return r % bound;
  }
}

SplitMix64 epochGenerator(uint64_t seed, uint64_t epoch) {
  SplitMix64 seeder(seed);
  return SplitMix64(seeder.next() ^ epoch);
}

std::vector<int64_t> epochPermutation(uint64_t seed, uint64_t epoch, int64_t n, bool shuffle) {
  std::vector<int64_t> p(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(i);
  if (!shuffle || p.size() < 2) return p;
  SplitMix64 gen = epochGenerator(seed, epoch);
  for (size_t i = p.size() - 1; i >= 1; --i) {
    size_t j = static_cast<size_t>(gen.uniform(static_cast<uint64_t>(i) + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

std::vector<int64_t> shardIndices(const std::vector<int64_t>& indices, int64_t rank, int64_t worldSize) {
  const int64_t n = static_cast<int64_t>(indices.size());
  if (n == 0 || worldSize <= 1) return indices;
  const int64_t perRank = (n + worldSize - 1) / worldSize;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(perRank));
  // Position k of the padded order is indices[k mod n].
  for (int64_t k = rank; k < perRank * worldSize; k += worldSize) out.push_back(indices[static_cast<size_t>(k % n)]);
  return out;
}

Expected<Sampler> Sampler::create(const SamplerOptions& o) {
  if (o.numExamples < 0) return invalidArgument("sampler: numExamples must not be negative, got " + std::to_string(o.numExamples));
  if (o.batchSize < 1) return invalidArgument("sampler: batch size must be at least 1, got " + std::to_string(o.batchSize));
  if (o.worldSize < 1 || o.rank < 0 || o.rank >= o.worldSize)
    return invalidArgument("sampler: rank " + std::to_string(o.rank) + " is not in [0, world size " +
                           std::to_string(o.worldSize) + ")");
  return Sampler(o);
}

int64_t Sampler::numIndices() const {
  const SamplerOptions& o = options_;
  return (o.numExamples + o.worldSize - 1) / o.worldSize;
}

int64_t Sampler::numBatches() const {
  const int64_t n = numIndices(), b = options_.batchSize;
  return options_.dropLast ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> Sampler::epochIndices(uint64_t epoch) const {
  const SamplerOptions& o = options_;
  return shardIndices(epochPermutation(o.seed, epoch, o.numExamples, o.shuffle), o.rank, o.worldSize);
}

std::vector<std::vector<int64_t>> Sampler::epochBatches(uint64_t epoch) const {
  std::vector<int64_t> order = epochIndices(epoch);
  const int64_t count = numBatches(), b = options_.batchSize;
  std::vector<std::vector<int64_t>> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    auto begin = order.begin() + i * b;
    auto end = order.begin() + std::min<int64_t>((i + 1) * b, static_cast<int64_t>(order.size()));
    out.emplace_back(begin, end);
  }
  return out;
}

std::vector<int64_t> Sampler::batch(uint64_t epoch, int64_t b) const {
  if (b < 0 || b >= numBatches()) return {};
  std::vector<int64_t> order = epochIndices(epoch);
  const int64_t size = options_.batchSize;
  auto begin = order.begin() + b * size;
  auto end = order.begin() + std::min<int64_t>((b + 1) * size, static_cast<int64_t>(order.size()));
  return std::vector<int64_t>(begin, end);
}

}  // namespace wf::train
