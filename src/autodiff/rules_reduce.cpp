// VJP rules of reductions: reduce with an add, multiply, max or min body, and reduce_window as sum pooling
// (the body of an average pool) and max/min pooling. A body is recognised when it is one
// binary op on its two arguments; any other body is an error naming the op.
#include <numeric>

#include "autodiff/rules.h"
#include "ir/attr_reader.h"
#include "ir/window.h"

namespace wf::autodiff {

OpCode bodyKind(const Operation& op, size_t region) {
  if (op.numRegions() <= region || op.region(region).empty()) return OpCode::kUnknown;
  const Block& body = op.region(region).front();
  if (body.numArguments() != 2 || body.operations().size() != 2) return OpCode::kUnknown;
  const Operation& combine = *body.operations().front();
  const Operation& ret = *body.operations().back();
  if (combine.numOperands() != 2 || ret.numOperands() != 1 || ret.operand(0) != combine.result(0)) return OpCode::kUnknown;
  bool args = (combine.operand(0) == body.argument(0) && combine.operand(1) == body.argument(1)) ||
              (combine.operand(0) == body.argument(1) && combine.operand(1) == body.argument(0));
  return args ? combine.code() : OpCode::kUnknown;
}

std::vector<int64_t> keptDims(int64_t rank, const std::vector<int64_t>& reduced) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  return kept;
}

namespace {

using Dims = std::vector<int64_t>;

std::vector<NamedAttribute> windowAttrs(const Dims& size, const Dims& strides, const Dims& baseDilation,
                                        const Dims& windowDilation, const Dims& padLow, const Dims& padHigh);

// A product's derivative by x_i is the product of the other elements. It is formed from
// exclusive prefix and suffix products (two multiply reduce_windows along the flattened reduced
// dims), never by dividing the product by x_i, so zeros in the input are handled exactly.
Status reduceProduct(VjpContext& c, const Dims& dims, const Dims& kept) {
  if (c.active(1)) return c.unsupported("reduce with a multiply body: the init value is not differentiated");
  if (!c.active(0)) return Status::ok();
  OpBuilder& b = c.b;
  const Type& operand = c.operandType(0);
  ElementType e = operand.elementType();
  Dims perm = kept;
  perm.insert(perm.end(), dims.begin(), dims.end());
  int64_t rows = 1, n = 1;
  for (int64_t d : kept) rows *= operand.dim(d);
  for (int64_t d : dims) n *= operand.dim(d);
  Value* flat = b.reshape(b.transpose(c.operand(0), perm), {rows, n});
  Location loc = b.location();
  auto exclusiveProduct = [&](int64_t low, int64_t high) {
    Dims size = {1, n}, ones = {1, 1};
    return b
        .create("stablehlo.reduce_window", {flat, b.scalar(e, 1.0)},
                windowAttrs(size, ones, ones, ones, {0, low}, {0, high}), {}, 1,
                [&](Operation* op) { OpBuilder::addBinaryBody(op, "stablehlo.multiply", e, loc); })
        ->result(0);
  };
  Value* before = exclusiveProduct(n, -1);  // x_0 ... x_{i-1}
  Value* after = exclusiveProduct(-1, n);   // x_{i+1} ... x_{n-1}
  Value* ct = b.broadcastInDim(b.reshape(c.cotangent(), {rows}), Type::tensor({rows, n}, e), {0});
  Value* grad = b.mul(ct, b.mul(before, after));
  Dims permuted;
  for (int64_t d : perm) permuted.push_back(operand.dim(d));
  Dims inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  c.accumulate(0, b.transpose(b.reshape(grad, permuted), inverse));
  return Status::ok();
}

Status reduceRule(VjpContext& c) {
  OpBuilder& b = c.b;
  if (c.op.numOperands() != 2)
    return c.unsupported("reduce of " + std::to_string(c.op.numOperands() / 2) +
                         " inputs (a variadic reduce such as argmax) has no VJP rule");
  OpCode kind = bodyKind(c.op);
  WF_ASSIGN_OR_RETURN(Dims dims, AttrReader(c.op).ints("dimensions"));
  const Type& operand = c.operandType(0);
  Dims kept = keptDims(operand.rank(), dims);
  Value* ct = c.cotangent();
  if (kind == OpCode::Add) {
    if (c.active(0)) c.accumulate(0, b.broadcastInDim(ct, operand, kept));
    if (c.active(1)) c.accumulate(1, b.sumToScalarIfNeeded(ct, c.operandType(1)));
    return Status::ok();
  }
  if (kind == OpCode::Maximum || kind == OpCode::Minimum) {
    // The cotangent goes to the elements equal to the result, split evenly between ties
    // (JAX's reduce_max/min rule).
    if (c.active(1)) return c.unsupported("reduce with a max/min body: the init value is not differentiated");
    if (!c.active(0)) return Status::ok();
    Value* chosen = b.broadcastInDim(c.result(), operand, kept);
    Value* mask = b.convert(b.compare(c.operand(0), chosen, "EQ"), operand.elementType());
    Value* counts = b.reduceSum(mask, dims);
    Value* share = b.broadcastInDim(b.div(ct, counts), operand, kept);
    c.accumulate(0, b.mul(mask, share));
    return Status::ok();
  }
  if (kind == OpCode::Multiply) return reduceProduct(c, dims, kept);
  return c.unsupported("reduce with a body other than add, multiply, maximum or minimum has no VJP rule");
}

Expected<Window> windowOf(const Operation& op) { return readWindow(op, op.operand(0)->type().rank()); }

std::vector<NamedAttribute> windowAttrs(const Dims& size, const Dims& strides, const Dims& baseDilation,
                                        const Dims& windowDilation, const Dims& padLow, const Dims& padHigh) {
  Dims pads;
  for (size_t i = 0; i < size.size(); ++i) {
    pads.push_back(padLow[i]);
    pads.push_back(padHigh[i]);
  }
  return {{"window_dimensions", i64DenseArray(size)},
          {"window_strides", i64DenseArray(strides)},
          {"base_dilations", i64DenseArray(baseDilation)},
          {"window_dilations", i64DenseArray(windowDilation)},
          {"padding", i64Matrix(pads, static_cast<int64_t>(size.size()), 2)}};
}

// Sum pooling is linear: its transpose is a sum pooling of the cotangent, dilated by the
// strides and padded so that each input element sees every window that covered it (JAX's
// _reduce_window_sum_transpose_rule).
Status reduceWindowSum(VjpContext& c, const Window& w) {
  OpBuilder& b = c.b;
  if (c.active(1)) return c.unsupported("reduce_window: the init value is not differentiated");
  if (!c.active(0)) return Status::ok();
  const Type& operand = c.operandType(0);
  Value* ct = c.cotangent();
  size_t n = w.rank();
  Dims low(n), high(n), interior(n), zeros(n, 0), ones(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t inDilated = dilatedSize(operand.dim(static_cast<int64_t>(i)), w.baseDilation[i]);
    int64_t winDilated = dilatedSize(w.size[i], w.windowDilation[i]);
    int64_t outDilated = dilatedSize(ct->type().dim(static_cast<int64_t>(i)), w.strides[i]);
    low[i] = winDilated - w.padLow[i] - 1;
    high[i] = inDilated + winDilated - 1 - outDilated - low[i];
    interior[i] = w.strides[i] - 1;
  }
  // Narrow floats are summed in f32 (see OpBuilder::reduceSum).
  ElementType e = OpBuilder::accumulationType(operand.elementType());
  Value* padded = b.pad(b.convert(ct, e), b.scalar(e, 0.0), low, high, interior);
  Location loc = b.location();
  Value* summed = b.create("stablehlo.reduce_window", {padded, b.scalar(e, 0.0)},
                           windowAttrs(w.size, w.baseDilation, ones, w.windowDilation, zeros, zeros), {}, 1,
                           [&](Operation* op) { OpBuilder::addBinaryBody(op, "stablehlo.add", e, loc); })
                      ->result(0);
  c.accumulate(0, b.convert(summed, operand.elementType()));
  return Status::ok();
}

// Max (min) pooling: each window's cotangent goes to the element the window chose, the first
// of equal ones, as PyTorch's max_pool backward does: select_and_scatter with a GE (LE) select
// and an add scatter. The window's padding is select_and_scatter's own, whose padded positions
// every backend skips (a window chooses among the operand's elements, as PyTorch's max_pool
// chooses among the input's): no padded copy of the operand and no crop of the result, each a
// pass over the activation. Narrow floats run in f32
// (widening is exact, so the same elements are chosen) and round once at the end, as PyTorch
// accumulates overlapping windows' gradients in float: a bf16 add per window would round each
// element up to four times.
Status reduceWindowChooser(VjpContext& c, const Window& w, bool isMax) {
  OpBuilder& b = c.b;
  if (c.active(1)) return c.unsupported("reduce_window: the init value is not differentiated");
  if (!c.active(0)) return Status::ok();
  for (size_t i = 0; i < w.rank(); ++i)
    if (w.baseDilation[i] != 1 || w.windowDilation[i] != 1)
      return c.unsupported("reduce_window max/min pooling with dilations has no VJP rule");
  const Type& operand = c.operandType(0);
  const ElementType e = OpBuilder::accumulationType(operand.elementType());
  size_t n = w.rank();
  Location loc = b.location();
  Dims pads;
  for (size_t i = 0; i < n; ++i) {
    pads.push_back(w.padLow[i]);
    pads.push_back(w.padHigh[i]);
  }
  std::vector<NamedAttribute> attrs = {{"window_dimensions", i64DenseArray(w.size)},
                                       {"window_strides", i64DenseArray(w.strides)},
                                       {"padding", i64Matrix(pads, static_cast<int64_t>(n), 2)}};
  Value* scattered =
      b.create("stablehlo.select_and_scatter", {b.convert(c.operand(0), e), b.convert(c.cotangent(), e), b.scalar(e, 0.0)},
               std::move(attrs), {}, 1,
               [&](Operation* op) {
                 Block* select = op->addRegion()->addBlock();
                 Value* a = select->addArgument(Type::scalar(e));
                 Value* bArg = select->addArgument(Type::scalar(e));
                 OpBuilder sb(select, loc);
                 Value* pick = sb.compare(a, bArg, isMax ? "GE" : "LE");
                 sb.create("stablehlo.return", {pick}, {}, {}, 0);
                 OpBuilder::addBinaryBody(op, "stablehlo.add", e, loc);
               })
          ->result(0);
  c.accumulate(0, b.convert(scattered, operand.elementType()));
  return Status::ok();
}

Status reduceWindowRule(VjpContext& c) {
  if (c.op.numOperands() != 2) return c.unsupported("reduce_window of several inputs has no VJP rule");
  WF_ASSIGN_OR_RETURN(Window w, windowOf(c.op));
  switch (bodyKind(c.op)) {
    case OpCode::Add: return reduceWindowSum(c, w);
    case OpCode::Maximum: return reduceWindowChooser(c, w, true);
    case OpCode::Minimum: return reduceWindowChooser(c, w, false);
    default: return c.unsupported("reduce_window with a body other than add, maximum or minimum has no VJP rule");
  }
}

}  // namespace

void registerReduceRules(RuleTable& t) {
  t.add(OpCode::Reduce, reduceRule);
  t.add(OpCode::ReduceWindow, reduceWindowRule);
}

}  // namespace wf::autodiff
