// Device memory of a plan (plan.h).
//
// Intermediate values and per-step workspaces are assigned offsets in one arena by liveness
// (assignSlots): a buffer's memory is reused once the last reader of its value has run, so the
// plan's device footprint is the peak of live values, not their sum. A value defined before a
// loop and read inside it stays live until the loop's jump back, and a fused elementwise step
// that reads an input for the last time, element for element, writes its result into that
// input's memory. Workspaces are buffers live during their step only, sized by the lowering
// (LowerContext::workspaceBytes), so they share memory with values that are dead by then. A
// job's collective runs beside the compute steps until the step that waits for it
// (Plan::commJoin), so its operands, results and workspace live until that step.
//
// PlanMemory holds the memory itself, all of it from the device's caching allocator: the arena,
// a buffer of its own for each argument and constant (bound arguments, the weights, are uploaded
// once, at bindArgument()), and, while the prologue of hoisted steps runs, its temporaries.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/allocator.h"
#include "backends/cuda/plan.h"
#include "support/status.h"

namespace wf::cuda {

// Places the intermediates of `plan`'s per-run steps (hoisted steps need Plan::hoisted) in one
// arena: fills plan.arena and the memory counts of plan.stats (slots, slotBytes,
// intermediateBytes, peakLiveBytes, inPlaceSteps).
Status assignSlots(Plan& plan);

// The device memory of one plan and the device address of each of its buffer ids.
class PlanMemory {
 public:
  // Allocates the arena and a buffer for every buffer id outside it (arguments, constants,
  // results of hoisted steps that runs read), except the prologue's temporaries; `owner` names
  // the executable in out-of-memory errors.
  Status allocate(const Plan& plan, CachingAllocator& alloc, const std::string& owner);
  // Gives the prologue's temporaries (Plan::prologueTemp) among `buffers` (by buffer id: those
  // the steps of this prologue run write) memory for one prologue run: they have it while the
  // returned buffers live.
  Expected<std::vector<DeviceBuffer>> allocatePrologueTemps(const Plan& plan, const std::vector<bool>& buffers,
                                                            CachingAllocator& alloc);
  // After a prologue run: the temporaries lose their addresses, and the weights that only the
  // prologue reads are released (a later bind allocates them again: restoreArgument).
  void releasePrologueOnly(const Plan& plan);
  // Allocates bound argument `buffer` again if an earlier prologue released it.
  Status restoreArgument(int buffer, size_t bytes, CachingAllocator& alloc);
  // Exchanges the memory of two buffers of their own (a carried argument and the buffer its next
  // value was computed into: plan.h CarriedBuffer).
  void swapBuffers(int a, int b);
  // Returns everything to the allocator.
  void release();

  void* address(size_t buffer) const { return ptr_[buffer]; }
  size_t numBuffers() const { return buffers_.size(); }
  // Bytes held by the buffer of its own that `buffer` has (0 for one in the arena).
  size_t ownBytes(size_t buffer) const { return buffers_[buffer].capacity(); }
  size_t arenaBytes() const { return arena_.capacity(); }
  size_t bytesInUse() const;

 private:
  std::vector<DeviceBuffer> buffers_;  // by buffer id: arguments and constants (slots: empty)
  DeviceBuffer arena_;                 // every intermediate value and workspace, placed by assignSlots()
  std::vector<void*> ptr_;             // device address by buffer id (after allocate())
};

}  // namespace wf::cuda
