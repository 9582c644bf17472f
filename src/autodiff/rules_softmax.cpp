// The VJP of a softmax written out (rules.h: softmaxVjp). Exporters write softmax over the
// reduced dims D (the last dim, for attention) as five ops:
//
//   m = reduce(x, D) with maximum            (any value constant along D will do)
//   s = x - broadcast(m)                     (or no subtraction)
//   e = exp(s)
//   r = reduce(e, D) with add, init 0
//   y = e / broadcast(r)
//
// y does not depend on m (softmax is invariant to a shift along D), so the cotangent of x from y
// is the softmax Jacobian's transpose applied to ct: dx = y * (ct - broadcast(sum(ct * y, D))),
// PyTorch's _softmax_backward_data. The op-by-op rules give the same up to rounding, but read e,
// the broadcast sum and x (for the max's mask) in the backward pass, so the forward pass must keep
// them: four tensors of the attention's shape per layer instead of one. m gets nothing from y
// (op by op, a rounding error's worth). Ops of the pattern that have other users still get those
// users' cotangents through their own rules.
#include "autodiff/rules.h"
#include "ir/attr_reader.h"

namespace wf::autodiff {
namespace {

using Dims = std::vector<int64_t>;

// The value that `v` repeats along the dims `reduced` of its type: w for broadcast_in_dim(w) that
// maps w's dims to the other dims in order, or for broadcast_in_dim(reshape(w)) where the reshape
// only adds the reduced dims as size 1 and the broadcast keeps every dim in place (keepdims, as
// JAX writes it). nullptr when `v` is neither.
const Value* broadcastSource(const Value* v, const Dims& reduced) {
  const Operation* bcast = definedBy(v, OpCode::BroadcastInDim);
  if (!bcast) return nullptr;
  Expected<Dims> dims = AttrReader(*bcast).ints("broadcast_dimensions");
  if (!dims) return nullptr;
  const Type& full = v->type();
  const Dims kept = keptDims(full.rank(), reduced);
  const Value* source = bcast->operand(0);
  if (*dims == kept) return source;
  Dims identity(static_cast<size_t>(full.rank()));
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
  const Operation* reshape = definedBy(source, OpCode::Reshape);
  if (*dims != identity || !reshape) return nullptr;
  const Type& kept1 = source->type();  // the full shape with 1 at every reduced dim
  for (int64_t d : reduced)
    if (kept1.dim(d) != 1) return nullptr;
  const Value* inner = reshape->operand(0);
  const Type& innerType = inner->type();
  if (innerType.rank() != static_cast<int64_t>(kept.size())) return nullptr;
  for (size_t i = 0; i < kept.size(); ++i)
    if (innerType.dim(static_cast<int64_t>(i)) != kept1.dim(kept[i])) return nullptr;
  return inner;
}

bool isZeroConstant(const Value* v) {
  const Operation* constant = definedBy(v, OpCode::Constant);
  const Attribute* value = constant ? constant->attr("value") : nullptr;
  if (!value) return false;
  if (const Literal* splat = value->splatValue()) return splat->getDouble(0) == 0.0;
  const Literal* literal = value->literal();
  return literal && literal->type().numElements() == 1 && literal->getDouble(0) == 0.0;
}

}  // namespace

bool softmaxVjp(VjpContext& c) {
  const Operation& divide = c.op;
  if (divide.code() != OpCode::Divide || !divide.result(0)->type().hasStaticShape()) return false;
  const Value* e = divide.operand(0);
  const Operation* exp = definedBy(e, OpCode::Exponential);
  if (!exp) return false;
  // The denominator: a broadcast of a sum of e over the dims it is broadcast along.
  const Operation* bcast = definedBy(divide.operand(1), OpCode::BroadcastInDim);
  if (!bcast) return false;
  const Value* summed = bcast->operand(0);
  if (const Operation* reshape = definedBy(summed, OpCode::Reshape)) summed = reshape->operand(0);
  const Operation* sum = definedBy(summed, OpCode::Reduce);
  if (!sum || sum->numOperands() != 2 || sum->operand(0) != e || bodyKind(*sum) != OpCode::Add ||
      !isZeroConstant(sum->operand(1)))
    return false;
  Expected<Dims> reduced = AttrReader(*sum).ints("dimensions");
  if (!reduced || reduced->empty() || broadcastSource(divide.operand(1), *reduced) != summed) return false;
  // x, less a value constant along the reduced dims, or x itself.
  const Value* x = exp->operand(0);
  if (const Operation* shift = definedBy(x, OpCode::Subtract)) {
    const Value* shiftBy = shift->operand(1);
    if (c.isActive(shiftBy) && !broadcastSource(shiftBy, *reduced)) return false;
    x = shift->operand(0);
  }
  if (!c.isActive(x)) return true;  // nothing flows: y does not depend on the shift
  OpBuilder& b = c.b;
  Value* ct = c.cotangent();
  Value* y = c.result();
  Value* weighted = b.reduceSum(b.mul(ct, y), *reduced);
  Value* centered = b.sub(ct, b.broadcastInDim(weighted, y->type(), keptDims(y->type().rank(), *reduced)));
  c.accumulateValue(x, b.mul(y, centered));
  return true;
}

}  // namespace wf::autodiff
