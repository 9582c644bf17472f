// One rank of a distributed job on its GPU: the NCCL communicator in fp32 and bf16, and StableHLO
// collectives compiled for the CUDA backend with CompileOptions::job (lowered to NCCL, on the
// communication stream), against the CPU interpreter's in-process grid of the same processes on
// the same fresh random inputs.
//
// Alone (ctest) each test is a job of one rank on GPU 0. As the ranks of a job, one GPU each:
//
//   warpforge launch -n 2 -- build/tests/cuda/warpforge_cuda_tests --gtest_filter='NcclJob.*'
//
// Every rank runs the same tests in the same order and checks its own results. Skipped without
// a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "dist/job.h"
#include "dist/nccl_communicator.h"
#include "eval/collectives.h"
#include "ir/float_types.h"

namespace wf::cudatest {
namespace {

using dist::CollectiveOp;
using dist::Communicator;
using dist::DataType;
using dist::ReduceOp;

// The job every test of this binary shares: WORLD_SIZE's, or a job of one rank.
std::shared_ptr<dist::Job>& jobSlot() {
  static std::shared_ptr<dist::Job> job;
  return job;
}

Expected<std::shared_ptr<dist::Job>> theJob() {
  if (jobSlot()) return jobSlot();
  WF_ASSIGN_OR_RETURN(std::optional<dist::JobEnv> env, dist::jobFromEnvironment());
  dist::JobEnv e;
  if (env) {
    e = *env;
  } else {
    e.storePort = 0;  // alone: rank 0's store on any free port
  }
  // WARPFORGE_DIST_TIMEOUT bounds every wait: a rank whose test failed half way makes the
  // other fail within it instead of hanging.
  WF_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, dist::timeoutFromEnvironment());
  WF_ASSIGN_OR_RETURN(std::unique_ptr<dist::Job> job, dist::Job::join(e, "nccl", e.localRank, timeout));
  jobSlot() = std::move(job);
  return jobSlot();
}

// The ranks leave together (Job::finish), so that rank 0's store outlives the others' last use.
class JobEnvironment final : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!jobSlot()) return;
    Status s = jobSlot()->finish();
    EXPECT_TRUE(s.isOk()) << s.toString();
    jobSlot().reset();
  }
};
[[maybe_unused]] ::testing::Environment* const kJobEnvironment =
    ::testing::AddGlobalTestEnvironment(new JobEnvironment);

#define WF_REQUIRE_JOB(job)                                           \
  WF_REQUIRE_GPU();                                                   \
  auto job##Joined = theJob();                                        \
  ASSERT_TRUE(job##Joined) << job##Joined.status().toString();        \
  std::shared_ptr<dist::Job> job = *job##Joined;                      \
  ASSERT_EQ(cudaSetDevice(job->world().deviceOrdinal()), cudaSuccess)

// A seed every rank agrees on, fresh for each call (rank 0 draws it, the store hands it out).
uint64_t sharedSeed(dist::Job& job, const std::string& name) {
  static int calls = 0;
  const std::string key = "test/seed/" + name + "/" + std::to_string(calls++);
  if (job.env().rank == 0) {
    const uint64_t seed = std::random_device{}() * 0x9E3779B97F4A7C15ull + std::random_device{}();
    std::vector<uint8_t> bytes(sizeof seed);
    std::memcpy(bytes.data(), &seed, sizeof seed);
    EXPECT_TRUE(job.store().set(key, bytes).isOk());
    return seed;
  }
  Expected<std::vector<uint8_t>> bytes = job.store().get(key);
  EXPECT_TRUE(bytes && bytes->size() == sizeof(uint64_t));
  uint64_t seed = 0;
  if (bytes && bytes->size() == sizeof seed) std::memcpy(&seed, bytes->data(), sizeof seed);
  return seed;
}

// ---------------------------------------------------------------------------------------------
// The communicator on device memory, fp32 and bf16
// ---------------------------------------------------------------------------------------------

// Rank r's values of one case: the same on every rank.
std::vector<float> valuesOf(uint64_t seed, int rank, size_t n, bool bf16) {
  std::mt19937_64 g(seed * 31 + static_cast<uint64_t>(rank));
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = bf16 ? bf16ToFloat(floatToBf16(d(g))) : d(g);
  return v;
}

// Device memory holding floats as fp32 or bf16.
class DeviceValues {
 public:
  DeviceValues(const std::vector<float>& host, bool bf16) : n_(host.size()), bf16_(bf16) {
    EXPECT_EQ(cudaMalloc(&ptr_, std::max<size_t>(bytes(), 1)), cudaSuccess);
    std::vector<uint8_t> raw(bytes());
    for (size_t i = 0; i < n_; ++i) {
      if (bf16_) {
        const uint16_t b = floatToBf16(host[i]);
        std::memcpy(raw.data() + 2 * i, &b, 2);
      } else {
        std::memcpy(raw.data() + 4 * i, &host[i], 4);
      }
    }
    EXPECT_EQ(cudaMemcpy(ptr_, raw.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  DeviceValues(size_t n, bool bf16) : DeviceValues(std::vector<float>(n, 0.0f), bf16) {}
  ~DeviceValues() { cudaFree(ptr_); }
  DeviceValues(const DeviceValues&) = delete;
  DeviceValues& operator=(const DeviceValues&) = delete;
  void* ptr() const { return ptr_; }
  size_t bytes() const { return n_ * (bf16_ ? 2 : 4); }
  std::vector<float> host() const {
    std::vector<uint8_t> raw(bytes());
    EXPECT_EQ(cudaMemcpy(raw.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> out(n_);
    for (size_t i = 0; i < n_; ++i) {
      if (bf16_) {
        uint16_t b;
        std::memcpy(&b, raw.data() + 2 * i, 2);
        out[i] = bf16ToFloat(b);
      } else {
        std::memcpy(&out[i], raw.data() + 4 * i, 4);
      }
    }
    return out;
  }

 private:
  void* ptr_ = nullptr;
  size_t n_;
  bool bf16_;
};

// |got - want| within what the engine's rounding allows: fp32 a few ulps of the magnitudes
// summed; bf16 one rounding (2^-8 relative) per step of the sum, of the magnitudes summed.
void expectClose(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& magnitude,
                 bool bf16, int steps, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double unit = bf16 ? 1.0 / 256 : 1.2e-7;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = unit * std::max(1, steps) * magnitude[i] + 1e-30;
    ASSERT_FALSE(std::isnan(got[i])) << what << " element " << i;
    ASSERT_LE(std::fabs(got[i] - want[i]), tol) << what << " element " << i << ": got " << got[i] << ", want "
                                                << want[i];
  }
}

TEST(NcclJob, CommunicatorFp32AndBf16) {
  WF_REQUIRE_JOB(job);
  Communicator& comm = job->world();
  const int n = comm.size(), r = comm.rank();
  const size_t count = 3 * 1024 + 17;
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "fp32");
    const DataType type = bf16 ? DataType::kBFloat16 : DataType::kFloat32;
    const uint64_t seed = sharedSeed(*job, "communicator");
    auto rankValues = [&](int k, size_t m, uint64_t salt) { return valuesOf(seed + salt, k, m, bf16); };
    // all_reduce: sum in place, and max out of place in a batch with a second sum.
    {
      DeviceValues a(rankValues(r, count, 1), bf16), b(rankValues(r, count, 2), bf16), maxOut(count, bf16),
          sumOut(count, bf16);
      ASSERT_TRUE(comm.allReduce(a.ptr(), count, type, ReduceOp::kSum)->wait().isOk());
      // The operations of one batch may run concurrently: neither writes what the other reads.
      std::vector<CollectiveOp> ops(2);
      ops[0] = {CollectiveOp::Kind::kAllReduce, b.ptr(), maxOut.ptr(), count, type, ReduceOp::kMax, 0};
      ops[1] = {CollectiveOp::Kind::kAllReduce, b.ptr(), sumOut.ptr(), count, type, ReduceOp::kSum, 0};
      ASSERT_TRUE(comm.batch(ops)->wait().isOk());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<double> sumA(count, 0), magA(count, 0), sumB(count, 0), magB(count, 0), maxB(count, -1e30);
      for (int k = 0; k < n; ++k) {
        std::vector<float> va = rankValues(k, count, 1), vb = rankValues(k, count, 2);
        for (size_t i = 0; i < count; ++i) {
          sumA[i] += va[i], magA[i] += std::fabs(va[i]);
          sumB[i] += vb[i], magB[i] += std::fabs(vb[i]);
          maxB[i] = std::max<double>(maxB[i], vb[i]);
        }
      }
      expectClose(a.host(), sumA, magA, bf16, n - 1, "all_reduce sum");
      expectClose(sumOut.host(), sumB, magB, bf16, n - 1, "batched all_reduce sum");
      std::vector<float> gotMax = maxOut.host();
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(gotMax[i], static_cast<float>(maxB[i])) << "max element " << i;
    }
    // all_gather: every rank's values in rank order, bit for bit.
    {
      DeviceValues send(rankValues(r, count, 3), bf16), recv(count * static_cast<size_t>(n), bf16);
      ASSERT_TRUE(comm.allGather(send.ptr(), recv.ptr(), count, type)->wait().isOk());
      std::vector<float> got = recv.host();
      for (int k = 0; k < n; ++k) {
        std::vector<float> theirs = rankValues(k, count, 3);
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(got[static_cast<size_t>(k) * count + i], theirs[i]) << "all_gather block " << k << " element " << i;
      }
    }
    // reduce_scatter: block r of the sum.
    {
      DeviceValues send(rankValues(r, count * static_cast<size_t>(n), 4), bf16), recv(count, bf16);
      ASSERT_TRUE(comm.reduceScatter(send.ptr(), recv.ptr(), count, type, ReduceOp::kSum)->wait().isOk());
      std::vector<double> want(count, 0), mag(count, 0);
      for (int k = 0; k < n; ++k) {
        std::vector<float> theirs = rankValues(k, count * static_cast<size_t>(n), 4);
        for (size_t i = 0; i < count; ++i) {
          want[i] += theirs[static_cast<size_t>(r) * count + i];
          mag[i] += std::fabs(theirs[static_cast<size_t>(r) * count + i]);
        }
      }
      expectClose(recv.host(), want, mag, bf16, n - 1, "reduce_scatter");
    }
    // broadcast from the last rank, in place.
    {
      DeviceValues d(rankValues(r, count, 5), bf16);
      ASSERT_TRUE(comm.broadcast(d.ptr(), count, type, n - 1)->wait().isOk());
      EXPECT_EQ(d.host(), rankValues(n - 1, count, 5)) << "broadcast";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// StableHLO collectives lowered to NCCL, against the interpreter's grid
// ---------------------------------------------------------------------------------------------

std::string i64Rows(const std::vector<std::vector<int64_t>>& rows) {
  std::string s = "dense<[";
  for (size_t i = 0; i < rows.size(); ++i) {
    s += i ? ", [" : "[";
    for (size_t j = 0; j < rows[i].size(); ++j) s += (j ? ", " : "") + std::to_string(rows[i][j]);
    s += "]";
  }
  return s + "]> : tensor<" + std::to_string(rows.size()) + "x" + std::to_string(rows.empty() ? 0 : rows[0].size()) +
         "xi64>";
}

std::string dims(const std::vector<int64_t>& shape, const std::string& type) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + type + ">";
}

std::string reducer(const std::string& op, const std::string& scalar) {
  return "({\n  ^bb0(%l: tensor<" + scalar + ">, %r: tensor<" + scalar + ">):\n    %0 = stablehlo." + op +
         " %l, %r : tensor<" + scalar + ">\n    stablehlo.return %0 : tensor<" + scalar + ">\n  })";
}

// Compiles @p on this rank's GPU as one rank of `job` and runs it on this rank's arguments; runs
// the interpreter's grid of every rank's @p on every rank's arguments; compares this rank's
// results. `tolerances` by result (float sums may add in another order than the grid's). Both
// ways of launching: the compute steps between collectives replayed as CUDA graphs, and step by
// step; returns the stats of the first.
ExecutableStats expectJobMatchesGrid(dist::Job& job, const std::string& text, const std::vector<Type>& argTypes,
                                     const std::vector<Tolerance>& tolerances) {
  ExecutableStats graphStats;
  const int n = job.world().size(), rank = job.world().rank();
  Module m = parse(text);
  const Operation* p = m.lookupFunction("p");
  EXPECT_NE(p, nullptr) << text;
  if (!p) return graphStats;
  rng().seed(sharedSeed(job, "program"));
  ProcessGrid grid;
  grid.numReplicas = n;
  grid.numPartitions = 1;
  for (int k = 0; k < n; ++k) {
    grid.functions.push_back(p);
    std::vector<Literal> args;
    for (const Type& t : argTypes) args.push_back(randomLiteral(t));
    grid.args.push_back(std::move(args));
  }
  std::vector<Literal> mine = cloneAll(grid.args[static_cast<size_t>(rank)]);
  Expected<std::vector<std::vector<Literal>>> want = runProcessGrid(grid, m, nullptr);
  EXPECT_TRUE(want) << want.status().toString() << "\n" << text;
  if (!want) return graphStats;

  auto backend = cuda::createCudaBackend(DeviceSpec{"cuda", job.world().deviceOrdinal()});
  EXPECT_TRUE(backend) << backend.status().toString();
  if (!backend) return graphStats;
  for (bool graphs : {true, false}) {
    CompileOptions options;
    options.job = jobSlot();
    options.cudaGraphs = graphs;
    auto exe = (*backend)->compile(m, *p, options);
    EXPECT_TRUE(exe) << exe.status().toString() << "\n" << text;
    if (!exe) return graphStats;
    // Three times: later runs reuse the plan's memory, the collectives' events and the graphs.
    for (int run = 0; run < 3; ++run) {
      Expected<RunResult> got = (*exe)->run(mine);
      EXPECT_TRUE(got) << got.status().toString() << "\n" << text;
      if (!got) return graphStats;
      const std::vector<Literal>& expected = (*want)[static_cast<size_t>(rank)];
      EXPECT_EQ(got->outputs.size(), expected.size());
      if (got->outputs.size() != expected.size()) return graphStats;
      for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_EQ(compareLiterals(got->outputs[i], expected[i], tolerances.at(i)), "")
            << "rank " << rank << " of " << n << ", run " << run << (graphs ? " (graphs)" : " (step by step)")
            << ", result #" << i << " of\n"
            << text;
    }
    const ExecutableStats s = (*exe)->stats();
    EXPECT_EQ(s.usesGraph, graphs && s.graphSegments > 0);
    EXPECT_EQ(s.graphLaunches, s.usesGraph ? 3 * s.graphSegments : 0);
    if (graphs) graphStats = s;
  }
  return graphStats;
}

// A function built op by op: each `result` line adds a returned value with its type and the
// tolerance it is compared with.
struct Program {
  std::string params, body, results, resultTypes;
  std::vector<Type> argTypes;
  std::vector<Tolerance> tolerances;
  void arg(const std::string& name, const Type& type) {
    params += (params.empty() ? "" : ", ") + name + ": " + type.toString();
    argTypes.push_back(type);
  }
  void op(const std::string& line) { body += "  " + line + "\n"; }
  void result(const std::string& value, const std::string& type, Tolerance tol) {
    results += (results.empty() ? "" : ", ") + value;
    resultTypes += (resultTypes.empty() ? "" : ", ") + type;
    tolerances.push_back(tol);
  }
  std::string text() const {
    return "func.func @p(" + params + ") -> (" + resultTypes + ") {\n" + body + "  return " + results + " : " +
           resultTypes + "\n}\n";
  }
};

// Every collective at once, with compute between them, for a job of `n` ranks: several in flight
// together on the communication stream while the compute stream goes on, direct and gathered
// forms.
Program everyCollective(int64_t n) {
  const std::string nStr = std::to_string(n);
  const std::string x = dims({2 * n, 6}, "f32"), b = dims({5, n}, "bf16"), k = dims({7}, "i32"),
                    w = dims({7}, "f32"), p = dims({2 * n, 6}, "i1");
  std::vector<std::vector<int64_t>> ring, everyone(1), singles, broadcastGroup(1);
  for (int64_t r = 0; r < n; ++r) {
    ring.push_back({r, (r + 1) % n});
    everyone[0].push_back(r);
    singles.push_back({r});
    broadcastGroup[0].push_back((r + n - 1) % n);  // the last rank is the root
  }
  const std::string all = "replica_groups = " + i64Rows(everyone);
  // NCCL's sums of more than two ranks add in ring order, not group order.
  const Tolerance sumF32{1e-5, 1e-5}, sumBF16{1.6e-2, 1e-2}, exact{0, 0};
  Program g;
  g.arg("%x", Type::tensor({2 * n, 6}, ElementType::kF32));
  g.arg("%b", Type::tensor({5, n}, ElementType::kBF16));
  g.arg("%k", Type::tensor({7}, ElementType::kSI32));
  g.arg("%w", Type::tensor({7}, ElementType::kF32));
  g.op("%y = stablehlo.multiply %x, %x : " + x);
  // all_reduce: direct sums (f32, one variadic over three operands, bf16, i32) and integer max;
  // gathered: float max (NaN-propagating) and i1 or.
  g.op("%s = \"stablehlo.all_reduce\"(%y) " + reducer("add", "f32") + " {" + all + "} : (" + x + ") -> " + x);
  g.result("%s", x, sumF32);
  g.op("%v:3 = \"stablehlo.all_reduce\"(%y, %x, %w) " + reducer("add", "f32") + " : (" + x + ", " + x + ", " + w +
       ") -> (" + x + ", " + x + ", " + w + ")");
  g.result("%v#0", x, sumF32);
  g.result("%v#1", x, sumF32);
  g.result("%v#2", w, sumF32);
  g.op("%bs = \"stablehlo.all_reduce\"(%b) " + reducer("add", "bf16") + " : (" + b + ") -> " + b);
  g.result("%bs", b, sumBF16);
  g.op("%ks = \"stablehlo.all_reduce\"(%k) " + reducer("add", "i32") + " : (" + k + ") -> " + k);
  g.result("%ks", k, exact);
  g.op("%km = \"stablehlo.all_reduce\"(%k) " + reducer("maximum", "i32") + " : (" + k + ") -> " + k);
  g.result("%km", k, exact);
  g.op("%m = \"stablehlo.all_reduce\"(%x) " + reducer("maximum", "f32") + " {" + all + "} : (" + x + ") -> " + x);
  g.result("%m", x, exact);
  g.op("%zero = stablehlo.constant dense<0.0> : " + x);
  g.op("%pos = stablehlo.compare GT, %x, %zero : (" + x + ", " + x + ") -> " + p);
  g.op("%o = \"stablehlo.all_reduce\"(%pos) " + reducer("or", "i1") + " : (" + p + ") -> " + p);
  g.result("%o", p, exact);
  // all_gather: dim 0 direct, dim 1 gathered then copied into place.
  g.op("%g0 = \"stablehlo.all_gather\"(%x) {" + all + ", all_gather_dim = 0 : i64} : (" + x + ") -> " +
       dims({2 * n * n, 6}, "f32"));
  g.result("%g0", dims({2 * n * n, 6}, "f32"), exact);
  g.op("%g1 = \"stablehlo.all_gather\"(%y) {" + all + ", all_gather_dim = 1 : i64} : (" + x + ") -> " +
       dims({2 * n, 6 * n}, "f32"));
  g.result("%g1", dims({2 * n, 6 * n}, "f32"), exact);
  // reduce_scatter: dim 0 direct (f32), dim 1 gathered and folded (bf16).
  g.op("%r0 = \"stablehlo.reduce_scatter\"(%y) " + reducer("add", "f32") + " {" + all +
       ", scatter_dimension = 0 : i64} : (" + x + ") -> " + dims({2, 6}, "f32"));
  g.result("%r0", dims({2, 6}, "f32"), sumF32);
  g.op("%r1 = \"stablehlo.reduce_scatter\"(%b) " + reducer("add", "bf16") + " {" + all +
       ", scatter_dimension = 1 : i64} : (" + b + ") -> " + dims({5, 1}, "bf16"));
  g.result("%r1", dims({5, 1}, "bf16"), sumBF16);
  // all_to_all: direct (split and concat along dim 0), gathered (concat along dim 1).
  g.op("%a0 = \"stablehlo.all_to_all\"(%x) {" + all + ", split_dimension = 0 : i64, concat_dimension = 0 : i64, " +
       "split_count = " + nStr + " : i64} : (" + x + ") -> " + x);
  g.result("%a0", x, exact);
  g.op("%a1 = \"stablehlo.all_to_all\"(%y) {" + all + ", split_dimension = 0 : i64, concat_dimension = 1 : i64, " +
       "split_count = " + nStr + " : i64} : (" + x + ") -> " + dims({2, 6 * n}, "f32"));
  g.result("%a1", dims({2, 6 * n}, "f32"), exact);
  // collective_permute around the ring; collective_broadcast from the last rank.
  g.op("%pm = \"stablehlo.collective_permute\"(%x) {source_target_pairs = " + i64Rows(ring) + "} : (" + x + ") -> " +
       x);
  g.result("%pm", x, exact);
  g.op("%bc = \"stablehlo.collective_broadcast\"(%b) {replica_groups = " + i64Rows(broadcastGroup) + "} : (" + b +
       ") -> " + b);
  g.result("%bc", b, exact);
  // Groups of one rank each: local (at world size 1, the whole job).
  g.op("%sg = \"stablehlo.all_reduce\"(%x) " + reducer("add", "f32") + " {replica_groups = " + i64Rows(singles) +
       "} : (" + x + ") -> " + x);
  g.result("%sg", x, exact);
  g.op("%id = stablehlo.replica_id : tensor<ui32>");
  g.result("%id", "tensor<ui32>", exact);
  g.op("%z = stablehlo.add %s, %y : " + x);
  g.result("%z", x, sumF32);
  return g;
}

// A gradient bucket: one all_reduce of 100 operands of assorted sizes (more than a step's
// buffers on the stack), its sums read only at the end, while the compute in between reuses
// memory: the operands must stay live until then.
Program gradientBucket() {
  const int numGradients = 100;
  Program g;
  std::string operands, types;
  std::vector<Type> grads;
  for (int i = 0; i < numGradients; ++i) {
    grads.push_back(Type::tensor({1 + (i * 37) % 300}, ElementType::kF32));
    g.arg("%g" + std::to_string(i), grads.back());
    types += (i ? ", " : "") + grads.back().toString();
  }
  const Type big = Type::tensor({256, 256}, ElementType::kF32);
  const std::string bigT = big.toString();
  g.arg("%w", big);
  // Squares of the gradients (so that their buffers are intermediates, free to reuse), then the
  // bucket, then a chain of matrix products that needs memory, then the sums.
  for (int i = 0; i < numGradients; ++i) {
    const std::string id = std::to_string(i);
    g.op("%q" + id + " = stablehlo.multiply %g" + id + ", %g" + id + " : " + grads[static_cast<size_t>(i)].toString());
    operands += (i ? ", %q" : "%q") + id;
  }
  g.op("%s:" + std::to_string(numGradients) + " = \"stablehlo.all_reduce\"(" + operands + ") " +
       reducer("add", "f32") + " : (" + types + ") -> (" + types + ")");
  // %w scaled to entries of +-1/16: products of norm about 1, so that the chain neither saturates
  // tanh nor amplifies rounding (with entries of +-4 six products magnify cuBLAS's and the
  // interpreter's different summation orders to 3e-3).
  g.op("%k = stablehlo.constant dense<0.015625> : " + bigT);
  g.op("%ws = stablehlo.multiply %w, %k : " + bigT);
  std::string prev = "%ws";
  for (int i = 0; i < 6; ++i) {
    const std::string next = "%c" + std::to_string(i);
    g.op(next + " = stablehlo.dot_general " + prev + ", %ws, contracting_dims = [1] x [0] : (" + bigT + ", " + bigT +
         ") -> " + bigT);
    g.op(next + "t = stablehlo.tanh " + next + " : " + bigT);
    prev = next + "t";
  }
  g.result(prev, bigT, Tolerance{0, 0, 1e-4});  // the products: cuBLAS beside the interpreter
  for (int i = 0; i < numGradients; i += 9)
    g.result("%s#" + std::to_string(i), grads[static_cast<size_t>(i)].toString(), Tolerance{1e-5, 1e-5});
  return g;
}

// Collectives inside a loop and after it: each iteration's all_reduce ends before the jump back.
Program collectiveInLoop() {
  const std::string t = "tensor<64xf32>";
  Program g;
  g.arg("%x", Type::tensor({64}, ElementType::kF32));
  g.op("%c0 = stablehlo.constant dense<0> : tensor<i64>");
  g.op("%c1 = stablehlo.constant dense<1> : tensor<i64>");
  g.op("%c3 = stablehlo.constant dense<3> : tensor<i64>");
  g.op("%w:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i64>, " + t + "\n" +
       "    cond {\n"
       "      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
       "      stablehlo.return %lt : tensor<i1>\n"
       "    } do {\n"
       "      %h = stablehlo.multiply %v, %v : " + t + "\n" +
       "      %s = \"stablehlo.all_reduce\"(%h) " + reducer("add", "f32") + " : (" + t + ") -> " + t + "\n" +
       "      %u = stablehlo.tanh %s : " + t + "\n" +
       "      %n = stablehlo.add %i, %c1 : tensor<i64>\n"
       "      stablehlo.return %n, %u : tensor<i64>, " + t + "\n" +
       "    }");
  g.op("%p = \"stablehlo.all_reduce\"(%w#1) " + reducer("add", "f32") + " : (" + t + ") -> " + t);
  g.result("%p", t, Tolerance{1e-4, 1e-5});
  return g;
}

TEST(NcclJob, StableHloCollectivesMatchInterpreter) {
  WF_REQUIRE_JOB(job);
  const Program g = everyCollective(job->world().size());
  expectJobMatchesGrid(*job, g.text(), g.argTypes, g.tolerances);
}

TEST(NcclJob, VariadicBucketOverlapsCompute) {
  WF_REQUIRE_JOB(job);
  const Program g = gradientBucket();
  const ExecutableStats s = expectJobMatchesGrid(*job, g.text(), g.argTypes, g.tolerances);
  // The products after the bucket are replayed as a graph while the all-reduce runs.
  EXPECT_GE(s.graphSegments, 1);
  EXPECT_TRUE(s.usesGraph);
}

TEST(NcclJob, CollectiveInLoop) {
  WF_REQUIRE_JOB(job);
  const Program g = collectiveInLoop();
  expectJobMatchesGrid(*job, g.text(), g.argTypes, g.tolerances);
}

// Overlap, measured: an all-reduce of 256 MB, a chain of bf16 matrix products that does not
// depend on it, and both in one program. With the collective on the communication stream the
// program with both takes well under the sum of the two (NCCL's kernels take some of the SMs, so
// not the larger of the two either). Device time of each run (RunResult::deviceMillis), medians.
// At world size 1 NCCL's all-reduce is a local copy, with little to overlap: skipped.
std::string overlapProgram(bool reduce, bool compute) {
  const std::string big = "tensor<67108864xf32>", m = "tensor<4096x4096xbf16>";
  std::string params, results, types, body;
  auto result = [&](const std::string& v) {
    results += (results.empty() ? "" : ", ") + v;
    types += (types.empty() ? "" : ", ") + std::string("tensor<f32>");
  };
  const std::string sum = "({\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n    %a = stablehlo.add %p, %q : tensor<f32>\n"
                          "    stablehlo.return %a : tensor<f32>\n  })";
  body += "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n";
  if (reduce) {
    params += "%s: tensor<f32>";
    body += "  %g = \"stablehlo.broadcast_in_dim\"(%s) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> " + big +
            "\n";
    body += "  %r = \"stablehlo.all_reduce\"(%g) " + sum + " : (" + big + ") -> " + big + "\n";
  }
  if (compute) {
    params += std::string(params.empty() ? "" : ", ") + "%m: " + m;
    std::string prev = "%m";
    for (int i = 0; i < 8; ++i) {
      const std::string c = "%c" + std::to_string(i);
      body += "  " + c + " = stablehlo.dot_general " + prev + ", %m, contracting_dims = [1] x [0] : (" + m + ", " + m +
              ") -> " + m + "\n";
      body += "  " + c + "t = stablehlo.tanh " + c + " : " + m + "\n";
      prev = c + "t";
    }
    // One element of the last product comes back: a full reduction would take longer than the
    // products and the all-reduce together and hide what is measured.
    body += "  %corner = stablehlo.slice " + prev + " [0:1, 0:1] : (" + m + ") -> tensor<1x1xbf16>\n";
    body += "  %cf = stablehlo.convert %corner : (tensor<1x1xbf16>) -> tensor<1x1xf32>\n";
    body += "  %cs = stablehlo.reshape %cf : (tensor<1x1xf32>) -> tensor<f32>\n";
    result("%cs");
  }
  // The all-reduce's result is read last: the products run while it is in flight.
  if (reduce) {
    body += "  %r1 = stablehlo.slice %r [0:1] : (" + big + ") -> tensor<1xf32>\n";
    body += "  %rs = stablehlo.reshape %r1 : (tensor<1xf32>) -> tensor<f32>\n";
    result("%rs");
  }
  return "func.func @p(" + params + ") -> (" + types + ") {\n" + body + "  return " + results + " : " + types +
         "\n}\n";
}

TEST(NcclJob, AllReduceOverlapsCompute) {
  WF_REQUIRE_JOB(job);
  if (job->world().size() < 2) GTEST_SKIP() << "overlap needs 2 ranks (at world size 1 the all-reduce is a local copy)";
  auto backend = cuda::createCudaBackend(DeviceSpec{"cuda", job->world().deviceOrdinal()});
  ASSERT_TRUE(backend) << backend.status().toString();
  rng().seed(sharedSeed(*job, "overlap"));
  const Literal s = randomLiteral(Type::tensor({}, ElementType::kF32), -1, 1);
  const Literal m = randomLiteral(Type::tensor({4096, 4096}, ElementType::kBF16), -1, 1);
  // Median and fastest device time of 10 runs. The ranks meet at a barrier before each run: a rank
  // that starts its all-reduce first waits for the other inside it, and that wait is not overlap.
  double fastestBoth = 0;
  auto medianMillis = [&](bool reduce, bool compute) -> double {
    Module mod = parse(overlapProgram(reduce, compute));
    const Operation* p = mod.lookupFunction("p");
    if (!p) return -1;
    CompileOptions options;
    options.job = jobSlot();
    auto exe = (*backend)->compile(mod, *p, options);
    EXPECT_TRUE(exe) << exe.status().toString();
    if (!exe) return -1;
    std::vector<Literal> args;
    if (reduce) args.push_back(s.clone());
    if (compute) args.push_back(m.clone());
    std::vector<double> millis;
    for (int i = 0; i < 13; ++i) {
      Status met = job->world().barrierSync();
      EXPECT_TRUE(met.isOk()) << met.toString();
      Expected<RunResult> r = (*exe)->run(args);
      EXPECT_TRUE(r) << r.status().toString();
      if (!r) return -1;
      for (const Literal& out : r->outputs) EXPECT_TRUE(std::isfinite(out.getDouble(0)));
      if (i >= 3) millis.push_back(r->report.deviceMillis);
    }
    std::sort(millis.begin(), millis.end());
    if (reduce && compute) fastestBoth = millis.front();
    return millis[millis.size() / 2];
  };
  const double reduceOnly = medianMillis(true, false), computeOnly = medianMillis(false, true),
               both = medianMillis(true, true);
  ASSERT_GT(reduceOnly, 0);
  ASSERT_GT(computeOnly, 0);
  ASSERT_GT(both, 0);
  const double ratio = both / (reduceOnly + computeOnly);
  std::printf("overlap: all-reduce 256 MB %.3f ms, bf16 products %.3f ms, both %.3f ms (%.2f of the sum; %d ranks)\n",
              reduceOnly, computeOnly, both, ratio, job->world().size());
  // Judged on the fastest run: one rank late to the barrier by a scheduling hiccup delays the
  // other's all-reduce by as much, in any run.
  EXPECT_LT(fastestBoth / (reduceOnly + computeOnly), 0.9)
      << "the all-reduce did not overlap the products (fastest run with both " << fastestBoth << " ms)";
}

// The programs above are valid StableHLO that the interpreter's grid runs, at the world sizes the
// GPU runs use (host only: runs without a GPU).
TEST(NcclJobPrograms, RunOnTheInterpretersGrid) {
  for (int64_t n : {1, 2, 4}) {
    for (const Program& g : {everyCollective(n), gradientBucket(), collectiveInLoop()}) {
      const std::string text = g.text();
      Module m = parse(text);
      const Operation* p = m.lookupFunction("p");
      ASSERT_NE(p, nullptr) << text;
      ProcessGrid grid;
      grid.numReplicas = n;
      for (int64_t r = 0; r < n; ++r) {
        grid.functions.push_back(p);
        std::vector<Literal> args;
        for (const Type& t : g.argTypes) args.push_back(randomLiteral(t));
        grid.args.push_back(std::move(args));
      }
      Expected<std::vector<std::vector<Literal>>> results = runProcessGrid(grid, m, nullptr);
      ASSERT_TRUE(results) << results.status().toString() << "\n" << text;
      ASSERT_EQ(results->size(), static_cast<size_t>(n));
      EXPECT_EQ((*results)[0].size(), g.tolerances.size()) << text;
    }
  }
  // The overlap programs are too large to run here: parsed and verified only.
  for (auto [reduce, compute] : {std::pair{true, false}, {false, true}, {true, true}}) {
    Module m = parse(overlapProgram(reduce, compute));
    EXPECT_NE(m.lookupFunction("p"), nullptr);
  }
}

}  // namespace
}  // namespace wf::cudatest
