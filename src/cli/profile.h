// Per-op timings of a backend (CompileOptions::recordTimings) summed over runs, and the table
// `bench --profile` and `train --profile` print.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/backend.h"
#include "support/phase_timer.h"

namespace wf::cli {

struct Profile {
  struct ByName {
    int64_t calls = 0;
    double micros = 0;
  };
  std::map<std::string, ByName> byName;
  std::map<std::pair<std::string, std::string>, double> byOp;  // (name, location) -> microseconds
  double totalMicros = 0;
  int runs = 0;

  void add(const RunReport& report);
};

// {"by_op": [{op, calls_per_run, ms_per_run, share}...], "slowest": [{op, location, ms_per_run}...]}
// `slowest` ops by time (all of them with SIZE_MAX).
nlohmann::json profileJson(const Profile& p, size_t slowest = 15);
// The ops by total time, then the slowest single ops with their source locations.
void printProfile(const Profile& p);
// The phases of opening and compiling (support/phase_timer.h) between two phaseTimes()
// snapshots, as an indented tree (phases under 0.5% of the largest left out).
void printPhaseTimes(const std::vector<PhaseTime>& before, const std::vector<PhaseTime>& after);
// "device memory by holder: arena 1.0 MiB, ..." for a backend's breakdown.
std::string formatMemoryBreakdown(const std::vector<std::pair<std::string, size_t>>& parts);

}  // namespace wf::cli
