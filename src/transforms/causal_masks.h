// Attention composites whose mask is, at compile time, the causal mask.
//
// A decoder's attention masks key j of query i unless j <= i. Exporters compute that mask from
// position iotas (Llama under Hugging Face: cache positions gathered, compared, and-ed with a
// same-sequence test of a cumulative sum), so no argument reaches it and it is known at compile
// time (known_values.h). This pass evaluates the mask operand of every "warpforge.attention" and
// "warpforge.attention_grad" composite with mask = "select" in @function's body, and where it is
// exactly the top-left causal mask for every batch and head it broadcasts to (true where j <= i,
// false elsewhere, over [Sq, Skv]) it adds `mask_is_causal = true` to the composite's attributes.
// The composite still means its decomposition, which reads the mask; the attribute tells a
// backend that a causal kernel computes the same (cuDNN's causal attention, which neither reads a
// mask nor computes the scores above the diagonal).
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Masks of more elements are not evaluated.
inline constexpr int64_t kMaxEvaluatedMaskElements = int64_t{1} << 24;

// Marks the causal masks of @function's attention composites. Returns how many it marked.
Expected<int> markCausalAttentionMasks(Module& module, std::string_view function);

// Whether `mask` (i1, rank 4, [B or 1, H or 1, Sq, Skv]) is true exactly where j <= i.
bool isTopLeftCausal(const Literal& mask);

}  // namespace wf
