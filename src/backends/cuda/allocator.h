// A caching allocator for device memory: sizes are rounded to a size class, freed blocks go to
// the free list of their class and are handed out again without calling cudaMalloc. Blocks are
// reused in stream order: whoever frees a block must have no pending work on it on another
// stream (each Executable runs on one stream and synchronises before it frees).
// Out of memory is a Status naming the request, what is in use and cached, and what the device
// has free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace wf::cuda {

class CachingAllocator;

// One block of device memory; returns itself to its allocator when destroyed. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void* data() const { return ptr_; }
  size_t size() const { return size_; }          // bytes asked for
  size_t capacity() const { return capacity_; }  // bytes of the size class
  bool empty() const { return ptr_ == nullptr; }
  void reset();

 private:
  friend class CachingAllocator;
  DeviceBuffer(CachingAllocator* owner, void* ptr, size_t size, size_t capacity)
      : owner_(owner), ptr_(ptr), size_(size), capacity_(capacity) {}
  CachingAllocator* owner_ = nullptr;
  void* ptr_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct AllocatorStats {
  size_t bytesInUse = 0;      // size classes handed out now
  size_t peakBytesInUse = 0;  // the most bytesInUse has been
  size_t bytesCached = 0;     // in free lists, held from the device
  size_t bytesReserved = 0;   // bytesInUse + bytesCached
  int64_t allocations = 0;    // allocate() calls that returned memory
  int64_t cacheHits = 0;      // of those, served from a free list
  int64_t deviceMallocs = 0;  // cudaMalloc calls
};

class CachingAllocator {
 public:
  // Allocates on `device` (the caller keeps that device current while calling in).
  explicit CachingAllocator(int device) : device_(device) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes` (0 gives an empty buffer). `what` names the use in errors.
  Expected<DeviceBuffer> allocate(size_t bytes, std::string_view what);
  // Returns every cached block to the device.
  Status emptyCache();
  AllocatorStats stats() const;
  // The size class of a request: multiples of 512 B up to 1 MiB, then four classes per
  // power of two.
  static size_t sizeClass(size_t bytes);
  int device() const { return device_; }

 private:
  friend class DeviceBuffer;
  void release(void* ptr, size_t capacity);
  Status emptyCacheLocked();

  int device_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> cached blocks
  AllocatorStats stats_;
};

}  // namespace wf::cuda
