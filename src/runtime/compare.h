// Comparing a computed tensor with a golden one under a package's tolerances (package.h), for
// `warpforge validate` and tests.
//
// Errors are computed in double precision, whatever the two element types (a bf16 result is
// compared with an f32 golden value). Per element: abs err = |a - e|; rel err = |a - e| / |e| over
// the elements where e != 0. Verdicts:
//   elementwise: every element satisfies |a - e| <= atol + rtol * |e|;
//   rel_l2:      ||a - e||_2 / ||e||_2 <= rel_l2 (0 / 0 counts as 0; x / 0 as infinite).
// A NaN in either tensor never passes, whatever the tolerance; equal infinities agree. Shapes
// must be equal.
//
// With `reference64` (the same model computed in float64, which the exporter records for fp32
// packages), an element outside the elementwise tolerance still passes when the result is within
// twice the golden tensor's own worst float32 error of the float64 value, plus atol:
// |a - r| <= 2 * max_j |e_j - r_j| + atol. A float32 sum that cancels (values of 100 summing to
// 0.02) carries an error of about n * eps * sum|terms| in any correct float32 implementation,
// PyTorch's included, and errors from earlier layers add to it, so two of them can differ there
// by more than rtol of the small result; the float64 value, and how far PyTorch's float32 result
// is from it, set the bar. Such elements are counted in `arbitrated`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "runtime/package.h"

namespace wf {

struct Comparison {
  bool passed = false;
  std::string problem;  // set when the tensors cannot be compared (shape, non-tensor)
  int64_t numElements = 0;
  int64_t mismatches = 0;  // elements outside the elementwise tolerance, NaNs included (rel_l2: NaNs)
  int64_t nanCount = 0;    // elements where either side is NaN
  int64_t arbitrated = 0;  // outside the tolerance, but as close to float64 as float32 PyTorch is
  double maxAbsErr = 0;
  double maxRelErr = 0;
  double relL2 = 0;
  // The element furthest outside the tolerance (or with the largest error when all pass); -1: none.
  int64_t worstIndex = -1;
  std::vector<int64_t> worstMultiIndex;
  double worstActual = 0, worstExpected = 0;

  // "max_abs 1.2e-06 max_rel 3.4e-05" plus, on failure, what failed and the worst element.
  std::string summary(const Tolerances& tolerances) const;
};

Comparison compareTensors(const Literal& actual, const Literal& expected, const Tolerances& tolerances,
                          const Literal* reference64 = nullptr);

}  // namespace wf
