// The `check` dialect of the StableHLO interpreter tests, evaluated on host Literals.
//
// Ops (attributes as docs/ir-attributes.md names them):
//   check.expect_eq %a, %b                 exact; NaN equals NaN, +0 equals -0
//   check.expect_eq_const %a, dense<...>   same, against the `value` attribute
//   check.expect_almost_eq %a, %b          |a - b| <= tolerance (default 1e-4), same sign, NaN == NaN
//   check.expect_almost_eq_const %a, dense<...>
//   check.expect_close %a, %b              ULP distance within [min_ulp_difference, max_ulp_difference]
//                                          (defaults 0 and 3)
//   check.expect_serialized_eq             needs probe files on disk: reported as unsupported
// and the same checks spelled `stablehlo.custom_call @check.expect_*(%a, %b)`, whose parameters
// come from the op's attributes or its `backend_config` dictionary (defaults as the StableHLO
// interpreter uses for that spelling: tolerance 1e-3, ULPs 0..3).
//
// Outcomes go to EvalContext::checks; a failed check does not stop the function.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eval/interpreter.h"

namespace wf {

// True for custom_call targets this file evaluates ("check.expect_eq", ...).
bool isCheckCustomCallTarget(std::string_view target);

// Evaluates a `stablehlo.custom_call @check.*`; returns no results.
Expected<std::vector<Literal>> evalCheckCustomCall(const Operation& op, std::span<const Literal> operands,
                                                   EvalContext& ctx);

// The comparisons themselves, for tests and other callers. Each returns an empty string when the
// check passes, else a message describing the first mismatching element and how many differ.
std::string compareExact(const Literal& actual, const Literal& expected);
std::string compareAlmostEqual(const Literal& actual, const Literal& expected, double tolerance);
std::string compareUlps(const Literal& actual, const Literal& expected, uint64_t minUlps, uint64_t maxUlps);

// ULP distance between element i of a and element j of b (same float or complex type);
// 0 for two NaNs, UINT64_MAX between a finite and a non-finite value.
uint64_t ulpDifference(const Literal& a, int64_t i, const Literal& b, int64_t j);

}  // namespace wf
