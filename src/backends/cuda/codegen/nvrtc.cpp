#include "backends/cuda/codegen/nvrtc.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/cuda_check.h"

namespace wf::cuda {

// The text of src/eval/element_math.h, compiled into the binary (cmake/embed_header.cmake).
extern const char* const kElementMathHeader;

namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { (void)nvrtcDestroyProgram(&p); }
};

struct LoadedLibrary {
  cudaLibrary_t library = nullptr;
  std::vector<cudaKernel_t> kernels;
};

std::mutex& cacheMutex() {
  static std::mutex mu;
  return mu;
}
// Never unloaded: executables keep kernel handles, and the process ends soon enough.
std::map<std::string, LoadedLibrary>& cache() {
  static auto* c = new std::map<std::string, LoadedLibrary>();
  return *c;
}

using Clock = std::chrono::steady_clock;
double millisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

std::vector<std::string> nvrtcOptions(const std::string& arch) {
  // No contraction into FMA: a fused group computes exactly what the one-op kernels compute.
  return {"--gpu-architecture=" + arch, "--std=c++17", "--fmad=false", "-default-device"};
}

Expected<std::string> compileToCubin(const std::string& source, const std::string& arch) {
  nvrtcProgram raw = nullptr;
  // Generated kernels include the element math of the precompiled ones under its source name.
  const char* headers[] = {kElementMathHeader};
  const char* headerNames[] = {kElementMathInclude};
  WF_NVRTC_CHECK(nvrtcCreateProgram(&raw, source.c_str(), "warpforge_fused.cu", 1, headers, headerNames));
  std::unique_ptr<_nvrtcProgram, ProgramDeleter> program(raw);
  const std::vector<std::string> optionText = nvrtcOptions(arch);
  std::vector<const char*> options;
  for (const std::string& o : optionText) options.push_back(o.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(raw, static_cast<int>(options.size()), options.data());
  if (compiled != NVRTC_SUCCESS) {
    size_t logSize = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(raw, &logSize) == NVRTC_SUCCESS && logSize > 1) {
      log.resize(logSize);
      if (nvrtcGetProgramLog(raw, log.data()) != NVRTC_SUCCESS) log.clear();
    }
    if (log.size() > 4000) log = log.substr(0, 4000) + "...";
    return internalError(std::string("NVRTC could not compile the fused kernels (") + nvrtcGetErrorString(compiled) +
                         ") for " + arch + ":\n" + log);
  }
  size_t cubinSize = 0;
  WF_NVRTC_CHECK(nvrtcGetCUBINSize(raw, &cubinSize));
  std::string cubin(cubinSize, '\0');
  WF_NVRTC_CHECK(nvrtcGetCUBIN(raw, cubin.data()));
  return cubin;
}

Expected<std::string> kernelCacheKeyOf(const std::string& source, const std::string& arch, int driverVersion) {
  KernelCacheKeyParts parts;
  parts.source = source;
  parts.headers = {{kElementMathInclude, kElementMathHeader}};
  parts.arch = arch;
  WF_NVRTC_CHECK(nvrtcVersion(&parts.nvrtcMajor, &parts.nvrtcMinor));
  parts.options = nvrtcOptions(arch);
  parts.driverVersion = driverVersion;
  return kernelCacheKey(parts);
}

Expected<std::optional<KernelCache>> kernelCacheFor(const CompileOptions& options, const std::string& arch,
                                                    int driverVersion, const EnvLookup& env) {
  WF_ASSIGN_OR_RETURN(std::optional<std::filesystem::path> root,
                      kernelCacheRoot(options.kernelCache, options.kernelCacheDir, env));
  if (!root) return std::optional<KernelCache>();
  int major = 0, minor = 0;
  WF_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return std::optional<KernelCache>(KernelCache(kernelCacheFolder(*root, arch, major, minor, driverVersion)));
}

Expected<CachedCubin> compileToCubinCached(const std::string& source, const std::string& arch, const KernelCache* cache,
                                           int driverVersion, bool recompile) {
  CachedCubin result;
  if (cache) {
    WF_ASSIGN_OR_RETURN(result.key, kernelCacheKeyOf(source, arch, driverVersion));
    if (!recompile) {
      KernelCache::Lookup found = cache->load(result.key);
      if (found.outcome == KernelCache::Lookup::Outcome::kHit) {
        result.cubin = std::move(found.cubin);
        result.fromCache = true;
        return result;
      }
    }
  }
  const auto start = Clock::now();
  WF_ASSIGN_OR_RETURN(result.cubin, compileToCubin(source, arch));
  result.compileMillis = millisSince(start);
  // A cache that cannot be written has said so once; the program still runs, compiled.
  if (cache) (void)cache->store(result.key, result.cubin);
  return result;
}

Expected<std::vector<cudaKernel_t>> compileRuntimeKernels(const Device& device, const std::string& prelude,
                                                          const std::vector<RuntimeKernelSource>& kernels,
                                                          const CompileOptions& options) {
  if (kernels.empty()) return std::vector<cudaKernel_t>{};
  const std::string arch = device.info().arch();
  std::string source = prelude;
  for (const RuntimeKernelSource& k : kernels) source += "\n" + k.code;
  const std::string key = arch + "\n" + source;

  std::lock_guard<std::mutex> lock(cacheMutex());
  if (auto it = cache().find(key); it != cache().end()) return it->second.kernels;

  int driverVersion = 0;
  WF_CUDA_CHECK(cudaDriverGetVersion(&driverVersion));
  WF_ASSIGN_OR_RETURN(std::optional<KernelCache> disk, kernelCacheFor(options, arch, driverVersion));
  const KernelCache* diskCache = disk ? &*disk : nullptr;

  WF_ASSIGN_OR_RETURN(CachedCubin compiled, compileToCubinCached(source, arch, diskCache, driverVersion));
  // Loading is lazy by default (CUDA_MODULE_LOADING=LAZY): a bad image may load and fail only when
  // its kernels are looked up, so both belong to loading. On failure the library is unloaded.
  LoadedLibrary loaded;
  GeneratedKernelStats counts;
  auto load = [&](const std::string& cubin) -> cudaError_t {
    const auto start = Clock::now();
    loaded.kernels.clear();
    cudaError_t rc = cudaLibraryLoadData(&loaded.library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    for (size_t i = 0; rc == cudaSuccess && i < kernels.size(); ++i) {
      cudaKernel_t kernel = nullptr;
      rc = cudaLibraryGetKernel(&kernel, loaded.library, kernels[i].name.c_str());
      loaded.kernels.push_back(kernel);
    }
    if (rc != cudaSuccess && loaded.library) {
      (void)cudaLibraryUnload(loaded.library);
      loaded.library = nullptr;
    }
    counts.loadMillis += millisSince(start);
    return rc;
  };
  cudaError_t rc = load(compiled.cubin);
  if (rc != cudaSuccess && compiled.fromCache) {
    // An entry that passed its checks but that the driver refuses: compile it again and
    // overwrite it.
    std::fprintf(stderr, "warpforge: kernel cache: %s did not load (%s); compiling it again\n",
                 diskCache->entryPath(compiled.key).string().c_str(), cudaGetErrorString(rc));
    (void)cudaGetLastError();
    WF_ASSIGN_OR_RETURN(compiled, compileToCubinCached(source, arch, diskCache, driverVersion, /*recompile=*/true));
    rc = load(compiled.cubin);
  }
  if (rc != cudaSuccess) {
    const std::string what = "loading the NVRTC output for " + arch + " (cudaLibraryLoadData, cudaLibraryGetKernel)";
    return checkFailed(rc, what.c_str(), __FILE__, __LINE__);
  }
  (compiled.fromCache ? counts.cacheHits : counts.cacheMisses) = 1;
  counts.compileMillis = compiled.compileMillis;
  recordGeneratedKernels(counts);
  auto [it, inserted] = cache().emplace(key, std::move(loaded));
  return it->second.kernels;
}

void forgetCompiledKernels() {
  std::lock_guard<std::mutex> lock(cacheMutex());
  // The libraries are not unloaded (see cache()): their kernels may be in use.
  cache().clear();
}

}  // namespace wf::cuda
