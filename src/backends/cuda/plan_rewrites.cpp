// The CUDA backend's rewrites before planning (plan_rewrites.h).
#include "backends/cuda/plan_rewrites.h"

#include <algorithm>
#include <initializer_list>
#include <string>

#include "transforms/attention.h"
#include "transforms/attention_layouts.h"
#include "transforms/causal_masks.h"
#include "transforms/cse.h"
#include "transforms/expand_batch_norm.h"
#include "transforms/fold_round_trips.h"
#include "transforms/fold_uniform_selects.h"
#include "transforms/merge_products.h"
#include "transforms/narrow_pools.h"
#include "transforms/space_to_depth.h"

namespace wf::cuda {
bool holdsOp(const Block& block, std::initializer_list<OpCode> codes) {
  for (const auto& op : block.operations()) {
    if (std::find(codes.begin(), codes.end(), op->code()) != codes.end()) return true;
    for (size_t r = 0; r < op->numRegions(); ++r)
      for (const auto& inner : op->region(r).blocks())
        if (holdsOp(*inner, codes)) return true;
  }
  return false;
}

bool wantsPlanRewrites(const Operation& function, bool fuse) {
  if (function.numRegions() == 0 || function.region(0).empty()) return false;
  const Block& body = function.region(0).front();
  return holdsBatchNorm(body) || (fuse && !body.operations().empty());
}

Expected<PlanRewrites> rewriteForPlanning(Module& module, std::string_view function, bool fuse, bool mergeProducts,
                                          bool tf32Convolutions) {
  Operation* fn = module.lookupFunction(function);
  if (!fn) return notFound("cuda: no function @" + std::string(function) + " to plan");
  PlanRewrites done;
  WF_ASSIGN_OR_RETURN(done.batchNorms, expandBatchNorm(*fn));
  if (!fuse) return done;
  // Masks made of shapes alone, true everywhere, go first: the attention below is then unmasked.
  if (holdsOp(FuncOp(fn).body(), {OpCode::Select})) {
    WF_ASSIGN_OR_RETURN(done.uniformSelects, foldUniformSelects(module, function));
  }
  // Merging first: the three projections of one layer-norm output then read one value, and
  // attention's operands are the same values whichever copy the exporter wrote.
  done.merged = eliminateCommonSubexpressions(*fn);
  if (holdsOp(FuncOp(fn).body(), {OpCode::Exponential}) && holdsOp(FuncOp(fn).body(), {OpCode::DotGeneral})) {
    OutlineAttentionOptions outline;
    outline.narrowOnly = true;
    WF_ASSIGN_OR_RETURN(done.attention, outlineAttention(module, function, outline));
  }
  // Attention composites, outlined here or by the train-step builder, whose mask is causal.
  if (holdsOp(FuncOp(fn).body(), {OpCode::Composite})) {
    WF_ASSIGN_OR_RETURN(done.causalMasks, markCausalAttentionMasks(module, function));
    WF_ASSIGN_OR_RETURN(done.attentionLayouts, absorbAttentionTransposes(module, function));
  }
  // After the attention layouts, whose removed transposes leave such round trips.
  if (holdsOp(FuncOp(fn).body(), {OpCode::Convert})) {
    WF_ASSIGN_OR_RETURN(done.roundTrips, foldWidenNarrowRoundTrips(*fn));
  }
  // After outlining, so that attention's patterns are matched as the exporter wrote them.
  if (mergeProducts && holdsOp(FuncOp(fn).body(), {OpCode::DotGeneral})) {
    WF_ASSIGN_OR_RETURN(done.mergedProducts, mergeSiblingProducts(*fn));
    if (done.mergedProducts > 0) {
      WF_ASSIGN_OR_RETURN(done.mergedBiasAdds, mergeBiasAddsOfSlices(*fn));
      // q, k and v then come as slices of one projection: attention reads them where they lie.
      if (done.attentionLayouts > 0) {
        WF_ASSIGN_OR_RETURN(done.attentionHeadSlices, absorbAttentionHeadSlices(module, function));
      }
    }
  }
  if (holdsOp(FuncOp(fn).body(), {OpCode::ReduceWindow})) {
    WF_ASSIGN_OR_RETURN(done.narrowedPools, narrowPools(*fn));
  }
  if (holdsOp(FuncOp(fn).body(), {OpCode::Convolution})) {
    WF_ASSIGN_OR_RETURN(done.spaceToDepth, spaceToDepthConvolutions(*fn, tf32Convolutions));
  }
  return done;
}

}  // namespace wf::cuda
