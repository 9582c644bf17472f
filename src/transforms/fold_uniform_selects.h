// Selects whose predicate is known at compile time and the same everywhere.
//
// Exporters build masks from shapes alone. Hugging Face's BERT, called without an attention
// mask, makes one of `iota(S) >= 0` broadcast to [B, 1, S, S], and the attention then selects
// between its scores and -inf under a predicate that is true everywhere. Such a select picks one
// operand whole: this pass makes its users read that operand, and drops the predicate's ops once
// nothing reads them. Attention outlining (attention.h) then sees an unmasked attention, which
// cuDNN runs without reading a mask, and no kernel computes the mask.
//
// A predicate is known when no function argument reaches it (known_values.h), evaluated at
// compile time where the values evaluated have at most `maxEvaluatedElements` elements each.
// Broadcasts, reshapes, transposes and slices keep a value uniform, so they are seen through
// without being evaluated (the [B, H, S, S] predicate of the example is a broadcast of an [S]
// comparison).
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

struct FoldUniformSelectsOptions {
  int64_t maxEvaluatedElements = int64_t{1} << 20;
};

// Replaces the uniform selects at the top level of @function's body. Returns how many selects
// it replaced.
Expected<int> foldUniformSelects(Module& module, std::string_view function, const FoldUniformSelectsOptions& options = {});

}  // namespace wf
