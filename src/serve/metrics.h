// Metrics for GET /metrics, kept in a prometheus-cpp registry (Debian prometheus-cpp-dev) and
// rendered in the Prometheus text exposition format (version 0.0.4) by its TextSerializer.
//
//   warpforge_requests_total{model,code}          counter: inference requests by model and HTTP status
//   warpforge_request_duration_seconds{model}      histogram: request read to response ready
//   warpforge_queue_time_seconds{model}            histogram: queued to start of the run
//   warpforge_batch_size{model}                    histogram: rows per run
//   warpforge_run_duration_seconds{model}          histogram: one model run (a batch), start to outputs
//   warpforge_queue_depth{model}                   gauge: jobs waiting
//   warpforge_running_batches{model}               gauge: batches running now (0 or 1: one worker a model)
//   warpforge_device_memory_bytes{model,device}    gauge: device memory the model's executable holds
//   warpforge_inflight_requests                    gauge: requests read whose response is not ready yet
//
// Models are registered before serving starts; every update after that is lock-free on our side
// (prometheus-cpp's metrics are thread-safe). Requests for an unknown model count under model="".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace wf::serve {

class Metrics {
 public:
  Metrics();
  // Before serving starts (not thread-safe against the updates below).
  void addModel(const std::string& model, const std::string& device, int64_t maxBatch);

  void observeRequest(const std::string& model, int httpStatus, double seconds);
  void observeQueueTime(const std::string& model, double seconds);
  void observeBatch(const std::string& model, int64_t rows);
  void observeRun(const std::string& model, double seconds);
  void setRunning(const std::string& model, bool running);
  void setQueueDepth(const std::string& model, size_t depth);
  void setDeviceMemory(const std::string& model, size_t bytes);
  void addInflight(int64_t delta);

  // The exposition text (Content-Type: text/plain; version=0.0.4).
  std::string render() const;

 private:
  struct PerModel {
    prometheus::Histogram* latency = nullptr;
    prometheus::Histogram* queueTime = nullptr;
    prometheus::Histogram* batchSize = nullptr;
    prometheus::Histogram* runTime = nullptr;
    prometheus::Gauge* queueDepth = nullptr;
    prometheus::Gauge* running = nullptr;
    prometheus::Gauge* deviceMemory = nullptr;
  };
  const PerModel* find(const std::string& model) const;

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Histogram>& queueTime_;
  prometheus::Family<prometheus::Histogram>& batchSize_;
  prometheus::Family<prometheus::Histogram>& runTime_;
  prometheus::Family<prometheus::Gauge>& queueDepth_;
  prometheus::Family<prometheus::Gauge>& running_;
  prometheus::Family<prometheus::Gauge>& deviceMemory_;
  prometheus::Gauge& inflight_;
  std::map<std::string, PerModel> models_;
};

}  // namespace wf::serve
