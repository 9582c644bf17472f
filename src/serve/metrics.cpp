#include "serve/metrics.h"

#include <sstream>

#include <prometheus/text_serializer.h>

namespace wf::serve {
namespace {

const prometheus::Histogram::BucketBoundaries& secondsBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  return buckets;
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("warpforge_requests_total")
                    .Help("Inference requests by model and HTTP status code")
                    .Register(*registry_)),
      latency_(prometheus::BuildHistogram()
                   .Name("warpforge_request_duration_seconds")
                   .Help("Inference request latency, from the request read to its response ready")
                   .Register(*registry_)),
      queueTime_(prometheus::BuildHistogram()
                     .Name("warpforge_queue_time_seconds")
                     .Help("Time a request waited in its model's queue before its batch ran")
                     .Register(*registry_)),
      batchSize_(prometheus::BuildHistogram()
                     .Name("warpforge_batch_size")
                     .Help("Rows (dimension 0) per model run after dynamic batching")
                     .Register(*registry_)),
      runTime_(prometheus::BuildHistogram()
                   .Name("warpforge_run_duration_seconds")
                   .Help("One model run (a batch), from its start to its outputs on the host")
                   .Register(*registry_)),
      queueDepth_(prometheus::BuildGauge()
                      .Name("warpforge_queue_depth")
                      .Help("Requests waiting in the model's queue")
                      .Register(*registry_)),
      running_(prometheus::BuildGauge()
                   .Name("warpforge_running_batches")
                   .Help("Batches of the model running now")
                   .Register(*registry_)),
      deviceMemory_(prometheus::BuildGauge()
                        .Name("warpforge_device_memory_bytes")
                        .Help("Device memory held by the model's executable (weights, workspaces)")
                        .Register(*registry_)),
      inflight_(prometheus::BuildGauge()
                    .Name("warpforge_inflight_requests")
                    .Help("HTTP requests read whose response is not ready yet")
                    .Register(*registry_)
                    .Add({})) {}

void Metrics::addModel(const std::string& model, const std::string& device, int64_t maxBatch) {
  PerModel& m = models_[model];
  prometheus::Labels labels = {{"model", model}};
  m.latency = &latency_.Add(labels, secondsBuckets());
  m.queueTime = &queueTime_.Add(labels, secondsBuckets());
  prometheus::Histogram::BucketBoundaries rows;
  for (int64_t b = 1; b < maxBatch; b *= 2) rows.push_back(static_cast<double>(b));
  rows.push_back(static_cast<double>(maxBatch));
  m.batchSize = &batchSize_.Add(labels, rows);
  m.runTime = &runTime_.Add(labels, secondsBuckets());
  m.queueDepth = &queueDepth_.Add(labels);
  m.running = &running_.Add(labels);
  m.deviceMemory = &deviceMemory_.Add({{"model", model}, {"device", device}});
}

const Metrics::PerModel* Metrics::find(const std::string& model) const {
  auto it = models_.find(model);
  return it == models_.end() ? nullptr : &it->second;
}

void Metrics::observeRequest(const std::string& model, int httpStatus, double seconds) {
  const PerModel* m = find(model);
  requests_.Add({{"model", m ? model : std::string()}, {"code", std::to_string(httpStatus)}}).Increment();
  if (m) m->latency->Observe(seconds);
}

void Metrics::observeQueueTime(const std::string& model, double seconds) {
  if (const PerModel* m = find(model)) m->queueTime->Observe(seconds);
}

void Metrics::observeBatch(const std::string& model, int64_t rows) {
  if (const PerModel* m = find(model)) m->batchSize->Observe(static_cast<double>(rows));
}

void Metrics::observeRun(const std::string& model, double seconds) {
  if (const PerModel* m = find(model)) m->runTime->Observe(seconds);
}

void Metrics::setRunning(const std::string& model, bool running) {
  if (const PerModel* m = find(model)) m->running->Set(running ? 1.0 : 0.0);
}

void Metrics::setQueueDepth(const std::string& model, size_t depth) {
  if (const PerModel* m = find(model)) m->queueDepth->Set(static_cast<double>(depth));
}

void Metrics::setDeviceMemory(const std::string& model, size_t bytes) {
  if (const PerModel* m = find(model)) m->deviceMemory->Set(static_cast<double>(bytes));
}

void Metrics::addInflight(int64_t delta) { inflight_.Increment(static_cast<double>(delta)); }

std::string Metrics::render() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace wf::serve
