// A linear layer and the erf GELU that alone reads it (BERT's intermediate layer under bf16, as
// the exporter writes it), as one CUTLASS kernel for Hopper (cutlass/dot_gelu_sm90.h) instead of
// the product stored and a generated kernel reading it back for the bias and the GELU.
//
// The planner (planDotEpilogues) offers a dot_general whose result only one loop fusion group
// reads. The group must compute exactly
//     narrow_T(m * (erf(x * 0.70710677) + 1))   with  m = x * 0.5,
//     x = widen_f32(p) + broadcast(widen_f32(bias), along the last dim)     (reshapes allowed)
// for the product p of type T (bf16 or f16) of A [M, K] by B [K, N] (contracting A's last dim
// and B's first, no batch dims), with K and N multiples of 8; the constants splat to those f32
// bits. The kernel rounds the product's sum to T as the program does and adds the bias in f32
// in the same order; its GELU is cutlass/gelu_erf.h's, whose f32 result is as close to the exact
// GELU as the formula's in f32 ops (at most 9.7e-8 * max(|x|, 1) off, the formula 1.1e-7) in
// half the instructions. So the results are the two steps' bits wherever the product rounds
// alike (its sums run in another order than cuBLASLt's) and the two GELUs round alike to T.
// Anything else declines (kUnimplemented), and the product and the group run as two steps.
//
// Only on compute capability 9.0 (the kernel is built for sm_90a), only where the build found
// CUTLASS, and only for products of at least 2^32 multiply-adds: on an H200 the fused kernel
// ran BERT-large's 3072 x 4096 x 1024 product in 53.3 us against 61.6 us for the two steps;
// smaller ones were not measured, and its 128 x 256 tiles suit large products only.
#pragma once

#include "backends/cuda/kernels/dot.h"

namespace wf::cuda {

Expected<DotBiasEpilogue> lowerDotBiasGeluEpilogue(const Operation& dot, const FusionGroup& group, LowerContext& ctx);

// The pattern alone, without a device: the bias (of T) where `group` computes the erf GELU of the
// linear layer `dot` as above (any size), else why not (kUnimplemented).
Expected<const Value*> linearLayerGeluBias(const Operation& dot, const FusionGroup& group);

// Whether this build has the kernel (CUTLASS was found).
bool dotGeluEpilogueBuilt();

}  // namespace wf::cuda
