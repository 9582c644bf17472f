// All-reduce bandwidth of the job's communicator: run as every rank of a job
// (`warpforge launch -n 4 -- build/bench/allreduce_bench`); rank 0 prints one JSON line per
// size: bytes, median seconds of --iters timed all-reduces (sum, float32, after warm-up), and bus
// bandwidth in GB/s, 2 (n - 1) / n * bytes / time as nccl-tests and torch define it.
// bench/allreduce_cpu.py runs it beside torch.distributed's gloo and prints the table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dist/job.h"

int main(int argc, char** argv) {
  using namespace wf::dist;
  int iters = 20;
  size_t maxBytes = size_t{256} << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--iters") iters = std::atoi(argv[i + 1]);
    if (flag == "--max-bytes") maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  auto env = jobFromEnvironment();
  if (!env || !*env) {
    std::fprintf(stderr, "allreduce_bench: run it as the ranks of a job (warpforge launch -n N -- ...): %s\n",
                 env ? "WORLD_SIZE is unset or 1" : env.status().message().c_str());
    return 2;
  }
  auto timeout = timeoutFromEnvironment();
  auto job = Job::join(**env, "gloo", 0, timeout ? *timeout : std::chrono::seconds(300));
  if (!job) {
    std::fprintf(stderr, "allreduce_bench: %s\n", job.status().message().c_str());
    return 1;
  }
  Communicator& comm = (*job)->world();
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
        (*job)->abandon();
        return 1;
      }
      if (i >= 0) seconds.push_back(t);
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double busBw = 2.0 * (n - 1) / n * static_cast<double>(bytes) / median / 1e9;
    if (comm.rank() == 0)
      std::printf("{\"bytes\": %zu, \"seconds\": %.9f, \"bus_gbps\": %.4f, \"ranks\": %d}\n", bytes, median, busBw, n);
    std::fflush(stdout);
  }
  return (*job)->finish().isOk() ? 0 : 1;
}
