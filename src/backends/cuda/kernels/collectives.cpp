// The rendezvous of a grid's processes on the GPU (collectives.h); the kernels and lowerings
// are in collectives.cu.
#include <algorithm>

#include "backends/cuda/kernels/collectives.h"

namespace wf::cuda {

// ---------------------------------------------------------------------------------------------
// Rendezvous
// ---------------------------------------------------------------------------------------------

DeviceRendezvous::DeviceRendezvous(int64_t numReplicas, int64_t numPartitions)
    : ProcessWaits(numReplicas, numPartitions) {}

void DeviceRendezvous::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  resetLocked();
  slots_.clear();
  generations_.clear();
}

Expected<std::vector<std::vector<const void*>>> DeviceRendezvous::exchange(const std::string& key,
                                                                           const ProcessGroup& group, ProcessId self,
                                                                           std::vector<const void*> addresses) {
  auto position = std::find(group.begin(), group.end(), self);
  if (position == group.end()) return internalError(key + ": process " + self.toString() + " is not in its group");
  const auto index = static_cast<size_t>(position - group.begin());

  std::unique_lock<std::mutex> lock(mu_);
  WF_RETURN_IF_ERROR(abortedLocked());
  const int64_t generation = generations_[key + "@" + std::to_string(indexOf(self))]++;
  const std::string slotKey = key + "/" + std::to_string(generation);
  Slot& slot = slots_[slotKey];
  if (slot.contributions.empty()) slot.contributions.resize(group.size());
  slot.contributions[index] = std::move(addresses);
  ++slot.numArrived;
  cv_.notify_all();

  const size_t groupSize = group.size();
  Slot* slotPtr = &slot;  // std::map nodes are stable
  WF_RETURN_IF_ERROR(waitUntil(lock, self, [slotPtr, groupSize] { return slotPtr->numArrived == groupSize; }, key));
  std::vector<std::vector<const void*>> all = slot.contributions;
  if (++slot.numTaken == groupSize) slots_.erase(slotKey);
  return all;
}

}  // namespace wf::cuda
