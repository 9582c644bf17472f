#include "support/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace wf {
namespace {

// True on pool workers and on a caller while it runs chunks: nested parallelFor runs inline.
thread_local bool tInsideParallel = false;

// requestNumThreads() before the pool starts; 0: none.
std::atomic<int> gRequestedThreads{0};

int configuredThreads() {
  if (int requested = gRequestedThreads.load(); requested > 0) return requested;
  if (const char* env = std::getenv("WARPFORGE_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return static_cast<int>(std::min<long>(v, 1024));
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

#if !defined(_OPENMP)
// One job at a time (parallelFor calls from different threads are serialized by jobMutex_).
// Workers claim chunk indices from an atomic counter; the caller claims chunks too.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads) {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { workerLoop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  int threads() const { return threads_; }

  void run(int64_t n, int64_t chunks, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard<std::mutex> jobLock(jobMutex_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      n_ = n;
      chunks_ = chunks;
      next_.store(0);
      remaining_ = chunks;
      ++generation_;
    }
    wake_.notify_all();
    tInsideParallel = true;
    runChunks();
    tInsideParallel = false;
    std::unique_lock<std::mutex> lock(mu_);
    // Also wait for workers to leave runChunks, so none can claim a chunk of the next job
    // through a stale counter.
    done_.wait(lock, [this] { return remaining_ == 0 && active_ == 0; });
    fn_ = nullptr;
  }

 private:
  // Claims and runs chunks until none are left; returns how many this thread ran.
  void runChunks() {
    int64_t ran = 0;
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= chunks_) break;
      int64_t begin = n_ * c / chunks_;
      int64_t end = n_ * (c + 1) / chunks_;
      (*fn_)(begin, end);
      ++ran;
    }
    std::lock_guard<std::mutex> lock(mu_);
    remaining_ -= ran;
    if (remaining_ == 0) done_.notify_all();
  }

  void workerLoop() {
    tInsideParallel = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && fn_ != nullptr); });
        if (stop_) return;
        seen = generation_;
        ++active_;
      }
      runChunks();
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) done_.notify_all();
    }
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex jobMutex_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunks_ = 0, remaining_ = 0;
  int active_ = 0;  // workers inside runChunks for the current job
  std::atomic<int64_t> next_{0};
};
#endif

#if !defined(_OPENMP)
ThreadPool& pool() {
  static ThreadPool p(configuredThreads());
  return p;
}
#endif

}  // namespace

int requestNumThreads(int threads) {
  gRequestedThreads.store(std::clamp(threads, 1, 1024));
  return numThreads();
}

#if defined(_OPENMP)

// Built with OpenMP (it comes with oneDNN, whose primitives run on it): parallelFor runs on the
// same OpenMP team as oneDNN's GEMMs and convolutions, so the process has one set of worker
// threads. Two runtimes, each with its own workers spinning after a parallel region, would
// take turns on the same cores between every convolution and the elementwise op after it.
int numThreads() {
  static const int n = configuredThreads();
  return n;
}

bool insideParallelFor() { return tInsideParallel; }

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int threads = numThreads();
  if (n <= grain || tInsideParallel || threads <= 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread, claimed dynamically, balances uneven chunk costs.
  const int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t{threads} * 4);
  const int team = static_cast<int>(std::min<int64_t>(chunks, threads));
  std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(team)
  {
    const bool saved = tInsideParallel;
    tInsideParallel = true;
    for (;;) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) break;
      fn(n * c / chunks, n * (c + 1) / chunks);
    }
    tInsideParallel = saved;
  }
}

#else

int numThreads() { return pool().threads(); }

bool insideParallelFor() { return tInsideParallel; }

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || tInsideParallel) {
    fn(0, n);
    return;
  }
  ThreadPool& p = pool();
  if (p.threads() <= 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balances uneven chunk costs without much claiming overhead.
  int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t{p.threads()} * 4);
  p.run(n, chunks, fn);
}

#endif

}  // namespace wf
