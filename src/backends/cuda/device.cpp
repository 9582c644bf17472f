#include "backends/cuda/device.h"

#include <map>

#include "backends/cuda/cuda_check.h"

namespace wf::cuda {

void StreamDeleter::operator()(cudaStream_t s) const { WF_CUDA_WARN(cudaStreamDestroy(s)); }
void EventDeleter::operator()(cudaEvent_t e) const { WF_CUDA_WARN(cudaEventDestroy(e)); }
void GraphDeleter::operator()(cudaGraph_t g) const { WF_CUDA_WARN(cudaGraphDestroy(g)); }
void GraphExecDeleter::operator()(cudaGraphExec_t g) const { WF_CUDA_WARN(cudaGraphExecDestroy(g)); }
void CublasLtDeleter::operator()(cublasLtHandle_t h) const { WF_CUDA_WARN(cublasLtDestroy(h)); }
void MatmulDescDeleter::operator()(cublasLtMatmulDesc_t d) const { WF_CUDA_WARN(cublasLtMatmulDescDestroy(d)); }
void MatrixLayoutDeleter::operator()(cublasLtMatrixLayout_t l) const { WF_CUDA_WARN(cublasLtMatrixLayoutDestroy(l)); }
void MatmulPreferenceDeleter::operator()(cublasLtMatmulPreference_t p) const {
  WF_CUDA_WARN(cublasLtMatmulPreferenceDestroy(p));
}
#ifdef WF_HAVE_CUDNN
void CudnnDeleter::operator()(cudnnHandle_t h) const { WF_CUDA_WARN(cudnnDestroy(h)); }
#endif

Expected<Stream> createStream() {
  cudaStream_t s = nullptr;
  WF_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

Expected<Event> createEvent(bool timing) {
  cudaEvent_t e = nullptr;
  WF_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(e);
}

namespace {

cudaError_t countDevices(int* n) {
  static const std::pair<cudaError_t, int> result = [] {
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    return std::make_pair(rc, rc == cudaSuccess ? count : 0);
  }();
  *n = result.second;
  return result.first;
}

}  // namespace

int deviceCount() {
  int n = 0;
  (void)countDevices(&n);
  return n;
}

std::string noDeviceReason() {
  int n = 0;
  cudaError_t rc = countDevices(&n);
  if (rc != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ")";
  if (n == 0) return "no CUDA device";
  return "";
}

Expected<std::shared_ptr<Device>> Device::get(int ordinal) {
  static std::mutex mu;
  static std::map<int, std::weak_ptr<Device>> devices;
  std::lock_guard<std::mutex> lock(mu);
  const int n = deviceCount();
  if (ordinal < 0 || ordinal >= n) {
    std::string why = n == 0 ? noDeviceReason() : std::to_string(n) + " CUDA device(s) present";
    return invalidArgument("cuda:" + std::to_string(ordinal) + " is not available: " + why);
  }
  if (auto existing = devices[ordinal].lock()) return existing;

  std::shared_ptr<Device> d(new Device());
  d->info_.ordinal = ordinal;
  WF_CUDA_CHECK(cudaSetDevice(ordinal));
  cudaDeviceProp prop{};
  WF_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  d->info_.name = prop.name;
  d->info_.major = prop.major;
  d->info_.minor = prop.minor;
  d->info_.multiprocessors = prop.multiProcessorCount;
  d->info_.totalMemory = prop.totalGlobalMem;
  d->info_.sharedMemoryPerBlockOptin = prop.sharedMemPerBlockOptin;
  d->allocator_ = std::make_unique<CachingAllocator>(ordinal);
  cublasLtHandle_t lt = nullptr;
  WF_CUBLAS_CHECK(cublasLtCreate(&lt));
  d->cublasLt_ = CublasLtHandle(lt);
  devices[ordinal] = d;
  return d;
}

Device::~Device() {
  WF_CUDA_WARN(cudaSetDevice(info_.ordinal));
#ifdef WF_HAVE_CUDNN
  cudnn_.reset();
#endif
  cublasLt_.reset();
  allocator_.reset();
}

std::string Device::describe() const { return "cuda:" + std::to_string(info_.ordinal) + " (" + info_.name + ")"; }

Status Device::activate() const {
  WF_CUDA_CHECK(cudaSetDevice(info_.ordinal));
  return Status::ok();
}

#ifdef WF_HAVE_CUDNN
Expected<cudnnHandle_t> Device::cudnn() {
  std::lock_guard<std::mutex> lock(cudnnMu_);
  if (!cudnn_) {
    WF_RETURN_IF_ERROR(activate());
    cudnnHandle_t h = nullptr;
    WF_CUDNN_CHECK(cudnnCreate(&h));
    cudnn_ = CudnnHandle(h);
  }
  return cudnn_.get();
}
#endif

}  // namespace wf::cuda
