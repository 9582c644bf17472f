// A linear layer and the erf GELU that alone reads it, as one CUTLASS kernel for Hopper (sm_90a):
//     D = narrow_T(gelu(widen(narrow_T(A B)) + widen(bias)))
//     gelu(x) = (x * 0.5) * (erf(x * 0.70710677) + 1)           (f32, in this order)
// A [M, K] and B [K, N] row-major, bias [N], D [M, N] row-major, all of T (bf16 or f16). The
// epilogue rounds the f32 sum to T first, as the program does (the product's result is T), adds
// the bias in f32, and computes the GELU by gelu_erf.h, as close to the exact GELU as the formula
// in f32 ops: the two steps' bits wherever the product's sum rounds to the same T and the two
// GELUs round alike (kernels/dot_gelu.h).
//
// Plain C++: the CUTLASS templates stay in dot_gelu_sm90.cu, the one file built for sm_90a.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace wf::cuda::cutlass_sm90 {

enum class GeluType { kBF16, kF16 };

struct DotBiasGeluProblem {
  GeluType type = GeluType::kBF16;
  int m = 0, n = 0, k = 0;
};

// Empty where the kernel takes the problem, else why not (CUTLASS's can_implement: K and N must
// be multiples of 8, for 16-byte rows).
const char* dotBiasGeluDeclines(const DotBiasGeluProblem& p);
// Device scratch the kernel needs (its tile scheduler's).
size_t dotBiasGeluWorkspaceBytes(const DotBiasGeluProblem& p, int multiprocessors);
// Enqueues the kernel on `stream`; nullptr, or what failed. Operands 16-byte aligned.
const char* runDotBiasGelu(const DotBiasGeluProblem& p, const void* a, const void* b, const void* bias, void* d,
                           void* workspace, int multiprocessors, cudaStream_t stream);

}  // namespace wf::cuda::cutlass_sm90
