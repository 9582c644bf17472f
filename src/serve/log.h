// Structured logs: one JSON object per line on stderr, e.g.
//   {"ts":"2026-11-22T23:41:07.123Z","level":"info","event":"request","request_id":"r-1a","status":200,...}
// Safe to call from any thread; lines never interleave.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace wf::serve {

enum class LogLevel { kInfo, kWarning, kError };

void logEvent(LogLevel level, std::string_view event, nlohmann::json fields = nlohmann::json::object());

}  // namespace wf::serve
