// The linear layer + erf GELU pair as one CUTLASS kernel (dot_gelu.h).
#include "backends/cuda/kernels/dot_gelu.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device.h"
#include "ir/attr_reader.h"
#include "ir/builder.h"

#ifdef WF_HAVE_CUTLASS
#include "backends/cuda/cutlass/dot_gelu_sm90.h"
#endif

namespace wf::cuda {
namespace {

// The f32 constant every element of `v` holds is exactly `bits`.
bool isF32Splat(const Value* v, uint32_t bits) {
  if (v->type().elementType() != ElementType::kF32) return false;
  const std::optional<double> c = splatConstant(v);
  return c && std::bit_cast<uint32_t>(static_cast<float>(*c)) == bits && static_cast<double>(static_cast<float>(*c)) == *c;
}

// `op` is a binary `code` op of `value` and the f32 splat `bits` (either order): true.
bool isOpWithSplat(const Operation* op, OpCode code, const Value* value, uint32_t bits) {
  if (!op || op->code() != code || op->numOperands() != 2) return false;
  return (op->operand(0) == value && isF32Splat(op->operand(1), bits)) ||
         (op->operand(1) == value && isF32Splat(op->operand(0), bits));
}

constexpr uint32_t kHalf = 0x3f000000u, kOne = 0x3f800000u, kRsqrt2 = 0x3f3504f3u;  // 0.5, 1, 0.70710677

}  // namespace

Expected<const Value*> linearLayerGeluBias(const Operation& dot, const FusionGroup& group) {
  auto decline = [&](const std::string& why) -> Status { return unsupportedOnCuda(dot, "GELU epilogue: " + why); };
  if (dot.code() != OpCode::DotGeneral || dot.numOperands() != 2 || dot.numResults() != 1)
    return decline("not a dot_general of two operands");
  const Type& lhs = dot.operand(0)->type();
  const Type& rhs = dot.operand(1)->type();
  const Type& product = dot.result(0)->type();
  const ElementType t = product.elementType();
  if (t != ElementType::kBF16 && t != ElementType::kF16) return decline("a product of type " + product.toString());
  if (lhs.elementType() != t || rhs.elementType() != t || !lhs.hasStaticShape() || !rhs.hasStaticShape() ||
      lhs.rank() != 2 || rhs.rank() != 2)
    return decline("operands other than two matrices of the product's type");
  Expected<const Attribute*> dn = AttrReader(dot).dialectStruct("dot_dimension_numbers");
  if (!dn || !AttrReader::fieldInts(**dn, "lhs_batching_dimensions").empty() ||
      !AttrReader::fieldInts(**dn, "rhs_batching_dimensions").empty() ||
      AttrReader::fieldInts(**dn, "lhs_contracting_dimensions") != std::vector<int64_t>{1} ||
      AttrReader::fieldInts(**dn, "rhs_contracting_dimensions") != std::vector<int64_t>{0} || dot.attr("algorithm"))
    return decline("not A [M, K] by B [K, N] (or a dot algorithm)");
  if (group.hasReduce() || !group.sideOutputs.empty()) return decline("the group reduces or writes side outputs");
  // From the root: narrow_T(m * s), m = x * 0.5, s = erf(x * 0.70710677) + 1.
  std::vector<const Operation*> matched;
  const Operation* gelu = narrowedToType(group, t, matched);
  if (!gelu || gelu->code() != OpCode::Multiply) return decline("the narrowed value is not a product of two halves");
  const Value* x = nullptr;
  for (size_t side = 0; side < 2 && !x; ++side) {
    const Operation* half = groupMember(group, gelu->operand(side));
    const Operation* plusOne = groupMember(group, gelu->operand(1 - side));
    if (!half || !plusOne || half->code() != OpCode::Multiply || plusOne->code() != OpCode::Add) continue;
    const Value* candidate = isF32Splat(half->operand(1), kHalf) ? half->operand(0)
                             : isF32Splat(half->operand(0), kHalf) ? half->operand(1)
                                                                   : nullptr;
    if (!candidate) continue;
    for (size_t e = 0; e < 2 && !x; ++e) {
      const Operation* erf = groupMember(group, plusOne->operand(e));
      if (!erf || erf->code() != OpCode::ChloErf || !isF32Splat(plusOne->operand(1 - e), kOne)) continue;
      const Operation* scaled = groupMember(group, erf->operand(0));
      if (!isOpWithSplat(scaled, OpCode::Multiply, candidate, kRsqrt2)) continue;
      x = candidate;
      matched.insert(matched.end(), {gelu, half, plusOne, erf, scaled});
      for (const Operation* op : {half, plusOne, scaled})
        for (const Value* operand : op->operands())
          if (const Operation* c = groupMember(group, operand); c && c->code() != OpCode::ChloErf && operand != x)
            matched.push_back(c);  // the splat constants (and their broadcasts) inside the group
    }
  }
  if (!x) return decline("the narrowed value is not the erf GELU of one f32 value");
  for (const Operation* c : std::vector<const Operation*>(matched))
    if (c->code() == OpCode::BroadcastInDim)
      if (const Operation* scalar = groupMember(group, c->operand(0))) matched.push_back(scalar);
  const Value* bias = linearLayerBias(dot, group, skipGroupReshapes(group, groupMember(group, x), matched), matched);
  if (!bias) return decline("the GELU's input is not the product plus a bias of its type along the last dim");
  std::sort(matched.begin(), matched.end());
  matched.erase(std::unique(matched.begin(), matched.end()), matched.end());
  if (matched.size() != group.ops.size()) return decline("the group computes more than the bias and the GELU");
  return bias;
}

Expected<DotBiasEpilogue> lowerDotBiasGeluEpilogue(const Operation& dot, const FusionGroup& group, LowerContext& ctx) {
  auto decline = [&](const std::string& why) -> Status { return unsupportedOnCuda(dot, "GELU epilogue: " + why); };
  WF_ASSIGN_OR_RETURN(const Value* bias, linearLayerGeluBias(dot, group));
#ifndef WF_HAVE_CUTLASS
  (void)bias;
  (void)ctx;
  return decline("built without CUTLASS");
#else
  const Type& lhs = dot.operand(0)->type();
  const Type& rhs = dot.operand(1)->type();
  const ElementType t = dot.result(0)->type().elementType();
  const int64_t m = lhs.dim(0), k = lhs.dim(1), n = rhs.dim(1);
  if (double(m) * double(n) * double(k) < 4294967296.0) return decline("a product of fewer than 2^32 multiply-adds");
  const DeviceInfo& info = ctx.device.info();
  if (info.major != 9 || info.minor != 0) return decline("a device of compute capability other than 9.0");

  const cutlass_sm90::DotBiasGeluProblem problem{
      t == ElementType::kBF16 ? cutlass_sm90::GeluType::kBF16 : cutlass_sm90::GeluType::kF16, static_cast<int>(m),
      static_cast<int>(n), static_cast<int>(k)};
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return decline("a dimension past 2^31");
  if (const char* why = cutlass_sm90::dotBiasGeluDeclines(problem); *why) return decline(why);
  const int multiprocessors = info.multiprocessors;
  const size_t workspace = cutlass_sm90::dotBiasGeluWorkspaceBytes(problem, multiprocessors);
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, workspace);
  const std::string where = dot.describe();
  auto kernel = makeKernel([=](const LaunchContext& launch, std::span<void* const> in,
                               std::span<void* const> out) -> Status {
    for (void* p : {in[0], in[1], in[2], out[0]})
      if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
        return internalError(where + ": GELU epilogue: an operand not 16-byte aligned");
    if (const char* failed = cutlass_sm90::runDotBiasGelu(problem, in[0], in[1], in[2], out[0], launch.workspace,
                                                          multiprocessors, launch.stream))
      return internalError(where + ": GELU epilogue: " + failed);
    WF_CUDA_CHECK(cudaGetLastError());
    return Status::ok();
  });
  return DotBiasEpilogue{std::move(kernel), bias};
#endif
}

bool dotGeluEpilogueBuilt() {
#ifdef WF_HAVE_CUTLASS
  return true;
#else
  return false;
#endif
}

}  // namespace wf::cuda
