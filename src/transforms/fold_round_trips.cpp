// Widen-then-narrow round trips folded to reshapes (fold_round_trips.h).
#include "transforms/fold_round_trips.h"

#include <memory>
#include <unordered_map>

#include "ir/builder.h"
#include "transforms/dead_ops.h"

namespace wf {
namespace {

// Whether every value of `from` is a value of `to` (an exact widening between floats).
bool widensExactly(ElementType from, ElementType to) {
  const bool narrow16 = from == ElementType::kBF16 || from == ElementType::kF16;
  return (narrow16 && (to == ElementType::kF32 || to == ElementType::kF64)) ||
         (from == ElementType::kF32 && to == ElementType::kF64);
}

// The x of a narrowing convert of reshape*(convert(x)) that widens x exactly to the type it
// narrows from, x of the type it narrows to; nullptr otherwise.
Value* roundTripSource(const Operation& narrow, const Block& body) {
  if (narrow.code() != OpCode::Convert || narrow.numOperands() != 1) return nullptr;
  const ElementType to = narrow.result(0)->type().elementType();
  const Operation* p = narrow.operand(0)->definingOp();
  while (p && p->parentBlock() == &body && p->code() == OpCode::Reshape) p = p->operand(0)->definingOp();
  if (!p || p->parentBlock() != &body || p->code() != OpCode::Convert) return nullptr;
  Value* x = p->operand(0);
  const ElementType wide = p->result(0)->type().elementType();
  if (x->type().elementType() != to || !widensExactly(to, wide) || !x->type().hasStaticShape() ||
      !narrow.result(0)->type().hasStaticShape())
    return nullptr;
  return x;
}

}  // namespace

Expected<int> foldWidenNarrowRoundTrips(Operation& function) {
  WF_ASSIGN_OR_RETURN(Block* bodyPtr, functionBody(function, "foldWidenNarrowRoundTrips"));
  Block& body = *bodyPtr;
  std::unordered_map<const Value*, Value*> replacement;
  // Each folded convert's reshape of x to its result type, to take its place; the converts stay
  // until their readers read the reshapes.
  std::unordered_map<size_t, std::unique_ptr<Operation>> reshapes;
  auto& ops = body.mutableOperations();
  for (size_t i = 0; i < ops.size(); ++i) {
    Value* x = roundTripSource(*ops[i], body);
    if (!x) continue;
    auto reshape = std::make_unique<Operation>("stablehlo.reshape", ops[i]->location());
    reshape->addOperand(x);
    reshape->addResult(ops[i]->result(0)->type());
    reshape->setParentBlock(&body);
    replacement[ops[i]->result(0)] = reshape->result(0);
    reshapes[i] = std::move(reshape);
  }
  if (reshapes.empty()) return 0;
  replaceUses(body, replacement);
  for (auto& [i, reshape] : reshapes) ops[i] = std::move(reshape);
  removeDeadOps(body);
  return static_cast<int>(reshapes.size());
}

}  // namespace wf
