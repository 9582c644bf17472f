// Selects on a uniform, compile-time predicate replaced by the operand they pick
// (fold_uniform_selects.h).
#include "transforms/fold_uniform_selects.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "transforms/cse.h"
#include "transforms/known_values.h"

namespace wf {
namespace {

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
  KnownValues known(options.maxEvaluatedElements);
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
    const std::optional<bool> pick = known.uniformBool(op.operand(0));
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
