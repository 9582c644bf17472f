// The autodiff pass: copy the function, find the active values, walk the ops backwards through
// the rule table, return the results and the gradients (autodiff.h, docs/autodiff.md).
#include "autodiff/autodiff.h"

#include <algorithm>
#include <set>

#include "autodiff/rules.h"
#include "ir/composites.h"
#include "ir/verifier.h"

namespace wf {
namespace autodiff {

bool isDifferentiableType(const Type& t) { return t.isTensor() && isFloat(t.elementType()); }

namespace {

// The block holding `v` (its defining op's block, or the block it is an argument of).
const Block* blockOf(const Value* v) {
  if (v->isBlockArgument()) return v->ownerBlock();
  return v->definingOp() ? v->definingOp()->parentBlock() : nullptr;
}

bool definedInside(const Value* v, const Operation& op) {
  for (const Block* b = blockOf(v); b;) {
    const Operation* parent = b->parent() ? b->parent()->parent() : nullptr;
    if (!parent) return false;
    if (parent == &op) return true;
    b = parent->parentBlock();
  }
  return false;
}

void collectCaptured(const Operation& root, const Operation& op, std::vector<Value*>& out, std::set<const Value*>& seen) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        for (Value* v : inner->operands())
          if (!definedInside(v, root) && seen.insert(v).second) out.push_back(v);
        collectCaptured(root, *inner, out, seen);
      }
}

}  // namespace

std::vector<Value*> capturedValues(const Operation& op) {
  std::vector<Value*> out;
  std::set<const Value*> seen;
  collectCaptured(op, op, out, seen);
  return out;
}

void Differentiator::markActive(const Value* v) {
  if (isDifferentiableType(v->type())) active_.insert(v);
}

void Differentiator::propagateActivity(const Block& block) {
  for (const auto& op : block.operations()) {
    bool any = std::any_of(op->operands().begin(), op->operands().end(), [&](const Value* v) { return isActive(v); });
    if (!any && op->numRegions() > 0) {
      for (const Value* v : capturedValues(*op)) any = any || isActive(v);
    }
    if (!any) continue;
    for (const auto& r : op->results()) markActive(r.get());
  }
}

const Operation* Differentiator::lookupFunction(std::string_view name) const {
  for (const auto& f : newFunctions_)
    if (FuncOp(f.get()).symName() == name) return f.get();
  return module_ ? module_->lookupFunction(name) : nullptr;
}

Value* Differentiator::cotangent(const Value* v) const {
  auto it = cotangents_.find(v);
  return it == cotangents_.end() ? nullptr : it->second;
}

void Differentiator::accumulate(OpBuilder& b, const Value* v, Value* ct) {
  if (!ct || !isActive(v)) return;
  if (ct->type() != v->type()) {
    b.fail(internalError("'autodiff' at " + b.location().toString() + ": cotangent of type " + ct->type().toString() +
                         " for a value of type " + v->type().toString()));
    return;
  }
  Value*& slot = cotangents_[v];
  slot = slot ? b.add(slot, ct) : ct;
}

Status Differentiator::reverse(const Block& block, OpBuilder& b) {
  // The backward ops are appended to the block being walked: walk a snapshot of the forward ops.
  std::vector<const Operation*> forward;
  for (const auto& op : block.operations())
    if (op->code() != OpCode::FuncReturn && op->code() != OpCode::Return) forward.push_back(op.get());
  return reverse(forward, b);
}

Status Differentiator::reverse(const std::vector<const Operation*>& forward, OpBuilder& b) {
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    const Operation& op = **it;
    bool anyCotangent = false;
    for (const auto& r : op.results()) anyCotangent = anyCotangent || cotangent(r.get()) != nullptr;
    if (!anyCotangent) continue;
    const VjpRule* rule = ruleTable().find(op.code());
    if (!rule)
      return unimplemented(op.describe() + ": autodiff: no VJP rule for " + op.name() +
                           " (docs/autodiff.md lists the ops that have one)");
    b.setLocation(op.location());
    VjpContext ctx(*this, b, op);
    WF_RETURN_IF_ERROR((*rule)(ctx));
    if (!b.ok()) return b.status();
    for (const auto& r : op.results()) cotangents_.erase(r.get());  // consumed; frees the map early
  }
  return Status::ok();
}

Status VjpContext::unsupported(const std::string& why) const {
  return unimplemented(op.describe() + ": autodiff: " + why);
}

const RuleTable& ruleTable() {
  static const RuleTable table = [] {
    RuleTable t;
    registerElementwiseRules(t);
    registerDataMovementRules(t);
    registerDotConvRules(t);
    registerReduceRules(t);
    registerIndexingRules(t);
    registerControlFlowRules(t);
    registerSortRules(t);
    registerCompositeRules(t);
    registerNormRules(t);
    return t;
  }();
  return table;
}

Expected<std::vector<Value*>> emitBlockVjp(const Block& src, Block* dst, const std::vector<Value*>& argValues,
                                           const std::vector<Value*>& resultCotangents, const std::vector<Value*>& wrt,
                                           const Differentiator& outer, const Location& loc) {
  const Operation* term = src.terminator();
  if (!term) return internalError("'autodiff' at " + loc.toString() + ": region without a terminator");
  // Recompute the block: its intermediates are not visible outside it.
  std::unordered_map<const Value*, Value*> mapping;
  Differentiator inner(outer.module());
  for (size_t i = 0; i < src.numArguments() && i < argValues.size(); ++i) {
    mapping[src.argument(i)] = argValues[i];
    inner.markActive(argValues[i]);
  }
  std::vector<const Operation*> cloned;
  for (const auto& op : src.operations())
    if (op.get() != term) cloned.push_back(dst->append(cloneOperation(*op, mapping)));
  auto mapped = [&](Value* v) {
    auto it = mapping.find(v);
    return it == mapping.end() ? v : it->second;
  };
  for (Value* v : wrt)
    if (outer.isActive(v)) inner.markActive(v);
  inner.propagateActivity(*dst);
  OpBuilder b(dst, loc, outer.module());
  for (size_t i = 0; i < term->numOperands() && i < resultCotangents.size(); ++i)
    inner.accumulate(b, mapped(term->operand(i)), resultCotangents[i]);
  WF_RETURN_IF_ERROR(b.status());
  WF_RETURN_IF_ERROR(inner.reverse(cloned, b));  // not the ops `dst` held before
  std::vector<Value*> out;
  b.setLocation(loc);
  for (Value* v : wrt) {
    Value* m = mapped(v);
    Value* ct = inner.cotangent(m);
    out.push_back(ct ? ct : b.zeros(m->type()));
  }
  WF_RETURN_IF_ERROR(b.status());
  return out;
}

namespace {

// Copies the ops of `src` into `dst` with every func.call and stablehlo.composite (at any depth
// of nesting) replaced by the callee's (decomposition's) body: the rules see one flat program, the way JAX's and PyTorch's exporters
// usually emit it. `mapping` takes `src`'s values to their copies.
Status inlineInto(const Block& src, Block* dst, std::unordered_map<const Value*, Value*>& mapping,
                  const Module& module, int depth, bool calleeBody) {
  auto mapped = [&](Value* v) {
    auto it = mapping.find(v);
    return it == mapping.end() ? v : it->second;
  };
  for (const auto& op : src.operations()) {
    // Attention stays one op: its rule (rules_attention.cpp) gives it a backward composite that
    // recomputes the probabilities rather than keeping them.
    const bool keep = op->code() == OpCode::Composite && isAttentionComposite(*op);
    if (!keep && (op->code() == OpCode::FuncCall || op->code() == OpCode::Composite)) {
      // A composite means what its decomposition function computes.
      const Attribute* callee = op->attr(op->code() == OpCode::FuncCall ? "callee" : "decomposition");
      const Operation* fn = callee ? module.lookupFunction(callee->stringValue()) : nullptr;
      if (!fn) return notFound(op->describe() + ": autodiff: the callee of this call is not in the module");
      if (depth > 64) return unimplemented(op->describe() + ": autodiff: calls nest too deeply (recursion?)");
      const Block& body = FuncOp(fn).body();
      for (size_t i = 0; i < body.numArguments() && i < op->numOperands(); ++i)
        mapping[body.argument(i)] = mapped(op->operand(i));
      // The callee's return is not copied; its operands become the call's results.
      WF_RETURN_IF_ERROR(inlineInto(body, dst, mapping, module, depth + 1, /*calleeBody=*/true));
      const Operation* ret = body.terminator();
      for (size_t i = 0; i < op->numResults() && ret && i < ret->numOperands(); ++i)
        mapping[op->result(i)] = mapped(ret->operand(i));
      continue;
    }
    if (op->code() == OpCode::FuncReturn && calleeBody) continue;  // an inlined callee's return
    auto copy = std::make_unique<Operation>(op->name(), op->location());
    for (Value* v : op->operands()) copy->addOperand(mapped(v));
    for (const auto& [key, value] : op->attributes().entries()) copy->setAttr(key, value);
    for (const auto& region : op->regions()) {
      Region* nr = copy->addRegion();
      for (const auto& block : region->blocks()) {
        Block* nb = nr->addBlock();
        for (const auto& arg : block->arguments()) mapping[arg.get()] = nb->addArgument(arg->type());
        WF_RETURN_IF_ERROR(inlineInto(*block, nb, mapping, module, depth, false));
      }
    }
    for (const auto& r : op->results()) mapping[r.get()] = copy->addResult(r->type());
    dst->append(std::move(copy));
  }
  return Status::ok();
}

}  // namespace

}  // namespace autodiff

Expected<std::string> addValueAndGradFunction(Module& module, std::string_view function, std::span<const int> wrt,
                                              std::string_view newName) {
  using autodiff::Differentiator;
  auto& ops = module.mutableOperations();
  auto fnIt = std::find_if(ops.begin(), ops.end(), [&](const auto& op) {
    return op->code() == OpCode::FuncFunc && FuncOp(op.get()).symName() == function;
  });
  if (fnIt == ops.end()) return notFound("autodiff: no function @" + std::string(function) + " in the module");
  const Operation& fn = **fnIt;
  const Block& body = FuncOp(&fn).body();
  std::string name = newName.empty() ? std::string(function) + "_value_and_grad" : std::string(newName);
  if (module.lookupFunction(name)) return invalidArgument("autodiff: the module already has a function @" + name);

  std::set<int> seen;
  for (int i : wrt) {
    if (i < 0 || static_cast<size_t>(i) >= body.numArguments())
      return invalidArgument("autodiff: @" + std::string(function) + " has " + std::to_string(body.numArguments()) +
                             " arguments; there is no argument " + std::to_string(i));
    if (!seen.insert(i).second) return invalidArgument("autodiff: argument " + std::to_string(i) + " is listed twice");
    const Type& t = body.argument(static_cast<size_t>(i))->type();
    if (t.isTensor() && !t.hasStaticShape())
      return invalidArgument("autodiff: argument " + std::to_string(i) + " of @" + std::string(function) + " has type " +
                             t.toString() + "; gradients need static shapes (specialize the function first: warpforge print --refine)");
  }
  const Operation* ret = body.terminator();
  if (!ret || ret->code() != OpCode::FuncReturn || ret->numOperands() == 0)
    return invalidArgument(fn.describe() + ": autodiff: @" + std::string(function) + " returns nothing to differentiate");
  const Type& resultType = ret->operand(0)->type();
  if (!autodiff::isDifferentiableType(resultType) || !resultType.hasStaticShape())
    return invalidArgument(ret->describe() + ": autodiff: the first result of @" + std::string(function) + " is " +
                           resultType.toString() + "; it must be a float tensor of static shape" +
                           (resultType.isTensor() && !resultType.hasStaticShape()
                                ? " (specialize the function to static shapes first: warpforge print --refine)"
                                : ""));

  // The new function starts as a copy with calls inlined; the backward ops go between its body
  // and its return.
  std::unordered_map<const Value*, Value*> mapping;
  auto grad = std::make_unique<Operation>(fn.name(), fn.location());
  for (const auto& [key, value] : fn.attributes().entries()) grad->setAttr(key, value);
  grad->setAttr("sym_name", Attribute::string(name));
  Block& gbody = *grad->addRegion()->addBlock();
  for (const auto& arg : body.arguments()) {
    Value* copy = gbody.addArgument(arg->type());
    copy->setNameHint(arg->nameHint());
    mapping[arg.get()] = copy;
  }
  WF_RETURN_IF_ERROR(autodiff::inlineInto(body, &gbody, mapping, module, 0, false));
  std::unique_ptr<Operation> oldReturn = std::move(gbody.mutableOperations().back());
  gbody.mutableOperations().pop_back();

  Differentiator d(&module);
  for (int i : wrt) d.markActive(gbody.argument(static_cast<size_t>(i)));
  d.propagateActivity(gbody);
  Operation* returnOp = oldReturn.get();
  WF_RETURN_IF_ERROR(autodiff::storeLoopStates(gbody, d, std::span<Operation* const>(&returnOp, 1), &module));
  const size_t forwardOps = gbody.operations().size();
  OpBuilder b(&gbody, oldReturn->location(), &module);
  Value* result = oldReturn->operand(0);
  if (d.isActive(result)) d.accumulate(b, result, b.ones(result->type()));
  WF_RETURN_IF_ERROR(b.status());
  WF_RETURN_IF_ERROR(d.reverse(gbody, b));
  WF_RETURN_IF_ERROR(autodiff::rematerializeCheapValues(gbody, forwardOps));
  std::vector<std::unique_ptr<Operation>> newFunctions = d.takeNewFunctions();

  b.setLocation(oldReturn->location());
  std::vector<Value*> results = oldReturn->operands();
  FunctionType type = FuncOp(grad.get()).functionType();
  for (int i : wrt) {
    Value* arg = gbody.argument(static_cast<size_t>(i));
    Value* ct = d.cotangent(arg);
    results.push_back(ct ? ct : b.zeros(arg->type()));
    type.results.push_back(arg->type());
  }
  WF_RETURN_IF_ERROR(b.status());
  auto newReturn = std::make_unique<Operation>(oldReturn->name(), oldReturn->location());
  for (Value* v : results) newReturn->addOperand(v);
  gbody.append(std::move(newReturn));
  grad->setAttr("function_type", Attribute::functionType(type));
  if (const Attribute* resAttrs = grad->attr("res_attrs"); resAttrs && resAttrs->kind() == Attribute::Kind::kArray) {
    std::vector<Attribute> extended = resAttrs->elements();
    for (size_t i = 0; i < wrt.size(); ++i) extended.push_back(Attribute::dictionary({}));
    grad->setAttr("res_attrs", Attribute::array(std::move(extended)));
  }

  const size_t fnIndex = static_cast<size_t>(std::distance(ops.begin(), fnIt));
  ops.insert(std::next(fnIt), std::move(grad));
  const size_t numNew = newFunctions.size();
  for (auto& f : newFunctions) ops.push_back(std::move(f));  // the rules' functions (backward composites)
  Status verified = verifyModule(module);
  if (!verified.isOk()) {
    // Leave the module as it was.
    ops.erase(ops.end() - static_cast<std::ptrdiff_t>(numNew), ops.end());
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(fnIndex) + 1);
    return internalError("autodiff: the gradient function of @" + std::string(function) +
                         " does not verify: " + verified.message());
  }
  return name;
}

}  // namespace wf
