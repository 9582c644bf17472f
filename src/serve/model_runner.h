// ModelRunner: one served model. A Session (not thread-safe) run by one worker thread that takes
// jobs from a bounded queue and, for packages whose inputs and outputs all share a dynamic first
// dimension, merges concurrent jobs along dimension 0 (dynamic batching), runs them once and
// splits the outputs back.
//
//   ModelRunner runner("resnet18", std::move(session), {.maxBatch = 32, .batchTimeout = 500us, .maxQueue = 256});
//   auto job = std::make_shared<Job>(inputs, rows, deadline, [](JobResult r) { ... });
//   if (!runner.submit(job)) -> 503, the queue is full
//   runner.cancel(job)  // true: taken out of the queue before it ran; its callback will not be called
//
// Every submitted job's callback is called exactly once (from the worker thread) unless cancel()
// returned true for it. Jobs whose deadline passed while queued complete with 504 and do not run.
// The worker is a std::jthread: stop() (and the destructor) ask it to stop, fail what is still
// queued with 503, and join it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/session.h"

namespace wf::serve {

class Metrics;
class TraceWriter;

using Clock = std::chrono::steady_clock;

struct JobResult {
  int httpStatus = 200;       // 200, or the error's HTTP status
  std::string error;          // when httpStatus != 200
  std::vector<NamedLiteral> outputs;  // manifest order
  double queueSeconds = 0;    // submit to start of the run
  int64_t batchRows = 0;      // rows of the batch it ran in
};

struct Job {
  Job(std::vector<NamedLiteral> inputs, int64_t rows, std::optional<Clock::time_point> deadline,
      std::function<void(JobResult)> done)
      : inputs(std::move(inputs)), rows(rows), deadline(deadline), done(std::move(done)) {}
  std::vector<NamedLiteral> inputs;  // manifest order, already checked against the manifest
  int64_t rows;                      // dimension 0 when the model batches, else 1
  std::optional<Clock::time_point> deadline;
  std::function<void(JobResult)> done;
  Clock::time_point enqueued{};
};

struct BatchingOptions {
  int64_t maxBatch = 1;                         // rows per run; 1 disables merging
  std::chrono::microseconds batchTimeout{500};  // how long the first job of a batch waits for more
  size_t maxQueue = 1024;                       // queued jobs; submit() refuses beyond it
};

class ModelRunner {
 public:
  // `trace` (may be null): each run is a span on lane `traceLane`, with its ops under it when the
  // session was compiled with CompileOptions::recordTimings.
  ModelRunner(std::string name, std::unique_ptr<Session> session, BatchingOptions options, Metrics* metrics,
              TraceWriter* trace = nullptr, int traceLane = 1);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  const std::string& name() const { return name_; }
  const Manifest& manifest() const { return session_->manifest(); }
  // True when the package's inputs and outputs share a dynamic dimension 0 (see the file comment).
  bool batches() const { return batchable_; }
  int64_t maxBatch() const { return options_.maxBatch; }

  // Checks inputs against the manifest (InvalidArgument naming the input on a mismatch) and
  // returns them in manifest order, with the rows the job will count for.
  Expected<std::pair<std::vector<NamedLiteral>, int64_t>> prepare(std::vector<NamedLiteral> inputs) const;
  // False when the queue is full or the runner is stopping (the job is not taken).
  bool submit(const std::shared_ptr<Job>& job);
  // True when `job` was still queued and is now removed (its callback will not run).
  bool cancel(const std::shared_ptr<Job>& job);
  size_t queueDepth() const;
  void stop();

 private:
  void work(std::stop_token stop);
  std::vector<std::shared_ptr<Job>> takeBatch(std::unique_lock<std::mutex>& lock, std::stop_token& stop);
  void runBatch(std::vector<std::shared_ptr<Job>> batch);
  void publishQueueDepth();

  std::string name_;
  std::unique_ptr<Session> session_;
  BatchingOptions options_;
  Metrics* metrics_;
  TraceWriter* trace_;
  int traceLane_;
  bool batchable_ = false;

  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  uint64_t arrivals_ = 0;
  bool stopping_ = false;
  std::jthread worker_;  // last: started after everything above exists, joined first
};

}  // namespace wf::serve
