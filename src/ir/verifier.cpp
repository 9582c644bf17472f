// The verifier's driver: walks modules, functions and regions in order, checks that every
// operand is defined before its use (SSA dominance in straight-line regions, where nested
// regions see the values of enclosing ones), and applies each op's rule (verifier_rules.cpp).
#include "ir/verifier.h"

#include <set>
#include <unordered_set>

#include "ir/verifier_internal.h"

namespace wf {
namespace verify_detail {

Status opError(const Operation& op, std::string_view constraint, const std::string& message) {
  std::string text = op.describe() + ": ";
  if (!constraint.empty()) text += std::string(constraint) + ": ";
  return verifyError(text + message);
}

bool dimsCompatible(int64_t a, int64_t b) { return a == b || a == kDynamic || b == kDynamic; }

bool shapesCompatible(const Type& a, const Type& b) {
  if (!a.isTensor() || !b.isTensor() || a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i)
    if (!dimsCompatible(a.dim(i), b.dim(i))) return false;
  return true;
}

bool elementTypesCompatible(const Type& a, const Type& b) {
  if (a.elementType() == ElementType::kQuantized || b.elementType() == ElementType::kQuantized) return true;
  return a.elementType() == b.elementType();
}

bool typesCompatible(const Type& a, const Type& b) {
  if (a.kind() == Type::Kind::kOpaque || b.kind() == Type::Kind::kOpaque) return true;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Type::Kind::kTensor:
      return shapesCompatible(a, b) && elementTypesCompatible(a, b);
    case Type::Kind::kTuple: {
      if (a.tupleElements().size() != b.tupleElements().size()) return false;
      for (size_t i = 0; i < a.tupleElements().size(); ++i)
        if (!typesCompatible(a.tupleElements()[i], b.tupleElements()[i])) return false;
      return true;
    }
    default:
      return true;
  }
}

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == kDynamic ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

std::string typeListString(const std::vector<Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += types[i].toString();
  }
  return s + ")";
}

namespace {

// Types whose rules WarpForge does not check: quantized elements (the spec gives them their own
// constraint sets) and opaque dialect types.
bool hasUncheckedType(const Type& t) {
  if (t.kind() == Type::Kind::kOpaque) return true;
  if (t.isTuple()) {
    for (const Type& e : t.tupleElements())
      if (hasUncheckedType(e)) return true;
    return false;
  }
  return t.isTensor() && t.elementType() == ElementType::kQuantized;
}

bool usesUncheckedTypes(const Operation& op) {
  for (const Value* v : op.operands())
    if (v && hasUncheckedType(v->type())) return true;
  for (const auto& r : op.results())
    if (hasUncheckedType(r->type())) return true;
  return false;
}

class Verifier {
 public:
  // `checkScope`: whether operands must be defined by something visited before (false when
  // verifying a lone op whose operands come from outside it).
  Verifier(const Module* module, bool checkScope) : module_(module), checkScope_(checkScope) {}

  Status verifyOp(const Operation& op) {
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Value* v = op.operand(i);
      if (!v) return opError(op, "SSA", "operand #" + std::to_string(i) + " is null");
      if (checkScope_ && !visible_.count(v))
        return opError(op, "SSA",
                       "operand #" + std::to_string(i) + (v->nameHint().empty() ? "" : " (" + v->nameHint() + ")") +
                           " is used before it is defined or outside the region that defines it");
    }
    if (op.code() != OpCode::kUnknown && !usesUncheckedTypes(op)) WF_RETURN_IF_ERROR(verifyOpRule(op, module_));
    for (const auto& region : op.regions()) WF_RETURN_IF_ERROR(verifyRegion(*region));
    for (const auto& r : op.results()) visible_.insert(r.get());
    return Status::ok();
  }

 private:
  Status verifyRegion(const Region& region) {
    // Values a region defines stay private to it; enclosing values stay visible inside.
    std::vector<const Value*> added;
    Status status;
    for (const auto& block : region.blocks()) {
      for (const auto& arg : block->arguments())
        if (visible_.insert(arg.get()).second) added.push_back(arg.get());
    }
    for (const auto& block : region.blocks()) {
      for (const auto& inner : block->operations()) {
        status = verifyOp(*inner);
        if (!status.isOk()) break;
        for (const auto& r : inner->results()) added.push_back(r.get());
      }
      if (!status.isOk()) break;
    }
    for (const Value* v : added) visible_.erase(v);
    return status;
  }

  const Module* module_;
  bool checkScope_;
  std::unordered_set<const Value*> visible_;
};

}  // namespace
}  // namespace verify_detail

Status verifyModule(const Module& module) {
  std::set<std::string_view> names;
  for (const auto& op : module.operations()) {
    if (op->code() == OpCode::FuncFunc) {
      std::string_view name = FuncOp(op.get()).symName();
      if (!names.insert(name).second)
        return verify_detail::opError(*op, "symbol", "redefinition of function @" + std::string(name));
    }
  }
  for (const auto& op : module.operations()) {
    verify_detail::Verifier verifier(&module, /*checkScope=*/true);
    WF_RETURN_IF_ERROR(verifier.verifyOp(*op));
  }
  return Status::ok();
}

Status verifyOperation(const Operation& op) {
  // A lone op: its operands may come from enclosing code, and callees cannot be resolved.
  verify_detail::Verifier verifier(nullptr, /*checkScope=*/false);
  return verifier.verifyOp(op);
}

}  // namespace wf
