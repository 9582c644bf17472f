// Scaled dot-product attention, written out op by op as exporters emit it, outlined into one
// `stablehlo.composite "warpforge.attention"` whose decomposition is the ops it replaces (see
// docs/attention.md):
//
//   s = dot_general(q, k)  batch [0, 1], contract q's 3 with k's 3     [B, H, Sq, Skv]
//   s = convert(s)                                  (optional: scores widened to f32)
//   s = s * scale  |  s / c                         (optional)
//   s = select(mask, s, -inf)  |  s + bias          (optional; the mask broadcast or not)
//   p = softmax(s) over dim 3                       (exp(s - max) / sum, or exp(s) / sum)
//   p = convert(p)                                  (optional: probabilities narrowed)
//   o = dot_general(p, v)  batch [0, 1], contract p's 3 with v's 2     [B, H, Sq, Dv]
//
// becomes
//
//   %o, %lse = stablehlo.composite "warpforge.attention" %q, %k, %v[, %mask]
//       {composite_attributes = {scale = <f32>, mask = "none" | "select" | "add"}, decomposition = @...}
//
// where lse (f32, [B, H, Sq]) is the log-sum-exp of each row of the scaled, masked scores: what a
// fused backward pass needs to recompute the probabilities (max + log(sum), from the softmax's own
// reductions). The composite means its decomposition, so every backend runs it unchanged; the CUDA
// backend runs it as one fused kernel where it has one, and autodiff (rules_attention.cpp) gives
// it a backward composite that recomputes the probabilities instead of keeping them: the forward
// pass keeps q, k, v, o and lse, not the [B, H, Sq, Skv] probabilities.
//
// Only intermediates that nothing else reads are outlined: a pattern whose probabilities are also
// returned or dropped out (a dropout mask between softmax and the product) stays as it is.
#pragma once

#include <string_view>

#include "ir/composites.h"
#include "ir/ir.h"
#include "support/status.h"

namespace wf {

struct OutlineAttentionOptions {
  // Outline only attention whose q, k and v are bf16 or f16: what a fused kernel (cuDNN's) runs.
  // A backend compiling an inference program sets it, so that f32 attention keeps the plan it had
  // (the decomposition would add the log-sum-exp, which nothing reads there).
  bool narrowOnly = false;
};

// Outlines every attention pattern in the body of @function (not inside nested regions). Returns
// how many it outlined; the module is unchanged when it returns 0 or an error.
Expected<int> outlineAttention(Module& module, std::string_view function, const OutlineAttentionOptions& options = {});

}  // namespace wf
