// Batch-norm expansion: stablehlo.batch_norm_training, batch_norm_grad and batch_norm_inference
// written out as the reductions and elementwise ops they mean, as XLA's BatchNormExpander does,
// so that a backend's fusion plans them with their neighbours (the ReLU and residual add after a
// batch norm, the ReLU mask before its gradient) instead of running each as a unit that reads and
// writes whole activations on its own.
//
//   training(x, scale, offset) -> (y, mean, var):
//     mean = sum(x) / n;  xc = x - mean;  var = sum(xc * xc) / n   (biased, over all dims but the
//     feature dim; n elements per feature);  y = xc * (rsqrt(var + eps) * scale) + offset
//   grad(x, scale, mean, var, dy) -> (dx, dscale, doffset):
//     rstd = rsqrt(var + eps);  xhat = (x - mean) * rstd;  doffset = sum(dy);
//     dscale = sum(dy * xhat);  dx = (scale * rstd) * (dy - doffset / n - xhat * (dscale / n))
//   inference(x, scale, offset, mean, var) -> y = (x - mean) * (rsqrt(var + eps) * scale) + offset
//
// Narrow floats (bf16, f16) are computed in f32 and rounded once at the end. The feature-vector
// broadcasts are broadcast_in_dim along the feature dim; every written-out form has the static
// types of the op it replaces.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Expands every batch-norm op of `function`'s body, nested regions included. Returns how many it
// expanded; on error (a dynamic shape, a bad feature_index) the function is unchanged.
Expected<int> expandBatchNorm(Operation& function);

// True if `block` (or a region nested in it) holds a batch-norm op.
bool holdsBatchNorm(const Block& block);

}  // namespace wf
