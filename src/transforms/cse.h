// Common-subexpression elimination of pure ops: where two ops of a block compute the same thing
// (same op, same operands, same attributes and result types), the later one's users read the
// earlier one's results and the later one goes.
//
// Exporters write such repeats as a matter of course. A PyTorch nn.Linear lowers to its own
// reshape and convert of its input, so the query, key and value projections of one layer-norm
// output are three copies of the same reshape + convert (and the CUDA fusion planner gave each a
// kernel that read the layer norm's f32 output and wrote the same bf16 tensor). Merged, the three
// products read one value.
//
// Only ops that compute a value from their operands and nothing else take part (elementwise ops,
// data movement, constants, matrix products, ...): never random numbers, collectives, calls,
// custom calls, ops with regions or side effects. Nested regions are visited, each block on its
// own (an op is only replaced by one of its own block, which dominates it).
#pragma once

#include "ir/ir.h"

namespace wf {

// Whether ops of `code` compute their results from their operands and attributes alone (the ops
// CSE merges; other passes may also drop such an op once nothing reads it).
bool isPureOp(OpCode code);

// Merges repeated pure ops in `function` (a func.func) and its nested blocks. Returns how many
// ops it removed.
int eliminateCommonSubexpressions(Operation& function);

}  // namespace wf
