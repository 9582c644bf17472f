// `warpforge serve`: model packages behind the KServe v2 / Open Inference Protocol REST API.
//
//   GET  /v2                                  server metadata (name, version, extensions)
//   GET  /v2/health/live, /v2/health/ready    200, or 503 for ready while loading or draining
//   GET  /v2/models/{name}[/versions/1]        model metadata from the manifest
//   GET  /v2/models/{name}[/versions/1]/ready
//   POST /v2/models/{name}[/versions/1]/infer JSON tensors or the binary-tensor extension
//   GET  /metrics                             Prometheus text exposition (metrics.h)
//
// HTTP is Boost.Beast over Boost.Asio: a pool of I/O threads runs every connection's reads and
// writes on its own strand; inference runs on each model's worker (model_runner.h), never on an
// I/O thread. Each request runs in a RequestScope whose std::stop_source is triggered by its
// deadline (Inference-Timeout-Ms header, the `timeout` parameter in microseconds, or
// --request-timeout-ms) or by the client closing the connection; stopping the scope takes its job
// out of the model queue if it has not started. Errors are KServe error bodies
// {"error": "..."} with a 4xx/5xx status; no exception leaves a handler.
// SIGTERM or SIGINT: stop accepting, answer new inference requests 503, wait for in-flight
// requests (at most --drain-timeout-s), join every thread, return ok.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/backend.h"

#include "support/status.h"

namespace wf::serve {

struct ServeOptions {
  std::vector<std::string> packages;  // PKG or NAME=PKG (NAME overrides the manifest's name)
  std::string host = "0.0.0.0";
  int port = 8000;                    // 0: any free port (printed at start)
  std::string device = "cpu";
  int64_t maxBatch = 32;              // rows per run for packages with a dynamic batch dimension
  int64_t batchTimeoutUs = 1000;
  size_t maxQueue = 1024;             // queued requests per model before 503
  int httpThreads = 0;                // I/O threads; 0: min(4, cores)
  size_t maxBodyBytes = 64u << 20;    // larger request bodies get 413
  int64_t requestTimeoutMs = 0;       // default deadline; 0: none
  double drainTimeoutSeconds = 30;
  bool accessLog = false;             // one log line per request (errors are always logged)
  std::string traceFile;              // Chrome trace-event JSON (trace.h); empty: none
  CompileOptions compile;             // --allow-cpu-fallback, --allow-tf32[-matmul|-conv], --threads (numThreads), --kernel-cache, --no-kernel-cache
};

// Loads every package, listens, calls `onListening(port)` once the socket accepts, serves until
// SIGTERM/SIGINT and drains. An error loading a package or binding the socket is returned before
// anything is served.
// From here until serve() listens, SIGTERM/SIGINT are remembered instead of killing the
// process: serve() then exits 0 without serving (or drains at once). Call it first thing.
void catchStopSignalsDuringStartup();

Status serve(const ServeOptions& options, const std::function<void(int port)>& onListening);

}  // namespace wf::serve
