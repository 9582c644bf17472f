// Tuning decisions: which algorithm a library call (a cuDNN convolution, a cuBLASLt matrix
// product) uses for one problem, chosen by timing the library's candidates once, as XLA's
// autotuner and PyTorch's cudnn.benchmark do. A decision is kept in the process and on disk in the
// kernel cache's folder (codegen/kernel_cache.h; `--kernel-cache DIR`, `--no-kernel-cache`,
// WARPFORGE_KERNEL_CACHE=0), keyed by everything it depends on (the problem's description, the
// library's version, the GPU and its driver), so that a process compiling a model again times
// nothing. With the cache on, every process on a machine runs the same algorithm for a problem,
// so results stay the same bits from run to run; without it each process times afresh.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "backends/cuda/device.h"
#include "runtime/backend.h"
#include "support/status.h"

namespace wf::cuda {

// How many of a library's ranked candidates are timed, and the margin by which a later one must
// beat an earlier one (timing noise must not flip a choice from one process to the next).
inline constexpr int kTunedCandidates = 4;
inline constexpr double kTuningMargin = 0.97;
// Problems of fewer multiply-adds keep the heuristics' first choice untimed: their time is the
// launch's, and plans that read one operand in different layouts (a transpose fused or not) keep
// summing in the same order.
inline constexpr double kTunedMinMultiplyAdds = double(int64_t{1} << 26);

// The decision stored for `problem` (a description naming the library, its version and the call's
// every parameter), or nullopt when none is (in this process or on disk).
Expected<std::optional<std::string>> loadTuningDecision(Device& device, const CompileOptions& options,
                                                        const std::string& problem);

// Keeps `decision` for `problem` in this process and, where the cache is on, on disk (a folder
// that cannot be written gives a warning and the run goes on); counts the problem as timed, in
// `tuningMillis` (GeneratedKernelStats).
Status storeTuningDecision(Device& device, const CompileOptions& options, const std::string& problem,
                           const std::string& decision, double tuningMillis);

// Times `launch(i, stream)` for each candidate i < count (fastestLaunchMillis) and returns the
// index of the fastest: an earlier candidate is kept unless a later one is faster by the margin,
// and a candidate whose launch fails (one the library ranks but then refuses) is passed over.
// 0 when none ran. With WARPFORGE_TUNING_LOG=1 (on, true, yes), each candidate's time, named by
// `label(i)`, and the choice are written to stderr under `problem`.
size_t fastestCandidate(size_t count, const std::function<Status(size_t, cudaStream_t)>& launch,
                        const std::string& problem = {}, const std::function<std::string(size_t)>& label = {});

// WARPFORGE_TUNING_LOG is on: choices (and what was declined) are written to stderr.
bool tuningLogOn();
// Forgets the decisions this process holds (tests: the next compile reads them from disk).
void forgetTuningDecisions();

// The fastest of `runs` timed replays (after one untimed) of `launch` captured in a CUDA graph, in
// milliseconds: device time, as a run replaying its graph sees it, without the host work of the
// call. The launch first runs once uncaptured (an error there is the candidate's refusal). On a
// stream of its own that is synchronised before it returns.
Expected<float> fastestLaunchMillis(const std::function<Status(cudaStream_t)>& launch, int runs = 3);

// Device memory for timing only, freed when it goes (not the caching allocator's, which would
// keep it), filled with small finite values.
class TuningBuffer {
 public:
  TuningBuffer() = default;
  TuningBuffer(const TuningBuffer&) = delete;
  TuningBuffer& operator=(const TuningBuffer&) = delete;
  ~TuningBuffer();
  Status allocate(size_t bytes);
  void* data() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

}  // namespace wf::cuda
