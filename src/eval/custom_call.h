// custom_call targets of the host evaluator, by `call_target_name`. Targets that producers emit for
// bookkeeping (sharding annotations, host offloading markers) are built in as identities;
// embedders and tests add their own with registerCustomCall.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eval/interpreter.h"

namespace wf {

using CustomCallFn = std::function<Expected<std::vector<Literal>>(
    const Operation& op, std::span<const Literal> operands, EvalContext& ctx)>;

// Adds or replaces the target `name`. Thread-safe.
void registerCustomCall(std::string name, CustomCallFn fn);
// The target `name`, or an empty function if none is registered. Thread-safe.
CustomCallFn findCustomCall(std::string_view name);

}  // namespace wf
