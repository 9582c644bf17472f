// CUDA kernel for stablehlo.sort whose comparator is one `compare LT|GT` of one operand's pair of
// arguments (any compare_type, TOTALORDER included); the other operands are carried along, as in
// argsort. Every sort is stable, which satisfies is_stable = false too, and equals the CPU
// backend's order (std::stable_sort with the same comparison).
//
// Plan: a kernel turns the key operand into order-preserving unsigned keys laid out slice by
// slice (the sorted dimension innermost) next to each element's position in its slice; CUB's
// stable radix sort (DeviceRadixSort for one slice, DeviceSegmentedRadixSort for several) sorts
// the pairs; a gather kernel per operand writes slice element j from the element the sorted
// positions name. Descending sorts complement the keys, so the sort is always ascending and
// stays stable. Under a FLOAT comparison -0 and +0 are equal (the key is the same); NaN keys
// have no order under FLOAT (the comparator is not a strict weak order then). All scratch
// memory (keys, positions, segment offsets, CUB's temporary storage) is workspace sized at
// lowering time.
//
// JAX's float comparator (each value canonicalised, zeros to +0 and NaNs to one NaN, then a
// TOTALORDER compare) is recognised structurally and sorts NaNs after +inf (before, descending).
// Comparators of other shapes (several keys, custom predicates) are unimplemented.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <cmath>
#include <optional>
#include <string>

#include "eval/reduce_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

struct SortGeometry {
  int64_t count = 0;   // slices
  int64_t length = 0;  // elements per slice
  int64_t inner = 1;   // elements after the sorted dim (the stride along it)
  int64_t n = 0;       // count * length
};

__device__ inline int64_t sliceBase(const SortGeometry& g, int64_t s) {
  return (s / g.inner) * g.length * g.inner + s % g.inner;
}

// kFloatCanonical: JAX's float comparator, a TOTALORDER compare of values canonicalised first
// (zeros to +0, every NaN to one positive NaN, which orders after +inf).
enum class KeyKind : uint8_t { kUnsigned, kSigned, kFloat, kFloatTotal, kFloatCanonical };

// The order-preserving unsigned key of element bits `u` of width `bits`.
template <typename K>
__device__ inline K orderedKey(uint64_t u, int bits, int mantissa, KeyKind kind, bool descending) {
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  u &= mask;
  switch (kind) {
    case KeyKind::kUnsigned: break;
    case KeyKind::kSigned: u ^= sign; break;
    case KeyKind::kFloat:
    case KeyKind::kFloatTotal:
    case KeyKind::kFloatCanonical: {
      // -0 equals +0 under a FLOAT comparison and after canonicalisation.
      if (kind != KeyKind::kFloatTotal && (u & ~sign) == 0) u = 0;
      // A NaN: exponent all ones (bits above the mantissa) and a nonzero mantissa.
      const uint64_t magnitude = u & ~sign, inf = (sign - 1) & ~((uint64_t{1} << mantissa) - 1);
      if (kind == KeyKind::kFloatCanonical && mantissa > 0 && magnitude > inf) {
        u = mask;  // after every other key
      } else {
        u = (u & sign) ? (~u & mask) : (u | sign);
      }
      break;
    }
  }
  if (descending) u = ~u & mask;
  return static_cast<K>(u);
}

template <typename S, typename K>
__global__ void sortKeysKernel(const S* __restrict__ in, K* __restrict__ keys, int32_t* __restrict__ positions,
                               SortGeometry g, int bits, int mantissa, KeyKind kind, bool descending) {
  WF_GRID_STRIDE_LOOP(i, g.n) {
    const int64_t s = i / g.length, j = i % g.length;
    uint64_t u;
    if constexpr (sizeof(S) == 1) u = static_cast<uint8_t>(in[sliceBase(g, s) + j * g.inner]);
    else if constexpr (sizeof(S) == 2) u = static_cast<uint16_t>(in[sliceBase(g, s) + j * g.inner]);
    else if constexpr (sizeof(S) == 4) u = static_cast<uint32_t>(in[sliceBase(g, s) + j * g.inner]);
    else u = static_cast<uint64_t>(in[sliceBase(g, s) + j * g.inner]);
    keys[i] = orderedKey<K>(u, bits, mantissa, kind, descending);
    positions[i] = static_cast<int32_t>(j);
  }
}

__global__ void segmentOffsetsKernel(int32_t* offsets, int64_t count, int64_t length) {
  WF_GRID_STRIDE_LOOP(s, count + 1) offsets[s] = static_cast<int32_t>(s * length);
}

struct alignas(16) Word16 {
  uint64_t lo, hi;
};

template <typename W>
__global__ void sortPermuteKernel(const W* __restrict__ in, W* __restrict__ out, const int32_t* __restrict__ sorted,
                                  SortGeometry g) {
  WF_GRID_STRIDE_LOOP(i, g.n) {
    const int64_t s = i / g.length, j = i % g.length;
    const int64_t base = sliceBase(g, s);
    out[base + j * g.inner] = in[base + static_cast<int64_t>(sorted[i]) * g.inner];
  }
}

template <typename W>
Status launchPermute(cudaStream_t stream, const void* in, void* out, const int32_t* sorted, const SortGeometry& g) {
  sortPermuteKernel<W><<<gridFor(g.n), kThreads, 0, stream>>>(static_cast<const W*>(in), static_cast<W*>(out), sorted, g);
  WF_CUDA_CHECK_LAUNCH("sortPermuteKernel");
  return Status::ok();
}

Status permute(int bytes, cudaStream_t stream, const void* in, void* out, const int32_t* sorted,
               const SortGeometry& g) {
  switch (bytes) {
    case 1: return launchPermute<uint8_t>(stream, in, out, sorted, g);
    case 2: return launchPermute<uint16_t>(stream, in, out, sorted, g);
    case 4: return launchPermute<uint32_t>(stream, in, out, sorted, g);
    case 8: return launchPermute<uint64_t>(stream, in, out, sorted, g);
    case 16: return launchPermute<Word16>(stream, in, out, sorted, g);
    default: return internalError("sort of " + std::to_string(bytes) + "-byte elements");
  }
}

constexpr size_t kAlign = 256;
size_t alignUp(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct SortPlan {
  SortGeometry g;
  size_t keyOperand = 0;
  int keyStorageBytes = 4;
  int keyBits = 32;  // significant bits of the key (the radix sort's end bit)
  int mantissaBits = 0;  // of a float key
  KeyKind kind = KeyKind::kUnsigned;
  bool descending = false;
  bool wideKeys = false;  // uint64_t keys, else uint32_t
  std::vector<int> operandBytes;
  // Workspace layout (byte offsets).
  size_t keysIn = 0, keysOut = 0, posIn = 0, posOut = 0, offsets = 0, temp = 0, tempBytes = 0, total = 0;
};

template <typename K>
cudaError_t radixSort(const SortPlan& p, void* temp, size_t& tempBytes, const K* keysIn, K* keysOut,
                      const int32_t* posIn, int32_t* posOut, const int32_t* offsets, cudaStream_t stream) {
  if (p.g.count == 1)
    return cub::DeviceRadixSort::SortPairs(temp, tempBytes, keysIn, keysOut, posIn, posOut, static_cast<int>(p.g.n), 0,
                                           p.keyBits, stream);
  return cub::DeviceSegmentedRadixSort::SortPairs(temp, tempBytes, keysIn, keysOut, posIn, posOut,
                                                  static_cast<int>(p.g.n), static_cast<int>(p.g.count), offsets,
                                                  offsets + 1, 0, p.keyBits, stream);
}

template <typename K>
Status launchSort(const SortPlan& p, const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
  if (p.g.n == 0) return Status::ok();
  if (!ctx.workspace || ctx.workspaceBytes < p.total)
    return internalError("sort: workspace of " + std::to_string(ctx.workspaceBytes) + " bytes, needs " +
                         std::to_string(p.total));
  char* ws = static_cast<char*>(ctx.workspace);
  K* keysIn = reinterpret_cast<K*>(ws + p.keysIn);
  K* keysOut = reinterpret_cast<K*>(ws + p.keysOut);
  auto* posIn = reinterpret_cast<int32_t*>(ws + p.posIn);
  auto* posOut = reinterpret_cast<int32_t*>(ws + p.posOut);
  auto* offsets = reinterpret_cast<int32_t*>(ws + p.offsets);
  const void* key = in[p.keyOperand];
  switch (p.keyStorageBytes) {
    case 1:
      sortKeysKernel<uint8_t, K><<<gridFor(p.g.n), kThreads, 0, ctx.stream>>>(
          static_cast<const uint8_t*>(key), keysIn, posIn, p.g, p.keyBits, p.mantissaBits, p.kind, p.descending);
      break;
    case 2:
      sortKeysKernel<uint16_t, K><<<gridFor(p.g.n), kThreads, 0, ctx.stream>>>(
          static_cast<const uint16_t*>(key), keysIn, posIn, p.g, p.keyBits, p.mantissaBits, p.kind, p.descending);
      break;
    case 4:
      sortKeysKernel<uint32_t, K><<<gridFor(p.g.n), kThreads, 0, ctx.stream>>>(
          static_cast<const uint32_t*>(key), keysIn, posIn, p.g, p.keyBits, p.mantissaBits, p.kind, p.descending);
      break;
    case 8:
      sortKeysKernel<uint64_t, K><<<gridFor(p.g.n), kThreads, 0, ctx.stream>>>(
          static_cast<const uint64_t*>(key), keysIn, posIn, p.g, p.keyBits, p.mantissaBits, p.kind, p.descending);
      break;
    default: return internalError("sort keys of " + std::to_string(p.keyStorageBytes) + " bytes");
  }
  WF_CUDA_CHECK_LAUNCH("sortKeysKernel");
  if (p.g.count > 1) {
    segmentOffsetsKernel<<<gridFor(p.g.count + 1), kThreads, 0, ctx.stream>>>(offsets, p.g.count, p.g.length);
    WF_CUDA_CHECK_LAUNCH("segmentOffsetsKernel");
  }
  size_t tempBytes = p.tempBytes;
  WF_CUDA_CHECK(radixSort<K>(p, ws + p.temp, tempBytes, keysIn, keysOut, posIn, posOut, offsets, ctx.stream));
  WF_CUDA_CHECK_LAUNCH("cub radix sort");
  for (size_t k = 0; k < p.operandBytes.size(); ++k)
    WF_RETURN_IF_ERROR(permute(p.operandBytes[k], ctx.stream, in[k], out[k], posOut, p.g));
  return Status::ok();
}

using Results = Expected<std::unique_ptr<OpKernel>>;

// A scalar constant's value, if `v` is one.
std::optional<double> constantValue(const Value* v) {
  const Operation* c = v->definingOp();
  if (!c || c->code() != OpCode::Constant) return std::nullopt;
  const Attribute* a = c->attr("value");
  const Literal* l = a ? a->literal() : nullptr;
  if (!l || l->numElements() != 1 || !isFloat(l->elementType())) return std::nullopt;
  return l->getDouble(0);
}

std::string enumOf(const Operation& op, const char* name) {
  const Attribute* a = op.attr(name);
  return a ? a->stringValue() : std::string();
}

// The argument of `block` that `v` is, or that `v` canonicalises as JAX's float comparators do:
// select(compare NE x x, NaN, select(compare EQ x 0, 0, x)). -1 otherwise.
int canonicalisedArgument(const Value* v, const Block& block) {
  auto argIndex = [&](const Value* x) {
    for (size_t i = 0; i < block.numArguments(); ++i)
      if (block.argument(i) == x) return static_cast<int>(i);
    return -1;
  };
  if (v->isBlockArgument()) return argIndex(v);
  const Operation* outer = v->definingOp();
  if (!outer || outer->code() != OpCode::Select || outer->numOperands() != 3) return -1;
  const Operation* isNan = outer->operand(0)->definingOp();
  std::optional<double> nan = constantValue(outer->operand(1));
  const Operation* inner = outer->operand(2)->definingOp();
  if (!isNan || isNan->code() != OpCode::Compare || enumOf(*isNan, "comparison_direction") != "NE" || !nan ||
      !std::isnan(*nan) || !inner || inner->code() != OpCode::Select || inner->numOperands() != 3)
    return -1;
  const Value* x = inner->operand(2);
  const int arg = argIndex(x);
  if (arg < 0 || isNan->operand(0) != x || isNan->operand(1) != x) return -1;
  const Operation* isZero = inner->operand(0)->definingOp();
  std::optional<double> zero = constantValue(inner->operand(1));
  if (!isZero || isZero->code() != OpCode::Compare || enumOf(*isZero, "comparison_direction") != "EQ" || !zero ||
      *zero != 0 || std::signbit(*zero))
    return -1;
  std::optional<double> zero2 = constantValue(isZero->operand(1));
  if (isZero->operand(0) != x || !zero2 || *zero2 != 0) return -1;
  return arg;
}

struct KeyMatch {
  size_t operand = 0;
  bool descending = false;
  bool canonical = false;  // JAX's canonicalising float comparator
  bool totalOrder = false;
};

// One compare LT|GT of one operand's pair of arguments (reduce_detail::matchCompareBody), or
// JAX's float comparator: a TOTALORDER compare LT|GT of the pair canonicalised.
Expected<std::optional<KeyMatch>> matchComparator(const Operation& op, size_t n) {
  const Region& cmp = op.region(0);
  for (size_t k = 0; k < n; ++k) {
    std::optional<reduce_detail::CompareMatch> m = reduce_detail::matchCompareBody(cmp, 2 * k, 2 * k + 1);
    if (!m) continue;
    if (m->dir != reduce_detail::CompareDir::kLT && m->dir != reduce_detail::CompareDir::kGT)
      return unsupportedOnCuda(op, "no CUDA kernel for a sort comparator other than LT/GT");
    return std::optional<KeyMatch>(KeyMatch{k, m->dir == reduce_detail::CompareDir::kGT, false, m->totalOrder});
  }
  const Block& block = cmp.front();
  const Operation* ret = block.terminator();
  if (!ret || ret->numOperands() != 1) return std::optional<KeyMatch>();
  const Operation* c = ret->operand(0)->definingOp();
  if (!c || c->code() != OpCode::Compare || c->numOperands() != 2 || enumOf(*c, "compare_type") != "TOTALORDER")
    return std::optional<KeyMatch>();
  const std::string dir = enumOf(*c, "comparison_direction");
  if (dir != "LT" && dir != "GT") return std::optional<KeyMatch>();
  const int a = canonicalisedArgument(c->operand(0), block), b = canonicalisedArgument(c->operand(1), block);
  if (a < 0 || b < 0 || a / 2 != b / 2 || a == b || c->operand(0)->isBlockArgument() ||
      c->operand(1)->isBlockArgument())
    return std::optional<KeyMatch>();
  const bool swapped = a % 2 == 1;
  return std::optional<KeyMatch>(KeyMatch{static_cast<size_t>(a / 2), (dir == "GT") != swapped, true, true});
}

Results lowerSort(const Operation& op, LowerContext& ctx) {
  const size_t n = op.numOperands();
  if (n == 0 || op.numResults() != n || op.numRegions() != 1 || op.region(0).empty())
    return invalidArgument(op.describe() + ": expects inputs, as many results and one comparator region");
  const Region& cmp = op.region(0);
  if (cmp.front().numArguments() != 2 * n)
    return invalidArgument(op.describe() + ": comparator must take " + std::to_string(2 * n) + " arguments");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.operand(0)->type()));
  for (size_t k = 0; k < n; ++k) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> s, staticShape(op, op.operand(k)->type()));
    if (s != shape) return invalidArgument(op.describe() + ": inputs have different shapes");
  }
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t dim = -1;
  if (const Attribute* a = op.attr("dimension"))
    if (auto v = a->asInt()) dim = *v;
  if (dim < 0) dim += rank;
  if (rank == 0 || dim < 0 || dim >= rank)
    return invalidArgument(op.describe() + ": dimension out of range for rank " + std::to_string(rank));

  SortPlan p;
  WF_ASSIGN_OR_RETURN(std::optional<KeyMatch> match, matchComparator(op, n));
  if (!match)
    return unsupportedOnCuda(op, "no CUDA kernel for this sort comparator (only one compare LT/GT of one operand)");
  const ElementType t = op.operand(match->operand)->type().elementType();
  if (reduce_detail::regionArgType(cmp, 2 * match->operand) != t)
    return unsupportedOnCuda(op, "no CUDA kernel for a comparator on promoted types");
  p.keyOperand = match->operand;
  p.descending = match->descending;
  switch (t) {
    case ElementType::kI1:
    case ElementType::kUI8:
    case ElementType::kUI16:
    case ElementType::kUI32:
    case ElementType::kUI64: p.kind = KeyKind::kUnsigned; break;
    case ElementType::kSI8:
    case ElementType::kSI16:
    case ElementType::kSI32:
    case ElementType::kSI64: p.kind = KeyKind::kSigned; break;
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
      p.kind = match->canonical ? KeyKind::kFloatCanonical : match->totalOrder ? KeyKind::kFloatTotal : KeyKind::kFloat;
      p.mantissaBits = t == ElementType::kF16 ? 10 : t == ElementType::kBF16 ? 7 : t == ElementType::kF32 ? 23 : 52;
      break;
    default: return unsupportedOnCuda(op, "no CUDA kernel for sort keys of type " + std::string(elementTypeName(t)));
  }
  if (match->canonical && !isFloat(t)) return unsupportedOnCuda(op, "no CUDA kernel for this sort comparator");
  p.keyStorageBytes = storageBytes(t);
  p.keyBits = 8 * p.keyStorageBytes;
  p.wideKeys = p.keyBits > 32;
  for (size_t k = 0; k < n; ++k) {
    const ElementType t = op.operand(k)->type().elementType();
    if (t == ElementType::kQuantized || op.result(k)->type().elementType() != t)
      return unsupportedOnCuda(op, "no CUDA kernel for sorting values of type " + std::string(elementTypeName(t)));
    p.operandBytes.push_back(storageBytes(t));
  }

  p.g.length = shape[static_cast<size_t>(dim)];
  for (int64_t d = dim + 1; d < rank; ++d) p.g.inner *= shape[static_cast<size_t>(d)];
  p.g.n = numElementsOf(shape);
  p.g.count = p.g.length == 0 ? 0 : p.g.n / p.g.length;
  if (p.g.n > INT32_MAX) return unsupportedOnCuda(op, "no CUDA kernel for sorting over 2^31 elements");

  const size_t keyBytes = p.wideKeys ? 8 : 4;
  const auto ne = static_cast<size_t>(p.g.n);
  p.keysIn = 0;
  p.keysOut = alignUp(p.keysIn + ne * keyBytes);
  p.posIn = alignUp(p.keysOut + ne * keyBytes);
  p.posOut = alignUp(p.posIn + ne * 4);
  p.offsets = alignUp(p.posOut + ne * 4);
  p.temp = alignUp(p.offsets + static_cast<size_t>(p.g.count + 1) * 4);
  if (p.g.n > 0) {
    // CUB only computes its temporary storage size with a null pointer: nothing runs.
    size_t tempBytes = 0;
    cudaError_t rc = p.wideKeys ? radixSort<uint64_t>(p, nullptr, tempBytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr)
                                : radixSort<uint32_t>(p, nullptr, tempBytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    WF_CUDA_CHECK(rc);
    p.tempBytes = tempBytes;
  }
  p.total = alignUp(p.temp + p.tempBytes);
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, p.total);
  return makeKernel([p](const LaunchContext& lc, std::span<void* const> in, std::span<void* const> out) -> Status {
    return p.wideKeys ? launchSort<uint64_t>(p, lc, in, out) : launchSort<uint32_t>(p, lc, in, out);
  });
}

}  // namespace

void registerSortLowerings(CudaKernelRegistry& r) { r.add(OpCode::Sort, lowerSort); }

}  // namespace wf::cuda
