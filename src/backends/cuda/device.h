// RAII handles for the CUDA objects the backend owns (streams, events, graphs, cuBLASLt and
// cuDNN handles) and the per-process Device: one per GPU ordinal, holding its properties, its
// caching allocator and its library handles. Handles are move-only; destructors never throw
// (failures in them are reported on stderr).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#ifdef WF_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <memory>
#include <mutex>
#include <string>

#include "backends/cuda/allocator.h"
#include "support/status.h"

namespace wf::cuda {

// Owns one handle of type H, destroyed by D. Move-only.
template <typename H, typename D>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H h) : h_(h) {}
  Handle(Handle&& o) noexcept : h_(o.h_) { o.h_ = H{}; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.h_;
      o.h_ = H{};
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }
  void reset() {
    if (h_ != H{}) D{}(h_);
    h_ = H{};
  }

 private:
  H h_{};
};

struct StreamDeleter { void operator()(cudaStream_t s) const; };
struct EventDeleter { void operator()(cudaEvent_t e) const; };
struct GraphDeleter { void operator()(cudaGraph_t g) const; };
struct GraphExecDeleter { void operator()(cudaGraphExec_t g) const; };
struct CublasLtDeleter { void operator()(cublasLtHandle_t h) const; };
struct MatmulDescDeleter { void operator()(cublasLtMatmulDesc_t d) const; };
struct MatrixLayoutDeleter { void operator()(cublasLtMatrixLayout_t l) const; };
struct MatmulPreferenceDeleter { void operator()(cublasLtMatmulPreference_t p) const; };
#ifdef WF_HAVE_CUDNN
struct CudnnDeleter { void operator()(cudnnHandle_t h) const; };
#endif

using Stream = Handle<cudaStream_t, StreamDeleter>;
using Event = Handle<cudaEvent_t, EventDeleter>;
using Graph = Handle<cudaGraph_t, GraphDeleter>;
using GraphExec = Handle<cudaGraphExec_t, GraphExecDeleter>;
using CublasLtHandle = Handle<cublasLtHandle_t, CublasLtDeleter>;
using MatmulDesc = Handle<cublasLtMatmulDesc_t, MatmulDescDeleter>;
using MatrixLayout = Handle<cublasLtMatrixLayout_t, MatrixLayoutDeleter>;
using MatmulPreference = Handle<cublasLtMatmulPreference_t, MatmulPreferenceDeleter>;
#ifdef WF_HAVE_CUDNN
using CudnnHandle = Handle<cudnnHandle_t, CudnnDeleter>;
#endif

// A non-blocking stream (no implicit synchronisation with the legacy default stream, as graph
// capture needs).
Expected<Stream> createStream();
Expected<Event> createEvent(bool timing = false);

// Number of CUDA devices; 0 (not an error) when there is no GPU or no driver.
int deviceCount();
// Why deviceCount() is 0, for skip messages ("no CUDA driver", "no CUDA-capable device").
std::string noDeviceReason();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  size_t totalMemory = 0;
  size_t sharedMemoryPerBlockOptin = 0;
  // The architecture's name for compilers and caches: "sm_90".
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// One per GPU per process, shared by every Executable on it (they keep it alive).
class Device {
 public:
  static Expected<std::shared_ptr<Device>> get(int ordinal);
  ~Device();

  const DeviceInfo& info() const { return info_; }
  int ordinal() const { return info_.ordinal; }
  std::string describe() const;  // "cuda:0 (NVIDIA H100 80GB HBM3)"
  // Makes this device current on the calling thread.
  Status activate() const;
  CachingAllocator& allocator() { return *allocator_; }
  cublasLtHandle_t cublasLt() const { return cublasLt_.get(); }
#ifdef WF_HAVE_CUDNN
  // cuDNN's handle is created on first use (loading cuDNN takes a while).
  Expected<cudnnHandle_t> cudnn();
  // Held by a kernel while it binds its stream to the handle and enqueues its work: the handle
  // is shared by every executable on the device, whose runs may be on other threads.
  std::mutex& cudnnLaunchMutex() { return cudnnLaunchMu_; }
#endif

 private:
  Device() = default;
  DeviceInfo info_;
  std::unique_ptr<CachingAllocator> allocator_;
  CublasLtHandle cublasLt_;
#ifdef WF_HAVE_CUDNN
  std::mutex cudnnMu_;
  CudnnHandle cudnn_;
  std::mutex cudnnLaunchMu_;
#endif
};

}  // namespace wf::cuda
