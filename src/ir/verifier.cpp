// The verifier: walks modules, functions and regions in order, checks that every operand is
// defined before its use (SSA dominance in straight-line regions, where nested regions see the
// values of enclosing ones), and checks each op against its type rule (shape_inference.h): the
// operand constraints there, then the declared result types against the inferred ones.
#include "ir/verifier.h"

#include <set>
#include <unordered_set>

#include "ir/attr_reader.h"
#include "ir/shape_inference.h"
#include "support/phase_timer.h"

namespace wf {
namespace verify_detail {

Status opError(const Operation& op, std::string_view constraint, const std::string& message) {
  return constraintError(op, constraint, message);
}

// The op's rule, then each declared result type against the inferred one.
Status verifyOpRule(const Operation& op, const Module* module) {
  WF_ASSIGN_OR_RETURN(InferredTypes inferred, inferResultTypes(op, module));
  if (inferred.types.size() != op.numResults())
    return opError(op, "results", "expects " + std::to_string(inferred.types.size()) + " results, has " +
                                      std::to_string(op.numResults()));
  for (size_t i = 0; i < op.numResults(); ++i) {
    const Type &declared = op.result(i)->type(), &want = inferred.types[i];
    std::string what = op.numResults() == 1 ? "result" : "result #" + std::to_string(i);
    if (declared.isTensor() && want.isTensor()) {
      if (!shapesCompatible(declared, want))
        return opError(op, inferred.shapeRule, what + " " + declared.toString() + " has shape " +
                                                   shapeString(declared.shape()) + ", expected " + shapeString(want.shape()));
      if (!elementTypesCompatible(declared, want))
        return opError(op, inferred.elementRule, what + " " + declared.toString() + " must have element type " +
                                                     std::string(elementTypeName(want.elementType())));
    } else if (!typesCompatible(declared, want)) {
      return opError(op, inferred.shapeRule, what + " " + declared.toString() + " must be " + want.toString());
    }
  }
  return Status::ok();
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
  PhaseTimer phase("verify");
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
