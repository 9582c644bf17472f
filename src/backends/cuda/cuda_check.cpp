#include "backends/cuda/cuda_check.h"

#include <cstdio>
#include <string>

namespace wf::cuda {
namespace {

Status make(StatusCode code, const char* expr, const std::string& what, const char* file, int line) {
  return Status(code, std::string(expr) + ": " + what + " at " + file + ":" + std::to_string(line));
}

}  // namespace

Status checkFailed(cudaError_t e, const char* expr, const char* file, int line) {
  // Clear a non-sticky error so that the next call does not report it again.
  if (e != cudaErrorIllegalAddress && e != cudaErrorLaunchFailure) (void)cudaGetLastError();
  const StatusCode code = e == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted : StatusCode::kInternal;
  return make(code, expr, std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")", file, line);
}

Status checkFailed(cublasStatus_t e, const char* expr, const char* file, int line) {
  const StatusCode code = e == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted
                          : e == CUBLAS_STATUS_NOT_SUPPORTED ? StatusCode::kUnimplemented
                                                             : StatusCode::kInternal;
  // cublasLtGetStatusName/String exist in cuBLASLt 11.4+.
  return make(code, expr, std::string(cublasLtGetStatusName(e)) + " (" + cublasLtGetStatusString(e) + ")", file,
              line);
}

#ifdef WF_HAVE_CUDNN
Status checkFailed(cudnnStatus_t e, const char* expr, const char* file, int line) {
  const StatusCode code = e == CUDNN_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted
                          : e == CUDNN_STATUS_NOT_SUPPORTED ? StatusCode::kUnimplemented
                                                            : StatusCode::kInternal;
  return make(code, expr, std::string("cudnnStatus ") + std::to_string(static_cast<int>(e)) + " (" +
                              cudnnGetErrorString(e) + ")",
              file, line);
}

#endif

Status checkFailed(nvrtcResult e, const char* expr, const char* file, int line) {
  return make(StatusCode::kInternal, expr, nvrtcGetErrorString(e), file, line);
}

void warnFailed(const Status& status) { std::fprintf(stderr, "warpforge cuda: %s\n", status.toString().c_str()); }

}  // namespace wf::cuda
