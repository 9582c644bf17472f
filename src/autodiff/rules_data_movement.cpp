// VJP rules of the data-movement ops: each is linear in its float operand, so its VJP is its
// transpose (a broadcast's is a sum, a slice's a pad with zeros, a pad's a strided slice).
// iota and constant have no operands, so nothing reaches them.
#include <algorithm>
#include <numeric>

#include "autodiff/rules.h"
#include "ir/attr_reader.h"

namespace wf::autodiff {
namespace {

Status broadcastInDimRule(VjpContext& c) {
  if (!c.active(0)) return Status::ok();
  OpBuilder& b = c.b;
  const Type& operand = c.operandType(0);
  const Type& result = c.result()->type();
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrReader(c.op).ints("broadcast_dimensions"));
  // Sum over the result dims the operand does not have, and over those it broadcast from size 1.
  std::vector<bool> summed(static_cast<size_t>(result.rank()), true);
  for (size_t i = 0; i < dims.size(); ++i)
    if (!(operand.dim(static_cast<int64_t>(i)) == 1 && result.dim(dims[i]) != 1)) summed[static_cast<size_t>(dims[i])] = false;
  std::vector<int64_t> sumDims, kept;
  for (int64_t d = 0; d < result.rank(); ++d) (summed[static_cast<size_t>(d)] ? sumDims : kept).push_back(d);
  Value* reduced = b.reduceSum(c.cotangent(), sumDims);
  // The kept dims are in result order; the operand may list them in another order.
  std::vector<int64_t> keptOperandDims;  // operand dims whose result dim was kept, in operand order
  for (size_t i = 0; i < dims.size(); ++i)
    if (!summed[static_cast<size_t>(dims[i])]) keptOperandDims.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> perm;
  for (int64_t i : keptOperandDims)
    perm.push_back(std::find(kept.begin(), kept.end(), dims[static_cast<size_t>(i)]) - kept.begin());
  Value* ordered = b.transpose(reduced, perm);
  c.accumulate(0, b.reshape(ordered, operand.shape()));
  return Status::ok();
}

Status broadcastRule(VjpContext& c) {
  if (!c.active(0)) return Status::ok();
  int64_t added = c.result()->type().rank() - c.operandType(0).rank();
  std::vector<int64_t> dims(static_cast<size_t>(added));
  std::iota(dims.begin(), dims.end(), 0);
  c.accumulate(0, c.b.reduceSum(c.cotangent(), dims));
  return Status::ok();
}

Status reshapeRule(VjpContext& c) {
  if (c.active(0)) c.accumulate(0, c.b.reshape(c.cotangent(), c.operandType(0).shape()));
  return Status::ok();
}

Status transposeRule(VjpContext& c) {
  if (!c.active(0)) return Status::ok();
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, AttrReader(c.op).ints("permutation"));
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  c.accumulate(0, c.b.transpose(c.cotangent(), inverse));
  return Status::ok();
}

Status convertRule(VjpContext& c) {
  // Only float -> float reaches here with an active operand; to or from integers nothing flows.
  if (c.active(0) && isDifferentiableType(c.result()->type()))
    c.accumulate(0, c.b.convert(c.cotangent(), c.operandType(0).elementType()));
  return Status::ok();
}

Status sliceRule(VjpContext& c) {
  if (!c.active(0)) return Status::ok();
  AttrReader attrs(c.op);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> start, attrs.ints("start_indices"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, attrs.ints("strides", std::vector<int64_t>(start.size(), 1)));
  const Type& operand = c.operandType(0);
  const Type& result = c.result()->type();
  if (result.numElements() == 0) return Status::ok();
  std::vector<int64_t> low = start, high(start.size()), interior(start.size());
  for (size_t d = 0; d < start.size(); ++d) {
    int64_t last = start[d] + (result.dim(static_cast<int64_t>(d)) - 1) * strides[d];
    high[d] = operand.dim(static_cast<int64_t>(d)) - last - 1;
    interior[d] = strides[d] - 1;
  }
  OpBuilder& b = c.b;
  c.accumulate(0, b.pad(c.cotangent(), b.scalar(operand.elementType(), 0.0), low, high, interior));
  return Status::ok();
}

Status concatenateRule(VjpContext& c) {
  WF_ASSIGN_OR_RETURN(int64_t dim, AttrReader(c.op).integer("dimension"));
  const Type& result = c.result()->type();
  std::vector<int64_t> start(static_cast<size_t>(result.rank()), 0), limit = result.shape();
  std::vector<int64_t> strides(static_cast<size_t>(result.rank()), 1);
  int64_t offset = 0;
  for (size_t i = 0; i < c.op.numOperands(); ++i) {
    int64_t size = c.operandType(i).dim(dim);
    if (c.active(i)) {
      start[static_cast<size_t>(dim)] = offset;
      limit[static_cast<size_t>(dim)] = offset + size;
      c.accumulate(i, c.b.slice(c.cotangent(), start, limit, strides));
    }
    offset += size;
  }
  return Status::ok();
}

Status padRule(VjpContext& c) {
  // JAX's transpose of pad: un-pad the edges (a pad by the negated amounts, which also
  // restores cropped elements as zeros), then take every (interior + 1)-th element. The
  // padding value received every element of the cotangent the operand did not.
  OpBuilder& b = c.b;
  AttrReader attrs(c.op);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> low, attrs.ints("edge_padding_low"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> high, attrs.ints("edge_padding_high"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> interior, attrs.ints("interior_padding"));
  Value* ct = c.cotangent();
  ElementType e = ct->type().elementType();
  std::vector<int64_t> negLow(low.size()), negHigh(high.size()), zero(low.size(), 0), step(low.size());
  for (size_t d = 0; d < low.size(); ++d) {
    negLow[d] = -low[d];
    negHigh[d] = -high[d];
    step[d] = interior[d] + 1;
  }
  Value* unpadded = b.pad(ct, b.scalar(e, 0.0), negLow, negHigh, zero);
  Value* operandCt = b.slice(unpadded, zero, unpadded->type().shape(), step);
  if (c.active(0)) c.accumulate(0, operandCt);
  if (c.active(1)) {
    std::vector<int64_t> all(static_cast<size_t>(ct->type().rank()));
    std::iota(all.begin(), all.end(), 0);
    c.accumulate(1, b.sub(b.reduceSum(ct, all), b.reduceSum(operandCt, all)));
  }
  return Status::ok();
}

Status reverseRule(VjpContext& c) {
  if (!c.active(0)) return Status::ok();
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrReader(c.op).ints("dimensions"));
  c.accumulate(0, c.b.reverse(c.cotangent(), dims));
  return Status::ok();
}

std::vector<Value*> operandsFrom(const Operation& op, size_t first) {
  return std::vector<Value*>(op.operands().begin() + static_cast<std::ptrdiff_t>(first), op.operands().end());
}

Status dynamicSliceRule(VjpContext& c) {
  // Both ops clamp the start indices the same way, so the update lands where the slice was read.
  if (!c.active(0)) return Status::ok();
  OpBuilder& b = c.b;
  c.accumulate(0, b.dynamicUpdateSlice(b.zeros(c.operandType(0)), c.cotangent(), operandsFrom(c.op, 1)));
  return Status::ok();
}

Status dynamicUpdateSliceRule(VjpContext& c) {
  OpBuilder& b = c.b;
  std::vector<Value*> starts = operandsFrom(c.op, 2);
  Value* ct = c.cotangent();
  if (c.active(0)) c.accumulate(0, b.dynamicUpdateSlice(ct, b.zeros(c.operandType(1)), starts));
  if (c.active(1)) c.accumulate(1, b.dynamicSlice(ct, starts, c.operandType(1).shape()));
  return Status::ok();
}

}  // namespace

void registerDataMovementRules(RuleTable& t) {
  t.add(OpCode::BroadcastInDim, broadcastInDimRule);
  t.add(OpCode::Broadcast, broadcastRule);
  t.add(OpCode::Reshape, reshapeRule);
  t.add(OpCode::Transpose, transposeRule);
  t.add(OpCode::Convert, convertRule);
  t.add(OpCode::Slice, sliceRule);
  t.add(OpCode::Concatenate, concatenateRule);
  t.add(OpCode::Pad, padRule);
  t.add(OpCode::Reverse, reverseRule);
  t.add(OpCode::DynamicSlice, dynamicSliceRule);
  t.add(OpCode::DynamicUpdateSlice, dynamicUpdateSliceRule);
}

}  // namespace wf::autodiff
