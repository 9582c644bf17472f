// Shared helpers of the dot / convolution / linear-algebra / FFT kernels (dot.cpp,
// convolution.cpp, linalg.cpp, fft.cpp): converting Literals to and from a compute type,
// permuted copies, and GEMM on OpenBLAS with a wrapping-integer fallback.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "eval/interpreter.h"
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

// Before calling oneDNN from a kernel: gives its OpenMP runtime this thread's share of the
// cores (all of the pool's threads at top level, one inside a parallelFor chunk).
void useLibraryThreads();
// Whether the backend was built with oneDNN (WF_HAVE_DNNL) and it is enabled: on by default,
// off with WARPFORGE_ONEDNN=0 or setOneDnnEnabled(false) (tests compare both paths).
bool haveOneDnn();
void setOneDnnEnabled(bool enabled);

// A convolution in canonical dimension order (input [N, C, spatial...], kernel [O, I,
// spatial...], output [N, O, spatial'...]) with each operand's element strides in that order,
// so NHWC / HWIO operands are described in place. feature groups only.
struct OneDnnConv {
  int64_t n = 0, c = 0, o = 0, groups = 1;
  std::vector<int64_t> in, k, out;                     // spatial sizes
  std::vector<int64_t> strides, padLo, padHi, rhsDil;  // per spatial dim
  std::vector<int64_t> srcStrides, weiStrides, dstStrides;  // rank + 2 each, in canonical order
};

// Runs the convolution on oneDNN (dot_conv_onednn.cpp). Returns false, having written nothing,
// when oneDNN is absent or cannot express it; the caller then runs its own path.
bool convOneDnnF32(const OneDnnConv& conv, const float* in, const float* w, float* out);

// C = A B over batch dims: A [batch..., m, k] and B [batch..., k, n] read through their element
// strides (each batch dim's, then the rows' and the columns': heads read in place, transposes
// folded), C [batch..., m, n] row-major.
struct BatchedGemm {
  std::vector<int64_t> batch;  // the batch dims' sizes
  int64_t m = 1, n = 1, k = 1;
  std::vector<int64_t> aStrides, bStrides;  // batch.size() + 2 each
  // The caller would otherwise copy an operand into batch-major order (heads that lie
  // interleaved, [B, S, H, D] read as [B, H, S, D]): any of oneDNN's kernels is worth taking then.
  bool inPlaceOnly = false;
};
// Runs it as one oneDNN matmul primitive (dot_conv_onednn.cpp), which threads over batch and
// tiles together. Returns false, having written nothing, where oneDNN is absent, or has no
// blocked-GEMM (brgemm) kernel for it on this CPU (AVX2, or operands that are not batch-major)
// and `inPlaceOnly` is off: the caller runs its own GEMMs then.
bool batchedGemmOneDnnF32(const BatchedGemm& gemm, const float* a, const float* b, float* c);

bool isIdentity(const std::vector<int64_t>& perm);
std::vector<int64_t> inversePermutation(const std::vector<int64_t>& perm);
int64_t product(const std::vector<int64_t>& dims);

// Registration of each file's kernels (called from registerDotConvKernels).
void registerDotKernels(KernelRegistry& registry);
void registerConvolutionKernels(KernelRegistry& registry);
void registerLinalgKernels(KernelRegistry& registry);
void registerFftKernels(KernelRegistry& registry);

}  // namespace wf::dotconv

#if WF_HAVE_DNNL
namespace dnnl {
struct engine;
}
namespace wf::dotconv {
// The process's one oneDNN CPU engine, shared by every primitive (the evaluator's convolutions
// and the CPU plan's fused convolutions and matrix products).
dnnl::engine& oneDnnCpuEngine();
}  // namespace wf::dotconv
#endif

namespace wf::dotconv {

// Dimension numbers of a dot_general.
struct DotDims {
  std::vector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
};

// Transposes folded into dot_general: a `stablehlo.transpose` whose result only feeds
// dot_generals (top-level ops of its own block, none of them needing the free dims reordered,
// no hook observing results) is not materialized. Its kernel returns the operand's storage
// with the transposed shape, and each consuming dot_general reads that storage in the
// operand's own layout, moving the permutation into its dimension numbers, which BLAS then
// takes as a transpose flag. Exporters write `transpose(weight) -> dot_general` for every
// linear layer; this saves copying the weights on every run.
bool transposeFoldsIntoDots(const Operation& transposeOp, const EvalContext& ctx);

// dot_general per the spec: result dims are [batch..., lhs free..., rhs free...], element type
// `resultType`. `op` names the failing op in errors.
Expected<Literal> dotGeneral(const Operation& op, const Literal& lhs, const Literal& rhs, const DotDims& dims,
                             ElementType resultType);

}  // namespace wf::dotconv
