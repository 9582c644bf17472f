#include "cli/profile.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace wf::cli {
namespace {
constexpr size_t kProfileRows = 15;

}  // namespace

void Profile::add(const RunReport& report) {
  ++runs;
  for (const OpTiming& t : report.timings) {
    ByName& b = byName[t.name];
    ++b.calls;
    b.micros += t.microseconds;
    byOp[{t.name, t.location}] += t.microseconds;
    totalMicros += t.microseconds;
  }
}

nlohmann::json profileJson(const Profile& p, size_t slowestRows) {
  nlohmann::json byName = nlohmann::json::array(), slowest = nlohmann::json::array();
  std::vector<std::pair<std::string, Profile::ByName>> names(p.byName.begin(), p.byName.end());
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second.micros > b.second.micros; });
  for (const auto& [name, b] : names)
    byName.push_back({{"op", name},
                      {"calls_per_run", static_cast<double>(b.calls) / p.runs},
                      {"ms_per_run", b.micros / 1000.0 / p.runs},
                      {"share", p.totalMicros > 0 ? b.micros / p.totalMicros : 0.0}});
  std::vector<std::pair<std::pair<std::string, std::string>, double>> ops(p.byOp.begin(), p.byOp.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < ops.size() && i < slowestRows; ++i)
    slowest.push_back({{"op", ops[i].first.first}, {"location", ops[i].first.second},
                       {"ms_per_run", ops[i].second / 1000.0 / p.runs}});
  return {{"by_op", byName}, {"slowest", slowest}};
}

void printPhaseTimes(const std::vector<PhaseTime>& before, const std::vector<PhaseTime>& after) {
  std::map<std::string, std::pair<double, long>> earlier;
  for (const PhaseTime& p : before) earlier[p.path] = {p.millis, p.count};
  double largest = 0;
  for (const PhaseTime& p : after) largest = std::max(largest, p.millis - earlier[p.path].first);
  if (largest <= 0) return;
  std::cout << "opening and compiling, by phase (wall time; a phase includes the ones under it):\n";
  char line[512];
  for (const PhaseTime& p : after) {
    const double ms = p.millis - earlier[p.path].first;
    const long count = p.count - earlier[p.path].second;
    if (count == 0 || ms < 0.005 * largest) continue;
    const size_t cut = p.path.rfind(" > ");
    const std::string name = std::string(2 * static_cast<size_t>(p.depth + 1), ' ') +
                             (cut == std::string::npos ? p.path : p.path.substr(cut + 3));
    std::snprintf(line, sizeof line, "%-60s %10.1f ms %8ld x\n", name.c_str(), ms, count);
    std::cout << line;
  }
}

void printProfile(const Profile& p) {
  if (p.totalMicros <= 0) {
    std::cout << "profile: the backend recorded no op timings\n";
    return;
  }
  nlohmann::json j = profileJson(p, kProfileRows);
  char line[512];
  std::cout << "profile, per run (a step's time, an op's or a fused group's, runs from the end of the previous step):\n";
  std::snprintf(line, sizeof line, "  %-36s %8s %11s %7s\n", "op", "calls", "ms", "share");
  std::cout << line;
  size_t shown = 0;
  for (const auto& row : j["by_op"]) {
    if (shown++ == kProfileRows) break;
    std::snprintf(line, sizeof line, "  %-36s %8.0f %11.4f %6.1f%%\n", row["op"].get<std::string>().c_str(),
                  row["calls_per_run"].get<double>(), row["ms_per_run"].get<double>(), row["share"].get<double>() * 100);
    std::cout << line;
  }
  std::cout << "slowest ops:\n";
  for (const auto& row : j["slowest"]) {
    std::snprintf(line, sizeof line, "  %11.4f ms  %s at %s\n", row["ms_per_run"].get<double>(),
                  row["op"].get<std::string>().c_str(), row["location"].get<std::string>().c_str());
    std::cout << line;
  }
}

std::string formatMemoryBreakdown(const std::vector<std::pair<std::string, size_t>>& parts) {
  std::string out = "device memory by holder:";
  const char* separator = " ";
  for (const auto& [what, bytes] : parts) {
    char part[160];
    std::snprintf(part, sizeof part, "%s%s %.1f MiB", separator, what.c_str(), static_cast<double>(bytes) / (1024.0 * 1024.0));
    out += part;
    separator = ", ";
  }
  return out;
}

}  // namespace wf::cli
