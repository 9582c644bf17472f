// Filling memory with a repeated element: splat constants made whole (ir/attributes.cpp) and the
// interpreter's broadcasts and pads (eval/).
#pragma once

#include <cstddef>
#include <cstdint>

namespace wf {

// Fills `count` elements at `dst` with the `elemBytes`-sized pattern `value`.
void fillElements(std::byte* dst, int64_t count, const std::byte* value, int elemBytes);

}  // namespace wf
