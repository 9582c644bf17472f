// VJP rules of the batch-norm ops. batch_norm_training's output gradient is batch_norm_grad
// itself (the op the spec defines for it: the gradient through the batch statistics included),
// so a training graph keeps one op per batch norm in each direction, which backends run as a
// unit (the CUDA backend expands both into fused passes, transforms/expand_batch_norm.h) rather
// than the dozens of elementwise and reduce ops a written-out batch norm differentiates into.
// batch_norm_inference is elementwise in its operand: y = (x - mean) * scale / sqrt(var + eps)
// + offset with every feature vector constant.
#include "autodiff/rules.h"
#include "ir/batch_norm.h"

namespace wf::autodiff {
namespace {

// A feature vector broadcast over the operand's shape.
Value* alongFeature(OpBuilder& b, Value* v, const Type& like, int64_t feature) {
  return b.broadcastInDim(v, like, {feature});
}

// batch_norm_training(x, scale, offset) -> (y, mean, var):
//   (dx, dscale, doffset) = batch_norm_grad(x, scale, mean, var, dy)
// and where the statistics themselves have cotangents (they rarely reach a loss: the running
// averages they feed are not differentiated), their direct paths to x:
//   dx += dmean / n + dvar * 2 (x - mean) / n.
Status batchNormTrainingRule(VjpContext& c) {
  OpBuilder& b = c.b;
  WF_ASSIGN_OR_RETURN(BatchNormLayout l, readBatchNorm(c.op));
  const Type& xType = c.operandType(0);
  Value* dy = c.cotangent(0);
  if (dy) {
    std::vector<NamedAttribute> attrs;
    for (const char* name : {"epsilon", "feature_index"})
      if (const Attribute* a = c.op.attr(name)) attrs.emplace_back(name, *a);
    Operation* grad = b.create("stablehlo.batch_norm_grad",
                               {c.operand(0), c.operand(1), c.result(1), c.result(2), dy}, std::move(attrs),
                               {xType, c.operandType(1), c.operandType(2)}, 3);
    if (!b.ok()) return b.status();
    for (size_t i = 0; i < 3; ++i)
      if (c.active(i)) c.accumulate(i, grad->result(i));
  }
  if (!c.active(0)) return Status::ok();
  const double inverseCount = 1.0 / static_cast<double>(l.perFeature);
  if (Value* dmean = c.cotangent(1)) {
    Value* perElement = b.mul(dmean, b.splat(dmean->type(), inverseCount));
    c.accumulate(0, alongFeature(b, perElement, xType, l.feature));
  }
  if (Value* dvar = c.cotangent(2)) {
    Value* centred = b.sub(c.operand(0), alongFeature(b, c.result(1), xType, l.feature));
    Value* factor = b.mul(dvar, b.splat(dvar->type(), 2.0 * inverseCount));
    c.accumulate(0, b.mul(centred, alongFeature(b, factor, xType, l.feature)));
  }
  return Status::ok();
}

// batch_norm_inference(x, scale, offset, mean, var) -> y = (x - mean) * rstd * scale + offset,
// rstd = rsqrt(var + eps): elementwise in x; the feature vectors' cotangents are sums over the
// other dims.
Status batchNormInferenceRule(VjpContext& c) {
  OpBuilder& b = c.b;
  WF_ASSIGN_OR_RETURN(BatchNormLayout l, readBatchNorm(c.op));
  const double eps = l.epsilon;
  const Type& xType = c.operandType(0);
  Value* dy = c.cotangent(0);
  Value* x = c.operand(0);
  Value *scale = c.operand(1), *mean = c.operand(3), *var = c.operand(4);
  Value* rstd = b.unary("stablehlo.rsqrt", b.add(var, b.splat(var->type(), eps)));
  auto wide = [&](Value* v) { return alongFeature(b, v, xType, l.feature); };
  Value* centred = b.sub(x, wide(mean));
  if (c.active(0)) c.accumulate(0, b.mul(dy, wide(b.mul(rstd, scale))));
  if (c.active(1)) c.accumulate(1, b.reduceSum(b.mul(dy, b.mul(centred, wide(rstd))), l.others));
  if (c.active(2)) c.accumulate(2, b.reduceSum(dy, l.others));
  if (c.active(3)) c.accumulate(3, b.neg(b.reduceSum(b.mul(dy, wide(b.mul(rstd, scale))), l.others)));
  if (c.active(4)) {
    // d rstd / d var = -rstd^3 / 2
    Value* rstd3 = b.mul(rstd, b.mul(rstd, rstd));
    Value* dRstd = b.reduceSum(b.mul(dy, b.mul(centred, wide(scale))), l.others);
    c.accumulate(4, b.mul(dRstd, b.mul(rstd3, b.splat(rstd3->type(), -0.5))));
  }
  return Status::ok();
}

}  // namespace

void registerNormRules(RuleTable& t) {
  t.add(OpCode::BatchNormTraining, batchNormTrainingRule);
  t.add(OpCode::BatchNormInference, batchNormInferenceRule);
}

}  // namespace wf::autodiff
