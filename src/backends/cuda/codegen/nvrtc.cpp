#include "backends/cuda/codegen/nvrtc.h"

#include <nvrtc.h>

#include <map>
#include <memory>
#include <mutex>

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

}  // namespace

Expected<std::string> compileToCubin(const std::string& source, const std::string& arch) {
  nvrtcProgram raw = nullptr;
  // Generated kernels include the element math of the precompiled ones under its source name.
  const char* headers[] = {kElementMathHeader};
  const char* headerNames[] = {kElementMathInclude};
  WF_NVRTC_CHECK(nvrtcCreateProgram(&raw, source.c_str(), "warpforge_fused.cu", 1, headers, headerNames));
  std::unique_ptr<_nvrtcProgram, ProgramDeleter> program(raw);
  const std::string archFlag = "--gpu-architecture=" + arch;
  // No contraction into FMA: a fused group computes exactly what the one-op kernels compute.
  const char* options[] = {archFlag.c_str(), "--std=c++17", "--fmad=false", "-default-device"};
  nvrtcResult compiled = nvrtcCompileProgram(raw, 4, options);
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

Expected<std::vector<cudaKernel_t>> compileRuntimeKernels(const Device& device, const std::string& prelude,
                                                          const std::vector<RuntimeKernelSource>& kernels) {
  if (kernels.empty()) return std::vector<cudaKernel_t>{};
  const std::string arch = "sm_" + std::to_string(device.info().major) + std::to_string(device.info().minor);
  std::string source = prelude;
  for (const RuntimeKernelSource& k : kernels) source += "\n" + k.code;
  const std::string key = arch + "\n" + source;

  std::lock_guard<std::mutex> lock(cacheMutex());
  if (auto it = cache().find(key); it != cache().end()) return it->second.kernels;

  WF_ASSIGN_OR_RETURN(std::string cubin, compileToCubin(source, arch));
  LoadedLibrary loaded;
  WF_CUDA_CHECK(cudaLibraryLoadData(&loaded.library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  for (const RuntimeKernelSource& k : kernels) {
    cudaKernel_t kernel = nullptr;
    WF_CUDA_CHECK(cudaLibraryGetKernel(&kernel, loaded.library, k.name.c_str()));
    loaded.kernels.push_back(kernel);
  }
  auto [it, inserted] = cache().emplace(key, std::move(loaded));
  return it->second.kernels;
}

}  // namespace wf::cuda
