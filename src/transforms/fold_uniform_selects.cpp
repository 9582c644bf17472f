// Selects on a uniform, compile-time predicate replaced by the operand they pick
// (fold_uniform_selects.h).
#include "transforms/fold_uniform_selects.h"

#include <optional>
#include <unordered_map>

#include "ir/builder.h"
#include "transforms/dead_ops.h"
#include "transforms/known_values.h"

namespace wf {

Expected<int> foldUniformSelects(Module& module, std::string_view function, const FoldUniformSelectsOptions& options) {
  Operation* fnOp = module.lookupFunction(function);
  if (!fnOp) return invalidArgument("foldUniformSelects: no function @" + std::string(function));
  Block& body = FuncOp(fnOp).body();
  KnownValues known(options.maxEvaluatedElements);
  std::unordered_map<const Value*, Value*> replacement;
  for (const auto& op : body.operations()) {
    if (op->code() != OpCode::Select || op->numOperands() != 3 || op->numResults() != 1) continue;
    const std::optional<bool> pick = known.uniformBool(op->operand(0));
    if (!pick) continue;
    // The operand picked must be the result itself (same type), not a scalar select broadcasts.
    Value* chosen = op->operand(*pick ? 1 : 2);
    if (chosen->type() != op->result(0)->type()) continue;
    // A select picking an earlier folded select's result reads what that one picked.
    if (auto it = replacement.find(chosen); it != replacement.end()) chosen = it->second;
    replacement[op->result(0)] = chosen;
  }
  if (replacement.empty()) return 0;
  replaceUses(body, replacement);
  removeDeadOps(body);
  return static_cast<int>(replacement.size());
}

}  // namespace wf
