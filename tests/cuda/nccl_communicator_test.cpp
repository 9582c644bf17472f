// The NCCL communicator (src/dist/nccl_communicator.h) on device memory, against a host
// reference on fresh random data: every operation at world size 1 on one GPU, and at world size
// N (one thread and one GPU per rank) where the machine has N >= 2 GPUs. Skipped without a GPU.
#include "dist/nccl_communicator.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "cuda_test_util.h"

namespace wf::dist {
namespace {

uint64_t freshSeed() {
  static const uint64_t seed = std::random_device{}();
  return seed;
}

std::vector<float> floats(int rank, size_t n, uint64_t salt) {
  std::mt19937_64 rng(freshSeed() * 7919 + static_cast<uint64_t>(rank) * 104729 + salt);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A device copy of host floats, freed with the object.
struct DeviceFloats {
  float* ptr = nullptr;
  size_t n = 0;
  explicit DeviceFloats(const std::vector<float>& host) : n(host.size()) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(n, 1) * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  explicit DeviceFloats(size_t count) : DeviceFloats(std::vector<float>(count, 0.0f)) {}
  ~DeviceFloats() { cudaFree(ptr); }
  std::vector<float> host() const {
    std::vector<float> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

void expectNear(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::abs(got[i] - want[i]), 1e-5 + 1e-5 * std::abs(want[i]))
        << what << " element " << i << " (seed " << freshSeed() << ")";
}

// Runs every operation on `n` ranks, rank r on GPU r.
void runEveryOperation(int n) {
  TcpStore::Options o;
  o.port = 0;
  o.isServer = true;
  o.rank = 0;
  o.timeout = std::chrono::seconds(60);
  auto server = TcpStore::create(o);
  ASSERT_TRUE(server) << server.status().toString();
  std::shared_ptr<TcpStore> store0 = std::move(*server);
  const size_t count = 4099;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::shared_ptr<TcpStore> store = store0;
      if (r > 0) {
        TcpStore::Options c = o;
        c.isServer = false;
        c.port = store0->port();
        c.rank = r;
        auto s = TcpStore::create(c);
        ASSERT_TRUE(s) << s.status().toString();
        store = std::move(*s);
      }
      auto created = createNcclCommunicator(store, r, n, r, std::chrono::seconds(60));
      ASSERT_TRUE(created) << created.status().toString();
      Communicator& comm = **created;
      ASSERT_EQ(cudaSetDevice(r), cudaSuccess);
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kProduct, ReduceOp::kMax, ReduceOp::kMin}) {
        DeviceFloats d(floats(r, count, static_cast<uint64_t>(op)));
        ASSERT_TRUE(comm.allReduce(d.ptr, count, DataType::kFloat32, op)->wait().isOk()) << reduceOpName(op);
        std::vector<double> want(count);
        for (size_t i = 0; i < count; ++i) {
          double acc = floats(0, count, static_cast<uint64_t>(op))[i];
          for (int k = 1; k < n; ++k) {
            const double x = floats(k, count, static_cast<uint64_t>(op))[i];
            acc = op == ReduceOp::kProduct ? acc * x
                  : op == ReduceOp::kMax   ? std::max(acc, x)
                  : op == ReduceOp::kMin   ? std::min(acc, x)
                                           : acc + x;
          }
          want[i] = op == ReduceOp::kAvg ? acc / n : acc;
        }
        expectNear(d.host(), want, std::string("all_reduce ") + reduceOpName(op));
      }
      {
        DeviceFloats send(floats(r, count, 1)), recv(count * static_cast<size_t>(n));
        ASSERT_TRUE(comm.allGather(send.ptr, recv.ptr, count, DataType::kFloat32)->wait().isOk());
        std::vector<float> got = recv.host();
        for (int k = 0; k < n; ++k)
          ASSERT_TRUE(std::equal(got.begin() + static_cast<long>(k * count), got.begin() + static_cast<long>((k + 1) * count),
                                 floats(k, count, 1).begin()));
      }
      {
        DeviceFloats send(floats(r, count * static_cast<size_t>(n), 2)), recv(count);
        ASSERT_TRUE(comm.reduceScatter(send.ptr, recv.ptr, count, DataType::kFloat32, ReduceOp::kSum)->wait().isOk());
        std::vector<double> want(count, 0.0);
        for (int k = 0; k < n; ++k) {
          std::vector<float> theirs = floats(k, count * static_cast<size_t>(n), 2);
          for (size_t i = 0; i < count; ++i) want[i] += theirs[static_cast<size_t>(r) * count + i];
        }
        expectNear(recv.host(), want, "reduce_scatter");
      }
      {
        DeviceFloats d(floats(r, count, 3));
        ASSERT_TRUE(comm.broadcast(d.ptr, count, DataType::kFloat32, n - 1)->wait().isOk());
        EXPECT_EQ(d.host(), floats(n - 1, count, 3));
      }
      {
        DeviceFloats send(floats(r, count * static_cast<size_t>(n), 4)), recv(count * static_cast<size_t>(n));
        ASSERT_TRUE(comm.allToAll(send.ptr, recv.ptr, count, DataType::kFloat32)->wait().isOk());
        std::vector<float> got = recv.host();
        for (int k = 0; k < n; ++k) {
          std::vector<float> theirs = floats(k, count * static_cast<size_t>(n), 4);
          ASSERT_TRUE(std::equal(got.begin() + static_cast<long>(k * count), got.begin() + static_cast<long>((k + 1) * count),
                                 theirs.begin() + static_cast<long>(static_cast<size_t>(r) * count)));
        }
      }
      if (n > 1) {
        DeviceFloats out(floats(r, count, 5)), in(count);
        auto s = comm.send(out.ptr, count, DataType::kFloat32, (r + 1) % n);
        auto v = comm.recv(in.ptr, count, DataType::kFloat32, (r + n - 1) % n);
        ASSERT_TRUE(s->wait().isOk());
        ASSERT_TRUE(v->wait().isOk());
        EXPECT_EQ(in.host(), floats((r + n - 1) % n, count, 5));
      }
      ASSERT_TRUE(comm.barrier()->wait().isOk());
      // Integer average is refused before NCCL sees it.
      EXPECT_EQ(comm.allReduce(nullptr, 0, DataType::kInt32, ReduceOp::kAvg)->wait().code(),
                StatusCode::kInvalidArgument);
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(NcclCommunicator, EveryOperationAtWorldSizeOne) {
  WF_REQUIRE_GPU();
  runEveryOperation(1);
}

TEST(NcclCommunicator, EveryOperationOnEveryGpu) {
  WF_REQUIRE_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "one GPU: the world-size-1 test covers it";
  runEveryOperation(devices);
}

}  // namespace
}  // namespace wf::dist
