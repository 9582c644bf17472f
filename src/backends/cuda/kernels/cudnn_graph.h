// What the kernels built on the cuDNN frontend's graph API share (attention.cpp,
// convolution_epilogue.cpp): the graph's element types, a graph cuDNN refuses at lowering time as
// a decline, and a graph's execution at launch.
#pragma once
#if defined(WF_HAVE_CUDNN) && defined(WF_HAVE_CUDNN_FRONTEND)

#include <cudnn_frontend.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel.h"

namespace wf::cuda {

// The graph's data type for a float element type (bf16, f16, f32); nullopt for the others.
inline std::optional<cudnn_frontend::DataType_t> cudnnGraphType(ElementType t) {
  switch (t) {
    case ElementType::kBF16: return cudnn_frontend::DataType_t::BFLOAT16;
    case ElementType::kF16: return cudnn_frontend::DataType_t::HALF;
    case ElementType::kF32: return cudnn_frontend::DataType_t::FLOAT;
    default: return std::nullopt;
  }
}

// A frontend error at lowering time (cuDNN refusing the graph, or failing to plan it): a decline,
// kUnimplemented, naming `what` and the stage, so that the op runs another way.
inline Status cudnnGraphDeclined(const Operation& op, const std::string& what, const std::string& stage,
                                 cudnn_frontend::error_t error) {
  return unsupportedOnCuda(op, what + ": " + stage + ": " + error.get_message());
}
#define WF_FE_DECLINE(op, what, expr)                                                   \
  do {                                                                                  \
    ::cudnn_frontend::error_t wf_fe_rc_ = (expr);                                       \
    if (wf_fe_rc_.is_bad()) return ::wf::cuda::cudnnGraphDeclined((op), (what), #expr, wf_fe_rc_); \
  } while (0)

// Runs `graph` on `stream`: the plan at index `plan`, or (negative) the one it built. The caller
// holds the device's cuDNN launch lock (the handle is shared by the device's executables).
inline Status executeCudnnGraph(cudnnHandle_t handle, cudaStream_t stream, cudnn_frontend::graph::Graph& graph,
                                std::unordered_map<int64_t, void*>& pack, void* workspace, int64_t plan,
                                const std::string& what) {
  WF_CUDNN_CHECK(cudnnSetStream(handle, stream));
  cudnn_frontend::error_t executed;
  try {
    executed = plan < 0 ? graph.execute(handle, pack, workspace)
                        : graph.execute_plan_at_index(handle, pack, workspace, plan);
  } catch (const std::exception& e) {
    return internalError(what + ": execute: " + std::string(e.what()));
  }
  if (executed.is_bad()) return internalError(what + ": execute: " + executed.get_message());
  return Status::ok();
}

// The plan of `graph` (its execution plans created, its support checked) to run, and that plan's
// workspace. A decision kept for `problem` (tuning.h: a description naming cuDNN's version and the
// graph's every parameter, without process-local addresses) is taken where its plan builds. Else,
// where `timed`, the first kTunedCandidates plans that build are timed once on scratch tensors of
// `tensorBytes` (bytes by tensor uid) and the fastest is kept; else the first that builds runs.
// cuDNN's heuristics do not rank by speed on every shape: for BERT-large's attention (b8 h16 s384
// d64, bf16) on an H200 the first plan took 23.9 us and the second 17.7.
struct CudnnPlan {
  int64_t index = 0;
  int64_t workspace = 0;
};
Expected<CudnnPlan> chooseCudnnPlan(const Operation& op, LowerContext& ctx, cudnnHandle_t handle,
                                    cudnn_frontend::graph::Graph& graph, const std::string& what,
                                    const std::string& problem,
                                    const std::vector<std::pair<int64_t, size_t>>& tensorBytes, bool timed);

}  // namespace wf::cuda

#endif
