// `warpforge serve`: model packages behind the KServe v2 / Open Inference Protocol REST API
// (src/serve/server.h), with dynamic batching and Prometheus metrics.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "serve/server.h"

namespace wf::cli {
namespace {

struct ServeFlags {
  serve::ServeOptions options;
  size_t maxBodyMb = 64;
};

ServeFlags& flags() {
  static ServeFlags value;
  return value;
}

}  // namespace

CLI::App* addServeCommand(CLI::App& app) {
  serve::ServeOptions& o = flags().options;
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve model packages over HTTP with the KServe v2 / Open Inference Protocol REST API: GET /v2, "
      "/v2/health/live, /v2/health/ready, /v2/models/NAME, /v2/models/NAME/ready, POST /v2/models/NAME/infer "
      "(JSON tensors or the binary-tensor extension), GET /metrics (Prometheus).\n"
      "Packages whose inputs and outputs share a dynamic first dimension are batched: concurrent requests "
      "are merged along dimension 0 up to --max-batch rows, waiting at most --batch-timeout-us, run once and "
      "split back. A model whose queue holds --max-queue requests answers 503 at once.\n"
      "A request's deadline (Inference-Timeout-Ms header, the `timeout` parameter in microseconds, or "
      "--request-timeout-ms) or its client disconnecting takes it out of the queue. SIGTERM/SIGINT stop "
      "accepting, drain in-flight requests and exit 0.\n"
      "Prints `warpforge serve: listening on http://HOST:PORT` once it accepts connections; logs are JSON "
      "lines on stderr.");
  cmd->add_option("packages", o.packages, "Model package directories; NAME=PKG serves PKG as NAME")->required();
  cmd->add_option("--host", o.host, "Address to listen on (default 0.0.0.0)");
  cmd->add_option("--port", o.port, "TCP port (default 8000; 0 picks a free one)")->check(CLI::Range(0, 65535));
  cmd->add_option("--device", o.device, "Device to run on: cpu (default), cuda, cuda:N");
  cmd->add_option("--max-batch", o.maxBatch, "Rows per run with dynamic batching (default 32; 1 turns batching off)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  cmd->add_option("--batch-timeout-us", o.batchTimeoutUs,
                  "Microseconds the first request of a batch waits for more (default 1000)")
      ->check(CLI::Range(int64_t(0), int64_t(60'000'000)));
  cmd->add_option("--max-queue", o.maxQueue, "Queued requests per model before 503 (default 1024)")
      ->check(CLI::Range(size_t(1), size_t(1) << 24));
  cmd->add_option("--threads", o.compile.numThreads, "Host threads for CPU kernels (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--http-threads", o.httpThreads, "HTTP I/O threads (default: min(4, cores))")->check(CLI::Range(1, 256));
  cmd->add_option("--max-body-mb", flags().maxBodyMb, "Largest request body in MiB; larger ones get 413 (default 64)")
      ->check(CLI::Range(size_t(1), size_t(1) << 14));
  cmd->add_option("--request-timeout-ms", o.requestTimeoutMs,
                  "Deadline of requests that give none (default 0: none)")
      ->check(CLI::Range(int64_t(0), int64_t(86'400'000)));
  cmd->add_option("--drain-timeout-s", o.drainTimeoutSeconds,
                  "On SIGTERM, how long to wait for in-flight requests (default 30)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_flag("--access-log", o.accessLog, "Log every request (errors are always logged)");
  cmd->add_option("--trace", o.traceFile,
                  "Write Chrome trace-event JSON (opens in Perfetto): a span per request, per model run and per op");
  cmd->add_flag("--allow-cpu-fallback", o.compile.allowCpuFallback,
                "Run ops the device has no kernel for on the host instead of failing (each is reported)");
  addTf32Flags(cmd, o.compile);
  cmd->add_flag("--no-winograd{false}", o.compile.winograd,
                "Run 3x3 convolutions directly, never by Winograd's algorithm (cpu; it rounds a little differently)");
  addKernelCacheFlags(cmd, o.compile);
  return cmd;
}

int runServe() {
  serve::catchStopSignalsDuringStartup();  // before the device starts up, which takes a while
  serve::ServeOptions& o = flags().options;
  o.maxBodyBytes = flags().maxBodyMb << 20;
  auto device = resolveDevice(o.device);
  if (!device) {
    printError(device.status().message());
    return kExitUsage;
  }
  Status status = serve::serve(o, [&o](int port) {
    std::string host = o.host == "0.0.0.0" ? "127.0.0.1" : o.host;
    std::cout << "warpforge serve: listening on http://" << host << ":" << port << std::endl;
  });
  if (!status.isOk()) return reportStatus(status);
  return kExitOk;
}

}  // namespace wf::cli
