// Shared helpers of the dot / convolution / linear-algebra / FFT kernels (dot.cpp,
// convolution.cpp, linalg.cpp, fft.cpp): converting Literals to and from a compute type,
// permuted copies, and GEMM on OpenBLAS with a wrapping-integer fallback.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "backends/cpu/interpreter.h"
#include "ir/literal.h"

namespace wf::dotconv {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// The arithmetic a contraction runs in. Integers and booleans accumulate in int64 with
// two's-complement wrap-around, which equals wrapping in any narrower result type.
enum class Domain { kInt, kFloat, kDouble, kComplexFloat, kComplexDouble };

// Picks the domain for operands of types `a`, `b` producing `result`: complex wins, then f64,
// then any float (f8/f16/bf16 accumulate in f32), else integers.
Domain chooseDomain(ElementType a, ElementType b, ElementType result);

// Whether a Literal of element type `t` stores exactly T (so its data can be used in place).
template <typename T>
bool storesNatively(ElementType t);

// The whole literal converted to T, in its own (row-major) order.
template <typename T>
std::vector<T> convertTo(const Literal& l);

// Copies a row-major tensor of `shape` so that output dim i is input dim perm[i].
template <typename T>
std::vector<T> permuteCopy(const T* src, const std::vector<int64_t>& shape, const std::vector<int64_t>& perm);

// Writes `n = result.numElements()` values of T into `result`, rounding / wrapping to its
// element type (i1 results are `value != 0`).
template <typename T>
void storeFrom(const T* src, Literal& result);

// C[M,N] = op(A) * op(B) in row-major storage, beta = 0. For T = int64 the loop wraps.
template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc);

bool isIdentity(const std::vector<int64_t>& perm);
std::vector<int64_t> inversePermutation(const std::vector<int64_t>& perm);
int64_t product(const std::vector<int64_t>& dims);

// Registration of each file's kernels (called from registerDotConvKernels).
void registerDotKernels(KernelRegistry& registry);
void registerConvolutionKernels(KernelRegistry& registry);
void registerLinalgKernels(KernelRegistry& registry);
void registerFftKernels(KernelRegistry& registry);

}  // namespace wf::dotconv

namespace wf::dotconv {

// Dimension numbers of a dot_general.
struct DotDims {
  std::vector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
};

// dot_general per the spec: result dims are [batch..., lhs free..., rhs free...], element type
// `resultType`. `op` names the failing op in errors.
Expected<Literal> dotGeneral(const Operation& op, const Literal& lhs, const Literal& rhs, const DotDims& dims,
                             ElementType resultType);

}  // namespace wf::dotconv
