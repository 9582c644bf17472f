// Names of the composites WarpForge itself emits (stablehlo.composite ops whose decomposition
// is plain StableHLO, so that every consumer can run them, and that backends may run fused).
//
// "warpforge.attention" (q, k, v[, mask]) -> (o, lse), attributes {scale: f32, mask: "none" |
//   "select" | "add"}: o = softmax(mask(scale * q . k^T)) . v over [B, H, S, D] tensors, lse
//   the f32 log-sum-exp of each row of the masked, scaled scores ([B, H, Sq]). Emitted by
//   transforms/attention.h. With mask = "select", an optional `mask_is_causal = true` states
//   that the mask operand is the top-left causal mask (true exactly where key j <= query i):
//   a backend may then run a causal kernel that does not read it (transforms/causal_masks.h).
//   Optional `q_layout`, `k_layout`, `v_layout`, `o_layout` = "bshd" state that the operand or
//   o is stored [B, S, H, D] instead (transforms/attention_layouts.h).
// "warpforge.attention_grad" (q, k, v[, mask], o, lse, do) -> (dq, dk, dv), the same
//   attributes: the gradients of the attention's o for the cotangent do. Emitted by autodiff
//   (rules_attention.cpp); its decomposition recomputes the probabilities.
#pragma once

#include <string_view>

namespace wf {

inline constexpr std::string_view kAttentionComposite = "warpforge.attention";
inline constexpr std::string_view kAttentionGradComposite = "warpforge.attention_grad";

}  // namespace wf
