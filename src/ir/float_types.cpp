#include "ir/float_types.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

namespace wf {

float bf16ToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((u >> 16) | 0x0040);  // quiet NaN
  uint32_t rounding = 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      u = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3FF) << 13;
    }
  } else if (exp == 0x1F) {
    u = sign | 0x7F800000u | mant << 13;
  } else {
    u = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToF16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t absu = u & 0x7FFFFFFF;
  if (absu > 0x7F800000) return sign | 0x7E00;  // NaN
  if (absu >= 0x477FF000) return sign | 0x7C00;  // rounds to >= 65520: inf
  if (absu < 0x38800000) {  // below the smallest normal f16 (2^-14): subnormal or zero
    // value * 2^24 rounded to nearest even gives the subnormal mantissa.
    float scaled = std::fabs(value) * 16777216.0f;  // exact: power-of-two scaling
    float r = std::nearbyint(scaled);
    return sign | static_cast<uint16_t>(r);
  }
  uint32_t rounding = 0xFFF + ((absu >> 13) & 1);
  absu += rounding;
  return sign | static_cast<uint16_t>(((absu >> 23) - 127 + 15) << 10 | ((absu >> 13) & 0x3FF));
}

namespace {

struct MinifloatFormat {
  int expBits;
  int mantBits;
  int bias;
  bool hasSign;
  bool ieeeSpecials;   // all-ones exponent is inf (mantissa 0) / NaN
  bool fnNan;          // only all-ones exponent and mantissa is NaN, no inf
  bool uzNan;          // NaN is the negative-zero code, no inf, no -0
  bool e8m0;           // exponent only, 0xFF is NaN, no zero
};

MinifloatFormat formatOf(ElementType t) {
  switch (t) {
    case ElementType::kF4E2M1FN: return {2, 1, 1, true, false, false, false, false};
    case ElementType::kF6E2M3FN: return {2, 3, 1, true, false, false, false, false};
    case ElementType::kF6E3M2FN: return {3, 2, 3, true, false, false, false, false};
    case ElementType::kF8E3M4: return {3, 4, 3, true, true, false, false, false};
    case ElementType::kF8E4M3: return {4, 3, 7, true, true, false, false, false};
    case ElementType::kF8E4M3FN: return {4, 3, 7, true, false, true, false, false};
    case ElementType::kF8E4M3FNUZ: return {4, 3, 8, true, false, false, true, false};
    case ElementType::kF8E4M3B11FNUZ: return {4, 3, 11, true, false, false, true, false};
    case ElementType::kF8E5M2: return {5, 2, 15, true, true, false, false, false};
    case ElementType::kF8E5M2FNUZ: return {5, 2, 16, true, false, false, true, false};
    case ElementType::kF8E8M0FNU: return {8, 0, 127, false, false, false, false, true};
    default: return {4, 3, 7, true, false, true, false, false};
  }
}

double decode(const MinifloatFormat& f, uint8_t code) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int totalBits = f.expBits + f.mantBits + (f.hasSign ? 1 : 0);
  code &= static_cast<uint8_t>((1u << totalBits) - 1);
  if (f.e8m0) return code == 0xFF ? nan : std::ldexp(1.0, code - 127);
  const uint32_t signBit = 1u << (totalBits - 1);
  const bool negative = f.hasSign && (code & signBit);
  const uint32_t expMax = (1u << f.expBits) - 1;
  const uint32_t e = (code >> f.mantBits) & expMax;
  const uint32_t m = code & ((1u << f.mantBits) - 1);
  if (f.uzNan && code == signBit) return nan;
  if (f.ieeeSpecials && e == expMax) {
    if (m != 0) return nan;
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (f.fnNan && e == expMax && m == (1u << f.mantBits) - 1) return nan;
  double magnitude = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mantBits)
                            : std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f.mantBits),
                                         static_cast<int>(e) - f.bias);
  return negative ? -magnitude : magnitude;
}

// For each format: the non-negative finite codes sorted by value, used for round-to-nearest.
struct MinifloatTable {
  MinifloatFormat format;
  std::vector<std::pair<double, uint8_t>> positives;  // (value, code), ascending
  uint8_t nanCode = 0;
  int infCode = -1;     // -1: no infinity
  uint8_t signBit = 0;  // 0 for unsigned formats
};

const MinifloatTable& tableFor(ElementType t) {
  static std::array<MinifloatTable, 32> tables;
  static std::array<std::once_flag, 32> once;
  auto index = static_cast<size_t>(t);
  std::call_once(once[index], [&] {
    MinifloatTable& table = tables[index];
    table.format = formatOf(t);
    const MinifloatFormat& f = table.format;
    const int totalBits = f.expBits + f.mantBits + (f.hasSign ? 1 : 0);
    table.signBit = f.hasSign ? static_cast<uint8_t>(1u << (totalBits - 1)) : 0;
    bool sawNan = false;
    for (uint32_t code = 0; code < (1u << totalBits); ++code) {
      double v = decode(f, static_cast<uint8_t>(code));
      if (std::isnan(v)) {
        if (!sawNan) table.nanCode = static_cast<uint8_t>(code);  // the positive quiet NaN
        sawNan = true;
        continue;
      }
      if (std::isinf(v)) {
        if (v > 0) table.infCode = static_cast<int>(code);
        continue;
      }
      if (v >= 0 && !(v == 0 && std::signbit(v))) {
        if (!(table.signBit && (code & table.signBit))) table.positives.push_back({v, static_cast<uint8_t>(code)});
      }
    }
    std::sort(table.positives.begin(), table.positives.end());
  });
  return tables[index];
}

}  // namespace

double minifloatToDouble(ElementType t, uint8_t code) { return decode(formatOf(t), code); }

uint8_t doubleToMinifloat(ElementType t, double value) {
  const MinifloatTable& table = tableFor(t);
  if (std::isnan(value)) return table.nanCode;
  const bool negative = std::signbit(value);
  if (negative && !table.signBit) return table.nanCode;  // unsigned format: no negatives
  double magnitude = std::fabs(value);
  const auto& pos = table.positives;
  uint8_t code;
  const double maxFinite = pos.back().first;
  if (std::isinf(magnitude)) {
    if (table.infCode >= 0) {
      code = static_cast<uint8_t>(table.infCode);
    } else if (table.format.fnNan || table.format.uzNan || table.format.e8m0) {
      return table.nanCode;
    } else {
      code = pos.back().second;  // formats without inf or NaN saturate
    }
  } else if (magnitude > maxFinite) {
    // Beyond the largest finite value: round as if the next binade continued.
    const double ulp = maxFinite - pos[pos.size() - 2].first;
    const bool roundsUp = magnitude > maxFinite + ulp / 2 ||
                          (magnitude == maxFinite + ulp / 2 && (pos.back().second & 1));
    if (!roundsUp) {
      code = pos.back().second;
    } else if (table.infCode >= 0) {
      code = static_cast<uint8_t>(table.infCode);
    } else if (table.format.fnNan || table.format.uzNan || table.format.e8m0) {
      return table.nanCode;
    } else {
      code = pos.back().second;
    }
  } else {
    auto it = std::lower_bound(pos.begin(), pos.end(), std::make_pair(magnitude, uint8_t{0}),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
    if (it == pos.end()) {
      code = pos.back().second;
    } else if (it->first == magnitude || it == pos.begin()) {
      code = it->second;
    } else {
      auto below = it - 1;
      double dBelow = magnitude - below->first, dAbove = it->first - magnitude;
      if (dBelow < dAbove) code = below->second;
      else if (dAbove < dBelow) code = it->second;
      else code = (below->second & 1) == 0 ? below->second : it->second;
    }
  }
  if (negative && table.signBit) {
    // FNUZ formats have no negative zero: -0 becomes +0.
    if (table.format.uzNan && code == 0) return 0;
    code |= table.signBit;
  }
  return code;
}

}  // namespace wf
