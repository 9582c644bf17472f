// Dead-code removal: ops whose results nothing reads, and that have no side effects, go.
#pragma once

#include "ir/ir.h"

namespace wf {

// Whether dropping `op` when its results are unused would change what the program does: custom
// calls, random numbers, I/O, collectives, calls, returns, composites, checks, and ops with
// regions.
bool hasSideEffects(const Operation& op);

// Removes the side-effect-free ops under `block` (nested blocks included) whose results nothing
// reads, chains of them included.
void removeDeadOps(Block& block);

}  // namespace wf
