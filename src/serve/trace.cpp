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

}  // namespace wf::serve
