#include "backends/cuda/allocator.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdio>

#include "backends/cuda/cuda_check.h"

namespace wf::cuda {
namespace {

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = other.owner_;
    ptr_ = other.ptr_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.owner_ = nullptr;
    other.ptr_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (owner_ && ptr_) owner_->release(ptr_, capacity_);
  owner_ = nullptr;
  ptr_ = nullptr;
  size_ = capacity_ = 0;
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  int saved = 0;
  WF_CUDA_WARN(cudaGetDevice(&saved));
  WF_CUDA_WARN(cudaSetDevice(device_));
  Status s = emptyCacheLocked();
  if (!s.isOk()) warnFailed(s);
  WF_CUDA_WARN(cudaSetDevice(saved));
}

size_t CachingAllocator::sizeClass(size_t bytes) {
  constexpr size_t kSmallStep = 512;
  constexpr size_t kSmallLimit = size_t{1} << 20;
  if (bytes <= kSmallLimit) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  // 32 classes per power of two: weights and arenas are allocated once and held, so a class
  // wastes at most ~3% of a buffer instead of the 25% of coarser classes.
  const int k = std::bit_width(bytes - 1) - 1;  // 2^k < bytes <= 2^(k+1)
  const size_t step = (size_t{1} << k) / 32;
  return (bytes + step - 1) / step * step;
}

Expected<DeviceBuffer> CachingAllocator::allocate(size_t bytes, std::string_view what) {
  if (bytes == 0) return DeviceBuffer();
  const size_t cls = sizeClass(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_.find(cls);
  if (it != free_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    stats_.bytesCached -= cls;
    stats_.bytesInUse += cls;
    stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
    ++stats_.allocations;
    ++stats_.cacheHits;
    return DeviceBuffer(this, p, bytes, cls);
  }
  void* p = nullptr;
  cudaError_t rc = cudaMalloc(&p, cls);
  if (rc == cudaErrorMemoryAllocation) {
    // Give the cache back to the device and try once more.
    (void)cudaGetLastError();
    WF_RETURN_IF_ERROR(emptyCacheLocked());
    rc = cudaMalloc(&p, cls);
  }
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    size_t freeBytes = 0, totalBytes = 0;
    (void)cudaMemGetInfo(&freeBytes, &totalBytes);
    (void)cudaGetLastError();
    const StatusCode code = rc == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted : StatusCode::kInternal;
    return Status(code, "cuda:" + std::to_string(device_) + ": out of device memory allocating " + mib(cls) + " (" +
                            std::to_string(bytes) + " bytes) for " + std::string(what) + ": " +
                            mib(stats_.bytesInUse) + " in use by WarpForge (peak " + mib(stats_.peakBytesInUse) +
                            "), " + mib(freeBytes) + " free of " + mib(totalBytes) + " on the device (" +
                            cudaGetErrorName(rc) + ")");
  }
  ++stats_.deviceMallocs;
  ++stats_.allocations;
  stats_.bytesReserved += cls;
  stats_.bytesInUse += cls;
  stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
  return DeviceBuffer(this, p, bytes, cls);
}

void CachingAllocator::release(void* ptr, size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  free_[capacity].push_back(ptr);
  stats_.bytesInUse -= capacity;
  stats_.bytesCached += capacity;
}

Status CachingAllocator::emptyCache() {
  std::lock_guard<std::mutex> lock(mu_);
  return emptyCacheLocked();
}

Status CachingAllocator::emptyCacheLocked() {
  Status first;
  for (auto& [cls, blocks] : free_) {
    for (void* p : blocks) {
      cudaError_t rc = cudaFree(p);
      if (rc != cudaSuccess && first.isOk()) first = checkFailed(rc, "cudaFree(block)", __FILE__, __LINE__);
      stats_.bytesCached -= cls;
      stats_.bytesReserved -= cls;
    }
    blocks.clear();
  }
  free_.clear();
  return first;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace wf::cuda
