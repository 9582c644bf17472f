// Reverse-mode automatic differentiation on the IR (docs/autodiff.md).
//
// addValueAndGradFunction() appends to a module a new function that computes what `function`
// computes and, after its results, the gradient of the first result with respect to each chosen
// argument: of the result itself when it is a scalar, of the sum of its elements otherwise (the
// cotangent seed is ones of its type). The new function is plain StableHLO: the forward ops
// copied, then the backward ops emitted by one VJP (transpose) rule per op, in the manner of
// JAX's transpose rules and PyTorch's derivatives.yaml.
//
// Only float values that depend on a chosen argument carry cotangents; integer and boolean
// values are never differentiated, and a chosen argument that is not a float tensor (or does not
// reach the first result) gets a zero gradient. An op on the differentiated path without a rule
// is an error naming the op and its source location.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Adds @newName (default: "<function>_value_and_grad") to `module` and returns its name.
// `wrt` lists argument numbers of `function`, each once. The module is unchanged on error.
Expected<std::string> addValueAndGradFunction(Module& module, std::string_view function, std::span<const int> wrt,
                                              std::string_view newName = {});

}  // namespace wf
