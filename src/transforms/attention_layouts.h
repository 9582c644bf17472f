// Attention composites that read their operands, and write their result, in the layout the
// projections around them use.
//
// Exporters write multi-head attention's q, k and v as a projection [B*S, H*D] reshaped to
// [B, S, H, D] and transposed to [B, H, S, D], and its result o [B, H, S, D] transposed back to
// [B, S, H, D] before the output projection. A fused kernel reads and writes [B, S, H, D] through
// strides (cuDNN's attention takes a stride per dim), so those transposes need not run: in BERT-large
// they are five copies of 6 MiB per layer. This pass makes a forward "warpforge.attention"
// composite
//   - read x where its q (k, v) operand is transpose(x, [0, 2, 1, 3]) and the composite is that
//     transpose's only reader, or convert(x) where it is convert(transpose(x)) (exporters
//     transpose in f32 and narrow after), and
//   - return o as [B, S, H, D] where every reader of o is transpose(o, [0, 2, 1, 3]), or a convert
//     that only such transposes read (their readers then read the composite's result, or its
//     convert),
// and records each change in the composite's attributes (ir/composites.h):
//   q_layout, k_layout, v_layout, o_layout = "bshd"   (absent: "bhsd", the composite's own)
// Its decomposition becomes a new function that applies the absorbed transposes around the old
// one's ops, so the composite still means what it computes and every backend runs it unchanged.
// The lse result stays [B, H, Sq].
//
// Gradient composites are left alone: a training step's forward composite shares q, k, v and o
// with its gradient composite, so there is nothing to absorb, and the rewrite is skipped.
#pragma once

#include <string_view>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// The layout attribute's values.
inline constexpr std::string_view kHeadsMajorLayout = "bhsd";     // [B, H, S, D], the default
inline constexpr std::string_view kSequenceMajorLayout = "bshd";  // [B, S, H, D]

// Absorbs the head transposes around @function's forward attention composites (not inside nested
// regions). Returns how many composites changed; on error the module is unchanged.
Expected<int> absorbAttentionTransposes(Module& module, std::string_view function);

// Where q, k and v come from one merged projection (transforms/merge_products.h), each [B, S, H, D]
// operand read "bshd" is reshape(slice(Y)) of Y [B*S, C] (or [B, S, C]), heads [a, a + H*D) of
// Y's last dim. A fused kernel reads those heads where they lie, at a row stride of C: this makes
// the composite read reshape(Y, [B, S, C / D, D]) and record
//   q_heads, k_heads, v_heads = array<i64: first, count>   (in heads of D)
// with a decomposition that slices those heads first. Needs a % D == 0 and C % D == 0. Returns
// how many composites changed; on error the module is unchanged. Runs after the products merge
// (the CUDA backend's plan rewrites), so that without it nothing is sliced.
Expected<int> absorbAttentionHeadSlices(Module& module, std::string_view function);

}  // namespace wf
