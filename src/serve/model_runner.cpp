#include "serve/model_runner.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>

#include "serve/metrics.h"
#include "serve/trace.h"

namespace wf::serve {
namespace {

// The name of the dynamic dimension that dimension 0 of every input and output is, or empty when
// the package cannot be batched along dimension 0 (that name elsewhere would break the merge).
std::string batchDimension(const Manifest& manifest) {
  std::string name;
  auto check = [&](const std::vector<TensorSpec>& tensors) {
    for (const TensorSpec& t : tensors) {
      if (t.shape.empty() || !t.shape[0].isDynamic()) return false;
      if (name.empty()) name = t.shape[0].name;
      if (t.shape[0].name != name) return false;
      for (size_t d = 1; d < t.shape.size(); ++d)
        if (t.shape[d].name == name) return false;
    }
    return true;
  };
  if (manifest.inputs.empty() || !check(manifest.inputs) || !check(manifest.outputs)) return {};
  return name;
}

bool sameTrailingShapes(const Job& a, const Job& b) {
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const auto& x = a.inputs[i].value.shape();
    const auto& y = b.inputs[i].value.shape();
    if (x.size() != y.size() || !std::equal(x.begin() + 1, x.end(), y.begin() + 1)) return false;
  }
  return true;
}

// Concatenates the jobs' inputs along dimension 0 (row-major: their bytes one after another);
// rows past theirs (up to `rows`) repeat the last one.
std::vector<NamedLiteral> mergeInputs(const std::vector<std::shared_ptr<Job>>& batch, int64_t rows) {
  std::vector<NamedLiteral> merged;
  for (size_t i = 0; i < batch[0]->inputs.size(); ++i) {
    const Literal& first = batch[0]->inputs[i].value;
    std::vector<int64_t> shape = first.shape();
    shape[0] = rows;
    Literal value = Literal::zeros(Type::tensor(shape, first.elementType()));
    size_t offset = 0;
    for (const auto& job : batch) {
      const Literal& part = job->inputs[i].value;
      if (part.sizeBytes()) std::memcpy(value.data() + offset, part.data(), part.sizeBytes());
      offset += part.sizeBytes();
    }
    const size_t rowBytes = rows > 0 ? value.sizeBytes() / static_cast<size_t>(rows) : 0;
    for (; rowBytes > 0 && offset >= rowBytes && offset + rowBytes <= value.sizeBytes(); offset += rowBytes)
      std::memcpy(value.data() + offset, value.data() + offset - rowBytes, rowBytes);
    merged.push_back({batch[0]->inputs[i].name, std::move(value)});
  }
  return merged;
}

// Rows [begin, begin + count) of `value` along dimension 0.
Literal sliceRows(const Literal& value, int64_t begin, int64_t count) {
  std::vector<int64_t> shape = value.shape();
  const size_t rowBytes = shape[0] ? value.sizeBytes() / static_cast<size_t>(shape[0]) : 0;
  shape[0] = count;
  Literal out = Literal::zeros(Type::tensor(shape, value.elementType()));
  if (out.sizeBytes()) std::memcpy(out.data(), value.data() + static_cast<size_t>(begin) * rowBytes, out.sizeBytes());
  return out;
}

}  // namespace

ModelRunner::ModelRunner(std::string name, std::unique_ptr<Session> session, BatchingOptions options, Metrics* metrics,
                         TraceWriter* trace, int traceLane)
    : name_(std::move(name)),
      session_(std::move(session)),
      options_(options),
      metrics_(metrics),
      trace_(trace),
      traceLane_(traceLane) {
  if (trace_) trace_->lane(traceLane_, "model " + name_ + " (" + session_->deviceName() + ")");
  std::string dim = batchDimension(session_->manifest());
  batchable_ = !dim.empty();
  if (!batchable_) {
    options_.maxBatch = 1;
  } else if (auto it = session_->manifest().dynamicDims.find(dim);
             it != session_->manifest().dynamicDims.end() && it->second.max) {
    options_.maxBatch = std::max<int64_t>(1, std::min(options_.maxBatch, *it->second.max));
  }
  options_.maxBatch = std::max<int64_t>(1, options_.maxBatch);
  if (metrics_) metrics_->setDeviceMemory(name_, session_->deviceBytesInUse());
  worker_ = std::jthread([this](std::stop_token stop) { work(stop); });
}

ModelRunner::~ModelRunner() { stop(); }

Expected<std::pair<std::vector<NamedLiteral>, int64_t>> ModelRunner::prepare(std::vector<NamedLiteral> inputs) const {
  // Package::checkInputs reports names, dtypes, shapes and dynamic-dim bounds; it returns the
  // inputs in argument order, which for the inputs alone is manifest order.
  WF_RETURN_IF_ERROR(session_->package().checkInputs(inputs).status());
  std::vector<NamedLiteral> ordered;
  for (const TensorSpec& spec : manifest().inputs)
    for (NamedLiteral& in : inputs)
      if (in.name == spec.name) ordered.push_back(std::move(in));
  int64_t rows = batchable_ ? ordered[0].value.shape()[0] : 1;
  return std::make_pair(std::move(ordered), rows);
}

bool ModelRunner::submit(const std::shared_ptr<Job>& job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= options_.maxQueue) return false;
    job->enqueued = Clock::now();
    queue_.push_back(job);
    ++arrivals_;
    publishQueueDepth();
  }
  wake_.notify_one();
  return true;
}

bool ModelRunner::cancel(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it == queue_.end()) return false;
  queue_.erase(it);
  publishQueueDepth();
  return true;
}

size_t ModelRunner::queueDepth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void ModelRunner::publishQueueDepth() {
  if (metrics_) metrics_->setQueueDepth(name_, queue_.size());
}

void ModelRunner::stop() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;  // submit() refuses from here on
  }
  worker_.request_stop();
  wake_.notify_all();
  worker_.join();
  std::deque<std::shared_ptr<Job>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(queue_);
    publishQueueDepth();
  }
  for (auto& job : left) job->done({503, "model '" + name_ + "' is shutting down", {}, 0, 0});
}

std::vector<std::shared_ptr<Job>> ModelRunner::takeBatch(std::unique_lock<std::mutex>& lock, std::stop_token& stop) {
  std::vector<std::shared_ptr<Job>> batch;
  wake_.wait(lock, stop, [&] { return !queue_.empty(); });
  if (queue_.empty()) return batch;
  batch.push_back(queue_.front());
  queue_.pop_front();
  int64_t rows = batch[0]->rows;
  if (batchable_ && options_.maxBatch > 1) {
    const Clock::time_point until = batch[0]->enqueued + options_.batchTimeout;
    while (rows < options_.maxBatch) {
      // Take every queued job that fits (same shape past dimension 0, rows within the limit).
      for (auto it = queue_.begin(); it != queue_.end() && rows < options_.maxBatch;) {
        if (rows + (*it)->rows <= options_.maxBatch && sameTrailingShapes(*batch[0], **it)) {
          rows += (*it)->rows;
          batch.push_back(*it);
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      if (rows >= options_.maxBatch || Clock::now() >= until) break;
      uint64_t seen = arrivals_;
      if (!wake_.wait_until(lock, stop, until, [&] { return arrivals_ != seen; })) break;  // timeout or stop
    }
  }
  publishQueueDepth();
  return batch;
}

void ModelRunner::work(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::vector<std::shared_ptr<Job>> batch;
    {
      std::unique_lock lock(mutex_);
      batch = takeBatch(lock, stop);
    }
    if (!batch.empty()) runBatch(std::move(batch));
  }
}

void ModelRunner::runBatch(std::vector<std::shared_ptr<Job>> batch) {
  const Clock::time_point start = Clock::now();
  // Jobs whose deadline passed while they waited do not run.
  std::vector<std::shared_ptr<Job>> live;
  for (auto& job : batch) {
    double queued = std::chrono::duration<double>(start - job->enqueued).count();
    if (job->deadline && *job->deadline <= start) {
      job->done({504, "deadline exceeded after " + std::to_string(static_cast<int64_t>(queued * 1000)) +
                          " ms in the queue of model '" + name_ + "'", {}, queued, 0});
    } else {
      live.push_back(std::move(job));
    }
  }
  if (live.empty()) return;
  int64_t rows = 0;
  for (const auto& job : live) rows += job->rows;
  // A session that compiles per input shapes (a static-shape device such as cuda) sees batches
  // padded to a power of two, so that a few executables serve every batch size.
  int64_t runRows = rows;
  if (batchable_ && session_->specializations() > 0) {
    runRows = std::max<int64_t>(rows, std::min<int64_t>(static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(rows))),
                                                        options_.maxBatch));
  }

  Expected<SessionResult> result = internalError("not run");
  if (metrics_) metrics_->setRunning(name_, true);
  const Clock::time_point runStart = Clock::now();
  try {
    result = live.size() == 1 && runRows == rows ? session_->run(live[0]->inputs)
                                                 : session_->run(mergeInputs(live, runRows));
  } catch (const std::exception& e) {
    result = internalError(std::string("exception: ") + e.what());
  } catch (...) {
    result = internalError("unknown exception");
  }
  if (metrics_) {
    metrics_->observeRun(name_, std::chrono::duration<double>(Clock::now() - runStart).count());
    metrics_->setRunning(name_, false);
  }
  if (trace_) {
    nlohmann::json args = {{"rows", rows}, {"requests", live.size()}, {"device", session_->deviceName()}};
    if (!result) args["error"] = result.status().message();
    trace_->run("run " + name_, traceLane_, start, Clock::now(), result ? result->report : RunReport{},
                &session_->package().entry(), std::move(args));
  }
  if (metrics_) {
    metrics_->observeBatch(name_, rows);
    metrics_->setDeviceMemory(name_, session_->deviceBytesInUse());
  }
  auto queueSeconds = [&](const Job& job) { return std::chrono::duration<double>(start - job.enqueued).count(); };
  if (!result) {
    std::string message = "model '" + name_ + "' failed to run: " + result.status().message();
    for (auto& job : live) job->done({500, message, {}, queueSeconds(*job), rows});
    return;
  }
  if (live.size() == 1 && runRows == rows) {
    live[0]->done({200, {}, std::move(result->outputs), queueSeconds(*live[0]), rows});
    return;
  }
  for (const NamedLiteral& out : result->outputs) {
    if (out.value.shape().empty() || out.value.shape()[0] != runRows) {
      std::string message = "model '" + name_ + "': output '" + out.name + "' of a batch of " + std::to_string(rows) +
                            " rows has shape " + out.value.type().toString() + ", which cannot be split back";
      for (auto& job : live) job->done({500, message, {}, queueSeconds(*job), rows});
      return;
    }
  }
  int64_t begin = 0;
  for (auto& job : live) {
    std::vector<NamedLiteral> outputs;
    for (const NamedLiteral& out : result->outputs) outputs.push_back({out.name, sliceRows(out.value, begin, job->rows)});
    begin += job->rows;
    job->done({200, {}, std::move(outputs), queueSeconds(*job), rows});
  }
}

}  // namespace wf::serve
