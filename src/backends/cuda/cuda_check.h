// Error checking for the CUDA backend: every call into the CUDA runtime, cuBLASLt, cuDNN and
// NVRTC goes through one of the WF_*_CHECK macros, which turn a failure into a Status that names
// the failing expression, the library's error name and text, and the source position:
//   internal: cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s): cudaErrorInvalidValue
//             (invalid argument) at src/backends/cuda/executable.cpp:120
// Out-of-memory results map to StatusCode::kResourceExhausted; the rest to kInternal.
// The macros return from the enclosing function, which must return Status or Expected<T>.
// Destructors use WF_CUDA_WARN, which reports to stderr and never throws.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#ifdef WF_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "support/status.h"

namespace wf::cuda {

inline bool succeeded(cudaError_t e) { return e == cudaSuccess; }
inline bool succeeded(cublasStatus_t e) { return e == CUBLAS_STATUS_SUCCESS; }
#ifdef WF_HAVE_CUDNN
inline bool succeeded(cudnnStatus_t e) { return e == CUDNN_STATUS_SUCCESS; }
#endif
inline bool succeeded(nvrtcResult e) { return e == NVRTC_SUCCESS; }

Status checkFailed(cudaError_t e, const char* expr, const char* file, int line);
Status checkFailed(cublasStatus_t e, const char* expr, const char* file, int line);
#ifdef WF_HAVE_CUDNN
Status checkFailed(cudnnStatus_t e, const char* expr, const char* file, int line);
#endif
Status checkFailed(nvrtcResult e, const char* expr, const char* file, int line);

// Writes the failure to stderr (for destructors and other places that cannot return).
void warnFailed(const Status& status);

}  // namespace wf::cuda

#define WF_GPU_CHECK_IMPL(expr)                                                          \
  do {                                                                                   \
    auto wf_gpu_rc_ = (expr);                                                            \
    if (!::wf::cuda::succeeded(wf_gpu_rc_))                                              \
      return ::wf::cuda::checkFailed(wf_gpu_rc_, #expr, __FILE__, __LINE__);             \
  } while (0)

#define WF_CUDA_CHECK(expr) WF_GPU_CHECK_IMPL(expr)
#define WF_CUBLAS_CHECK(expr) WF_GPU_CHECK_IMPL(expr)
#define WF_CUDNN_CHECK(expr) WF_GPU_CHECK_IMPL(expr)
#define WF_NVRTC_CHECK(expr) WF_GPU_CHECK_IMPL(expr)

// After a <<<...>>> launch: checks the launch itself (bad configuration, no kernel image for
// this GPU). Errors inside the kernel surface at the next synchronising call, also checked.
#define WF_CUDA_CHECK_LAUNCH(what)                                                       \
  do {                                                                                   \
    cudaError_t wf_gpu_rc_ = cudaGetLastError();                                         \
    if (wf_gpu_rc_ != cudaSuccess)                                                       \
      return ::wf::cuda::checkFailed(wf_gpu_rc_, "launch of " what, __FILE__, __LINE__); \
  } while (0)

// For destructors: reports a failure on stderr and carries on.
#define WF_CUDA_WARN(expr)                                                                        \
  do {                                                                                            \
    auto wf_gpu_rc_ = (expr);                                                                     \
    if (!::wf::cuda::succeeded(wf_gpu_rc_))                                                       \
      ::wf::cuda::warnFailed(::wf::cuda::checkFailed(wf_gpu_rc_, #expr, __FILE__, __LINE__));     \
  } while (0)
