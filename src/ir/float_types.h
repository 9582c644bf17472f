// Conversions between narrow floating-point formats and double/float.
// bf16 and f16 are exact bit-twiddling; the f4/f6/f8 families share one table-driven
// implementation that rounds to nearest, ties to even, exactly like ml_dtypes.
#pragma once

#include <cstdint>

#include "ir/types.h"

namespace wf {

float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);  // round to nearest even; NaN stays NaN
float f16ToFloat(uint16_t bits);
uint16_t floatToF16(float value);   // round to nearest even; overflow to inf

// f4/f6/f8 families (isF8OrSmaller(t)): one code per byte, right-aligned.
double minifloatToDouble(ElementType t, uint8_t code);
uint8_t doubleToMinifloat(ElementType t, double value);

}  // namespace wf
