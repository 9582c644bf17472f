// All-reduce bandwidth of the job's communicator: run as every rank of a job
// (`warpforge launch -n 4 -- build/bench/allreduce_bench`); rank 0 prints one JSON line per
// size: bytes, median seconds of --iters timed all-reduces (sum, float32, after warm-up), and bus
// bandwidth in GB/s, 2 (n - 1) / n * bytes / time as nccl-tests and torch define it.
// bench/allreduce_cpu.py runs it beside torch.distributed's gloo and prints the table.
//
// --device cuda (builds with NCCL): the NCCL communicator on device memory of GPU LOCAL_RANK,
// each all-reduce timed by CUDA events around it on its stream (as a torch.cuda.Event pair times
// torch's), sizes from --min-bytes to --max-bytes doubling; bench/allreduce_gpu.py runs it
// beside torch.distributed's nccl.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dist/job.h"

#ifdef WF_BENCH_NCCL
#include <cuda_runtime.h>
#endif

namespace {

using namespace wf::dist;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void printRow(int rank, size_t bytes, double seconds, int n, const char* device) {
  const double busBw = 2.0 * (n - 1) / n * static_cast<double>(bytes) / seconds / 1e9;
  if (rank == 0)
    std::printf("{\"bytes\": %zu, \"seconds\": %.9f, \"bus_gbps\": %.4f, \"ranks\": %d, \"device\": \"%s\"}\n",
                bytes, seconds, busBw, n, device);
  std::fflush(stdout);
}

int hostBench(Job& job, int iters, size_t maxBytes) {
  Communicator& comm = job.world();
  const int n = comm.size();
  std::vector<float> data(maxBytes / sizeof(float));
  std::mt19937 rng(static_cast<unsigned>(comm.rank()) + 1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : data) x = dist(rng);
  // The sums grow n-fold per repetition and may reach infinity; float addition takes the same
  // time either way (no subnormals arise), as in torch's benchmark below.
  for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 4) {
    const size_t count = bytes / sizeof(float);
    // Fewer repetitions for the large sizes keep the run short; the median stays robust.
    const int reps = bytes >= (size_t{64} << 20) ? std::max(3, iters / 4) : iters;
    std::vector<double> seconds;
    for (int i = -2; i < reps; ++i) {
      auto start = std::chrono::steady_clock::now();
      wf::Status s = comm.allReduceSync(data.data(), count, DataType::kFloat32, ReduceOp::kSum);
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!s.isOk()) {
        std::fprintf(stderr, "allreduce_bench: %s\n", s.message().c_str());
        job.abandon();
        return 1;
      }
      if (i >= 0) seconds.push_back(t);
    }
    printRow(comm.rank(), bytes, median(seconds), n, "cpu");
  }
  return job.finish().isOk() ? 0 : 1;
}

#ifdef WF_BENCH_NCCL
#define BENCH_CUDA(expr)                                                                        \
  do {                                                                                          \
    cudaError_t e_ = (expr);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "allreduce_bench (rank %d): %s: %s\n", rank, #expr, cudaGetErrorString(e_)); \
      job.abandon();                                                                            \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

int deviceBench(Job& job, int iters, size_t minBytes, size_t maxBytes) {
  Communicator& comm = job.world();
  const int n = comm.size(), rank = comm.rank();
  BENCH_CUDA(cudaSetDevice(comm.deviceOrdinal()));
  std::vector<float> host(maxBytes / sizeof(float));
  std::mt19937 rng(static_cast<unsigned>(rank) + 1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : host) x = dist(rng);
  float* data = nullptr;
  BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&data), maxBytes));
  BENCH_CUDA(cudaMemcpy(data, host.data(), maxBytes, cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int maxReps = iters + 2;
  std::vector<cudaEvent_t> starts(static_cast<size_t>(maxReps)), ends(static_cast<size_t>(maxReps));
  for (int i = 0; i < maxReps; ++i) {
    BENCH_CUDA(cudaEventCreate(&starts[static_cast<size_t>(i)]));
    BENCH_CUDA(cudaEventCreate(&ends[static_cast<size_t>(i)]));
  }
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= 2) {
    const size_t count = bytes / sizeof(float);
    // Two untimed warm-ups, then the timed ones back to back on the stream; every Work is
    // waited for (bounded by the job's timeout) before the events are read.
    std::vector<std::unique_ptr<Work>> works;
    for (int i = 0; i < maxReps; ++i) {
      BENCH_CUDA(cudaEventRecord(starts[static_cast<size_t>(i)], stream));
      works.push_back(comm.allReduce(data, count, DataType::kFloat32, ReduceOp::kSum, stream));
      BENCH_CUDA(cudaEventRecord(ends[static_cast<size_t>(i)], stream));
    }
    for (auto& w : works) {
      wf::Status s = w->wait();
      if (!s.isOk()) {
        std::fprintf(stderr, "allreduce_bench: %s\n", s.message().c_str());
        job.abandon();
        return 1;
      }
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> seconds;
    for (int i = 2; i < maxReps; ++i) {
      float ms = 0;
      BENCH_CUDA(cudaEventElapsedTime(&ms, starts[static_cast<size_t>(i)], ends[static_cast<size_t>(i)]));
      seconds.push_back(ms / 1e3);
    }
    printRow(rank, bytes, median(seconds), n, "cuda");
  }
  for (int i = 0; i < maxReps; ++i) {
    cudaEventDestroy(starts[static_cast<size_t>(i)]);
    cudaEventDestroy(ends[static_cast<size_t>(i)]);
  }
  cudaStreamDestroy(stream);
  cudaFree(data);
  return job.finish().isOk() ? 0 : 1;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int iters = 20;
  size_t minBytes = size_t{1} << 20;
  size_t maxBytes = 0;
  std::string device = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--iters") iters = std::atoi(argv[i + 1]);
    if (flag == "--min-bytes") minBytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--max-bytes") maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--device") device = argv[i + 1];
  }
  if (maxBytes == 0) maxBytes = device == "cuda" ? size_t{1} << 30 : size_t{256} << 20;
  auto env = jobFromEnvironment();
  if (!env || !*env) {
    std::fprintf(stderr, "allreduce_bench: run it as the ranks of a job (warpforge launch -n N -- ...): %s\n",
                 env ? "WORLD_SIZE is unset or 1" : env.status().message().c_str());
    return 2;
  }
  auto timeout = timeoutFromEnvironment();
  const std::chrono::milliseconds limit = timeout ? *timeout : std::chrono::seconds(300);
  if (device == "cuda") {
#ifdef WF_BENCH_NCCL
    auto job = Job::join(**env, "nccl", (*env)->localRank, limit);
    if (!job) {
      std::fprintf(stderr, "allreduce_bench: %s\n", job.status().message().c_str());
      return 1;
    }
    return deviceBench(**job, iters, minBytes, maxBytes);
#else
    std::fprintf(stderr, "allreduce_bench: --device cuda needs a build with NCCL\n");
    return 2;
#endif
  }
  if (device != "cpu") {
    std::fprintf(stderr, "allreduce_bench: --device %s: cpu or cuda\n", device.c_str());
    return 2;
  }
  auto job = Job::join(**env, "gloo", 0, limit);
  if (!job) {
    std::fprintf(stderr, "allreduce_bench: %s\n", job.status().message().c_str());
    return 1;
  }
  return hostBench(**job, iters, maxBytes);
}
