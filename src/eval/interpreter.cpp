#include "eval/interpreter.h"

namespace wf {

void ValueScope::bind(const Value* v, Literal l) { values_[v] = std::move(l); }

Literal ValueScope::take(const Value* v) {
  auto it = values_.find(v);
  if (it == values_.end()) return Literal();
  Literal l = std::move(it->second);
  values_.erase(it);
  return l;
}

const Literal* ValueScope::lookup(const Value* v) const {
  for (const ValueScope* s = this; s; s = s->parent_) {
    auto it = s->values_.find(v);
    if (it != s->values_.end()) return &it->second;
  }
  return nullptr;
}

void KernelRegistry::add(OpCode code, Kernel kernel) { kernels_[static_cast<size_t>(code)] = std::move(kernel); }

const Kernel* KernelRegistry::find(OpCode code) const {
  auto i = static_cast<size_t>(code);
  if (i >= kernels_.size() || !kernels_[i]) return nullptr;
  return &kernels_[i];
}

const KernelRegistry& KernelRegistry::instance() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerDataMovementKernels(r);
    registerIndexingKernels(r);
    registerReduceKernels(r);
    registerDotConvKernels(r);
    registerControlFlowKernels(r);
    registerCollectiveKernels(r);
    registerMiscKernels(r);
    registerCheckKernels(r);
    registerChloKernels(r);
    return r;
  }();
  return registry;
}

namespace {

constexpr int kMaxCallDepth = 256;

Status checkResultTypes(const Operation& op, const std::vector<Literal>& results) {
  if (results.size() != op.numResults())
    return internalError(op.describe() + ": kernel returned " + std::to_string(results.size()) +
                         " results, op has " + std::to_string(op.numResults()));
  for (size_t i = 0; i < results.size(); ++i) {
    const Type& declared = op.result(i)->type();
    const Type& actual = results[i].type();
    // Dynamic result dims are resolved at run time; only static declarations must match exactly.
    if (declared.isTensor() && declared.hasStaticShape() && declared.elementType() != ElementType::kQuantized &&
        (actual.shape() != declared.shape() || actual.elementType() != declared.elementType()))
      return internalError(op.describe() + ": kernel produced " + actual.toString() + " for result #" +
                           std::to_string(i) + " declared " + declared.toString());
  }
  return Status::ok();
}

void collectUses(const Operation& op, std::vector<const Value*>& uses) {
  uses.insert(uses.end(), op.operands().begin(), op.operands().end());
  for (const auto& region : op.regions())
    for (const auto& b : region->blocks())
      for (const auto& inner : b->operations()) collectUses(*inner, uses);
}

// For each op of `block`: the results of the block's ops that are not used after it (uses in
// nested regions count as uses by the op holding them).
std::vector<std::vector<const Value*>> lastUses(const Block& block) {
  const auto& ops = block.operations();
  std::unordered_map<const Value*, size_t> last;
  for (size_t i = 0; i < ops.size(); ++i)
    for (const auto& r : ops[i]->results()) last[r.get()] = i;  // unused: dead right away
  std::vector<const Value*> uses;
  for (size_t i = 0; i < ops.size(); ++i) {
    uses.clear();
    collectUses(*ops[i], uses);
    for (const Value* v : uses)
      if (auto it = last.find(v); it != last.end()) it->second = i;
  }
  std::vector<std::vector<const Value*>> dead(ops.size());
  for (const auto& [v, i] : last) dead[i].push_back(v);
  return dead;
}

}  // namespace

Expected<std::vector<Literal>> Interpreter::runRegion(const Region& region, std::span<const Literal> args,
                                                      EvalContext& ctx) {
  if (region.empty()) return internalError("running an empty region");
  const Block& block = region.front();
  if (block.numArguments() != args.size())
    return invalidArgument("region of " + (region.parent() ? region.parent()->describe() : std::string("?")) +
                           " takes " + std::to_string(block.numArguments()) + " arguments, got " +
                           std::to_string(args.size()));
  ValueScope scope(ctx.scope);
  for (size_t i = 0; i < args.size(); ++i) scope.bind(block.argument(i), args[i]);

  const ValueScope* savedScope = ctx.scope;
  const KernelRegistry& registry = KernelRegistry::instance();
  std::vector<Literal> operands;
  // Frees each op result after its last use, so that memory stays at the live set and the
  // allocator hands the next op recently used (cache-warm) blocks. Small bodies (reduce or
  // comparator regions run per element) skip the bookkeeping.
  std::vector<std::vector<const Value*>> dead;
  if (block.operations().size() >= 16) dead = lastUses(block);
  size_t index = 0;
  for (const auto& opPtr : block.operations()) {
    const Operation& op = *opPtr;
    operands.clear();
    for (const Value* v : op.operands()) {
      const Literal* l = scope.lookup(v);
      if (!l) {
        ctx.scope = savedScope;
        return internalError(op.describe() + ": operand #" + std::to_string(operands.size()) + " has no value");
      }
      operands.push_back(*l);
    }
    if (op.code() == OpCode::Return || op.code() == OpCode::FuncReturn) {
      ctx.scope = savedScope;
      return operands;
    }
    const Kernel* kernel = registry.find(op.code());
    if (!kernel) {
      ctx.scope = savedScope;
      return unimplemented(op.describe() + ": no CPU kernel for this op");
    }
    ctx.scope = &scope;
    Expected<std::vector<Literal>> results = (*kernel)(op, operands, ctx);
    ctx.scope = savedScope;
    if (!results) {
      const Status& s = results.status();
      // Name the op once, at the innermost failure.
      if (s.message().find(op.location().toString()) != std::string::npos) return s;
      return s.withContext(op.describe());
    }
    WF_RETURN_IF_ERROR(checkResultTypes(op, *results));
    if (ctx.onResult)
      for (size_t i = 0; i < results->size(); ++i) ctx.onResult(*op.result(i), (*results)[i]);
    for (size_t i = 0; i < results->size(); ++i) scope.bind(op.result(i), std::move((*results)[i]));
    if (!dead.empty())
      for (const Value* v : dead[index]) scope.bind(v, Literal());
    ++index;
  }
  return internalError("region of " + (region.parent() ? region.parent()->describe() : std::string("?")) +
                       " has no terminator");
}

Expected<std::vector<Literal>> Interpreter::callFunction(const Operation& func, std::vector<Literal> args,
                                                         EvalContext& ctx) {
  FuncOp fn(&func);
  if (func.numRegions() == 0 || func.region(0).empty())
    return invalidArgument("function @" + std::string(fn.symName()) + " has no body");
  const Block& body = fn.body();
  if (body.numArguments() != args.size())
    return invalidArgument("function @" + std::string(fn.symName()) + " takes " +
                           std::to_string(body.numArguments()) + " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const Type& declared = body.argument(i)->type();
    const Type& actual = args[i].type();
    if (!declared.isTensor()) continue;
    bool ok = actual.isTensor() && actual.elementType() == declared.elementType() &&
              actual.rank() == declared.rank();
    for (int64_t d = 0; ok && d < declared.rank(); ++d)
      ok = declared.dim(d) == kDynamic || declared.dim(d) == actual.dim(d);
    if (!ok)
      return invalidArgument("function @" + std::string(fn.symName()) + " argument #" + std::to_string(i) +
                             " expects " + declared.toString() + ", got " + actual.toString());
  }
  if (ctx.callDepth >= kMaxCallDepth)
    return outOfRange("call depth exceeds " + std::to_string(kMaxCallDepth) + " at @" + std::string(fn.symName()));
  // Functions are isolated from above: they see only their arguments.
  const ValueScope* savedScope = ctx.scope;
  ctx.scope = nullptr;
  ++ctx.callDepth;
  auto results = runRegion(func.region(0), args, ctx);
  --ctx.callDepth;
  ctx.scope = savedScope;
  return results;
}

}  // namespace wf
