// CPU kernels for stablehlo.convert and stablehlo.bitcast_convert.
//
// convert follows the spec where it is defined and XLA where the spec says TBD:
//   - bool -> x: false/true become 0/1; x -> bool: non-zero is true (complex: the real part).
//   - int -> int wraps (two's complement, to the destination's bit width).
//   - float -> int truncates toward zero and saturates to the destination range; NaN -> 0.
//   - int/float -> float round to nearest even, with a single rounding (f64 -> bf16/f16 goes
//     through a round-to-odd float, see elementwise_ops.h).
//   - complex -> non-complex drops the imaginary part; non-complex -> complex zeroes it.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "eval/elementwise_ops.h"

namespace wf {
namespace ew {
namespace {

template <typename T>
using CT = typename T::C;

// The destination range of an integer element type, as doubles (for saturation).
template <typename T>
constexpr double intMin() {
  if constexpr (T::kCat == Cat::kUInt) return 0.0;
  else if constexpr (T::kBits == 64) return -9223372036854775808.0;
  else return -static_cast<double>(int64_t{1} << (T::kBits - 1));
}
// One past the maximum (exactly representable as a double for every width).
template <typename T>
constexpr double intMaxPlusOne() {
  if constexpr (T::kCat == Cat::kUInt) return T::kBits == 64 ? 18446744073709551616.0 : static_cast<double>(uint64_t{1} << T::kBits);
  else return T::kBits == 64 ? 9223372036854775808.0 : static_cast<double>(int64_t{1} << (T::kBits - 1));
}

template <typename TI, typename TO>
typename TO::S convertOne(CT<TI> x) {
  using SO = typename TO::S;
  if constexpr (isComplexT<TI> && !isComplexT<TO>) {
    return convertOne<NativeFloatTraits<typename TI::Part>, TO>(x.real());
  } else if constexpr (isBoolT<TO>) {
    return TO::store(x != CT<TI>(0));
  } else if constexpr (isBoolT<TI>) {
    return convertOne<SIntTraits<int64_t, 64>, TO>(x ? 1 : 0);
  } else if constexpr (isComplexT<TO>) {
    using PO = NativeFloatTraits<typename TO::Part>;
    if constexpr (isComplexT<TI>) {
      using PI = NativeFloatTraits<typename TI::Part>;
      return SO(convertOne<PI, PO>(x.real()), convertOne<PI, PO>(x.imag()));
    } else {
      return SO(convertOne<TI, PO>(x), 0);
    }
  } else if constexpr (isIntT<TO>) {
    if constexpr (isIntT<TI>) {
      return TO::store(static_cast<CT<TO>>(x));
    } else {
      double d = static_cast<double>(x);
      if (std::isnan(d)) return 0;
      d = std::trunc(d);
      if (d < intMin<TO>()) return TO::store(static_cast<CT<TO>>(static_cast<int64_t>(intMin<TO>())));
      if (d >= intMaxPlusOne<TO>()) {
        if constexpr (TO::kCat == Cat::kUInt) return TO::store(static_cast<CT<TO>>(~uint64_t{0}));
        else return TO::store(static_cast<CT<TO>>(static_cast<int64_t>(intMaxPlusOne<TO>() - 1)));
      }
      return TO::store(static_cast<CT<TO>>(d));
    }
  } else {  // float destination
    if constexpr (isIntT<TI>) {
      if constexpr (std::is_same_v<TO, NativeFloatTraits<float>> || std::is_same_v<TO, NativeFloatTraits<double>>)
        return static_cast<SO>(x);  // one rounding, even from 64-bit ints
      else if constexpr (TI::kCat == Cat::kUInt)  // narrow float: one correct rounding, see element_math.h
        return TO::storeDouble(static_cast<double>(em::unsignedToFloatRoundOdd(static_cast<uint64_t>(x))));
      else
        return TO::storeDouble(static_cast<double>(em::signedToFloatRoundOdd(static_cast<int64_t>(x))));
    } else if constexpr (std::is_same_v<CT<TI>, double>) {
      return TO::storeDouble(x);
    } else {
      return TO::store(static_cast<CT<TO>>(x));  // float -> float/double is exact
    }
  }
}

template <typename TI>
Status convertFrom(const Operation& op, const Literal& in, Literal& out) {
  const ElementType to = out.elementType();
  return dispatch(to, unsupportedType(op, to), [&](auto tag) -> Status {
    using TO = decltype(tag);
    const auto* a = in.dataAs<typename TI::S>();
    auto* o = out.dataAs<typename TO::S>();
    parallelFor(in.numElements(), kCheapGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = convertOne<TI, TO>(TI::load(a[i]));
    });
    return Status::ok();
  });
}

using Results = Expected<std::vector<Literal>>;

Results convertKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  if (args.size() != 1 || !args[0].type().isTensor())
    return invalidArgument(op.describe() + ": expects one tensor operand");
  WF_ASSIGN_OR_RETURN(Literal out, convertLiteral(op, args[0], op.result(0)->type().elementType()));
  return std::vector<Literal>{std::move(out)};
}

// Bits of element i, zero-extended (sub-byte signed ints are stored sign-extended).
uint64_t elementBits(const Literal& l, int64_t i, int width) {
  uint64_t bits = l.getBits(i);
  return width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
}

void setElementBits(Literal& l, int64_t i, int width, uint64_t bits) {
  if (isSignedInteger(l.elementType()) && width < 8) {
    // Keep the storage convention: sign-extended to the byte.
    int64_t v = static_cast<int64_t>(bits << (64 - width)) >> (64 - width);
    l.setBits(i, static_cast<uint64_t>(v));
  } else {
    l.setBits(i, bits);
  }
}

Results bitcastConvertKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  if (args.size() != 1 || !args[0].type().isTensor())
    return invalidArgument(op.describe() + ": expects one tensor operand");
  const Literal& in = args[0];
  const Type& declared = op.result(0)->type();
  const ElementType from = in.elementType(), to = declared.elementType();
  const int win = bitWidth(from), wout = bitWidth(to);
  std::vector<int64_t> shape = in.shape();
  if (wout < win) {
    if (win % wout != 0) return invalidArgument(op.describe() + ": bit widths do not divide");
    shape.push_back(win / wout);
  } else if (wout > win) {
    if (shape.empty() || shape.back() * win != wout)
      return invalidArgument(op.describe() + ": the last operand dimension times " + std::to_string(win) +
                             " bits must be " + std::to_string(wout) + " bits");
    shape.pop_back();
  }
  if (isComplex(from) != isComplex(to))
    return invalidArgument(op.describe() + ": complex types bitcast only to complex types");
  Literal out = Literal::zeros(Type::tensor(shape, to));
  const bool byteAligned = [](ElementType t) { return storageBytes(t) * 8 == bitWidth(t); }(from) &&
                           storageBytes(to) * 8 == bitWidth(to);
  if (byteAligned) {
    // Storage is little-endian and dense: the bytes are the bits.
    std::memcpy(out.data(), in.data(), in.sizeBytes());
  } else {
    // Pack the operand's elements into a little-endian bit stream, then cut it at wout bits.
    const int64_t n = out.numElements();
    int64_t inIndex = 0;
    int inBitPos = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = 0;
      for (int got = 0; got < wout;) {
        const int take = std::min(wout - got, win - inBitPos);
        uint64_t chunk = elementBits(in, inIndex, win) >> inBitPos;
        if (take < 64) chunk &= (uint64_t{1} << take) - 1;
        bits |= chunk << got;
        got += take;
        inBitPos += take;
        if (inBitPos == win) {
          inBitPos = 0;
          ++inIndex;
        }
      }
      setElementBits(out, i, wout, bits);
    }
  }
  return std::vector<Literal>{std::move(out)};
}

}  // namespace

Expected<Literal> convertLiteral(const Operation& op, const Literal& in, ElementType to) {
  Literal out = Literal::zeros(Type::tensor(in.shape(), to));
  const ElementType from = in.elementType();
  Status st = dispatch(from, unsupportedType(op, from), [&](auto tag) -> Status {
    using TI = decltype(tag);
    return convertFrom<TI>(op, in, out);
  });
  WF_RETURN_IF_ERROR(st);
  return out;
}

void registerConvertKernels(KernelRegistry& r) {
  r.add(OpCode::Convert, convertKernel);
  r.add(OpCode::BitcastConvert, bitcastConvertKernel);
}

}  // namespace ew
}  // namespace wf
