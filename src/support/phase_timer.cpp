#include "support/phase_timer.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>

namespace wf {
namespace {

constexpr const char* kSeparator = " > ";

struct Totals {
  std::mutex mu;
  std::map<std::string, PhaseTime> byPath;
};

Totals& totals() {
  static Totals* t = new Totals();  // never destroyed: timers may end during static destruction
  return *t;
}

thread_local std::string currentPath;  // the innermost open phase of this thread

int depthOf(const std::string& path) {
  int depth = 0;
  for (size_t at = path.find(kSeparator); at != std::string::npos; at = path.find(kSeparator, at + 1)) ++depth;
  return depth;
}

std::string formatSeconds(double millis) {
  char buf[32];
  if (millis >= 1000)
    std::snprintf(buf, sizeof buf, "%.1f s", millis / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.0f ms", millis);
  return buf;
}

}  // namespace

PhaseTimer::PhaseTimer(std::string name)
    : path_(currentPath.empty() ? std::move(name) : currentPath + kSeparator + name),
      start_(std::chrono::steady_clock::now()) {
  currentPath = path_;
}

PhaseTimer::~PhaseTimer() {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  const size_t cut = path_.rfind(kSeparator);
  currentPath = cut == std::string::npos ? std::string() : path_.substr(0, cut);
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.mu);
  PhaseTime& p = t.byPath[path_];
  p.millis += ms;
  ++p.count;
}

std::vector<PhaseTime> phaseTimes() {
  std::vector<PhaseTime> flat;
  {
    Totals& t = totals();
    std::lock_guard<std::mutex> lock(t.mu);
    for (const auto& [path, p] : t.byPath) {
      PhaseTime copy = p;
      copy.path = path;
      copy.depth = depthOf(path);
      flat.push_back(std::move(copy));
    }
  }
  // Depth-first, siblings largest first: sort each level's children under their parent.
  auto parentOf = [](const std::string& path) {
    const size_t cut = path.rfind(kSeparator);
    return cut == std::string::npos ? std::string() : path.substr(0, cut);
  };
  std::map<std::string, std::vector<const PhaseTime*>> children;
  for (const PhaseTime& p : flat) children[parentOf(p.path)].push_back(&p);
  for (auto& [_, list] : children)
    std::stable_sort(list.begin(), list.end(), [](const PhaseTime* a, const PhaseTime* b) { return a->millis > b->millis; });
  std::vector<PhaseTime> ordered;
  std::vector<const PhaseTime*> stack;
  auto pushChildren = [&](const std::string& parent) {
    auto it = children.find(parent);
    if (it == children.end()) return;
    for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) stack.push_back(*c);
  };
  pushChildren("");
  while (!stack.empty()) {
    const PhaseTime* p = stack.back();
    stack.pop_back();
    ordered.push_back(*p);
    pushChildren(p->path);
  }
  return ordered;
}

std::string formatTopPhases(const std::vector<PhaseTime>& before, const std::vector<PhaseTime>& now,
                            double totalMillis, size_t limit) {
  std::map<std::string, double> earlier;
  for (const PhaseTime& p : before) earlier[p.path] = p.millis;
  std::vector<std::pair<double, std::string>> grown;
  for (const PhaseTime& p : now) {
    if (p.depth != 0) continue;
    const double ms = p.millis - earlier[p.path];
    if (ms > 0.01 * totalMillis) grown.emplace_back(ms, p.path);
  }
  std::sort(grown.begin(), grown.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (size_t i = 0; i < grown.size() && i < limit; ++i)
    out += (i ? ", " : "") + grown[i].second + " " + formatSeconds(grown[i].first);
  return out;
}

}  // namespace wf
