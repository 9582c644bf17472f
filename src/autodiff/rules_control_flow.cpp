// VJP rules of the ops that choose: select, clamp, optimization_barrier, the branching ops if
// and case, and while loops with a trip count known at compile time.
//
// A branch's VJP is a branch of a new if/case on the same predicate or index that recomputes the
// branch's forward ops (its intermediates are not visible outside it) and runs their rules; it
// returns a cotangent for each active value the branch captures.
//
// A while loop's VJP stores what each iteration started from: the forward loop is replaced by
// one that also stacks the loop-carried values of every iteration into [trips, ...] buffers
// (storeLoopStates, before the reverse walk), and a reverse loop walks the iterations
// backwards, recomputing each body from its stored inputs and running the body's rules (the
// "stored forward values" strategy; memory grows with the trip count).
#include <optional>

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
      auto cts = emitBlockVjp(c.op.region(r).front(), dst, {}, resultCts, wrt, outer, loc);
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

// The integer value of `v` when a stablehlo.constant defines it.
std::optional<int64_t> constantInt(const Value* v) {
  const Operation* def = v->definingOp();
  if (!def || def->code() != OpCode::Constant) return std::nullopt;
  const Attribute* a = def->attr("value");
  if (!a || a->splatValue() || !a->literal() || a->literal()->numElements() != 1 || !isInteger(a->literal()->elementType()))
    return std::nullopt;
  return a->literal()->getInt(0);
}

// The trip count of `while (i < limit) { ...; i = i + step }` with constant start, limit and
// step > 0, the form JAX's fori_loop and scan and PyTorch's exporter emit.
std::optional<int64_t> tripCount(const Operation& w) {
  if (w.numRegions() != 2 || w.region(0).empty() || w.region(1).empty()) return std::nullopt;
  const Block& cond = w.region(0).front();
  const Block& body = w.region(1).front();
  const Operation* ret = cond.terminator();
  if (!ret || ret->numOperands() != 1) return std::nullopt;
  const Operation* cmp = ret->operand(0)->definingOp();
  if (!cmp || cmp->code() != OpCode::Compare) return std::nullopt;
  const Attribute* dir = cmp->attr("comparison_direction");
  if (!dir || dir->stringValue() != "LT") return std::nullopt;
  const Value* iv = cmp->operand(0);
  if (!iv->isBlockArgument() || iv->ownerBlock() != &cond) return std::nullopt;
  size_t k = static_cast<size_t>(iv->index());
  auto limit = constantInt(cmp->operand(1));
  auto start = constantInt(w.operand(k));
  const Operation* bret = body.terminator();
  if (!limit || !start || !bret || bret->numOperands() <= k) return std::nullopt;
  const Operation* inc = bret->operand(k)->definingOp();
  if (!inc || inc->code() != OpCode::Add) return std::nullopt;
  std::optional<int64_t> step;
  if (inc->operand(0) == body.argument(k)) step = constantInt(inc->operand(1));
  else if (inc->operand(1) == body.argument(k)) step = constantInt(inc->operand(0));
  if (!step || *step <= 0) return std::nullopt;
  return *limit <= *start ? 0 : (*limit - *start + *step - 1) / *step;
}

// Value `v` of `type` stored at row `index` of `stack` ([trips] ++ shape) / read from it.
Value* pushRow(OpBuilder& b, Value* stack, Value* v, Value* index, Value* zero) {
  std::vector<int64_t> shape = {1};
  for (int64_t d : v->type().shape()) shape.push_back(d);
  std::vector<Value*> starts = {index};
  for (int64_t i = 0; i < v->type().rank(); ++i) starts.push_back(zero);
  return b.dynamicUpdateSlice(stack, b.reshape(v, shape), starts);
}

Value* readRow(OpBuilder& b, Value* stack, const Type& type, Value* index, Value* zero) {
  std::vector<int64_t> sizes = {1};
  for (int64_t d : type.shape()) sizes.push_back(d);
  std::vector<Value*> starts = {index};
  for (int64_t i = 0; i < type.rank(); ++i) starts.push_back(zero);
  return b.reshape(b.dynamicSlice(stack, starts, sizes), type.shape());
}

// Clones `src`'s ops into `dst` with its arguments bound to `args`; returns the mapped
// operands of its terminator.
std::vector<Value*> inlineBlock(const Block& src, Block* dst, const std::vector<Value*>& args) {
  std::unordered_map<const Value*, Value*> mapping;
  for (size_t i = 0; i < src.numArguments(); ++i) mapping[src.argument(i)] = args[i];
  for (const auto& op : src.operations())
    if (op.get() != src.terminator()) dst->append(cloneOperation(*op, mapping));
  std::vector<Value*> out;
  for (Value* v : src.terminator()->operands()) {
    auto it = mapping.find(v);
    out.push_back(it == mapping.end() ? v : it->second);
  }
  return out;
}

}  // namespace

// The loop `w` again, carrying also one [trips, ...] stack per loop-carried value and a counter:
// iteration i writes its input state to row i. Results: w's, then the stacks, then the counter.
Operation* buildStackingWhile(OpBuilder& b, const Operation& w, int64_t trips) {
  const Block& body = w.region(1).front();
  const Block& cond = w.region(0).front();
  size_t n = w.numOperands();
  Location loc = b.location();
  std::vector<Value*> init(w.operands().begin(), w.operands().end());
  std::vector<Type> types;
  for (Value* v : w.operands()) types.push_back(v->type());
  for (Value* v : w.operands()) {
    std::vector<int64_t> shape = {trips};
    for (int64_t d : v->type().shape()) shape.push_back(d);
    Type st = v->type().withShape(shape);
    init.push_back(b.zeros(st));
    types.push_back(st);
  }
  init.push_back(b.scalar(ElementType::kSI64, 0));
  types.push_back(Type::scalar(ElementType::kSI64));
  return b.create("stablehlo.while", init, {}, types, types.size(), [&](Operation* op) {
    Block* cb = op->addRegion()->addBlock();
    std::vector<Value*> cargs;
    for (const Type& t : types) cargs.push_back(cb->addArgument(t));
    std::vector<Value*> pred = inlineBlock(cond, cb, cargs);
    OpBuilder(cb, loc).create("stablehlo.return", pred, {}, {}, 0);
    Block* bb = op->addRegion()->addBlock();
    std::vector<Value*> bargs;
    for (const Type& t : types) bargs.push_back(bb->addArgument(t));
    OpBuilder ib(bb, loc);
    Value* index = bargs[2 * n];
    Value* zero = ib.scalar(ElementType::kSI64, 0);
    std::vector<Value*> next = inlineBlock(body, bb, bargs);
    for (size_t k = 0; k < n; ++k) next.push_back(pushRow(ib, bargs[n + k], bargs[k], index, zero));
    next.push_back(ib.add(index, ib.scalar(ElementType::kSI64, 1)));
    ib.create("stablehlo.return", next, {}, {}, 0);
    b.fail(ib.status());
  });
}

Status storeLoopStates(Block& body, Differentiator& d, std::span<Operation* const> alsoUsers, const Module* module) {
  auto& ops = body.mutableOperations();
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation& w = *ops[i];
    if (w.code() != OpCode::While) continue;
    bool active = false;
    for (const auto& r : w.results()) active = active || d.isActive(r.get());
    std::optional<int64_t> trips = tripCount(w);
    if (!active || !trips) continue;  // the rule reports a loop it cannot differentiate
    // Build the stacking loop aside, then put it where `w` was.
    Block scratch;
    OpBuilder b(&scratch, w.location(), module);
    Operation* stacking = buildStackingWhile(b, w, *trips);
    WF_RETURN_IF_ERROR(b.status());
    std::unique_ptr<Operation> original = std::move(ops[i]);
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
    auto& built = scratch.mutableOperations();
    for (auto& op : built) op->setParentBlock(&body);
    size_t count = built.size();
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(built.begin()),
               std::make_move_iterator(built.end()));
    std::unordered_map<const Value*, Value*> replacements;
    for (size_t k = 0; k < original->numResults(); ++k) {
      replacements[original->result(k)] = stacking->result(k);
      if (d.isActive(original->result(k))) d.markActive(stacking->result(k));
    }
    for (size_t j = i + count; j < ops.size(); ++j) replaceUses(*ops[j], replacements);
    for (Operation* user : alsoUsers) replaceUses(*user, replacements);
    d.addStoredLoop(stacking, std::move(original), *trips);
    i += count - 1;
  }
  return Status::ok();
}

namespace {

Status whileRule(VjpContext& c) {
  OpBuilder& b = c.b;
  // A top-level loop was replaced by its stacking form before the reverse walk
  // (storeLoopStates); a loop nested in a recomputed block is stacked here, recomputing it.
  const Differentiator::StoredLoop* stored = c.differentiator().storedLoop(&c.op);
  const Operation& w = stored ? *stored->original : c.op;
  std::optional<int64_t> trips = stored ? std::optional<int64_t>(stored->trips) : tripCount(w);
  if (!trips)
    return c.unsupported("while loop without a trip count known at compile time (the VJP needs `i < N` with "
                         "constant start, N and step) has no VJP rule");
  const Block& body = w.region(1).front();
  size_t n = w.numOperands();
  Location loc = b.location();
  const Operation* fwd = stored ? &c.op : buildStackingWhile(b, w, *trips);  // its results n.. are the stacks
  WF_RETURN_IF_ERROR(b.status());

  // The reverse loop: (j, cotangents of the float carried values, accumulated cotangents of
  // the active values the body captures), j from trips - 1 down to 0.
  std::vector<size_t> floats;
  for (size_t k = 0; k < n; ++k)
    if (isDifferentiableType(w.operand(k)->type())) floats.push_back(k);
  std::vector<Value*> captured;
  for (Value* v : capturedValues(w))
    if (c.isActive(v)) captured.push_back(v);
  std::vector<Value*> revInit = {b.scalar(ElementType::kSI64, *trips - 1)};
  for (size_t k : floats) revInit.push_back(c.cotangentOrZeros(k));
  for (Value* v : captured) revInit.push_back(b.zeros(v->type()));
  std::vector<Type> revTypes;
  for (Value* v : revInit) revTypes.push_back(v->type());
  Status inner;
  Differentiator& outer = c.differentiator();
  Operation* rev = b.create("stablehlo.while", revInit, {}, revTypes, revTypes.size(), [&](Operation* op) {
    Block* cb = op->addRegion()->addBlock();
    std::vector<Value*> cargs;
    for (const Type& t : revTypes) cargs.push_back(cb->addArgument(t));
    OpBuilder cbuild(cb, loc);
    Value* more = cbuild.compare(cargs[0], cbuild.scalar(ElementType::kSI64, 0), "GE");
    cbuild.create("stablehlo.return", {more}, {}, {}, 0);
    b.fail(cbuild.status());

    Block* bb = op->addRegion()->addBlock();
    std::vector<Value*> bargs;
    for (const Type& t : revTypes) bargs.push_back(bb->addArgument(t));
    OpBuilder ib(bb, loc);
    Value* j = bargs[0];
    Value* zero = ib.scalar(ElementType::kSI64, 0);
    std::vector<Value*> state;
    for (size_t k = 0; k < n; ++k) state.push_back(readRow(ib, fwd->result(n + k), w.operand(k)->type(), j, zero));
    std::vector<Value*> resultCts(n, nullptr);
    for (size_t f = 0; f < floats.size(); ++f) resultCts[floats[f]] = bargs[1 + f];
    std::vector<Value*> wrt;
    for (size_t k : floats) wrt.push_back(body.argument(k));
    wrt.insert(wrt.end(), captured.begin(), captured.end());
    b.fail(ib.status());
    auto cts = emitBlockVjp(body, bb, state, resultCts, wrt, outer, loc);
    if (!cts) {
      if (inner.isOk()) inner = cts.status();
      return;
    }
    OpBuilder tail(bb, loc);
    std::vector<Value*> next = {tail.sub(j, tail.scalar(ElementType::kSI64, 1))};
    for (size_t f = 0; f < floats.size(); ++f) next.push_back((*cts)[f]);
    for (size_t i = 0; i < captured.size(); ++i) next.push_back(tail.add(bargs[1 + floats.size() + i], (*cts)[floats.size() + i]));
    tail.create("stablehlo.return", next, {}, {}, 0);
    b.fail(tail.status());
  });
  WF_RETURN_IF_ERROR(inner);
  WF_RETURN_IF_ERROR(b.status());
  for (size_t f = 0; f < floats.size(); ++f) c.accumulate(floats[f], rev->result(1 + f));
  for (size_t i = 0; i < captured.size(); ++i) c.accumulateValue(captured[i], rev->result(1 + floats.size() + i));
  return Status::ok();
}

}  // namespace

void registerControlFlowRules(RuleTable& t) {
  t.add(OpCode::Select, selectRule);
  t.add(OpCode::Clamp, clampRule);
  t.add(OpCode::OptimizationBarrier, optimizationBarrierRule);
  t.add(OpCode::If, branchRule);
  t.add(OpCode::Case, branchRule);
  t.add(OpCode::While, whileRule);
}

}  // namespace wf::autodiff
