// The verifier: applies each op's type constraints from the StableHLO spec. It runs after
// parsing and after every transform in debug builds. Errors name the op, its location and
// the offending types.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

Status verifyModule(const Module& module);
Status verifyOperation(const Operation& op);

}  // namespace wf
