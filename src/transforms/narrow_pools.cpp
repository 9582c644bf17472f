// Max and min pools narrowed before they run (narrow_pools.h).
#include "transforms/narrow_pools.h"

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"

namespace wf {
namespace {

// True if `op` is a reduce_window of one operand whose body takes the maximum or the minimum of
// its two arguments.
bool isMaxOrMinPool(const Operation& op) {
  if (op.code() != OpCode::ReduceWindow || op.numOperands() != 2 || op.numResults() != 1 || op.numRegions() != 1)
    return false;
  const Region& region = op.region(0);
  if (region.blocks().size() != 1) return false;
  const Block& body = region.front();
  if (body.numArguments() != 2 || body.operations().size() != 2) return false;
  const Operation& combine = *body.operations()[0];
  const Operation& ret = *body.operations()[1];
  if (combine.code() != OpCode::Maximum && combine.code() != OpCode::Minimum) return false;
  const bool args = (combine.operand(0) == body.argument(0) && combine.operand(1) == body.argument(1)) ||
                    (combine.operand(0) == body.argument(1) && combine.operand(1) == body.argument(0));
  return args && ret.numOperands() == 1 && ret.operand(0) == combine.result(0);
}

// Counts the operand slots reading each value, in `block` and the regions nested in it.
void countUses(const Block& block, std::unordered_map<const Value*, int>& uses) {
  for (const auto& op : block.operations()) {
    for (const Value* v : op->operands()) ++uses[v];
    for (const auto& region : op->regions())
      for (const auto& inner : region->blocks()) countUses(*inner, uses);
  }
}

}  // namespace

Expected<int> narrowPools(Operation& function) {
  WF_ASSIGN_OR_RETURN(Block* bodyPtr, functionBody(function, "narrowPools"));
  Block& body = *bodyPtr;
  std::unordered_map<const Value*, int> uses;
  countUses(body, uses);
  // The conversions to drop, each with the pool that now computes its result.
  std::unordered_map<const Operation*, Operation*> narrowed;
  for (const auto& op : body.operations()) {
    if (op->code() != OpCode::Convert) continue;
    Operation* pool = op->operand(0)->definingOp();
    if (!pool || pool->parentBlock() != &body || !isMaxOrMinPool(*pool) || uses[pool->result(0)] != 1) continue;
    const ElementType wide = pool->result(0)->type().elementType();
    const ElementType narrow = op->result(0)->type().elementType();
    if (!isFloat(wide) || !isFloat(narrow) || storageBytes(narrow) >= storageBytes(wide)) continue;
    narrowed[op.get()] = pool;
  }
  if (narrowed.empty()) return 0;
  // The block is rebuilt in order: each pool's operands are converted just before it.
  std::unordered_set<const Operation*> pools;
  for (const auto& [convert, pool] : narrowed) pools.insert(pool);
  std::unordered_map<const Value*, Value*> replacement;
  std::vector<std::unique_ptr<Operation>> ops = std::move(body.mutableOperations());
  body.mutableOperations().clear();
  std::vector<std::unique_ptr<Operation>> dropped;
  for (auto& op : ops) {
    if (narrowed.count(op.get())) {
      replacement[op->result(0)] = narrowed[op.get()]->result(0);
      dropped.push_back(std::move(op));
      continue;
    }
    if (pools.count(op.get())) {
      const Operation* convert = nullptr;
      for (const auto& [c, p] : narrowed)
        if (p == op.get()) convert = c;
      const ElementType narrow = convert->result(0)->type().elementType();
      OpBuilder b(&body, op->location());
      Value* x = b.convert(op->operand(0), narrow);
      Value* init = b.convert(op->operand(1), narrow);
      if (!b.ok()) return b.status().withContext(op->describe() + ": narrowing the pool");
      op->setOperand(0, x);
      op->setOperand(1, init);
      op->result(0)->setType(op->result(0)->type().withElementType(narrow));
      Block& combine = op->region(0).front();
      for (size_t i = 0; i < combine.numArguments(); ++i)
        combine.argument(i)->setType(combine.argument(i)->type().withElementType(narrow));
      Value* combined = combine.operations()[0]->result(0);
      combined->setType(combined->type().withElementType(narrow));
    }
    body.append(std::move(op));
  }
  replaceUses(body, replacement);
  return static_cast<int>(narrowed.size());
}

}  // namespace wf
