// CUDA kernels for StableHLO's elementwise ops: unary and binary math, compare, select, clamp,
// convert, reduce_precision, real/imag of real numbers, and the chlo unary math ops (erf, erf_inv,
// lgamma, inverse trig/hyperbolic, ...). The element math is eval/element_math.h's functors, the
// same the CPU kernels and the fused kernels use; every op of its lists gets a kernel here. Each
// kernel is a grid-stride loop templated on the element traits (device_util.cuh); the op is a
// run-time switch that is uniform across the grid. Operands may broadcast to the
// result (a one-element operand, or numpy-style size-1 dims); same-shape operands take a
// contiguous fast path.
#include <cmath>
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"
#include "eval/element_math.h"
#include "support/reduce_precision.h"

namespace wf::cuda {
namespace {

// The ops, one per entry of element_math.h's lists.
enum class UnOp : uint8_t {
#define WF_ENUM(code, F) k##code,
  WF_EM_UNARY_OPS(WF_ENUM) WF_EM_CHLO_UNARY_OPS(WF_ENUM)
};
enum class BinOp : uint8_t {
  WF_EM_BINARY_OPS(WF_ENUM) WF_EM_CHLO_BINARY_OPS(WF_ENUM)
#undef WF_ENUM
};

// Whether functor F takes elements of category `cat`.
template <typename F>
constexpr bool takes(Cat cat) {
  switch (cat) {
    case Cat::kBool: return (F::kCats & em::kBool) != 0;
    case Cat::kSInt: return (F::kCats & em::kSInt) != 0;
    case Cat::kUInt: return (F::kCats & em::kUInt) != 0;
    case Cat::kFloat: return (F::kCats & em::kFloat) != 0;
  }
  return false;
}

// The op is uniform across the grid, so the switch costs one well-predicted branch per element.
template <typename Tr>
__device__ typename Tr::C applyUnary(UnOp op, typename Tr::C x) {
  switch (op) {
#define WF_CASE(code, F)                                                        \
  case UnOp::k##code:                                                           \
    if constexpr (takes<em::F>(Tr::kCat)) return em::F::template apply<Tr::kBits>(x); \
    else return x;
    WF_EM_UNARY_OPS(WF_CASE) WF_EM_CHLO_UNARY_OPS(WF_CASE)
#undef WF_CASE
  }
  return x;
}

template <typename Tr>
__device__ typename Tr::C applyBinary(BinOp op, typename Tr::C a, typename Tr::C b) {
  switch (op) {
#define WF_CASE(code, F)                                                           \
  case BinOp::k##code:                                                             \
    if constexpr (takes<em::F>(Tr::kCat)) return em::F::template apply<Tr::kBits>(a, b); \
    else return a;
    WF_EM_BINARY_OPS(WF_CASE) WF_EM_CHLO_BINARY_OPS(WF_CASE)
#undef WF_CASE
  }
  return a;
}

// ---------------------------------------------------------------------------------------------
// Kernels. `contiguous`: every operand has the result's shape; otherwise `map` gives offsets.

template <typename Tr>
__global__ void unaryKernel(UnOp op, const typename Tr::S* in, typename Tr::S* out, int64_t n) {
  WF_GRID_STRIDE_LOOP(i, n) out[i] = Tr::store(applyUnary<Tr>(op, Tr::load(in[i])));
}

// which: 2 is_finite, 0 is_inf, 1 is_pos_inf, -1 is_neg_inf.
template <typename Tr>
__global__ void isFiniteKernel(int which, const typename Tr::S* in, uint8_t* out, int64_t n) {
  WF_GRID_STRIDE_LOOP(i, n) {
    const auto x = Tr::load(in[i]);
    bool r;
    switch (which) {
      case 2: r = isfinite(x); break;
      case 0: r = isinf(x); break;
      case 1: r = isinf(x) && x > 0; break;
      default: r = isinf(x) && x < 0; break;
    }
    out[i] = r ? 1 : 0;
  }
}

// reduce_precision: f16/bf16/f32 go through f32 bits (then round once to their type, as on the
// CPU), f64 through its own bits.
template <typename Tr>
__global__ void reducePrecisionKernel(const typename Tr::S* in, typename Tr::S* out, int64_t n, int exponentBits,
                                      int mantissaBits) {
  WF_GRID_STRIDE_LOOP(i, n) {
    const auto x = Tr::load(in[i]);
    if constexpr (std::is_same_v<typename Tr::C, double>) {
      out[i] = Tr::store(__longlong_as_double(static_cast<long long>(reducePrecisionBits<uint64_t, 52>(
          static_cast<uint64_t>(__double_as_longlong(x)), exponentBits, mantissaBits))));
    } else {
      out[i] = Tr::store(__uint_as_float(reducePrecisionBits<uint32_t, 23>(__float_as_uint(x), exponentBits, mantissaBits)));
    }
  }
}

template <typename Tr>
__global__ void binaryKernel(BinOp op, const typename Tr::S* a, const typename Tr::S* b, typename Tr::S* out,
                             int64_t n, bool contiguous, IndexMap<2> map) {
  if (contiguous) {
    WF_GRID_STRIDE_LOOP(i, n) out[i] = Tr::store(applyBinary<Tr>(op, Tr::load(a[i]), Tr::load(b[i])));
  } else {
    WF_GRID_STRIDE_LOOP(i, n) {
      int64_t off[2];
      map.offsets(i, off);
      out[i] = Tr::store(applyBinary<Tr>(op, Tr::load(a[off[0]]), Tr::load(b[off[1]])));
    }
  }
}

using em::CmpDir;

template <typename Tr>
__global__ void compareKernel(CmpDir dir, bool totalOrder, const typename Tr::S* a, const typename Tr::S* b,
                              uint8_t* out, int64_t n, bool contiguous, IndexMap<2> map) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2] = {i, i};
    if (!contiguous) map.offsets(i, off);
    const auto x = Tr::load(a[off[0]]);
    const auto y = Tr::load(b[off[1]]);
    bool r;
    if constexpr (Tr::kCat == Cat::kFloat) {
      r = totalOrder ? em::compare(dir, em::totalOrderKey(x), em::totalOrderKey(y)) : em::compare(dir, x, y);
    } else {
      r = em::compare(dir, x, y);
    }
    out[i] = r ? 1 : 0;
  }
}

template <typename Tr>
__global__ void clampKernel(const typename Tr::S* lo, const typename Tr::S* x, const typename Tr::S* hi,
                            typename Tr::S* out, int64_t n, bool contiguous, IndexMap<3> map) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3] = {i, i, i};
    if (!contiguous) map.offsets(i, off);
    auto m = em::Max::apply<Tr::kBits>(Tr::load(x[off[1]]), Tr::load(lo[off[0]]));
    out[i] = Tr::store(em::Min::apply<Tr::kBits>(m, Tr::load(hi[off[2]])));
  }
}

template <typename S>
__global__ void selectKernel(const uint8_t* pred, const S* t, const S* f, S* out, int64_t n, bool contiguous,
                             IndexMap<3> map) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3] = {i, i, i};
    if (!contiguous) map.offsets(i, off);
    out[i] = pred[off[0]] ? t[off[1]] : f[off[2]];
  }
}

// ---------------------------------------------------------------------------------------------
// convert: the source type is a template parameter, the destination a run-time switch.

template <typename From, typename To>
__device__ typename To::S convertOne(typename From::C x) {
  using S = typename To::S;
  if constexpr (To::kCat == Cat::kBool) {
    return x != typename From::C(0) ? 1 : 0;
  } else if constexpr (From::kCat == Cat::kBool) {
    return convertOne<SIntT<int64_t>, To>(x ? 1 : 0);
  } else if constexpr (To::kCat != Cat::kFloat) {
    if constexpr (From::kCat != Cat::kFloat) return static_cast<S>(x);  // wraps
    else return em::floatToInt<To::kBits, S>(static_cast<double>(x));
  } else if constexpr (std::is_same_v<To, NativeFloatT<float>> || std::is_same_v<To, NativeFloatT<double>>) {
    return static_cast<S>(x);  // one rounding, from any source
  } else {  // f16 / bf16 destination
    if constexpr (std::is_same_v<typename From::C, float>) return To::store(x);
    else if constexpr (From::kCat == Cat::kUInt) return To::store(em::unsignedToFloatRoundOdd(x));
    else if constexpr (From::kCat == Cat::kSInt) return To::store(em::signedToFloatRoundOdd(x));
    else return To::store(em::doubleToFloatRoundOdd(static_cast<double>(x)));
  }
}

template <typename From>
__global__ void convertKernel(const typename From::S* in, void* out, ElementType to, int64_t n) {
  switch (to) {
#define WF_CONVERT_CASE(E, Tr)                                                          \
  case ElementType::E: {                                                                \
    auto* o = static_cast<typename Tr::S*>(out);                                        \
    WF_GRID_STRIDE_LOOP(i, n) o[i] = convertOne<From, Tr>(From::load(in[i]));           \
    return;                                                                             \
  }
    WF_CONVERT_CASE(kI1, BoolT)
    WF_CONVERT_CASE(kSI8, SIntT<int8_t>)
    WF_CONVERT_CASE(kSI16, SIntT<int16_t>)
    WF_CONVERT_CASE(kSI32, SIntT<int32_t>)
    WF_CONVERT_CASE(kSI64, SIntT<int64_t>)
    WF_CONVERT_CASE(kUI8, UIntT<uint8_t>)
    WF_CONVERT_CASE(kUI16, UIntT<uint16_t>)
    WF_CONVERT_CASE(kUI32, UIntT<uint32_t>)
    WF_CONVERT_CASE(kUI64, UIntT<uint64_t>)
    WF_CONVERT_CASE(kF16, F16T)
    WF_CONVERT_CASE(kBF16, BF16T)
    WF_CONVERT_CASE(kF32, NativeFloatT<float>)
    WF_CONVERT_CASE(kF64, NativeFloatT<double>)
#undef WF_CONVERT_CASE
    default: return;
  }
}

// ---------------------------------------------------------------------------------------------
// Lowerings.

using Results = Expected<std::unique_ptr<OpKernel>>;

Status unsupportedType(const Operation& op, ElementType t) {
  return unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(t)));
}

// Operand i's view of the result shape; `contiguous` stays true only while every operand has
// exactly the result's shape.
template <int N>
Status buildMap(const Operation& op, const std::vector<int64_t>& outShape, IndexMap<N>& map, bool& contiguous) {
  if (outShape.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "rank " + std::to_string(outShape.size()) + " is over the CUDA kernels' limit");
  contiguous = true;
  map.rank = static_cast<int>(outShape.size());
  for (size_t d = 0; d < outShape.size(); ++d) map.dims[d] = outShape[d];
  for (int k = 0; k < N; ++k) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(k)->type()));
    if (inShape != outShape) contiguous = false;
    if (!broadcastStrides(inShape, outShape, map.strides[k]))
      return invalidArgument(op.describe() + ": operand #" + std::to_string(k) + " of shape " +
                             op.operand(k)->type().toString() + " does not broadcast to the result");
  }
  return Status::ok();
}

bool unarySupported(UnOp op, Cat cat) {
  switch (op) {
#define WF_CASE(code, F) case UnOp::k##code: return takes<em::F>(cat);
    WF_EM_UNARY_OPS(WF_CASE) WF_EM_CHLO_UNARY_OPS(WF_CASE)
#undef WF_CASE
  }
  return false;
}

bool binarySupported(BinOp op, Cat cat) {
  switch (op) {
#define WF_CASE(code, F) case BinOp::k##code: return takes<em::F>(cat);
    WF_EM_BINARY_OPS(WF_CASE) WF_EM_CHLO_BINARY_OPS(WF_CASE)
#undef WF_CASE
  }
  return false;
}

Lowering unaryLowering(UnOp uop) {
  return [uop](const Operation& op, LowerContext&) -> Results {
    const ElementType et = op.operand(0)->type().elementType();
    if (op.result(0)->type().elementType() != et) return unsupportedType(op, et);
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
    const int64_t n = numElementsOf(shape);
    return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
      using Tr = decltype(tag);
      if (!unarySupported(uop, Tr::kCat)) return unsupportedType(op, et);
      return makeKernel([uop, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
        if (n == 0) return Status::ok();
        unaryKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(uop, static_cast<const typename Tr::S*>(in[0]),
                                                                  static_cast<typename Tr::S*>(out[0]), n);
        WF_CUDA_CHECK_LAUNCH("unaryKernel");
        return Status::ok();
      });
    });
  };
}

Lowering floatPredicate(int which) {
  return [which](const Operation& op, LowerContext&) -> Results {
  const ElementType et = op.operand(0)->type().elementType();
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    if constexpr (Tr::kCat != Cat::kFloat) {
      return unsupportedType(op, et);
    } else {
      return makeKernel([which, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
        if (n == 0) return Status::ok();
        isFiniteKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(which, static_cast<const typename Tr::S*>(in[0]),
                                                                     static_cast<uint8_t*>(out[0]), n);
        WF_CUDA_CHECK_LAUNCH("isFiniteKernel");
        return Status::ok();
      });
    }
  });
  };
}

Results lowerReducePrecision(const Operation& op, LowerContext&) {
  const ElementType et = op.operand(0)->type().elementType();
  if (op.result(0)->type().elementType() != et) return unsupportedType(op, et);
  WF_ASSIGN_OR_RETURN(const cpu::ReducePrecisionFormat format, cpu::reducePrecisionFormat(op));
  const int eb = format.exponentBits, mb = format.mantissaBits;
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    if constexpr (Tr::kCat != Cat::kFloat) {
      return unsupportedType(op, et);
    } else {
      return makeKernel([n, eb, mb](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
        if (n == 0) return Status::ok();
        reducePrecisionKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(
            static_cast<const typename Tr::S*>(in[0]), static_cast<typename Tr::S*>(out[0]), n, eb, mb);
        WF_CUDA_CHECK_LAUNCH("reducePrecisionKernel");
        return Status::ok();
      });
    }
  });
}

// real and imag of a real (non-complex) operand: the value itself, and zeros. Complex types are
// not GPU types.
Lowering realPartLowering(bool imaginary) {
  return [imaginary](const Operation& op, LowerContext&) -> Results {
    const ElementType et = op.operand(0)->type().elementType();
    if (!isFloat(et) || op.result(0)->type().elementType() != et) return unsupportedType(op, et);
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
    const size_t bytes = static_cast<size_t>(numElementsOf(shape)) * storageBytes(et);
    return makeKernel([imaginary, bytes](const LaunchContext& ctx, std::span<void* const> in,
                                         std::span<void* const> out) {
      if (bytes == 0) return Status::ok();
      if (imaginary) {
        WF_CUDA_CHECK(cudaMemsetAsync(out[0], 0, bytes, ctx.stream));  // +0.0 in every float type
      } else {
        WF_CUDA_CHECK(cudaMemcpyAsync(out[0], in[0], bytes, cudaMemcpyDeviceToDevice, ctx.stream));
      }
      return Status::ok();
    });
  };
}

Lowering binaryLowering(BinOp bop) {
  return [bop](const Operation& op, LowerContext&) -> Results {
    const ElementType et = op.result(0)->type().elementType();
    if (op.operand(0)->type().elementType() != et || op.operand(1)->type().elementType() != et)
      return unsupportedType(op, et);
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
    const int64_t n = numElementsOf(shape);
    IndexMap<2> map;
    bool contiguous = true;
    WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
    return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
      using Tr = decltype(tag);
      if (!binarySupported(bop, Tr::kCat)) return unsupportedType(op, et);
      return makeKernel([bop, n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                                   std::span<void* const> out) {
        if (n == 0) return Status::ok();
        using S = typename Tr::S;
        binaryKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(bop, static_cast<const S*>(in[0]),
                                                                   static_cast<const S*>(in[1]),
                                                                   static_cast<S*>(out[0]), n, contiguous, map);
        WF_CUDA_CHECK_LAUNCH("binaryKernel");
        return Status::ok();
      });
    });
  };
}

Results lowerCompare(const Operation& op, LowerContext&) {
  const ElementType et = op.operand(0)->type().elementType();
  if (op.operand(1)->type().elementType() != et) return unsupportedType(op, et);
  const Attribute* d = op.attr("comparison_direction");
  if (!d) return invalidArgument(op.describe() + ": missing comparison_direction");
  const std::string& s = d->stringValue();
  CmpDir dir;
  if (s == "EQ") dir = CmpDir::kEQ;
  else if (s == "NE") dir = CmpDir::kNE;
  else if (s == "GE") dir = CmpDir::kGE;
  else if (s == "GT") dir = CmpDir::kGT;
  else if (s == "LE") dir = CmpDir::kLE;
  else if (s == "LT") dir = CmpDir::kLT;
  else return invalidArgument(op.describe() + ": unknown comparison_direction '" + s + "'");
  bool totalOrder = false;
  if (const Attribute* t = op.attr("compare_type")) totalOrder = t->stringValue() == "TOTALORDER";
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  IndexMap<2> map;
  bool contiguous = true;
  WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    return makeKernel([dir, totalOrder, n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                                             std::span<void* const> out) {
      if (n == 0) return Status::ok();
      using S = typename Tr::S;
      compareKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(dir, totalOrder, static_cast<const S*>(in[0]),
                                                                  static_cast<const S*>(in[1]),
                                                                  static_cast<uint8_t*>(out[0]), n, contiguous, map);
      WF_CUDA_CHECK_LAUNCH("compareKernel");
      return Status::ok();
    });
  });
}

Results lowerClamp(const Operation& op, LowerContext&) {
  const ElementType et = op.result(0)->type().elementType();
  for (size_t i = 0; i < 3; ++i)
    if (op.operand(i)->type().elementType() != et) return unsupportedType(op, et);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  IndexMap<3> map;
  bool contiguous = true;
  WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    return makeKernel([n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                           std::span<void* const> out) {
      if (n == 0) return Status::ok();
      using S = typename Tr::S;
      clampKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const S*>(in[0]),
                                                                static_cast<const S*>(in[1]),
                                                                static_cast<const S*>(in[2]), static_cast<S*>(out[0]),
                                                                n, contiguous, map);
      WF_CUDA_CHECK_LAUNCH("clampKernel");
      return Status::ok();
    });
  });
}

template <typename S>
Status launchSelect(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out, int64_t n,
                    bool contiguous, const IndexMap<3>& map) {
  selectKernel<S><<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const uint8_t*>(in[0]),
                                                            static_cast<const S*>(in[1]), static_cast<const S*>(in[2]),
                                                            static_cast<S*>(out[0]), n, contiguous, map);
  WF_CUDA_CHECK_LAUNCH("selectKernel");
  return Status::ok();
}

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

Results lowerSelect(const Operation& op, LowerContext&) {
  const ElementType et = op.result(0)->type().elementType();
  if (op.operand(0)->type().elementType() != ElementType::kI1)
    return invalidArgument(op.describe() + ": predicate must be i1");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  IndexMap<3> map;
  bool contiguous = true;
  WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
  const int bytes = storageBytes(et);
  if (et == ElementType::kQuantized) return unsupportedType(op, et);
  return makeKernel([bytes, n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                                std::span<void* const> out) -> Status {
    if (n == 0) return Status::ok();
    switch (bytes) {
      case 1: return launchSelect<uint8_t>(ctx, in, out, n, contiguous, map);
      case 2: return launchSelect<uint16_t>(ctx, in, out, n, contiguous, map);
      case 4: return launchSelect<uint32_t>(ctx, in, out, n, contiguous, map);
      case 8: return launchSelect<uint64_t>(ctx, in, out, n, contiguous, map);
      case 16: return launchSelect<Bytes16>(ctx, in, out, n, contiguous, map);
      default: return internalError("select of " + std::to_string(bytes) + "-byte elements");
    }
  });
}

Results lowerConvert(const Operation& op, LowerContext&) {
  const ElementType from = op.operand(0)->type().elementType();
  const ElementType to = op.result(0)->type().elementType();
  if (!isGpuComputeType(to)) return unsupportedType(op, to);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  return dispatchType(from, Results(unsupportedType(op, from)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    return makeKernel([to, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
      if (n == 0) return Status::ok();
      convertKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const typename Tr::S*>(in[0]), out[0],
                                                                  to, n);
      WF_CUDA_CHECK_LAUNCH("convertKernel");
      return Status::ok();
    });
  });
}

}  // namespace

void registerElementwiseLowerings(CudaKernelRegistry& r) {
  // Every op of element_math.h's lists (chlo unary math: JAX and the exporter emit these; GELU
  // uses chlo.erf).
#define WF_UNARY(code, F) r.add(OpCode::code, unaryLowering(UnOp::k##code));
  WF_EM_UNARY_OPS(WF_UNARY) WF_EM_CHLO_UNARY_OPS(WF_UNARY)
#undef WF_UNARY
#define WF_BINARY(code, F) r.add(OpCode::code, binaryLowering(BinOp::k##code));
  WF_EM_BINARY_OPS(WF_BINARY) WF_EM_CHLO_BINARY_OPS(WF_BINARY)
#undef WF_BINARY
  r.add(OpCode::ReducePrecision, lowerReducePrecision);
  r.add(OpCode::Real, realPartLowering(false));
  r.add(OpCode::Imag, realPartLowering(true));
  r.add(OpCode::IsFinite, floatPredicate(2));
  r.add(OpCode::ChloIsInf, floatPredicate(0));
  r.add(OpCode::ChloIsPosInf, floatPredicate(1));
  r.add(OpCode::ChloIsNegInf, floatPredicate(-1));

  r.add(OpCode::Compare, lowerCompare);
  r.add(OpCode::Clamp, lowerClamp);
  r.add(OpCode::Select, lowerSelect);
  r.add(OpCode::Convert, lowerConvert);
}

}  // namespace wf::cuda
