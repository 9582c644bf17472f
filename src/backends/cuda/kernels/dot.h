// A matrix product and the bias add that alone reads it, as one cuBLASLt matmul with the bias
// epilogue (CUBLASLT_EPILOGUE_BIAS), instead of the product stored and a generated kernel adding
// the bias over it (dot.cpp).
//
// The planner (planner.cpp, planDotEpilogues) offers a dot_general whose result only one loop
// fusion group reads. The group must compute exactly
//     narrow_T(widen_f32(p) + broadcast(bias, along the last dim))     (reshapes around it allowed)
// of the product p of type T (bf16 or f16) and a bias [N] of type T (widened in the group, or
// before it): PyTorch's Linear under bf16 as the exporter writes it (the product rounded
// to T, the bias added in f32, rounded once more). Without batch
// dims, without a dot `algorithm`. Anything else declines (kUnimplemented) and the product and
// the group run as two steps, as before.
//
// cuBLASLt's documentation does not say how its epilogue rounds, and its kernels differ: on an
// H200 with CUDA 13.0 a small bf16 product's kernel rounded the product to T before adding the
// bias (the group's arithmetic, bit for bit), the kernels of BERT-large's [3072 x 1024] x
// [1024 x 1024] products and of a small f16 product added the bias to the f32 sum and rounded
// once. Rounding once leaves out the product's rounding to T, as the convolution epilogue leaves
// out the convolution's (convolution_epilogue.h; XLA's and TensorRT's fused epilogues do the
// same): the result is at least as close
// to the f32 model, and differs from the two steps' by no more than the product's rounding (half
// a unit in its last place) and its own.
// Anything else is not accepted: the lowering runs the chosen algorithm once on this problem with
// values whose sums are exact in any order and a bias for which the two roundings differ, and
// declines unless every element is rounded one way or every element the other (the verdict is
// kept per problem for the process; WARPFORGE_TUNING_LOG=1 says which).
#pragma once

#include <memory>
#include <vector>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/kernel.h"

namespace wf::cuda {

struct DotBiasEpilogue {
  std::unique_ptr<OpKernel> kernel;  // reads (lhs, rhs, bias), writes the group's root
  const Value* bias = nullptr;       // the bias the kernel reads (of type T)
};

Expected<DotBiasEpilogue> lowerDotBiasEpilogue(const Operation& dot, const FusionGroup& group, LowerContext& ctx);

// Matching a group around a product (shared with kernels/dot_gelu.h):
// the op of `group` defining `v`, else nullptr;
const Operation* groupMember(const FusionGroup& group, const Value* v);
// `op` past the reshapes of `group` that define it (appended to `matched`);
const Operation* skipGroupReshapes(const FusionGroup& group, const Operation* op, std::vector<const Operation*>& matched);
// the op computing the value `group` narrows to T at its root, reshapes around the narrowing
// allowed (appended to `matched` with it), else nullptr;
const Operation* narrowedToType(const FusionGroup& group, ElementType t, std::vector<const Operation*>& matched);
// the bias of T where `add` is widen_f32(dot) + broadcast(widen_f32(bias), along the last dim),
// its ops appended to `matched`, else nullptr (nothing appended).
const Value* linearLayerBias(const Operation& dot, const FusionGroup& group, const Operation* add,
                             std::vector<const Operation*>& matched);

}  // namespace wf::cuda
