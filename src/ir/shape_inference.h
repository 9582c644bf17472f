// Shape inference: the result types of every op from its operand types, attributes and regions.
// This is the one place an op's type rule lives (the "Constraints" of the StableHLO spec, C1,
// C2, ...): the verifier compares the declared result types with it, shape refinement computes
// static shapes with it, and transforms that emit ops (autodiff) take their result types from it.
// XLA keeps the same split: xla/service/shape_inference beside hlo_verifier.
//
// Where the operands and attributes do not determine a result (a reshape's or an iota's shape,
// a convert's element type, custom calls), the declared result type of `op` is the answer, and
// the rule checks what it can of it (a reshape keeps the element count). Dims the operands leave
// open stay kDynamic. Ops without a rule (collectives' bodies, custom calls, RNG, the check
// dialect) give their declared types.
#pragma once

#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

struct InferredTypes {
  std::vector<Type> types;
  // The spec constraints that state the results' shapes and element types: the verifier names
  // them when a declared result type disagrees ("C12" for a dot_general's shape).
  std::string_view shapeRule = "C1";
  std::string_view elementRule = "C1";
};

// Checks the constraints of `op` on its operands, attributes and regions (not its results) and
// returns its result types. Errors are StatusCode::kVerifyError naming the op, its location and
// the constraint. `module` resolves callees (func.call, composite); it may be null.
Expected<InferredTypes> inferResultTypes(const Operation& op, const Module* module = nullptr);

// Dynamic dims (`?`) are compatible with any size.
bool dimsCompatible(int64_t a, int64_t b);
// Same rank and pairwise compatible dims (tensors only; false otherwise).
bool shapesCompatible(const Type& a, const Type& b);
// Element types equal, where quantized elements match anything (their rules are not checked).
bool elementTypesCompatible(const Type& a, const Type& b);
// Same kind; tensors: compatible shapes and elements; tuples: element-wise.
bool typesCompatible(const Type& a, const Type& b);
// `shape` printed as "[2, ?, 3]".
std::string shapeString(const std::vector<int64_t>& shape);
std::string typeListString(const std::vector<Type>& types);

}  // namespace wf
