// VJP rules of the ops that choose: select, clamp, optimization_barrier, and the branching ops
// if and case. A branch's VJP is a branch of a new if/case on the same predicate or index that
// recomputes the branch's forward ops (its intermediates are not visible outside it) and runs
// their rules; it returns a cotangent for each active value the branch captures.
#include "autodiff/rules.h"

namespace wf::autodiff {
namespace {

Status selectRule(VjpContext& c) {
  OpBuilder& b = c.b;
  Value *pred = c.operand(0), *ct = c.cotangent();
  Value* zero = b.zeros(ct->type());
  if (c.active(1)) c.accumulate(1, b.select(pred, ct, zero));
  if (c.active(2)) c.accumulate(2, b.select(pred, zero, ct));
  return Status::ok();
}

// clamp(min, x, max) = min(max(x, min), max), where min and max may be scalars: the cotangent
// goes to max where it is below max(x, min), else to x where x >= min, else to min. (Taken
// from the definition, so it also holds where min > max, when the result is max.)
Status clampRule(VjpContext& c) {
  OpBuilder& b = c.b;
  Value *ct = c.cotangent(), *x = c.operand(1);
  const Type& t = x->type();
  Value* lo = c.operandType(0).rank() == t.rank() ? c.operand(0) : b.broadcastInDim(c.operand(0), t, {});
  Value* hi = c.operandType(2).rank() == t.rank() ? c.operand(2) : b.broadcastInDim(c.operand(2), t, {});
  Value* zero = b.zeros(t);
  Value* hiWins = b.compare(hi, b.max(x, lo), "LT");
  Value* rest = b.select(hiWins, zero, ct);
  Value* xWins = b.compare(x, lo, "GE");
  if (c.active(1)) c.accumulate(1, b.select(xWins, rest, zero));
  if (c.active(0)) c.accumulate(0, b.sumToScalarIfNeeded(b.select(xWins, zero, rest), c.operandType(0)));
  if (c.active(2)) c.accumulate(2, b.sumToScalarIfNeeded(b.select(hiWins, ct, zero), c.operandType(2)));
  return Status::ok();
}

Status optimizationBarrierRule(VjpContext& c) {
  for (size_t i = 0; i < c.op.numResults(); ++i) c.accumulate(i, c.cotangent(i));
  return Status::ok();
}

// if (operand: the predicate) and case (operand: the index): one backward branch per branch.
Status branchRule(VjpContext& c) {
  OpBuilder& b = c.b;
  std::vector<Value*> wrt;
  for (Value* v : capturedValues(c.op))
    if (c.isActive(v)) wrt.push_back(v);
  if (wrt.empty()) return Status::ok();
  std::vector<Value*> resultCts;
  for (size_t i = 0; i < c.op.numResults(); ++i) resultCts.push_back(c.cotangent(i));
  Status inner;
  std::vector<Type> types;
  for (Value* v : wrt) types.push_back(v->type());
  Location loc = b.location();
  Differentiator& outer = c.differentiator();
  Operation* back = b.create(c.op.name(), c.op.operands(), {}, types, wrt.size(), [&](Operation* op) {
    for (size_t r = 0; r < c.op.numRegions(); ++r) {
      Block* dst = op->addRegion()->addBlock();
      auto cts = emitBlockVjp(c.op.region(r).front(), dst, resultCts, wrt, outer, loc);
      if (!cts) {
        if (inner.isOk()) inner = cts.status();
        continue;
      }
      OpBuilder(dst, loc).create("stablehlo.return", *cts, {}, {}, 0);
    }
  });
  WF_RETURN_IF_ERROR(inner);
  for (size_t i = 0; i < wrt.size(); ++i) c.accumulateValue(wrt[i], back->result(i));
  return Status::ok();
}

}  // namespace

void registerControlFlowRules(RuleTable& t) {
  t.add(OpCode::Select, selectRule);
  t.add(OpCode::Clamp, clampRule);
  t.add(OpCode::OptimizationBarrier, optimizationBarrierRule);
  t.add(OpCode::If, branchRule);
  t.add(OpCode::Case, branchRule);
}

}  // namespace wf::autodiff
