// Shared helpers of the dot / convolution / linalg / FFT kernels, and their registration.
#include <cblas.h>

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#if WF_HAVE_DNNL
#include <dnnl.h>
#include <omp.h>
#endif

#include "eval/dot_conv_util.h"
#include "eval/shape_util.h"
#include "ir/float_types.h"
#include "support/thread_pool.h"

namespace wf::dotconv {

Domain chooseDomain(ElementType a, ElementType b, ElementType result) {
  bool anyComplex = isComplex(a) || isComplex(b) || isComplex(result);
  bool anyF64 = a == ElementType::kF64 || b == ElementType::kF64 || result == ElementType::kF64 ||
                a == ElementType::kComplexF64 || b == ElementType::kComplexF64 ||
                result == ElementType::kComplexF64;
  if (anyComplex) return anyF64 ? Domain::kComplexDouble : Domain::kComplexFloat;
  if (anyF64) return Domain::kDouble;
  if (isFloat(a) || isFloat(b) || isFloat(result)) return Domain::kFloat;
  return Domain::kInt;
}

template <typename T>
bool storesNatively(ElementType t) {
  if constexpr (std::is_same_v<T, float>) return t == ElementType::kF32;
  if constexpr (std::is_same_v<T, double>) return t == ElementType::kF64;
  if constexpr (std::is_same_v<T, c64>) return t == ElementType::kComplexF32;
  if constexpr (std::is_same_v<T, c128>) return t == ElementType::kComplexF64;
  if constexpr (std::is_same_v<T, int64_t>) return t == ElementType::kSI64 || t == ElementType::kUI64;
  return false;
}

namespace {

// Reads element i of `l` as T; the slow generic path for the rarer element types.
template <typename T>
T readSlow(const Literal& l, int64_t i) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return l.getInt(i);
  } else if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
    std::complex<double> v = l.getComplex(i);
    return T(static_cast<typename T::value_type>(v.real()), static_cast<typename T::value_type>(v.imag()));
  } else {
    return static_cast<T>(l.getDouble(i));
  }
}

template <typename T, typename S>
void castLoop(const S* src, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
}

}  // namespace

template <typename T>
std::vector<T> convertTo(const Literal& l) {
  int64_t n = l.numElements();
  std::vector<T> out(static_cast<size_t>(n));
  ElementType t = l.elementType();
  if (storesNatively<T>(t)) {
    if (n > 0) std::memcpy(out.data(), l.data(), static_cast<size_t>(n) * sizeof(T));
    return out;
  }
  // Fast conversions for the common element types; everything else goes through Literal.
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    switch (t) {
      case ElementType::kF32: castLoop(l.dataAs<float>(), out.data(), n); return out;
      case ElementType::kF64: castLoop(l.dataAs<double>(), out.data(), n); return out;
      case ElementType::kBF16:
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(bf16ToFloat(l.dataAs<uint16_t>()[i]));
        return out;
      case ElementType::kF16:
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f16ToFloat(l.dataAs<uint16_t>()[i]));
        return out;
      default: break;
    }
  }
  if constexpr (std::is_same_v<T, int64_t>) {
    switch (t) {
      case ElementType::kSI8: castLoop(l.dataAs<int8_t>(), out.data(), n); return out;
      case ElementType::kUI8: case ElementType::kI1: castLoop(l.dataAs<uint8_t>(), out.data(), n); return out;
      case ElementType::kSI16: castLoop(l.dataAs<int16_t>(), out.data(), n); return out;
      case ElementType::kSI32: castLoop(l.dataAs<int32_t>(), out.data(), n); return out;
      default: break;
    }
  }
  if constexpr (std::is_same_v<T, c128>) {
    if (t == ElementType::kComplexF32) {
      castLoop(l.dataAs<c64>(), out.data(), n);
      return out;
    }
  }
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = readSlow<T>(l, i);
  return out;
}

template <typename T>
std::vector<T> permuteCopy(const T* src, const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  std::vector<T> out(static_cast<size_t>(product(shape)));
  if (out.empty()) return out;
  const std::vector<int64_t> inStrides = rowMajorStrides(shape);
  std::vector<int64_t> outShape(perm.size()), stride(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    outShape[i] = shape[static_cast<size_t>(perm[i])];
    stride[i] = inStrides[static_cast<size_t>(perm[i])];
  }
  // copyBox (shape_util.h): memcpy runs where the inner dim stays, tiled transposes where it
  // moves, over the pool's threads for large copies (an element-by-element gather moved an
  // attention head permutation at 2-5 GB/s).
  cpu::copyBox(reinterpret_cast<std::byte*>(out.data()), rowMajorStrides(outShape),
               reinterpret_cast<const std::byte*>(src), stride, outShape, static_cast<int>(sizeof(T)));
  return out;
}

template <typename T>
void storeFrom(const T* src, Literal& result) {
  int64_t n = result.numElements();
  ElementType t = result.elementType();
  if (storesNatively<T>(t)) {
    if (n > 0) std::memcpy(result.data(), src, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  if constexpr (std::is_same_v<T, int64_t>) {
    if (t == ElementType::kI1) {
      for (int64_t i = 0; i < n; ++i) result.dataAs<uint8_t>()[i] = src[i] != 0;
      return;
    }
    switch (t) {
      case ElementType::kSI32: for (int64_t i = 0; i < n; ++i) result.dataAs<int32_t>()[i] = static_cast<int32_t>(src[i]); return;
      default: break;
    }
    if (isInteger(t)) {
      for (int64_t i = 0; i < n; ++i) result.setInt(i, src[i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i) result.setDouble(i, static_cast<double>(src[i]));
  } else if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
    for (int64_t i = 0; i < n; ++i) result.setComplex(i, std::complex<double>(src[i].real(), src[i].imag()));
  } else {
    switch (t) {
      case ElementType::kF32: castLoop(src, result.dataAs<float>(), n); return;
      case ElementType::kF64: castLoop(src, result.dataAs<double>(), n); return;
      case ElementType::kBF16:
        for (int64_t i = 0; i < n; ++i) result.dataAs<uint16_t>()[i] = floatToBf16(static_cast<float>(src[i]));
        return;
      case ElementType::kF16:
        for (int64_t i = 0; i < n; ++i) result.dataAs<uint16_t>()[i] = floatToF16(static_cast<float>(src[i]));
        return;
      default: break;
    }
    if (isComplex(t)) {
      for (int64_t i = 0; i < n; ++i) result.setComplex(i, static_cast<double>(src[i]));
      return;
    }
    for (int64_t i = 0; i < n; ++i) result.setDouble(i, static_cast<double>(src[i]));
  }
}

void useLibraryThreads() {
#if WF_HAVE_DNNL
  // oneDNN runs on OpenMP, whose thread count is per calling thread: the pool's size at top
  // level, one inside a parallelFor chunk (the pool already occupies every core there).
  int want = insideParallelFor() ? 1 : numThreads();
  thread_local int current = 0;
  if (current != want) {
    omp_set_num_threads(want);
    current = want;
  }
#endif
}

namespace {
std::atomic<bool>& oneDnnFlag() {
  static std::atomic<bool> flag = [] {
    const char* env = std::getenv("WARPFORGE_ONEDNN");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return flag;
}
}  // namespace

bool haveOneDnn() {
#if WF_HAVE_DNNL
  return oneDnnFlag().load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void setOneDnnEnabled(bool enabled) { oneDnnFlag().store(enabled); }

template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = T(0);
    return;
  }
  CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans, tb = transB ? CblasTrans : CblasNoTrans;
  auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  auto LDA = static_cast<blasint>(lda), LDB = static_cast<blasint>(ldb), LDC = static_cast<blasint>(ldc);
  if constexpr (std::is_same_v<T, float>) {
#if WF_HAVE_DNNL
    // oneDNN's JIT sgemm uses AVX-512 where the CPU has it (OpenBLAS may stop at AVX2). Small
    // products stay on OpenBLAS: no speed to gain there.
    if (haveOneDnn() && m * n * k >= (int64_t{1} << 18)) {
      useLibraryThreads();
      if (dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) ==
          dnnl_success)
        return;
    }
#endif
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, a, LDA, b, LDB, 0.0f, c, LDC);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, a, LDA, b, LDB, 0.0, c, LDC);
  } else if constexpr (std::is_same_v<T, c64>) {
    const c64 one(1), zero(0);
    cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &one, a, LDA, b, LDB, &zero, c, LDC);
  } else if constexpr (std::is_same_v<T, c128>) {
    const c128 one(1), zero(0);
    cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &one, a, LDA, b, LDB, &zero, c, LDC);
  } else {
    // Integers: unsigned arithmetic gives two's-complement wrap-around without overflow UB.
    for (int64_t i = 0; i < m; ++i) {
      uint64_t* row = reinterpret_cast<uint64_t*>(c + i * ldc);
      for (int64_t j = 0; j < n; ++j) row[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        auto av = static_cast<uint64_t>(transA ? a[p * lda + i] : a[i * lda + p]);
        if (av == 0) continue;
        if (!transB) {
          const T* brow = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<uint64_t>(brow[j]);
        } else {
          for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<uint64_t>(b[j * ldb + p]);
        }
      }
    }
  }
}

bool isIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<int64_t> inversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

#define WF_DOTCONV_INSTANTIATE(T)                                                                          \
  template bool storesNatively<T>(ElementType);                                                            \
  template std::vector<T> convertTo<T>(const Literal&);                                                    \
  template std::vector<T> permuteCopy<T>(const T*, const std::vector<int64_t>&, const std::vector<int64_t>&); \
  template void storeFrom<T>(const T*, Literal&);                                                          \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t);
WF_DOTCONV_INSTANTIATE(float)
WF_DOTCONV_INSTANTIATE(double)
WF_DOTCONV_INSTANTIATE(c64)
WF_DOTCONV_INSTANTIATE(c128)
WF_DOTCONV_INSTANTIATE(int64_t)
#undef WF_DOTCONV_INSTANTIATE

}  // namespace wf::dotconv

namespace wf {

namespace {

// Each kernel allocates its result; with glibc's defaults a tensor above 128 KiB is a fresh
// mmap that the kernel then page-faults in and munmaps again, which costs more than the
// arithmetic of a memory-bound op (an add over 1.5 MB: 1.4 ms instead of 0.16). Serving such
// sizes from the heap, and keeping freed heap memory for reuse, removes that.
void keepTensorMemoryOnHeap() {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum; larger tensors still get mmap
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace

void registerDotConvKernels(KernelRegistry& registry) {
  keepTensorMemoryOnHeap();
  // OpenBLAS sizes its own thread pool; use the project-wide thread count (the pool's size,
  // WARPFORGE_NUM_THREADS or the core count), so OpenBLAS and the pool never oversubscribe.
  openblas_set_num_threads(numThreads());
  dotconv::registerDotKernels(registry);
  dotconv::registerConvolutionKernels(registry);
  dotconv::registerLinalgKernels(registry);
  dotconv::registerFftKernels(registry);
}

}  // namespace wf
