// Helpers shared by the verifier's driver (verifier.cpp) and its per-op rules
// (verifier_rules.cpp). Not part of the public API.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf::verify_detail {

// "'stablehlo.add' at f.mlir:3:8: C1: <message>"
Status opError(const Operation& op, std::string_view constraint, const std::string& message);

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

// The per-op rule for `op` (its operand/result types and attributes; not its regions' ops,
// which the driver visits). `module` resolves callees; it may be null.
Status verifyOpRule(const Operation& op, const Module* module);

}  // namespace wf::verify_detail
