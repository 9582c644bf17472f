// The rewrites the CUDA backend makes to an entry function before it plans it, in a module of its
// own (the shape-refined copy), and that `warpforge inspect --fusion` shows:
//   - batch norms written out (transforms/expand_batch_norm.h), so that fusion plans their
//     statistics and normalisation with their neighbours;
//   - bf16/f16 attention written out op by op outlined into the fused-attention composite
//     (transforms/attention.h), which runs as one cuDNN kernel, and marked causal where its
//     mask is the causal mask at compile time (transforms/causal_masks.h), and reading its
//     operands and writing its result through the head transposes around it
//     (transforms/attention_layouts.h);
//   - selects on a predicate known at compile time and the same everywhere replaced by the
//     operand they pick (transforms/fold_uniform_selects.h): a mask made of shapes alone, true
//     everywhere, then costs nothing and leaves the attention unmasked;
//   - repeated pure ops merged (transforms/cse.h), so that a value several products read is
//     computed once;
//   - a value widened exactly and narrowed back (bf16 -> f32 -> bf16) read as it was
//     (transforms/fold_round_trips.h);
//   - products of one activation by several weights (query, key and value) too small to fill the
//     GPU merged into one product by the weights side by side (transforms/merge_products.h), unless
//     CompileOptions::mergeProducts is off;
//   - max and min pools that only a narrowing conversion reads run on the narrowed values
//     (transforms/narrow_pools.h): the same bits, from half the bytes;
//   - bf16/f16 stride-2 convolutions of at most 4 input channels (ResNet's stem) as stride-1
//     convolutions of 16 channels over the input's 2x2 pixel blocks (transforms/space_to_depth.h),
//     which cuDNN runs channels-last on tensor cores.
// All but the first only with fusion on (`--no-fusion` runs every op as written).
#pragma once

#include <initializer_list>
#include <string_view>

#include "ir/ir.h"
#include "support/status.h"

namespace wf::cuda {

struct PlanRewrites {
  int batchNorms = 0;  // batch-norm ops written out
  int attention = 0;   // attention patterns outlined
  int merged = 0;      // repeated ops removed
  int uniformSelects = 0;  // selects on a uniform compile-time predicate replaced
  int causalMasks = 0;     // outlined attention whose mask is the causal mask (transforms/causal_masks.h)
  int attentionLayouts = 0;  // attention reading or writing [B, S, H, D] (transforms/attention_layouts.h)
  int roundTrips = 0;        // widen-then-narrow conversions folded (transforms/fold_round_trips.h)
  int narrowedPools = 0;   // pools read by a narrowing conversion alone (transforms/narrow_pools.h)
  int mergedProducts = 0;  // products merged into a sibling's (transforms/merge_products.h)
  int mergedBiasAdds = 0;  // bias adds of a merged product's slices merged into one (the same)
  int attentionHeadSlices = 0;  // attention reading q, k, v as heads of a merged projection
  int spaceToDepth = 0;    // strided convolutions over few channels (transforms/space_to_depth.h)
};

// Whether `block` (or a region nested in it) holds an op of one of `codes`.
bool holdsOp(const Block& block, std::initializer_list<OpCode> codes);

// Whether rewriteForPlanning has anything to do in `function`'s body.
bool wantsPlanRewrites(const Operation& function, bool fuse);

// Rewrites @function of `module` in place (outlining adds decomposition functions to `module`).
// `mergeProducts`, `tf32Convolutions`: CompileOptions::mergeProducts, ::allowTf32Convolutions.
// On error the module may be partly rewritten: callers rewrite a copy.
Expected<PlanRewrites> rewriteForPlanning(Module& module, std::string_view function, bool fuse,
                                          bool mergeProducts = true, bool tf32Convolutions = false);

}  // namespace wf::cuda
