// Values a program computes from constants alone, evaluated at compile time.
//
// A value is known when no function argument reaches it: constants and iotas, through the ops
// the CPU evaluator runs (elementwise ops, compares, data movement, gathers, and reductions and
// windows whose bodies are such ops). Exporters build masks this way from shapes alone: BERT's
// "every key" mask from iota(S) >= 0, Llama's causal mask from position iotas. Passes ask for a
// value (KnownValues::value) or only whether a boolean is the same everywhere (uniformBool).
// Evaluation is bounded: a value of more than `maxElements` elements is not evaluated (nor
// anything computed from it), and matrix products and convolutions never are.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "ir/ir.h"
#include "ir/literal.h"

namespace wf {

class KnownValues {
 public:
  explicit KnownValues(int64_t maxElements) : maxElements_(maxElements) {}

  // The value of `v` where it is known and small enough, else null. Results are kept for the
  // life of this object (the program must not change meanwhile).
  const Literal* value(const Value* v);

  // Whether every element of the boolean tensor `v` is true, or every one false; nullopt when
  // neither or unknown. Broadcasts, reshapes, transposes, slices and reverses keep a value's
  // elements, so they are seen through unevaluated (a [B, H, S, S] broadcast of an [S] compare).
  std::optional<bool> uniformBool(const Value* v);

 private:
  int64_t maxElements_;
  std::unordered_map<const Value*, std::optional<Literal>> values_;
};

}  // namespace wf
