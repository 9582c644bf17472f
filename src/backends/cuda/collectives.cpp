// The rendezvous of a grid's processes on the GPU (collectives.h); the kernels and lowerings
// are in collectives.cu.
#include <algorithm>

#include "backends/cuda/collectives.h"

namespace wf::cuda {

// ---------------------------------------------------------------------------------------------
// Rendezvous
// ---------------------------------------------------------------------------------------------

DeviceRendezvous::DeviceRendezvous(int64_t numReplicas, int64_t numPartitions)
    : numReplicas_(numReplicas), numPartitions_(numPartitions) {
  reset();
}

void DeviceRendezvous::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto n = static_cast<size_t>(numReplicas_ * numPartitions_);
  error_ = Status::ok();
  done_.assign(n, false);
  waiters_.assign(n, Waiter{});
  slots_.clear();
  generations_.clear();
}

void DeviceRendezvous::abortLocked(Status status) {
  if (error_.isOk()) error_ = std::move(status);
  cv_.notify_all();
}

void DeviceRendezvous::detectDeadlockLocked() {
  if (!error_.isOk()) return;
  std::string stuck;
  for (size_t i = 0; i < waiters_.size(); ++i) {
    if (done_[i]) continue;
    const Waiter& w = waiters_[i];
    // A process that runs, or whose wait can end, can still make progress.
    if (!w.waiting || w.ready()) return;
    ProcessId p{static_cast<int64_t>(i) / numPartitions_, static_cast<int64_t>(i) % numPartitions_};
    stuck += (stuck.empty() ? "" : "; ") + std::string("process ") + p.toString() + " waits for " + w.what;
  }
  if (stuck.empty()) return;
  abortLocked(invalidArgument("deadlock between in-process replicas/partitions: " + stuck));
}

Status DeviceRendezvous::waitUntil(std::unique_lock<std::mutex>& lock, ProcessId self, std::function<bool()> ready,
                                   std::string what) {
  Waiter& w = waiters_[indexOf(self)];
  w.waiting = true;
  w.ready = ready;
  w.what = std::move(what);
  detectDeadlockLocked();
  cv_.wait(lock, [&] { return !error_.isOk() || ready(); });
  w.waiting = false;
  w.ready = nullptr;
  if (!error_.isOk())
    return Status(error_.code(), "aborted because another process failed: " + error_.message());
  return Status::ok();
}

Expected<std::vector<std::vector<const void*>>> DeviceRendezvous::exchange(const std::string& key,
                                                                           const ProcessGroup& group, ProcessId self,
                                                                           std::vector<const void*> addresses) {
  auto position = std::find(group.begin(), group.end(), self);
  if (position == group.end()) return internalError(key + ": process " + self.toString() + " is not in its group");
  const auto index = static_cast<size_t>(position - group.begin());

  std::unique_lock<std::mutex> lock(mu_);
  if (!error_.isOk()) return Status(error_.code(), "aborted because another process failed: " + error_.message());
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

void DeviceRendezvous::finish(ProcessId self) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[indexOf(self)] = true;
  detectDeadlockLocked();
  cv_.notify_all();
}

void DeviceRendezvous::fail(ProcessId self, Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[indexOf(self)] = true;
  abortLocked(std::move(status));
}

Status DeviceRendezvous::firstError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace wf::cuda
