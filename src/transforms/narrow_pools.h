// Max and min pools narrowed before they run.
//
// A bf16 export computes between its convolutions in f32, so ResNet's max pool after the stem
// pools the f32 ReLU output and the next convolution rounds the pooled values to bf16:
// convert(reduce_window max(x)). Rounding is monotone, so rounding the window's largest value
// is rounding every value and taking the largest: the pool may read the rounded values instead,
// convert(x) narrow. The results are the same bits (NaN propagates either way), and the
// activation the pool reads, which is the stem's whole output, is then stored in half the bytes.
//
// The rewrite takes a reduce_window of one operand whose body is a maximum or minimum, read only
// by a conversion to a narrower float type: the pool then reads convert(x) and convert(init),
// is typed in the narrow type, and the conversion goes.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Narrows the max and min pools at the top level of `function`'s body that a narrowing float
// conversion alone reads. Returns how many it narrowed. On error the function may be partly
// rewritten (the CUDA backend rewrites a copy).
Expected<int> narrowPools(Operation& function);

}  // namespace wf
