// Wall time of named phases, summed over the process: what a slow start (opening a package,
// compiling a program) spent its time on. `train` and `bench` print the outermost phases beside
// the compile time, and their --profile the whole tree, so that a slow compile names its phase
// instead of being profiled from scratch.
//
//   { PhaseTimer t("shape refinement"); ... }  // nested timers become children of the outer one
//
// Timers nest per thread; a phase's time includes its children's. Thread-safe; cheap enough for
// once per op (a clock read and a map update under a mutex at the end).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace wf {

class PhaseTimer {
 public:
  explicit PhaseTimer(std::string name);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  std::string path_;  // the names of the enclosing phases and this one, joined by " > "
  std::chrono::steady_clock::time_point start_;
};

struct PhaseTime {
  std::string path;  // "compile > plan ops > dot_general"
  int depth = 0;     // 0: outermost
  double millis = 0;
  long count = 0;    // times entered
};

// Every phase so far, each after its parent, children by time (largest first).
std::vector<PhaseTime> phaseTimes();

// The outermost phases that grew between `before` and `now` (phaseTimes() of each), largest
// first, as "name 12.3 s, name 4.0 s" (at most `limit`, those under 1% of `totalMillis` left out).
std::string formatTopPhases(const std::vector<PhaseTime>& before, const std::vector<PhaseTime>& now,
                            double totalMillis, size_t limit = 5);

}  // namespace wf
