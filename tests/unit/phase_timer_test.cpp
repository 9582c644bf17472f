// The phase timer (support/phase_timer.h): nesting per thread, totals and counts, the order
// phaseTimes() lists them in, and the one-line summary of the outermost phases.
#include "support/phase_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace wf {
namespace {

const PhaseTime* find(const std::vector<PhaseTime>& all, const std::string& path) {
  for (const PhaseTime& p : all)
    if (p.path == path) return &p;
  return nullptr;
}

void busy(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(PhaseTimer, NestsPerThreadAndSumsOverEntries) {
  const std::vector<PhaseTime> before = phaseTimes();
  {
    PhaseTimer outer("test outer");
    busy(5);
    for (int i = 0; i < 3; ++i) {
      PhaseTimer inner("small");
      busy(2);
    }
    {
      PhaseTimer inner("large");
      busy(20);
    }
    // Another thread's phases are its own: not under "test outer".
    std::thread([] { PhaseTimer t("test other thread"); }).join();
  }
  const std::vector<PhaseTime> after = phaseTimes();
  const PhaseTime* outer = find(after, "test outer");
  const PhaseTime* small = find(after, "test outer > small");
  const PhaseTime* large = find(after, "test outer > large");
  ASSERT_TRUE(outer && small && large);
  EXPECT_NE(find(after, "test other thread"), nullptr);
  EXPECT_EQ(outer->depth, 0);
  EXPECT_EQ(small->depth, 1);
  EXPECT_EQ(small->count, 3);
  EXPECT_EQ(outer->count, 1);
  EXPECT_GE(small->millis, 6.0);
  EXPECT_GE(large->millis, 20.0);
  EXPECT_GE(outer->millis, small->millis + large->millis + 5.0 - 0.5);
  // Depth first, children after their parent, the larger child first.
  size_t io = 0, is = 0, il = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i].path == outer->path) io = i;
    if (after[i].path == small->path) is = i;
    if (after[i].path == large->path) il = i;
  }
  EXPECT_LT(io, il);
  EXPECT_LT(il, is);
  EXPECT_EQ(is, il + 1);

  // The summary names the outermost phases that grew, largest first, and nothing nested.
  const std::string line = formatTopPhases(before, after, outer->millis);
  EXPECT_EQ(line.find("test outer "), 0u) << line;
  EXPECT_EQ(line.find("small"), std::string::npos) << line;
  EXPECT_EQ(formatTopPhases(after, after, 1.0), "");
}

}  // namespace
}  // namespace wf
