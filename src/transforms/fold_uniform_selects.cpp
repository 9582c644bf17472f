// Selects on a uniform, compile-time predicate replaced by the operand they pick
// (fold_uniform_selects.h).
#include "transforms/fold_uniform_selects.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "eval/interpreter.h"
#include "transforms/cse.h"

namespace wf {
namespace {

// Ops that keep a value's set of elements (never a new one): a uniform operand gives a uniform
// result of the same element.
bool keepsElements(OpCode code) {
  switch (code) {
    case OpCode::BroadcastInDim:
    case OpCode::Broadcast:
    case OpCode::Reshape:
    case OpCode::Transpose:
    case OpCode::Slice:
    case OpCode::Reverse:
      return true;
    default:
      return false;
  }
}

// Ops evaluated here when every operand is known: pure, without regions, and run by the CPU
// evaluator (matrix products and convolutions are left alone: a mask is not made of them).
bool isEvaluated(const Operation& op) {
  return isPureOp(op.code()) && op.numRegions() == 0 && op.numResults() == 1 && op.code() != OpCode::DotGeneral &&
         op.code() != OpCode::Dot && op.code() != OpCode::Convolution;
}

class Folder {
 public:
  explicit Folder(const FoldUniformSelectsOptions& options) : options_(options) {}

  // The value of `v` where it is known and small enough to evaluate, else null.
  const Literal* known(const Value* v) {
    if (auto it = known_.find(v); it != known_.end()) return it->second ? &*it->second : nullptr;
    known_[v] = std::nullopt;  // also guards against revisiting while evaluating
    const Operation* op = v->definingOp();
    const Type& type = v->type();
    if (!op || !type.isTensor() || !type.hasStaticShape() || type.numElements() > options_.maxEvaluatedElements)
      return nullptr;
    if (op->code() == OpCode::Constant) {
      const Attribute* value = op->attr("value");
      if (!value || value->kind() != Attribute::Kind::kDenseElements || !value->literal() ||
          value->literal()->type() != type)
        return nullptr;
      known_[v] = value->literal()->clone();
      return &*known_[v];
    }
    if (!isEvaluated(*op)) return nullptr;
    std::vector<Literal> operands;
    for (const Value* operand : op->operands()) {
      const Literal* lit = known(operand);
      if (!lit) return nullptr;
      operands.push_back(lit->clone());
    }
    const Kernel* kernel = KernelRegistry::instance().find(op->code());
    if (!kernel || !*kernel) return nullptr;
    EvalContext ctx;
    auto result = (*kernel)(*op, operands, ctx);
    if (!result || result->size() != 1 || (*result)[0].type() != type) return nullptr;
    known_[v] = std::move((*result)[0]);
    return &*known_[v];
  }

  // Whether every element of the boolean `v` is true (1), false (0), or neither / unknown.
  std::optional<bool> uniform(const Value* v) {
    const Type& type = v->type();
    if (!type.isTensor() || !type.hasStaticShape() || type.elementType() != ElementType::kI1 || type.numElements() == 0)
      return std::nullopt;
    const Operation* op = v->definingOp();
    if (op && keepsElements(op->code()) && op->numOperands() >= 1 && op->operand(0)->type().isTensor() &&
        op->operand(0)->type().hasStaticShape() && op->operand(0)->type().numElements() > 0)
      return uniform(op->operand(0));
    const Literal* lit = known(v);
    if (!lit) return std::nullopt;
    const int64_t first = lit->getInt(0);
    for (int64_t i = 1; i < lit->numElements(); ++i)
      if (lit->getInt(i) != first) return std::nullopt;
    return first != 0;
  }

 private:
  const FoldUniformSelectsOptions& options_;
  std::unordered_map<const Value*, std::optional<Literal>> known_;
};

// Drops the pure ops of `block` whose results nothing reads (the predicates left behind).
void removeUnreadPureOps(Block& block) {
  std::unordered_map<const Value*, int> reads;
  std::function<void(const Block&)> count = [&](const Block& b) {
    for (const auto& op : b.operations()) {
      for (const Value* v : op->operands()) ++reads[v];
      for (const auto& region : op->regions())
        for (const auto& inner : region->blocks()) count(*inner);
    }
  };
  count(block);
  auto& ops = block.mutableOperations();
  std::unordered_set<const Operation*> dropped;
  for (size_t i = ops.size(); i-- > 0;) {
    const Operation& op = *ops[i];
    if (!isPureOp(op.code()) || op.numRegions() != 0 || op.numResults() == 0) continue;
    bool unread = true;
    for (const auto& r : op.results()) unread = unread && reads[r.get()] == 0;
    if (!unread) continue;
    for (const Value* v : op.operands()) --reads[v];
    dropped.insert(&op);
  }
  ops.erase(std::remove_if(ops.begin(), ops.end(), [&](const auto& op) { return dropped.count(op.get()) != 0; }),
            ops.end());
}

}  // namespace

Expected<int> foldUniformSelects(Module& module, std::string_view function, const FoldUniformSelectsOptions& options) {
  Operation* fnOp = module.lookupFunction(function);
  if (!fnOp) return invalidArgument("foldUniformSelects: no function @" + std::string(function));
  Block& body = FuncOp(fnOp).body();
  Folder folder(options);
  std::unordered_map<const Value*, Value*> replacement;
  auto replace = [&](Operation& op) {
    for (size_t i = 0; i < op.numOperands(); ++i)
      if (auto it = replacement.find(op.operand(i)); it != replacement.end()) op.setOperand(i, it->second);
  };
  std::function<void(Block&)> replaceNested = [&](Block& b) {
    for (auto& op : b.mutableOperations()) {
      replace(*op);
      for (const auto& region : op->regions())
        for (const auto& inner : region->blocks()) replaceNested(*inner);
    }
  };
  int folded = 0;
  for (auto& owned : body.mutableOperations()) {
    Operation& op = *owned;
    replace(op);
    for (const auto& region : op.regions())
      for (const auto& inner : region->blocks()) replaceNested(*inner);
    if (op.code() != OpCode::Select || op.numOperands() != 3 || op.numResults() != 1) continue;
    // The operand picked must be the result itself (same type), not a scalar broadcast by select.
    const std::optional<bool> pick = folder.uniform(op.operand(0));
    if (!pick) continue;
    Value* chosen = op.operand(*pick ? 1 : 2);
    if (chosen->type() != op.result(0)->type()) continue;
    replacement[op.result(0)] = chosen;
    ++folded;
  }
  if (folded > 0) removeUnreadPureOps(body);
  return folded;
}

}  // namespace wf
