// Compile-time values of what a program computes from constants alone (known_values.h).
#include "transforms/known_values.h"

#include <vector>

#include "eval/interpreter.h"
#include "transforms/cse.h"

namespace wf {
namespace {

// Ops that keep a value's set of elements (never a new one).
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

// Whether every op of `block` (and of blocks nested in it) computes from its operands alone.
bool pureBody(const Block& block) {
  for (const auto& op : block.operations()) {
    if (op->code() == OpCode::Return) continue;
    if (!isPureOp(op->code()) || op->numRegions() != 0) return false;
  }
  return true;
}

// Ops evaluated when every operand is known: pure ones, and reductions, windows, maps and sorts
// whose bodies are pure (a cumulative sum of positions); never matrix products and convolutions.
bool isEvaluated(const Operation& op) {
  if (op.code() == OpCode::DotGeneral || op.code() == OpCode::Dot || op.code() == OpCode::Convolution) return false;
  if (op.numRegions() == 0) return isPureOp(op.code());
  switch (op.code()) {
    case OpCode::Reduce:
    case OpCode::ReduceWindow:
    case OpCode::Map:
    case OpCode::Sort:
      break;
    default:
      return false;
  }
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      if (!pureBody(*block)) return false;
  return true;
}

}  // namespace

const Literal* KnownValues::value(const Value* v) {
  if (auto it = values_.find(v); it != values_.end()) return it->second ? &*it->second : nullptr;
  values_[v] = std::nullopt;  // also what a value reached again while it is evaluated gets
  const Operation* op = v->definingOp();
  const Type& type = v->type();
  if (!op || !type.isTensor() || !type.hasStaticShape() || type.numElements() > maxElements_) return nullptr;
  std::vector<Literal> results;
  if (op->code() == OpCode::Constant) {
    const Attribute* value = op->attr("value");
    if (!value || value->kind() != Attribute::Kind::kDenseElements || !value->literal() ||
        value->literal()->type() != type)
      return nullptr;
    results.push_back(value->literal()->clone());
  } else {
    if (!isEvaluated(*op)) return nullptr;
    std::vector<Literal> operands;
    for (const Value* operand : op->operands()) {
      const Literal* known = value(operand);
      if (!known) return nullptr;
      operands.push_back(known->clone());
    }
    const Kernel* kernel = KernelRegistry::instance().find(op->code());
    if (!kernel || !*kernel) return nullptr;
    EvalContext ctx;
    auto evaluated = (*kernel)(*op, operands, ctx);
    if (!evaluated || evaluated->size() != op->numResults()) return nullptr;
    results = std::move(*evaluated);
  }
  // Every result of the op is known now (a sort's or a variadic reduce's others too).
  for (size_t i = 0; i < results.size(); ++i) {
    const Value* r = op->result(i);
    if (results[i].type() != r->type()) return nullptr;
    if (r != v) values_[r] = std::move(results[i]);
  }
  for (size_t i = 0; i < results.size(); ++i)
    if (op->result(i) == v) values_[v] = std::move(results[i]);
  return values_[v] ? &*values_[v] : nullptr;
}

std::optional<bool> KnownValues::uniformBool(const Value* v) {
  const Type& type = v->type();
  if (!type.isTensor() || !type.hasStaticShape() || type.elementType() != ElementType::kI1 || type.numElements() == 0)
    return std::nullopt;
  const Operation* op = v->definingOp();
  if (op && keepsElements(op->code()) && op->numOperands() >= 1 && op->operand(0)->type().isTensor() &&
      op->operand(0)->type().hasStaticShape() && op->operand(0)->type().numElements() > 0)
    return uniformBool(op->operand(0));
  const Literal* lit = value(v);
  if (!lit) return std::nullopt;
  const int64_t first = lit->getInt(0);
  for (int64_t i = 1; i < lit->numElements(); ++i)
    if (lit->getInt(i) != first) return std::nullopt;
  return first != 0;
}

}  // namespace wf
