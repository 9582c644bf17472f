// The arena (memory.h assignSlots) on hand-made plans: liveness, in-place steps and loops. Slot
// assignment is host code, so these tests need no GPU.
#include "backends/cuda/memory.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace wf::cuda {
namespace {

struct StepSpec {
  std::vector<int> in, out;
  std::vector<size_t> inPlace = {};
};

// Buffer 0 is an argument (no step writes it); the others are written by the steps.
Plan makePlan(size_t numBuffers, size_t bytes, const std::vector<StepSpec>& specs) {
  Plan plan;
  plan.bufferBytes.assign(numBuffers, bytes);
  for (const StepSpec& spec : specs) {
    Step step;
    step.inputBuffers = spec.in;
    step.outputBuffers = spec.out;
    step.inPlaceInputs = spec.inPlace;
    plan.steps.push_back(std::move(step));
  }
  plan.hoisted.assign(plan.steps.size(), false);
  return plan;
}

TEST(CudaArena, AChainNeedsTwoSlots) {
  Plan plan = makePlan(5, 1000, {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}});
  ASSERT_TRUE(assignSlots(plan).isOk());
  EXPECT_FALSE(plan.arena.inArena[0]);  // the argument has a buffer of its own
  for (size_t b = 1; b < 5; ++b) EXPECT_TRUE(plan.arena.inArena[b]) << b;
  EXPECT_EQ(plan.stats.slots, 2);
  EXPECT_EQ(plan.stats.slotBytes, size_t{2048});  // sizes rounded up to 256 bytes
  EXPECT_EQ(plan.arena.bytes, size_t{2048});
  EXPECT_EQ(plan.stats.peakLiveBytes, size_t{2048});
  EXPECT_EQ(plan.stats.intermediateBytes, size_t{4000});
  EXPECT_NE(plan.arena.offset[1], plan.arena.offset[2]);
  EXPECT_EQ(plan.arena.offset[1], plan.arena.offset[3]);
}

TEST(CudaArena, AnElementwiseStepWritesIntoTheInputItReadsLast) {
  Plan plan = makePlan(4, 1000, {{{0}, {1}}, {{1}, {2}, {0}}, {{2}, {3}}});
  ASSERT_TRUE(assignSlots(plan).isOk());
  EXPECT_EQ(plan.stats.inPlaceSteps, 1);
  EXPECT_TRUE(plan.arena.inArena[2]);
  EXPECT_EQ(plan.arena.offset[2], plan.arena.offset[1]);
  EXPECT_NE(plan.arena.offset[3], plan.arena.offset[1]);
  EXPECT_EQ(plan.stats.intermediateBytes, size_t{3000});
  EXPECT_EQ(plan.stats.slotBytes, size_t{2048});
}

TEST(CudaArena, AnInputReadAgainLaterKeepsItsOwnMemory) {
  // Step 2 reads buffer 1 after step 1 did: step 1 is not its last reader.
  Plan plan = makePlan(4, 1000, {{{0}, {1}}, {{1}, {2}, {0}}, {{1, 2}, {3}}});
  ASSERT_TRUE(assignSlots(plan).isOk());
  EXPECT_EQ(plan.stats.inPlaceSteps, 0);
  EXPECT_NE(plan.arena.offset[2], plan.arena.offset[1]);
}

TEST(CudaArena, AValueReadInsideALoopLivesUntilTheJumpBack) {
  // Steps 1..3 are a loop (step 3 the jump back). Buffer 1, written before it and read at its
  // first step, is read again by every iteration, so buffer 3 may not take its memory.
  Plan plan = makePlan(4, 1000, {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{}, {}}});
  plan.steps[3].control = Control::kJump;
  plan.steps[3].targets = {1};
  plan.loops = {{1, 3}};
  ASSERT_TRUE(assignSlots(plan).isOk());
  EXPECT_EQ(plan.stats.slots, 3);
  EXPECT_EQ(plan.stats.slotBytes, size_t{3072});
  EXPECT_NE(plan.arena.offset[3], plan.arena.offset[1]);

  // The same steps without the loop: buffer 3 reuses buffer 1's memory.
  Plan straight = makePlan(4, 1000, {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}});
  ASSERT_TRUE(assignSlots(straight).isOk());
  EXPECT_EQ(straight.stats.slotBytes, size_t{2048});
  EXPECT_EQ(straight.arena.offset[3], straight.arena.offset[1]);
}

TEST(CudaArena, ACollectiveInFlightKeepsItsBuffersUntilItsJoin) {
  // Step 1 is a job's collective reading 1 and writing 2 on the communication stream; steps 2
  // and 3 compute on the compute stream meanwhile; step 4 reads 2 and waits for it (commJoin).
  // Without the collective's join, 1 (last read at step 1) would give its memory to 3 or 4.
  Plan plan = makePlan(7, 1000, {{{0}, {1}}, {{1}, {2}}, {{0}, {3}}, {{3}, {4}}, {{2, 4}, {5}}});
  plan.steps[1].comm = true;
  plan.steps[1].workspaceBuffer = 6;
  plan.steps[1].workspaceBytes = 1000;
  plan.commJoin = {-1, 4, -1, -1, -1};
  ASSERT_TRUE(assignSlots(plan).isOk());
  for (int other : {3, 4}) {
    EXPECT_NE(plan.arena.offset[1], plan.arena.offset[static_cast<size_t>(other)]) << "operand vs " << other;
    EXPECT_NE(plan.arena.offset[6], plan.arena.offset[static_cast<size_t>(other)]) << "workspace vs " << other;
  }
  // Live at step 3: the operand, result and workspace in flight, 3 and 4.
  EXPECT_EQ(plan.stats.peakLiveBytes, size_t{5 * 1024});
  // The same plan with the collective joined at the end of the run keeps them to the end.
  Plan atEnd = makePlan(7, 1000, {{{0}, {1}}, {{1}, {2}}, {{0}, {3}}, {{3}, {4}}, {{4}, {5}}});
  atEnd.steps[1].comm = true;
  atEnd.commJoin = {-1, 5, -1, -1, -1};
  ASSERT_TRUE(assignSlots(atEnd).isOk());
  for (int other : {3, 4, 5})
    EXPECT_NE(atEnd.arena.offset[1], atEnd.arena.offset[static_cast<size_t>(other)]) << "operand vs " << other;
}

TEST(CudaArena, HoistedStepsAndWorkspaces) {
  // Step 0 is hoisted (its result is not an intermediate of the runs); step 1's workspace lives
  // during step 1 only, so step 2's result may take its memory.
  Plan plan = makePlan(5, 1000, {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}});
  plan.hoisted[0] = true;
  plan.steps[1].workspaceBuffer = 4;
  plan.steps[1].workspaceBytes = 1000;
  ASSERT_TRUE(assignSlots(plan).isOk());
  EXPECT_FALSE(plan.arena.inArena[1]);
  EXPECT_TRUE(plan.arena.inArena[4]);
  EXPECT_NE(plan.arena.offset[4], plan.arena.offset[2]);
  EXPECT_EQ(plan.arena.offset[4], plan.arena.offset[3]);
  EXPECT_EQ(plan.stats.slotBytes, size_t{2048});
  EXPECT_EQ(plan.stats.intermediateBytes, size_t{3000});
}

}  // namespace
}  // namespace wf::cuda
