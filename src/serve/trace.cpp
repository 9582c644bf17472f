#include "serve/trace.h"

#include <cerrno>
#include <cstring>

namespace wf::serve {

Expected<std::unique_ptr<TraceWriter>> TraceWriter::open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return invalidArgument("--trace " + path + ": cannot open for writing: " + std::strerror(errno));
  std::fputs("[\n", file);
  return std::unique_ptr<TraceWriter>(new TraceWriter(file, path));
}

TraceWriter::~TraceWriter() {
  std::lock_guard lock(mutex_);
  std::fputs("\n]\n", file_);
  std::fclose(file_);
}

double TraceWriter::microseconds(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

void TraceWriter::write(const nlohmann::json& event) {
  std::string text = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard lock(mutex_);
  if (!first_) std::fputs(",\n", file_);
  first_ = false;
  std::fwrite(text.data(), 1, text.size(), file_);
}

void TraceWriter::lane(int tid, const std::string& name) {
  write({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
}

void TraceWriter::span(const std::string& name, const char* category, int tid, Clock::time_point start,
                       Clock::time_point end, nlohmann::json args) {
  spanUs(name, category, tid, microseconds(start), std::chrono::duration<double, std::micro>(end - start).count(),
         std::move(args));
}

void TraceWriter::spanUs(const std::string& name, const char* category, int tid, double startUs, double durationUs,
                         nlohmann::json args) {
  write({{"ph", "X"}, {"name", name}, {"cat", category}, {"pid", 1}, {"tid", tid}, {"ts", startUs},
         {"dur", durationUs}, {"args", std::move(args)}});
}

void TraceWriter::asyncSpan(const std::string& name, const char* category, const std::string& id,
                            Clock::time_point start, Clock::time_point end, nlohmann::json args) {
  write({{"ph", "b"}, {"name", name}, {"cat", category}, {"id", id}, {"pid", 1}, {"tid", 0},
         {"ts", microseconds(start)}, {"args", std::move(args)}});
  write({{"ph", "e"}, {"name", name}, {"cat", category}, {"id", id}, {"pid", 1}, {"tid", 0}, {"ts", microseconds(end)}});
}

void TraceWriter::run(const std::string& name, int tid, Clock::time_point start, Clock::time_point end,
                      const RunReport& report, const Operation* entry, nlohmann::json args) {
  const std::map<std::string, std::string>* types = nullptr;
  if (entry) {
    std::lock_guard lock(mutex_);
    auto [it, added] = types_.try_emplace(entry);
    if (added && entry->numRegions() > 0 && !entry->region(0).empty()) {
      for (const auto& op : entry->region(0).front().operations()) {
        std::string text;
        for (size_t i = 0; i < op->numResults(); ++i) text += (i ? ", " : "") + op->result(i)->type().toString();
        it->second.emplace(op->location().toString(), std::move(text));
      }
    }
    types = &it->second;
  }
  span(name, "run", tid, start, end, std::move(args));
  double at = microseconds(start);
  for (const OpTiming& op : report.timings) {
    nlohmann::json opArgs = {{"location", op.location}};
    if (types) {
      if (auto found = types->find(op.location); found != types->end()) opArgs["types"] = found->second;
    }
    spanUs(op.name, "op", tid, at, op.microseconds, std::move(opArgs));
    at += op.microseconds;
  }
}

}  // namespace wf::serve
