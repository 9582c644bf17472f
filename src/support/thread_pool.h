// A small process-wide thread pool for data-parallel CPU kernels.
//
//   wf::parallelFor(n, grain, [&](int64_t begin, int64_t end) { ... });
//
// splits [0, n) into contiguous chunks of at least `grain` indices and runs `fn(begin, end)` on
// each chunk, using the pool's workers plus the calling thread, and returns when every chunk
// is done. Chunks never overlap and together cover [0, n) exactly once.
//
// - Small ranges (n <= grain) or a pool of one thread run inline on the caller: no overhead.
// - Nested calls (parallelFor from inside a chunk) run inline, so kernels may call each other.
// - It uses std::thread::hardware_concurrency() threads, or WARPFORGE_NUM_THREADS if set
//   (a positive integer; 1 disables threading), or what requestNumThreads asked for before
//   (it wins over the variable); the count is fixed on first use.
// - Built with OpenMP (which comes with oneDNN), chunks run on the OpenMP team that oneDNN's
//   primitives also use, so the process keeps one set of worker threads; otherwise on a pool
//   of std::threads created on first use.
// - `fn` must not throw; kernels report errors through values they write (e.g. a Status slot).
#pragma once

#include <cstdint>
#include <functional>

namespace wf {

// Number of threads parallelFor may use (>= 1), including the caller. The first call fixes it.
int numThreads();

// Asks for `threads` (> 0) threads and returns the count in effect: `threads` if the pool had not
// started yet (or already runs that many), else the running pool's count, which never changes.
// CompileOptions::numThreads reaches the pool this way.
int requestNumThreads(int threads);

// True while the calling thread runs a parallelFor chunk (where nested parallelism runs
// inline). Kernels that call a library with its own threads (oneDNN, OpenBLAS) ask it for one
// thread there, so the two pools never oversubscribe the cores.
bool insideParallelFor();

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn);

}  // namespace wf
