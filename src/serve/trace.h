// Chrome trace-event JSON (the array form, which Perfetto and chrome://tracing open) for
// `warpforge serve --trace FILE`: one async span per inference request (queue time, batch rows and
// status in its args), one span per model run on the model's worker lane (rows, requests, device),
// and under it one span per op with its source location, laid end to end in op order from the
// backend's per-op timings (CompileOptions::recordTimings).
//
//   auto trace = TraceWriter::open("serve.trace.json");   // error names the file
//   trace->lane(1, "model resnet18 (cpu)");
//   trace->span("run resnet18", "run", 1, start, end, {{"rows", 32}});
//
// Thread-safe; the file is complete (a closed JSON array) once the writer is destroyed.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/ir.h"
#include "runtime/backend.h"
#include "support/status.h"

namespace wf::serve {

class TraceWriter {
 public:
  using Clock = std::chrono::steady_clock;
  static Expected<std::unique_ptr<TraceWriter>> open(const std::string& path);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Names lane `tid` (a thread row in the viewer).
  void lane(int tid, const std::string& name);
  // A complete span on lane `tid`.
  void span(const std::string& name, const char* category, int tid, Clock::time_point start, Clock::time_point end,
            nlohmann::json args = nlohmann::json::object());
  // The same with the start and duration in microseconds since the trace began (for op spans).
  void spanUs(const std::string& name, const char* category, int tid, double startUs, double durationUs,
              nlohmann::json args = nlohmann::json::object());
  // An async span (requests overlap, so they are not nested on one lane), keyed by `id`.
  void asyncSpan(const std::string& name, const char* category, const std::string& id, Clock::time_point start,
                 Clock::time_point end, nlohmann::json args = nlohmann::json::object());
  double microseconds(Clock::time_point t) const;

  // One model run on lane `tid`: a span [start, end) named `name` with `args`, and under it one span
  // per op of report.timings laid end to end in op order, each with its source location and, when
  // `entry` is given, the op's result types (found by location among the entry function's ops).
  void run(const std::string& name, int tid, Clock::time_point start, Clock::time_point end, const RunReport& report,
           const Operation* entry, nlohmann::json args = nlohmann::json::object());

 private:
  TraceWriter(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  void write(const nlohmann::json& event);

  std::mutex mutex_;
  std::FILE* file_;
  std::string path_;
  bool first_ = true;
  // Entry function -> location -> result types, filled on first use.
  std::map<const Operation*, std::map<std::string, std::string>> types_;
  Clock::time_point origin_ = Clock::now();
};

}  // namespace wf::serve
