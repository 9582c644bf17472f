// Shape refinement: specializes a module whose entry function has dynamic dimensions (`?`) to
// concrete argument types, the way StableHLO's `stablehlo-refine-shapes` pass does.
//
// The entry function's arguments take the given static types and every op's result type is
// inferred again from its (now static) operands. Ops whose result shape is an operand value
// (dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota, dynamic_pad, dynamic_gather,
// real_dynamic_slice, dynamic_conv, rng) have that operand folded at compile time and become
// their static forms (broadcast_in_dim, reshape, iota, pad, gather, slice, convolution).
// Calls (func.call, and stablehlo.composite through its decomposition) are inlined, and JAX's
// shape assertions are checked and dropped. The input module is left untouched; the result
// holds the refined entry function only (and the refined decompositions of composites kept
// whole: RefineShapesOptions::keepComposite) and passes the verifier with every type static.
// See docs/transforms.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

struct RefineShapesOptions {
  // Replace ops whose operands are all compile-time constants and whose integer (or i1) result
  // has at most `maxFoldElements` elements by stablehlo.constant: the shape computations
  // (get_dimension_size, the arithmetic, concatenate, reshape, ... on shape tensors) disappear.
  bool foldConstants = true;
  int64_t maxFoldElements = 1024;
  // Whether a folded op is replaced by its constant. With false, the op stays (with static types)
  // for the backend to compute, and its folded value serves only the shape operands that need it:
  // a compiler for a device folds shapes, not the program's data. get_dimension_size, which
  // reads a static type, becomes a constant either way.
  bool replaceFoldedOps = true;
  // Remove side-effect-free ops whose results are unused once shapes are folded.
  bool removeDeadOps = true;
  // Inlining depth limit (recursive calls are an error).
  int maxInlineDepth = 64;
  // Composites (by their `name` attribute) that stay whole instead of being inlined: a backend's
  // kernel for them (Backend::lowersComposite). A kept composite's decomposition is refined to
  // its operand types into a function of the result (named after the decomposition, with a
  // suffix where one decomposition is refined to several signatures), which it refers to.
  std::function<bool(std::string_view name)> keepComposite;
};

// Returns a new module whose function `entry` takes `argumentTypes` (static tensor types, one
// per argument, each compatible with the declared type: same rank and element type, equal
// static dimensions). Errors name the op and its location: an argument type that does not fit,
// a shape operand that cannot be computed at compile time, an inferred type that contradicts a
// declared static one, or a result whose shape cannot be inferred.
Expected<std::unique_ptr<Module>> refineShapes(const Module& module, std::string_view entry,
                                               std::span<const Type> argumentTypes,
                                               const RefineShapesOptions& options = {});

// Whether refineShapes would change function `entry`: it, or a function it calls, holds a value
// of dynamic type or an op whose result shape comes from an operand's value (dynamic_iota,
// dynamic_broadcast_in_dim, dynamic_reshape, dynamic_pad, dynamic_gather, dynamic_conv,
// real_dynamic_slice) or from an operand's type (get_dimension_size).
bool needsShapeRefinement(const Module& module, std::string_view entry);

// Whether every value in `module` (arguments, results, region arguments, function signatures)
// has a static type. On false, `where` (if given) names the first op or function with a dynamic
// type.
bool hasOnlyStaticTypes(const Module& module, std::string* where = nullptr);

// Parses a comma-separated list of types, "tensor<4x128xi64>, tensor<f32>" (for command-line
// options). Errors name the offending text.
Expected<std::vector<Type>> parseTypeList(std::string_view text);

}  // namespace wf
