// stablehlo.triangular_solve on the GPU: op(a) x = b (left_side) or x op(a) = b, with a lower or
// upper triangular (the other triangle is not read), unit_diagonal and transpose_a (TRANSPOSE
// and, for real types, ADJOINT) as the spec has them, for f32 and f64, any batch dims. One thread
// solves one column (left side) or one row (right side) of one batch matrix by substitution, in
// the element type, in the order BLAS's unblocked trsm sums (the CPU backend's reference).
// Other element types (f16, bf16, complex) are unimplemented here: the host runs them with
// CompileOptions::allowCpuFallback.
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

struct TrsmPlan {
  int64_t batches = 0;
  int64_t m = 0, n = 0;  // b and x are [batch..., m, n]; a is [batch..., k, k]
  int64_t k = 0;         // m (left side) or n (right side)
  bool left = true;
  bool transposed = false;  // op(a) = a^T
  bool lowerEff = true;     // op(a) is lower triangular
  bool unit = false;
};

// op(a)[i][p] of batch matrix `a` (k x k, row-major).
template <typename T>
__device__ T opA(const T* a, const TrsmPlan& p, int64_t i, int64_t q) {
  return p.transposed ? a[q * p.k + i] : a[i * p.k + q];
}

template <typename T>
__global__ void triangularSolve(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ x, TrsmPlan p) {
  const int64_t vectors = p.left ? p.n : p.m;  // columns (left) or rows (right) per batch
  WF_GRID_STRIDE_LOOP(t, p.batches * vectors) {
    const int64_t batch = t / vectors, v = t % vectors;
    const T* A = a + batch * p.k * p.k;
    const T* B = b + batch * p.m * p.n;
    T* X = x + batch * p.m * p.n;
    // Element e of this vector: column v of the left-side system, row v of the right-side one.
    auto at = [&](int64_t e) { return p.left ? e * p.n + v : v * p.n + e; };
    // Left: op(a) x = b runs forward when op(a) is lower. Right: x op(a) = b, i.e.
    // op(a)^T x^T = b^T, runs forward when op(a) is upper.
    const bool forward = p.left == p.lowerEff;
    for (int64_t s = 0; s < p.k; ++s) {
      const int64_t i = forward ? s : p.k - 1 - s;
      T sum = B[at(i)];
      if (forward) {
        for (int64_t q = 0; q < i; ++q) sum -= (p.left ? opA(A, p, i, q) : opA(A, p, q, i)) * X[at(q)];
      } else {
        for (int64_t q = p.k - 1; q > i; --q) sum -= (p.left ? opA(A, p, i, q) : opA(A, p, q, i)) * X[at(q)];
      }
      X[at(i)] = p.unit ? sum : sum / opA(A, p, i, i);
    }
  }
}

Expected<std::unique_ptr<OpKernel>> lowerTriangularSolve(const Operation& op, LowerContext&) {
  if (op.numOperands() != 2 || op.numResults() != 1) return invalidArgument(op.describe() + ": expects a and b");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> as, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> bs, staticShape(op, op.operand(1)->type()));
  const ElementType et = op.operand(1)->type().elementType();
  if (et != ElementType::kF32 && et != ElementType::kF64)
    return unsupportedOnCuda(op, "no triangular_solve kernel for " + std::string(elementTypeName(et)));
  if (op.operand(0)->type().elementType() != et || op.result(0)->type().elementType() != et)
    return invalidArgument(op.describe() + ": a, b and the result must share an element type");
  const size_t r = bs.size();
  TrsmPlan p;
  p.left = cpu::boolAttr(op, "left_side", true);
  p.unit = cpu::boolAttr(op, "unit_diagonal", false);
  const bool lower = cpu::boolAttr(op, "lower", true);
  if (const Attribute* t = op.attr("transpose_a")) {
    const std::string& v = t->stringValue();
    if (v == "TRANSPOSE" || v == "ADJOINT") p.transposed = true;  // real types: the adjoint is the transpose
    else if (v != "NO_TRANSPOSE") return invalidArgument(op.describe() + ": unknown transpose_a " + v);
  }
  p.lowerEff = lower != p.transposed;
  if (r < 2 || as.size() != r) return invalidArgument(op.describe() + ": a and b must have the same rank >= 2");
  p.m = bs[r - 2];
  p.n = bs[r - 1];
  p.k = p.left ? p.m : p.n;
  if (as[r - 1] != p.k || as[r - 2] != p.k || !std::equal(as.begin(), as.end() - 2, bs.begin()))
    return invalidArgument(op.describe() + ": shapes of a and b do not match");
  p.batches = p.m * p.n == 0 ? 0 : numElementsOf(bs) / (p.m * p.n);
  const int64_t threads = p.batches * (p.left ? p.n : p.m);
  return makeKernel([p, et, threads](const LaunchContext& ctx, std::span<void* const> in,
                                     std::span<void* const> out) -> Status {
    if (threads == 0) return Status::ok();
    if (et == ElementType::kF32) {
      triangularSolve<float><<<gridFor(threads), kThreads, 0, ctx.stream>>>(
          static_cast<const float*>(in[0]), static_cast<const float*>(in[1]), static_cast<float*>(out[0]), p);
    } else {
      triangularSolve<double><<<gridFor(threads), kThreads, 0, ctx.stream>>>(
          static_cast<const double*>(in[0]), static_cast<const double*>(in[1]), static_cast<double*>(out[0]), p);
    }
    WF_CUDA_CHECK_LAUNCH("triangularSolve");
    return Status::ok();
  });
}

}  // namespace

void registerLinalgLowerings(CudaKernelRegistry& r) { r.add(OpCode::TriangularSolve, lowerTriangularSolve); }

}  // namespace wf::cuda
