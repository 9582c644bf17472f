// The plan choice that the kernels built on the cuDNN frontend's graph API share (cudnn_graph.h).
#include "backends/cuda/kernels/cudnn_graph.h"

#if defined(WF_HAVE_CUDNN) && defined(WF_HAVE_CUDNN_FRONTEND)

#include <algorithm>
#include <chrono>

#include "backends/cuda/tuning.h"

namespace wf::cuda {

namespace fe = cudnn_frontend;

Expected<CudnnPlan> chooseCudnnPlan(const Operation& op, LowerContext& ctx, cudnnHandle_t handle,
                                    fe::graph::Graph& graph, const std::string& what, const std::string& problem,
                                    const std::vector<std::pair<int64_t, size_t>>& tensorBytes, bool timed) {
  WF_ASSIGN_OR_RETURN(std::optional<std::string> known, loadTuningDecision(ctx.device, ctx.options, problem));
  const int64_t count = graph.get_execution_plan_count();
  std::vector<int64_t> candidates;
  if (known) {
    const int64_t index = std::stoll(*known);
    if (index >= 0 && index < count && graph.build_plan_at_index(index).is_good()) candidates.push_back(index);
  }
  timed = timed && candidates.empty();
  for (int64_t i = 0; i < count && (candidates.empty() || (timed && candidates.size() < size_t{kTunedCandidates}));
       ++i)
    if (graph.build_plan_at_index(i).is_good()) candidates.push_back(i);
  if (candidates.empty()) return unsupportedOnCuda(op, what + ": no engine builds this graph");
  CudnnPlan plan{candidates.front(), 0};
  if (candidates.size() > 1) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<TuningBuffer> buffers(tensorBytes.size());
    std::unordered_map<int64_t, void*> pack;
    for (size_t i = 0; i < buffers.size(); ++i) {
      WF_RETURN_IF_ERROR(buffers[i].allocate(tensorBytes[i].second));
      pack[tensorBytes[i].first] = buffers[i].data();
    }
    int64_t workspace = 0;
    for (int64_t c : candidates) {
      int64_t w = 0;
      WF_FE_DECLINE(op, what, graph.get_workspace_size_plan_at_index(c, w));
      workspace = std::max(workspace, w);
    }
    TuningBuffer scratch;
    WF_RETURN_IF_ERROR(scratch.allocate(static_cast<size_t>(workspace)));
    const size_t fastest = fastestCandidate(candidates.size(), [&](size_t i, cudaStream_t stream) -> Status {
      WF_CUDNN_CHECK(cudnnSetStream(handle, stream));
      fe::error_t rc = graph.execute_plan_at_index(handle, pack, scratch.data(), candidates[i]);
      if (rc.is_bad()) return cudnnGraphDeclined(op, what, "plan " + std::to_string(candidates[i]), rc);
      return Status::ok();
    }, problem, [&](size_t i) { return "plan " + std::to_string(candidates[i]); });
    plan.index = candidates[fastest];
    const double millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    WF_RETURN_IF_ERROR(storeTuningDecision(ctx.device, ctx.options, problem, std::to_string(plan.index), millis));
  }
  WF_FE_DECLINE(op, what, graph.get_workspace_size_plan_at_index(plan.index, plan.workspace));
  if (plan.workspace < 0) return internalError(op.describe() + ": " + what + ": cuDNN asks for a negative workspace");
  return plan;
}

}  // namespace wf::cuda

#endif
