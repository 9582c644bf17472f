// XLA's reduce_precision on the bits of an IEEE float, shared by the CPU interpreter and the CUDA
// kernels so that both give the same bits: round the mantissa to nearest even at `mantissaBits`,
// then flush values outside the reduced exponent range to signed zero or signed infinity. A NaN
// stays the same NaN while the reduced format keeps mantissa bits, else it becomes +infinity.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WF_HOST_DEVICE __host__ __device__
#else
#define WF_HOST_DEVICE
#endif

namespace wf {

// U: the float's unsigned bit type (uint32_t for f32, uint64_t for f64); kMantissa: its stored
// mantissa bits (23, 52). exponentBits >= 1 and mantissaBits >= 0.
template <typename U, int kMantissa>
WF_HOST_DEVICE inline U reducePrecisionBits(U value, int exponentBits, int mantissaBits) {
  constexpr int kBits = 8 * sizeof(U);
  constexpr int kExponent = kBits - 1 - kMantissa;
  const U expBitsMask = ((U(1) << kExponent) - 1) << kMantissa;
  const U mantissaMask = (U(1) << kMantissa) - 1;
  const U input = value;
  if (mantissaBits < kMantissa) {
    const U lastMantissaBitMask = U(1) << (kMantissa - mantissaBits);
    const U baseRoundingBias = (lastMantissaBitMask >> 1) - 1;
    const U xLastMantissaBit = (value & lastMantissaBitMask) >> (kMantissa - mantissaBits);
    const U xRoundingBias = xLastMantissaBit + baseRoundingBias;
    const U truncationMask = ~(lastMantissaBitMask - 1);
    value = (value + xRoundingBias) & truncationMask;
  }
  if (exponentBits < kExponent) {
    const U signBitMask = U(1) << (kBits - 1);
    const U exponentBias = (U(1) << (kExponent - 1)) - 1;
    const U reducedExponentBias = (U(1) << (exponentBits - 1)) - 1;
    const U reducedMaxExponent = exponentBias + reducedExponentBias;
    const U reducedMinExponent = exponentBias - reducedExponentBias;
    const U xExponent = value & expBitsMask;
    const bool overflows = xExponent > (reducedMaxExponent << kMantissa);
    const bool underflows = xExponent <= (reducedMinExponent << kMantissa);
    const U signedZero = value & signBitMask;
    const U signedInf = signedZero | expBitsMask;
    if (overflows) value = signedInf;
    if (underflows) value = signedZero;
  }
  const bool isNaN = (input & expBitsMask) == expBitsMask && (input & mantissaMask) != 0;
  if (isNaN) value = mantissaBits > 0 ? input : expBitsMask;  // expBitsMask alone is +infinity
  return value;
}

}  // namespace wf
