// Slot assignment by liveness and the plan's device memory (memory.h).
#include "backends/cuda/memory.h"

#include <algorithm>
#include <limits>
#include <set>

namespace wf::cuda {
namespace {

constexpr int kNoUse = -1;
constexpr int kLiveToEnd = std::numeric_limits<int>::max();

}  // namespace

// Intermediate buffers (results and workspaces of the per-run steps) get offsets in one arena by
// lifetime; see the comment inside.
Status assignSlots(Plan& plan) {
  const size_t numBuffers = plan.bufferBytes.size();
  std::vector<int> lastUse(numBuffers, kNoUse);
  std::vector<bool> isIntermediate(numBuffers, false);
  // The buffers a step writes: its results and its workspace (last used by the step itself).
  auto defined = [&](const Step& step) {
    std::vector<int> out = step.outputBuffers;
    if (step.workspaceBuffer >= 0) out.push_back(step.workspaceBuffer);
    return out;
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (plan.hoisted[s]) continue;
    for (int b : defined(plan.steps[s])) {
      isIntermediate[static_cast<size_t>(b)] = true;
      lastUse[static_cast<size_t>(b)] = std::max(lastUse[static_cast<size_t>(b)], static_cast<int>(s));
    }
    for (int b : plan.steps[s].inputBuffers)
      lastUse[static_cast<size_t>(b)] = std::max(lastUse[static_cast<size_t>(b)], static_cast<int>(s));
  }
  // Carried results live in buffers of their own that swap with their arguments' after each run
  // (plan.h CarriedBuffer), outside the arena.
  for (const CarriedBuffer& c : plan.carried)
    if (c.resultBuffer != c.argBuffer) isIntermediate[static_cast<size_t>(c.resultBuffer)] = false;
  // Arguments keep buffers of their own, also those a step writes (CompileOptions::carryInPlace).
  for (int b : plan.argBuffers) isIntermediate[static_cast<size_t>(b)] = false;
  // A job's collective runs on the communication stream until the step that waits for it
  // (Plan::commJoin): its operands, results and workspace are in use until then, whatever the
  // compute steps in between do.
  for (size_t s = 0; s < plan.commJoin.size(); ++s) {
    if (plan.commJoin[s] < 0 || plan.hoisted[s]) continue;
    const Step& step = plan.steps[s];
    std::vector<int> used = defined(step);
    used.insert(used.end(), step.inputBuffers.begin(), step.inputBuffers.end());
    for (int b : used) lastUse[static_cast<size_t>(b)] = std::max(lastUse[static_cast<size_t>(b)], plan.commJoin[s]);
  }
  for (const Value* v : plan.outputs) lastUse[static_cast<size_t>(plan.bufferOf.at(v))] = kLiveToEnd;
  for (const Value* v : plan.taps) lastUse[static_cast<size_t>(plan.bufferOf.at(v))] = kLiveToEnd;
  std::vector<int> firstDef(numBuffers, -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (plan.hoisted[s]) continue;
    for (int b : defined(plan.steps[s]))
      if (firstDef[static_cast<size_t>(b)] < 0) firstDef[static_cast<size_t>(b)] = static_cast<int>(s);
  }
  // Steps run in index order except for loops: a value defined before a loop and read (or
  // rewritten) inside it is read again by every iteration, so it lives until the loop's jump
  // back. Values defined inside a loop live within one iteration (the carried values, defined
  // before it, are the only ones that cross the back edge). The branches of if and case need no
  // such care: a branch's values are dead in the others.
  for (const auto& [start, end] : plan.loops)
    for (size_t s = start; s <= end; ++s) {
      if (plan.hoisted[s]) continue;
      auto extend = [&, start = start, end = end](int b) {
        const auto i = static_cast<size_t>(b);
        if (firstDef[i] < static_cast<int>(start) && lastUse[i] != kLiveToEnd)
          lastUse[i] = std::max(lastUse[i], static_cast<int>(end));
      };
      for (int b : plan.steps[s].inputBuffers) extend(b);
      for (int b : defined(plan.steps[s])) extend(b);
    }

  // In place: a step's output takes the memory of an input it reads element for element when
  // the step is that input's last reader; the two become one interval.
  std::vector<int> home(numBuffers);
  for (size_t b = 0; b < numBuffers; ++b) home[b] = static_cast<int>(b);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    if (plan.hoisted[s] || step.inPlaceInputs.empty()) continue;
    // (A loop group's side outputs are written where its root is: each output may take one.)
    for (size_t o = 0; o < step.outputBuffers.size(); ++o) {
      const auto out = static_cast<size_t>(step.outputBuffers[o]);
      if (!isIntermediate[out] || firstDef[out] != static_cast<int>(s)) continue;
      for (size_t k : step.inPlaceInputs) {
        if (step.memberOfInput(k) != step.memberOfOutput(o)) continue;
        const auto in = static_cast<size_t>(step.inputBuffers[k]);
        const auto at = static_cast<size_t>(home[in]);
        // (Another input on the same buffer, an alias, may be read at other indices.)
        if (!isIntermediate[at] || lastUse[in] != static_cast<int>(s) ||
            plan.bufferBytes[in] != plan.bufferBytes[out] || lastUse[at] != static_cast<int>(s) ||
            std::count(step.inputBuffers.begin(), step.inputBuffers.end(), step.inputBuffers[k]) != 1)
          continue;
        home[out] = static_cast<int>(at);
        lastUse[at] = lastUse[out];
        isIntermediate[out] = false;  // placed with its home
        break;
      }
    }
  }

  // Every intermediate gets an offset in one arena: buffers by decreasing size, each at the lowest
  // offset where it overlaps no placed buffer whose lifetime (first write to last read) meets
  // its own. The arena comes out close to the peak of bytes live at once.
  struct Interval {
    int buffer;
    int first, last;
    size_t bytes;
    size_t offset = 0;
  };
  std::vector<Interval> intervals;
  plan.arena.inArena.assign(numBuffers, false);
  plan.arena.offset.assign(numBuffers, 0);
  for (size_t b = 0; b < numBuffers; ++b) {
    if (!isIntermediate[b]) continue;
    const int last = lastUse[b] == kLiveToEnd ? static_cast<int>(plan.steps.size()) : std::max(lastUse[b], firstDef[b]);
    intervals.push_back({static_cast<int>(b), firstDef[b], last, (plan.bufferBytes[b] + 255) / 256 * 256});
    plan.stats.intermediateBytes += plan.bufferBytes[b];
  }
  // The bytes live at the busiest step: no placement can use less.
  {
    std::vector<size_t> live(plan.steps.size() + 1, 0);
    for (const Interval& iv : intervals)
      for (int s = iv.first; s <= iv.last; ++s) live[static_cast<size_t>(s)] += iv.bytes;
    plan.stats.peakLiveBytes = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  }
  // Greedy placement in a given order: each buffer at the lowest offset free for its lifetime.
  auto place = [&](std::vector<Interval>& order) {
    std::vector<const Interval*> placed, overlapping;
    size_t arena = 0;
    for (Interval& iv : order) {
      overlapping.clear();
      for (const Interval* p : placed)
        if (p->first <= iv.last && iv.first <= p->last) overlapping.push_back(p);
      std::sort(overlapping.begin(), overlapping.end(),
                [](const Interval* x, const Interval* y) { return x->offset < y->offset; });
      size_t offset = 0;
      for (const Interval* p : overlapping) {
        if (offset + iv.bytes <= p->offset) break;
        offset = std::max(offset, p->offset + p->bytes);
      }
      iv.offset = offset;
      arena = std::max(arena, offset + iv.bytes);
      placed.push_back(&iv);
    }
    return arena;
  };
  // Largest first is usually closest to the peak; first-written first and longest-lived first
  // win on some programs. The smallest arena of the three is kept.
  using Order = bool (*)(const Interval&, const Interval&);
  const Order orders[] = {
      [](const Interval& x, const Interval& y) { return x.bytes > y.bytes; },
      [](const Interval& x, const Interval& y) { return x.first < y.first || (x.first == y.first && x.bytes > y.bytes); },
      [](const Interval& x, const Interval& y) {
        return static_cast<double>(x.bytes) * (x.last - x.first + 1) > static_cast<double>(y.bytes) * (y.last - y.first + 1);
      },
  };
  size_t arena = std::numeric_limits<size_t>::max();
  std::vector<Interval> best;
  for (Order order : orders) {
    std::vector<Interval> candidate = intervals;
    std::stable_sort(candidate.begin(), candidate.end(), order);
    const size_t bytes = place(candidate);
    if (bytes < arena) {
      arena = bytes;
      best = std::move(candidate);
    }
  }
  if (intervals.empty()) arena = 0;
  intervals = std::move(best);
  std::set<size_t> offsets;
  for (const Interval& iv : intervals) {
    plan.arena.inArena[static_cast<size_t>(iv.buffer)] = true;
    plan.arena.offset[static_cast<size_t>(iv.buffer)] = iv.offset;
    offsets.insert(iv.offset);
  }
  for (size_t b = 0; b < numBuffers; ++b)
    if (home[b] != static_cast<int>(b)) {
      plan.arena.inArena[b] = true;
      plan.arena.offset[b] = plan.arena.offset[static_cast<size_t>(home[b])];
      plan.stats.intermediateBytes += plan.bufferBytes[b];
      ++plan.stats.inPlaceSteps;
    }
  plan.stats.slots = static_cast<int>(offsets.size());
  plan.stats.slotBytes = arena;
  plan.arena.bytes = arena;
  return Status::ok();
}

Status PlanMemory::allocate(const Plan& plan, CachingAllocator& alloc, const std::string& owner) {
  buffers_.resize(plan.bufferBytes.size());
  ptr_.assign(plan.bufferBytes.size(), nullptr);
  for (size_t b = 0; b < plan.bufferBytes.size(); ++b) {
    if (plan.arena.inArena[b] || plan.prologueTemp[b]) continue;
    WF_ASSIGN_OR_RETURN(buffers_[b], alloc.allocate(plan.bufferBytes[b], "an argument or constant of " + owner));
    ptr_[b] = buffers_[b].data();
  }
  if (plan.arena.bytes > 0) {
    WF_ASSIGN_OR_RETURN(arena_, alloc.allocate(plan.arena.bytes, "intermediate values"));
  }
  for (size_t b = 0; b < plan.bufferBytes.size(); ++b)
    if (plan.arena.inArena[b]) ptr_[b] = static_cast<char*>(arena_.data()) + plan.arena.offset[b];
  return Status::ok();
}

Expected<std::vector<DeviceBuffer>> PlanMemory::allocatePrologueTemps(const Plan& plan, const std::vector<bool>& buffers,
                                                                      CachingAllocator& alloc) {
  std::vector<DeviceBuffer> temps;
  for (size_t b = 0; b < plan.bufferBytes.size(); ++b)
    if (plan.prologueTemp[b] && buffers[b]) {
      WF_ASSIGN_OR_RETURN(DeviceBuffer buf, alloc.allocate(plan.bufferBytes[b], "weight preprocessing"));
      ptr_[b] = buf.data();
      temps.push_back(std::move(buf));
    }
  return temps;
}

void PlanMemory::releasePrologueOnly(const Plan& plan) {
  for (size_t b = 0; b < plan.bufferBytes.size(); ++b) {
    if (plan.prologueTemp[b]) ptr_[b] = nullptr;
    // Weights that only the prologue reads are not needed any more (a later bind uploads
    // them again).
    if (plan.prologueOnlyArg[b] && buffers_[b].data()) {
      buffers_[b] = DeviceBuffer();
      ptr_[b] = nullptr;
    }
  }
}

Status PlanMemory::restoreArgument(int buffer, size_t bytes, CachingAllocator& alloc) {
  const auto b = static_cast<size_t>(buffer);
  if (!ptr_[b] && bytes > 0) {
    // Released after an earlier prologue (only hoisted work reads it): allocate it again.
    WF_ASSIGN_OR_RETURN(buffers_[b], alloc.allocate(bytes, "a bound argument"));
    ptr_[b] = buffers_[b].data();
  }
  return Status::ok();
}

void PlanMemory::swapBuffers(int a, int b) {
  const auto i = static_cast<size_t>(a), j = static_cast<size_t>(b);
  std::swap(buffers_[i], buffers_[j]);
  std::swap(ptr_[i], ptr_[j]);
}

void PlanMemory::release() {
  buffers_.clear();
  arena_.reset();
}

size_t PlanMemory::bytesInUse() const {
  size_t total = 0;
  for (const DeviceBuffer& b : buffers_) total += b.capacity();
  return total + arena_.capacity();
}

}  // namespace wf::cuda
