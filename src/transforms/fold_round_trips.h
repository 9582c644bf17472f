// Narrowing conversions that give back the value a widening made: convert(f32 -> bf16) of
// convert(bf16 -> f32) of x is x.
//
// Exporters write such round trips where PyTorch computes in a wider type between two ops of the
// narrow one: under bf16, the attention's output is widened for its head transpose and narrowed
// for the output projection. Once the transpose is gone (attention_layouts.h) the two conversions
// and the reshapes between them are a copy kernel of the whole activation that changes no bit.
// This pass replaces each narrowing convert whose operand is, through reshapes, an exact widening
// (bf16 or f16 to f32 or f64, f32 to f64) of a value x of the narrowed type by a reshape of x,
// which shares x's buffer, and removes what nothing reads any more. A NaN stays a NaN (a
// signalling one may come back quiet from the round trip and come back as it was without it).
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Folds the round trips in the body of `function` (not inside nested regions). Returns how many.
Expected<int> foldWidenNarrowRoundTrips(Operation& function);

}  // namespace wf
