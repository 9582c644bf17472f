// The on-disk kernel cache (codegen/kernel_cache.h, nvrtc.h): keys, entries, corruption,
// concurrent writers and where the cache lives need no GPU (NVRTC runs on the host); on a GPU, a
// program compiled twice in a fresh cache is compiled once and loaded once, and gives the CPU's
// results both times.
#include <gtest/gtest.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/codegen/kernel_cache.h"
#include "backends/cuda/codegen/nvrtc.h"
#include "backends/cuda/tuning.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

namespace fs = std::filesystem;
using Outcome = cuda::KernelCache::Lookup::Outcome;

// A fresh directory per test (and per repetition: the cache warns about a folder once per
// process), removed afterwards.
class TempDir {
 public:
  TempDir() {
    static int made = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("wf_kcache_" + std::to_string(::getpid()) + "_" + std::to_string(made++) +
                                        "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

std::vector<fs::path> filesUnder(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Random bytes, NULs among them.
std::string randomBytes(size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng()() & 0xff);
  return s;
}

std::string keyOf(const std::string& text) {
  cuda::KernelCacheKeyParts parts;
  parts.source = text;
  Expected<std::string> key = cuda::kernelCacheKey(parts);
  EXPECT_TRUE(key) << key.status().toString();
  return key ? *key : "";
}

// A small program of two kernels, as the fusion generator writes them (after its prelude).
const char* kKernels = R"(
extern "C" __global__ void wf_test_scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
extern "C" __global__ void wf_test_tanh(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = tanhf(x[i]);
}
)";

std::string testProgram() { return cuda::fusedKernelPrelude() + "\n" + kKernels; }

TEST(KernelCache, KeyChangesWithEveryPartAndOnlyWithThem) {
  cuda::KernelCacheKeyParts base;
  base.source = "extern \"C\" __global__ void k() {}";
  base.headers = {{"eval/element_math.h", "// math"}};
  base.arch = "sm_90";
  base.nvrtcMajor = 13;
  base.nvrtcMinor = 0;
  base.options = {"--gpu-architecture=sm_90", "--fmad=false"};
  base.driverVersion = 13000;
  Expected<std::string> k0 = cuda::kernelCacheKey(base);
  ASSERT_TRUE(k0) << k0.status().toString();
  EXPECT_EQ(k0->size(), 64u);
  EXPECT_EQ(k0->find_first_not_of("0123456789abcdef"), std::string::npos) << *k0;
  EXPECT_EQ(*cuda::kernelCacheKey(base), *k0) << "the key is a function of the parts";

  std::map<std::string, cuda::KernelCacheKeyParts> changed;
  changed["source"] = base;
  changed["source"].source = "extern \"C\" __global__ void k() { }";
  changed["header text"] = base;
  changed["header text"].headers = {{"eval/element_math.h", "// math 2"}};
  changed["header name"] = base;
  changed["header name"].headers = {{"eval/element_math2.h", "// math"}};
  changed["arch"] = base;
  changed["arch"].arch = "sm_80";
  changed["nvrtc major"] = base;
  changed["nvrtc major"].nvrtcMajor = 12;
  changed["nvrtc minor"] = base;
  changed["nvrtc minor"].nvrtcMinor = 9;
  changed["options"] = base;
  changed["options"].options = {"--gpu-architecture=sm_90"};
  changed["option order"] = base;
  changed["option order"].options = {"--fmad=false", "--gpu-architecture=sm_90"};
  changed["driver"] = base;
  changed["driver"].driverVersion = 13010;
  // The same characters split differently between parts.
  changed["split"] = base;
  changed["split"].options = {"--gpu-architecture=sm_90--fmad=false"};
  std::set<std::string> keys = {*k0};
  for (const auto& [what, parts] : changed) {
    Expected<std::string> k = cuda::kernelCacheKey(parts);
    ASSERT_TRUE(k) << what;
    EXPECT_NE(*k, *k0) << what;
    EXPECT_TRUE(keys.insert(*k).second) << what << " collides with another change";
  }

  // The key of a generated program covers its source, arch and driver (and this NVRTC, its
  // options and the element math header, which do not change within a process).
  const std::string program = testProgram();
  Expected<std::string> a = cuda::kernelCacheKeyOf(program, "sm_90", 13000);
  ASSERT_TRUE(a) << a.status().toString();
  EXPECT_EQ(*cuda::kernelCacheKeyOf(program, "sm_90", 13000), *a);
  EXPECT_NE(*cuda::kernelCacheKeyOf(program + " ", "sm_90", 13000), *a);
  EXPECT_NE(*cuda::kernelCacheKeyOf(program, "sm_80", 13000), *a);
  EXPECT_NE(*cuda::kernelCacheKeyOf(program, "sm_90", 12080), *a);
}

TEST(KernelCache, StoreThenLoadGivesTheSameBytes) {
  TempDir tmp;
  cuda::KernelCache cache(tmp.path() / "kernels" / "sm_90");
  const std::string key = keyOf("a"), other = keyOf("b");
  EXPECT_EQ(cache.load(key).outcome, Outcome::kMissing);
  const std::string bytes = randomBytes(300000);
  ASSERT_TRUE(cache.store(key, bytes));
  cuda::KernelCache::Lookup found = cache.load(key);
  ASSERT_EQ(found.outcome, Outcome::kHit) << found.problem;
  EXPECT_TRUE(found.cubin == bytes);
  EXPECT_EQ(cache.load(other).outcome, Outcome::kMissing);
  // One file, named after the key, and no temporary left behind.
  EXPECT_EQ(filesUnder(tmp.path()), std::vector<fs::path>{cache.entryPath(key)});
  EXPECT_EQ(cache.entryPath(key).filename().string(), key + ".cubin");
  // A store replaces the entry.
  ASSERT_TRUE(cache.store(key, "short"));
  EXPECT_EQ(cache.load(key).cubin, "short");
  // An empty payload is an entry too.
  ASSERT_TRUE(cache.store(other, ""));
  EXPECT_EQ(cache.load(other).outcome, Outcome::kHit);

  // NVRTC's output through the cache: compiled once, then loaded, the same bytes.
  const std::string program = testProgram();
  Expected<cuda::CachedCubin> first = cuda::compileToCubinCached(program, "sm_90", &cache, 13000);
  ASSERT_TRUE(first) << first.status().toString();
  EXPECT_FALSE(first->fromCache);
  EXPECT_GT(first->compileMillis, 0);
  Expected<cuda::CachedCubin> second = cuda::compileToCubinCached(program, "sm_90", &cache, 13000);
  ASSERT_TRUE(second) << second.status().toString();
  EXPECT_TRUE(second->fromCache);
  EXPECT_EQ(second->compileMillis, 0);
  EXPECT_EQ(second->key, first->key);
  EXPECT_TRUE(second->cubin == first->cubin);
  // A different driver is a different key: compiled again.
  Expected<cuda::CachedCubin> other_driver = cuda::compileToCubinCached(program, "sm_90", &cache, 13010);
  ASSERT_TRUE(other_driver) << other_driver.status().toString();
  EXPECT_FALSE(other_driver->fromCache);
  EXPECT_NE(other_driver->key, first->key);
  // What NVRTC gives without the cache (an ELF file).
  Expected<std::string> direct = cuda::compileToCubin(program, "sm_90");
  ASSERT_TRUE(direct) << direct.status().toString();
  EXPECT_TRUE(second->cubin == *direct);
  EXPECT_EQ(second->cubin.substr(0, 4), "\x7f" "ELF");
}

TEST(KernelCache, CorruptEntriesAreIgnoredWithOneWarningAndReplaced) {
  TempDir tmp;
  cuda::KernelCache cache(tmp.path());
  const std::string key = keyOf("entry");
  const std::string payload = randomBytes(5000);
  ASSERT_TRUE(cache.store(key, payload));
  const std::string good = readAll(cache.entryPath(key));

  struct Damage {
    std::string name;
    std::string bytes;
    std::string problem;  // what the lookup reports
  };
  std::string flipped = good;
  flipped[good.size() - 100] = static_cast<char>(flipped[good.size() - 100] ^ 0x40);
  std::string badMagic = good;
  badMagic[0] = 'X';
  std::string longer = good + "x";
  const std::vector<Damage> damages = {
      {"a flipped payload bit", flipped, "checksum mismatch"},
      {"truncated payload", good.substr(0, good.size() - 1), "header says"},
      {"truncated header", good.substr(0, 20), "truncated"},
      {"empty file", "", "truncated"},
      {"bad magic", badMagic, "bad magic"},
      {"trailing bytes", longer, "header says"},
  };
  for (const Damage& d : damages) {
    writeAll(cache.entryPath(key), d.bytes);
    ::testing::internal::CaptureStderr();
    cuda::KernelCache::Lookup found = cache.load(key);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(found.outcome, Outcome::kCorrupt) << d.name;
    EXPECT_NE(found.problem.find(d.problem), std::string::npos) << d.name << ": " << found.problem;
    EXPECT_TRUE(found.cubin.empty()) << d.name;
    // One line naming the file.
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << d.name << ": " << err;
    EXPECT_NE(err.find(cache.entryPath(key).string()), std::string::npos) << err;
  }
  // An entry under another key's name (a copied file) is not that key's.
  const std::string key2 = keyOf("another");
  writeAll(cache.entryPath(key2), good);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cache.load(key2).problem, "written for another key");
  ::testing::internal::GetCapturedStderr();

  // Through compileToCubinCached: a corrupt entry is compiled again and overwritten.
  const std::string program = testProgram();
  Expected<cuda::CachedCubin> first = cuda::compileToCubinCached(program, "sm_90", &cache, 13000);
  ASSERT_TRUE(first) << first.status().toString();
  const fs::path entry = cache.entryPath(first->key);
  std::string bytes = readAll(entry);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
  writeAll(entry, bytes);
  ::testing::internal::CaptureStderr();
  Expected<cuda::CachedCubin> again = cuda::compileToCubinCached(program, "sm_90", &cache, 13000);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(again) << again.status().toString();
  EXPECT_FALSE(again->fromCache);
  EXPECT_TRUE(again->cubin == first->cubin);
  EXPECT_NE(err.find("checksum mismatch"), std::string::npos) << err;
  cuda::KernelCache::Lookup repaired = cache.load(first->key);
  ASSERT_EQ(repaired.outcome, Outcome::kHit) << repaired.problem;
  EXPECT_TRUE(repaired.cubin == first->cubin);
}

TEST(KernelCache, AnUnwritableFolderWarnsOnceAndCompilingGoesOn) {
  TempDir tmp;
  // A folder under a regular file cannot be made, whoever runs the test (root included).
  writeAll(tmp.path() / "file", "x");
  cuda::KernelCache cache(tmp.path() / "file" / "kernels");
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.store(keyOf("a"), "bytes"));
  EXPECT_FALSE(cache.store(keyOf("b"), "bytes"));
  Expected<cuda::CachedCubin> compiled = cuda::compileToCubinCached(testProgram(), "sm_90", &cache, 13000);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(compiled) << compiled.status().toString();
  EXPECT_FALSE(compiled->fromCache);
  EXPECT_FALSE(compiled->cubin.empty());
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("cannot write " + cache.folder().string()), std::string::npos) << err;
  EXPECT_EQ(cache.load(keyOf("a")).outcome, Outcome::kMissing);
}

TEST(KernelCache, ConcurrentWritersLeaveAValidEntry) {
  TempDir tmp;
  cuda::KernelCache cache(tmp.path() / "shared");
  const std::string key = keyOf("contended");
  // Payloads of different sizes, so that a reader of a half-written file would fail its checks.
  std::vector<std::string> payloads;
  for (size_t i = 0; i < 4; ++i) payloads.push_back(randomBytes(20000 + 7919 * i));
  auto isOneOf = [&](const std::string& s) { return std::find(payloads.begin(), payloads.end(), s) != payloads.end(); };

  // Threads: four writers and a reader at the same time.
  std::atomic<int> corrupt{0}, wrong{0}, hits{0}, failedStores{0};
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) {
      cuda::KernelCache::Lookup l = cache.load(key);
      if (l.outcome == Outcome::kCorrupt) ++corrupt;
      if (l.outcome == Outcome::kHit) {
        ++hits;
        if (!isOneOf(l.cubin)) ++wrong;
      }
    }
  });
  std::vector<std::thread> writers;
  for (size_t w = 0; w < payloads.size(); ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 200; ++i)
        if (!cache.store(key, payloads[w])) ++failedStores;
    });
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(failedStores, 0);
  EXPECT_EQ(corrupt, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(hits, 0);
  cuda::KernelCache::Lookup last = cache.load(key);
  ASSERT_EQ(last.outcome, Outcome::kHit);
  EXPECT_TRUE(isOneOf(last.cubin));

  // Processes (the ranks of a job sharing a cache): each child writes and reads the entry many
  // times; a child exits 1 if it ever read a corrupt or foreign entry, 2 if a store failed.
  fs::remove_all(cache.folder());
  std::vector<pid_t> children;
  for (size_t c = 0; c < payloads.size(); ++c) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      for (int i = 0; i < 200; ++i) {
        if (!cache.store(key, payloads[c])) code = 2;
        cuda::KernelCache::Lookup l = cache.load(key);
        if (l.outcome != Outcome::kHit || !isOneOf(l.cubin)) code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << pid;
  }
  last = cache.load(key);
  ASSERT_EQ(last.outcome, Outcome::kHit);
  EXPECT_TRUE(isOneOf(last.cubin));
  // The temporaries were all renamed: the entry alone is left.
  EXPECT_EQ(filesUnder(tmp.path()), std::vector<fs::path>{cache.entryPath(key)});
}

// kernelCacheRoot and kernelCacheFor with a made-up environment.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  cuda::EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

std::string rootOf(bool enabled, const std::string& flagDir, const FakeEnv& env) {
  Expected<std::optional<fs::path>> root = cuda::kernelCacheRoot(enabled, flagDir, env.lookup());
  EXPECT_TRUE(root) << root.status().toString();
  if (!root) return "<error>";
  return *root ? (*root)->string() : "<off>";
}

TEST(KernelCache, LocationFollowsFlagsThenEnvironment) {
  FakeEnv env;
  EXPECT_EQ(rootOf(true, "", env), "<off>") << "no HOME, nothing set";
  env.vars["HOME"] = "/home/u";
  EXPECT_EQ(rootOf(true, "", env), "/home/u/.cache/warpforge");
  env.vars["XDG_CACHE_HOME"] = "relative/cache";  // the XDG spec: relative paths are ignored
  EXPECT_EQ(rootOf(true, "", env), "/home/u/.cache/warpforge");
  env.vars["XDG_CACHE_HOME"] = "/xdg";
  EXPECT_EQ(rootOf(true, "", env), "/xdg/warpforge");
  env.vars["WARPFORGE_CACHE_DIR"] = "";  // empty is unset
  EXPECT_EQ(rootOf(true, "", env), "/xdg/warpforge");
  env.vars["WARPFORGE_CACHE_DIR"] = "/wf";
  EXPECT_EQ(rootOf(true, "", env), "/wf");
  // The flag's directory comes first; --no-kernel-cache turns the cache off whatever is set.
  EXPECT_EQ(rootOf(true, "/flag", env), "/flag");
  EXPECT_EQ(rootOf(false, "", env), "<off>");
  EXPECT_EQ(rootOf(false, "/flag", env), "<off>");
  // WARPFORGE_KERNEL_CACHE turns it off (or leaves it on); the flag's directory still wins.
  for (const char* off : {"0", "off", "OFF", "false", "no"}) {
    env.vars["WARPFORGE_KERNEL_CACHE"] = off;
    EXPECT_EQ(rootOf(true, "", env), "<off>") << off;
    EXPECT_EQ(rootOf(true, "/flag", env), "/flag") << off;
  }
  for (const char* on : {"1", "on", "true", "yes", ""}) {
    env.vars["WARPFORGE_KERNEL_CACHE"] = on;
    EXPECT_EQ(rootOf(true, "", env), "/wf") << on;
  }
  env.vars["WARPFORGE_KERNEL_CACHE"] = "maybe";
  Expected<std::optional<fs::path>> bad = cuda::kernelCacheRoot(true, "", env.lookup());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("WARPFORGE_KERNEL_CACHE=maybe"), std::string::npos) << bad.status().message();

  // The folder per architecture, NVRTC and driver.
  EXPECT_EQ(cuda::kernelCacheFolder("/wf", "sm_90", 13, 0, 13000).string(), "/wf/kernels/sm_90-nvrtc13.0-driver13000");
}

TEST(KernelCache, ADisabledCacheWritesNothing) {
  TempDir tmp;
  FakeEnv env;
  env.vars["WARPFORGE_CACHE_DIR"] = tmp.path().string();
  env.vars["HOME"] = tmp.path().string();
  const std::string program = testProgram();
  CompileOptions options;
  auto compileWith = [&](const CompileOptions& o) -> std::optional<cuda::KernelCache> {
    Expected<std::optional<cuda::KernelCache>> cache = cuda::kernelCacheFor(o, "sm_90", 13000, env.lookup());
    EXPECT_TRUE(cache) << cache.status().toString();
    if (!cache) return std::nullopt;
    Expected<cuda::CachedCubin> c = cuda::compileToCubinCached(program, "sm_90", *cache ? &**cache : nullptr, 13000);
    EXPECT_TRUE(c) << c.status().toString();
    if (c) {
      EXPECT_FALSE(c->fromCache);
    }
    return std::move(*cache);
  };
  // On: the entry lands in the environment's folder.
  std::optional<cuda::KernelCache> on = compileWith(options);
  ASSERT_TRUE(on.has_value());
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_EQ(on->folder(), cuda::kernelCacheFolder(tmp.path(), "sm_90", major, minor, 13000));
  ASSERT_EQ(filesUnder(tmp.path()).size(), 1u);
  fs::remove_all(tmp.path() / "kernels");
  // Off by the environment, and by the option: nothing written.
  env.vars["WARPFORGE_KERNEL_CACHE"] = "off";
  EXPECT_FALSE(compileWith(options).has_value());
  env.vars.erase("WARPFORGE_KERNEL_CACHE");
  options.kernelCache = false;
  EXPECT_FALSE(compileWith(options).has_value());
  EXPECT_TRUE(filesUnder(tmp.path()).empty());
}

// On a GPU: a fused program compiled in a fresh cache is compiled by NVRTC; compiled again (the
// process's own copy forgotten), it is loaded from the cache; both runs give the CPU's results.
// An entry that passes its checks but that the driver refuses is compiled again and replaced.
const char* kFusedProgram = R"(
func.func @main(%x: tensor<8x300xf32>, %y: tensor<8x300xf32>) -> tensor<8x300xf32> {
  %m = "stablehlo.multiply"(%x, %y) : (tensor<8x300xf32>, tensor<8x300xf32>) -> tensor<8x300xf32>
  %a = "stablehlo.add"(%m, %x) : (tensor<8x300xf32>, tensor<8x300xf32>) -> tensor<8x300xf32>
  %t = "stablehlo.tanh"(%a) : (tensor<8x300xf32>) -> tensor<8x300xf32>
  %e = "stablehlo.exponential"(%t) : (tensor<8x300xf32>) -> tensor<8x300xf32>
  func.return %e : tensor<8x300xf32>
}
)";

TEST(KernelCacheRun, ASecondCompileInAFreshCacheIsAHit) {
  WF_REQUIRE_GPU();
  TempDir tmp;
  Module m = parse(kFusedProgram);
  ASSERT_NE(mainOf(m), nullptr);
  std::vector<Literal> args = {randomLiteral(Type::tensor({8, 300}, ElementType::kF32), -2, 2),
                               randomLiteral(Type::tensor({8, 300}, ElementType::kF32), -2, 2)};
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  CompileOptions options;
  options.kernelCacheDir = tmp.path().string();

  auto compileAndRun = [&](const char* what) -> GeneratedKernelStats {
    cuda::forgetCompiledKernels();
    const GeneratedKernelStats before = generatedKernelStats();
    Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), options);
    EXPECT_TRUE(exe) << what << ": " << exe.status().toString();
    GeneratedKernelStats delta;
    if (!exe) return delta;
    const GeneratedKernelStats after = generatedKernelStats();
    delta.cacheHits = after.cacheHits - before.cacheHits;
    delta.cacheMisses = after.cacheMisses - before.cacheMisses;
    delta.compileMillis = after.compileMillis - before.compileMillis;
    EXPECT_GE((*exe)->stats().fusedKernels, 1) << what << ": the program must run a generated kernel";
    Expected<RunResult> got = (*exe)->run(args);
    EXPECT_TRUE(got) << what << ": " << got.status().toString();
    if (got) {
      EXPECT_EQ(compareLiterals(got->outputs.at(0), want->at(0), defaultTolerance(ElementType::kF32)), "") << what;
    }
    return delta;
  };

  GeneratedKernelStats cold = compileAndRun("cold");
  EXPECT_EQ(cold.cacheHits, 0);
  EXPECT_GE(cold.cacheMisses, 1);
  EXPECT_GT(cold.compileMillis, 0);
  const std::vector<fs::path> entries = filesUnder(tmp.path());
  EXPECT_EQ(static_cast<int>(entries.size()), cold.cacheMisses);

  GeneratedKernelStats warm = compileAndRun("warm");
  EXPECT_EQ(warm.cacheMisses, 0);
  EXPECT_EQ(warm.cacheHits, cold.cacheMisses);
  EXPECT_EQ(warm.compileMillis, 0);

  // Entries the driver cannot load, with valid headers: each compiled again and replaced.
  for (const fs::path& entry : entries) {
    cuda::KernelCache cache(entry.parent_path());
    ASSERT_TRUE(cache.store(entry.stem().string(), "not a cubin"));
  }
  ::testing::internal::CaptureStderr();
  GeneratedKernelStats refused = compileAndRun("refused");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(refused.cacheHits, 0);
  EXPECT_EQ(refused.cacheMisses, cold.cacheMisses);
  EXPECT_NE(err.find("did not load"), std::string::npos) << err;
  for (const fs::path& entry : entries) {
    cuda::KernelCache cache(entry.parent_path());
    cuda::KernelCache::Lookup l = cache.load(entry.stem().string());
    ASSERT_EQ(l.outcome, Outcome::kHit);
    EXPECT_NE(l.cubin, "not a cubin");
  }
  GeneratedKernelStats repaired = compileAndRun("repaired");
  EXPECT_EQ(repaired.cacheHits, cold.cacheMisses);
  EXPECT_EQ(repaired.cacheMisses, 0);
}

// Library algorithms chosen by timing (tuning.h), for products big enough to be timed: compiled
// in a fresh cache, each problem is timed once and its decision written; compiled again (the
// process's decisions forgotten), the decisions come from the cache and nothing is timed; both
// give the same bits, and the CPU's results.
TEST(KernelCacheRun, TuningDecisionsAreTimedOnceAndKept) {
  WF_REQUIRE_GPU();
  for (const char* type : {"f32", "bf16"}) {
    SCOPED_TRACE(type);
    TempDir tmp;
    const std::string t = std::string("tensor<640x520x") + type + ">";
    const std::string w = std::string("tensor<520x300x") + type + ">";
    const std::string r = std::string("tensor<640x300x") + type + ">";
    Module m = parse("func.func @main(%x: " + t + ", %w: " + w + ") -> " + r + " {\n  %y = \"stablehlo.dot_general\"(%x, %w) "
                     "{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], "
                     "rhs_contracting_dimensions = [0]>} : (" + t + ", " + w + ") -> " + r +
                     "\n  func.return %y : " + r + "\n}\n");
    ASSERT_NE(mainOf(m), nullptr);
    const ElementType et = std::string(type) == "f32" ? ElementType::kF32 : ElementType::kBF16;
    std::vector<Literal> args = {randomLiteral(Type::tensor({640, 520}, et), -1, 1),
                                 randomLiteral(Type::tensor({520, 300}, et), -1, 1)};
    Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    CompileOptions options;
    options.kernelCacheDir = tmp.path().string();
    auto compileAndRun = [&](const char* what, GeneratedKernelStats& delta) -> Literal {
      cuda::forgetTuningDecisions();
      const GeneratedKernelStats before = generatedKernelStats();
      Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), options);
      EXPECT_TRUE(exe) << what << ": " << exe.status().toString();
      if (!exe) return Literal();
      const GeneratedKernelStats after = generatedKernelStats();
      delta.tunedProblems = after.tunedProblems - before.tunedProblems;
      delta.tuningHits = after.tuningHits - before.tuningHits;
      Expected<RunResult> got = (*exe)->run(args);
      EXPECT_TRUE(got) << what << ": " << got.status().toString();
      if (!got) return Literal();
      Tolerance tol;
      tol.relL2 = et == ElementType::kF32 ? 1e-5 : 1e-2;
      EXPECT_EQ(compareLiterals(got->outputs.at(0), want->at(0), tol), "") << what;
      return got->outputs.at(0).clone();
    };
    GeneratedKernelStats cold, warm;
    Literal first = compileAndRun("cold", cold);
    Literal second = compileAndRun("warm", warm);
    // cuBLASLt may offer a single candidate (then nothing is timed or stored).
    EXPECT_EQ(cold.tuningHits, 0);
    EXPECT_EQ(warm.tunedProblems, 0);
    EXPECT_EQ(warm.tuningHits, cold.tunedProblems);
    EXPECT_TRUE(second.bitwiseEqual(first));
    if (cold.tunedProblems > 0) {
      EXPECT_FALSE(filesUnder(tmp.path()).empty());
    }
  }
}

// Candidates are timed by their device time: host work inside the timed call (cuDNN's legacy
// convolution spends more of it than many of its kernels take) must not count, or slow kernels
// would time as fast as quick ones and the choice would be noise.
TEST(KernelCacheRun, TuningTimesDeviceWorkNotTheCallsHostWork) {
  WF_REQUIRE_GPU();
  void* buffer = nullptr;
  ASSERT_EQ(cudaMalloc(&buffer, 64 << 20), cudaSuccess);
  auto memsetAfterHostWork = [&](size_t bytes) {
    return [&, bytes](cudaStream_t stream) -> Status {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (cudaMemsetAsync(buffer, 1, bytes, stream) != cudaSuccess) return internalError("cudaMemsetAsync failed");
      return Status::ok();
    };
  };
  Expected<float> small = cuda::fastestLaunchMillis(memsetAfterHostWork(256));
  Expected<float> large = cuda::fastestLaunchMillis(memsetAfterHostWork(size_t{64} << 20));
  ASSERT_TRUE(small) << small.status().toString();
  ASSERT_TRUE(large) << large.status().toString();
  EXPECT_LT(*small, 5.0f);  // the 20 ms on the host are not in it
  EXPECT_GT(*small, 0.0f);
  EXPECT_LT(*small, *large);  // 64 MiB take longer than 256 bytes on any GPU
  // A launch the library refuses is an error, and fastestCandidate passes over it.
  Expected<float> refused = cuda::fastestLaunchMillis([](cudaStream_t) { return invalidArgument("refused"); });
  EXPECT_FALSE(refused);
  const size_t chosen = cuda::fastestCandidate(3, [&](size_t i, cudaStream_t stream) -> Status {
    if (i == 0) return invalidArgument("refused");
    return memsetAfterHostWork(i == 1 ? size_t{64} << 20 : 256)(stream);
  });
  EXPECT_EQ(chosen, 2u);
  cudaFree(buffer);
}

}  // namespace
}  // namespace wf::cudatest
