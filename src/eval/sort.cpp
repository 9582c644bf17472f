// stablehlo.sort and chlo.top_k.
//
// sort always sorts stably (std::stable_sort), which satisfies is_stable = false as well. The
// general path calls the comparator region for every comparison; the fast path applies when the
// comparator is a single `compare LT|GT` of one operand's pair of arguments (any compare_type,
// TOTALORDER included): it sorts precomputed keys and permutes every operand by the result.
// Because the fast path evaluates exactly the comparisons the region would, both paths give the
// same order even for NaN under FLOAT comparisons.
//
// top_k returns the k largest elements of each last-dimension row in descending order, ties in
// index order (like jax.lax.top_k and its CHLO decomposition: a stable sort with a TOTALORDER
// GT comparator), so NaN ranks above +Inf and -NaN below -Inf.
#include <numeric>

#include "eval/reduce_util.h"

namespace wf {
namespace {

using namespace reduce_detail;

// Element types whose values compare as int64 keys without loss.
bool hasIntegerKeys(ElementType t) { return isInteger(t) || isBoolean(t); }
bool hasFastFloatKeys(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kBF16 || t == ElementType::kF16;
}

// Integer values as order-preserving int64 (ui64 is shifted by 2^63).
std::vector<int64_t> integerKeys(const Literal& l) {
  std::vector<int64_t> keys(static_cast<size_t>(l.numElements()));
  ElementType t = l.elementType();
  for (int64_t i = 0; i < l.numElements(); ++i) {
    int64_t v = l.getInt(i);
    keys[static_cast<size_t>(i)] =
        t == ElementType::kUI64 ? static_cast<int64_t>(static_cast<uint64_t>(v) ^ (1ull << 63)) : v;
  }
  return keys;
}

std::vector<double> floatValues(const Literal& l) {
  std::vector<double> v(static_cast<size_t>(l.numElements()));
  switch (l.elementType()) {
    case ElementType::kF32:
      for (size_t i = 0; i < v.size(); ++i) v[i] = l.dataAs<float>()[i];
      break;
    case ElementType::kF64:
      for (size_t i = 0; i < v.size(); ++i) v[i] = l.dataAs<double>()[i];
      break;
    default:
      for (size_t i = 0; i < v.size(); ++i) v[i] = l.getDouble(static_cast<int64_t>(i));
  }
  return v;
}

std::vector<int64_t> totalOrderKeys(const Literal& l) {
  std::vector<double> v = floatValues(l);
  std::vector<int64_t> keys(v.size());
  for (size_t i = 0; i < v.size(); ++i) keys[i] = totalOrderKey(v[i]);
  return keys;
}

// Geometry of the 1-D slices along `dim`: element j of slice s is at base(s) + j * stride.
struct Slices {
  int64_t count = 0, length = 0, stride = 1, inner = 1;
  int64_t base(int64_t s) const { return (s / inner) * length * inner + s % inner; }
};

Slices slicesAlong(const std::vector<int64_t>& shape, size_t dim) {
  Slices s;
  s.length = shape[dim];
  for (size_t d = dim + 1; d < shape.size(); ++d) s.inner *= shape[d];
  s.stride = s.inner;
  int64_t outer = 1;
  for (size_t d = 0; d < dim; ++d) outer *= shape[d];
  s.count = outer * s.inner;
  return s;
}

// Writes, for every operand, slice element j of the result from slice element perm[j] of the input.
void permuteSlice(std::span<const Literal> operands, std::vector<Literal>& results, const Slices& sl, int64_t s,
                  const std::vector<int64_t>& perm) {
  int64_t base = sl.base(s);
  for (size_t k = 0; k < operands.size(); ++k) {
    size_t bytes = static_cast<size_t>(storageBytes(operands[k].elementType()));
    const std::byte* in = operands[k].data();
    std::byte* out = results[k].data();
    for (int64_t j = 0; j < sl.length; ++j)
      std::memcpy(out + static_cast<size_t>(base + j * sl.stride) * bytes,
                  in + static_cast<size_t>(base + perm[static_cast<size_t>(j)] * sl.stride) * bytes, bytes);
  }
}

template <typename Key>
void sortByKeys(std::span<const Literal> operands, std::vector<Literal>& results, const Slices& sl,
                const std::vector<Key>& keys, bool less) {
  parallelRanges(sl.count, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, sl.length)), [&](int64_t s0, int64_t s1) {
    std::vector<int64_t> perm(static_cast<size_t>(sl.length));
    std::vector<Key> k(static_cast<size_t>(sl.length));
    for (int64_t s = s0; s < s1; ++s) {
      int64_t base = sl.base(s);
      for (int64_t j = 0; j < sl.length; ++j) k[static_cast<size_t>(j)] = keys[static_cast<size_t>(base + j * sl.stride)];
      std::iota(perm.begin(), perm.end(), 0);
      if (less)
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return k[a] < k[b]; });
      else
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return k[a] > k[b]; });
      permuteSlice(operands, results, sl, s, perm);
    }
  });
}

bool trySortFast(const Operation& op, std::span<const Literal> operands, const Slices& sl,
                 std::vector<Literal>& results) {
  if (!fastPathsEnabled()) return false;
  const Region& cmp = op.region(0);
  for (size_t k = 0; k < operands.size(); ++k) {
    std::optional<CompareMatch> m = matchCompareBody(cmp, 2 * k, 2 * k + 1);
    if (!m) continue;
    if (m->dir != CompareDir::kLT && m->dir != CompareDir::kGT) return false;
    bool less = m->dir == CompareDir::kLT;
    ElementType t = operands[k].elementType();
    if (regionArgType(cmp, 2 * k) != t) return false;
    if (hasIntegerKeys(t)) {
      sortByKeys(operands, results, sl, integerKeys(operands[k]), less);
    } else if (hasFastFloatKeys(t) && m->totalOrder) {
      sortByKeys(operands, results, sl, totalOrderKeys(operands[k]), less);
    } else if (hasFastFloatKeys(t)) {
      sortByKeys(operands, results, sl, floatValues(operands[k]), less);
    } else {
      return false;
    }
    return true;
  }
  return false;
}

Expected<std::vector<Literal>> sortKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (operands.empty() || op.numRegions() != 1)
    return invalidArgument(op.describe() + ": expects inputs and one comparator region");
  size_t n = operands.size();
  const Region& cmp = op.region(0);
  if (cmp.empty() || cmp.front().numArguments() != 2 * n)
    return invalidArgument(op.describe() + ": comparator must take " + std::to_string(2 * n) + " arguments");
  const std::vector<int64_t>& shape = operands[0].shape();
  for (const Literal& l : operands)
    if (l.shape() != shape) return invalidArgument(op.describe() + ": inputs have different shapes");
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t dim = -1;
  if (const Attribute* a = op.attr("dimension")) {
    if (auto v = a->asInt()) dim = *v;
  }
  if (dim < 0) dim += rank;
  if (rank == 0 || dim < 0 || dim >= rank)
    return invalidArgument(op.describe() + ": dimension out of range for rank " + std::to_string(rank));
  Slices sl = slicesAlong(shape, static_cast<size_t>(dim));

  std::vector<Literal> results(n);
  for (size_t k = 0; k < n; ++k) results[k] = Literal::zeros(operands[k].type());
  if (operands[0].numElements() == 0) return results;
  if (trySortFast(op, operands, sl, results)) return results;

  // General path: the comparator region decides every comparison.
  std::vector<ElementType> argTypes(n);
  for (size_t k = 0; k < n; ++k) argTypes[k] = regionArgType(cmp, 2 * k);
  std::vector<std::vector<Literal>> scalars(n, std::vector<Literal>(static_cast<size_t>(sl.length)));
  std::vector<Literal> args(2 * n);
  std::vector<int64_t> perm(static_cast<size_t>(sl.length));
  Status error;
  for (int64_t s = 0; s < sl.count; ++s) {
    int64_t base = sl.base(s);
    for (size_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < sl.length; ++j)
        scalars[k][static_cast<size_t>(j)] = scalarAtAs(operands[k], base + j * sl.stride, argTypes[k]);
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      if (!error.isOk()) return false;
      for (size_t k = 0; k < n; ++k) {
        args[2 * k] = scalars[k][static_cast<size_t>(a)];
        args[2 * k + 1] = scalars[k][static_cast<size_t>(b)];
      }
      Expected<std::vector<Literal>> r = Interpreter::runRegion(cmp, args, ctx);
      if (!r) {
        error = r.status();
        return false;
      }
      error = checkRegionResults(op, *r, {ElementType::kI1});
      return error.isOk() && (*r)[0].getInt(0) != 0;
    });
    WF_RETURN_IF_ERROR(error);
    permuteSlice(operands, results, sl, s, perm);
  }
  return results;
}

// ---- chlo.top_k ---------------------------------------------------------------------------------

Expected<std::vector<Literal>> topKKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 1 || op.numResults() != 2)
    return invalidArgument(op.describe() + ": expects one operand and two results");
  const Literal& x = operands[0];
  if (x.shape().empty()) return invalidArgument(op.describe() + ": operand must have rank >= 1");
  ElementType t = x.elementType();
  if (isComplex(t) || t == ElementType::kQuantized)
    return unimplemented(op.describe() + ": top_k of " + std::string(elementTypeName(t)));
  int64_t n = x.shape().back();
  int64_t k = -1;
  if (const Attribute* a = op.attr("k")) {
    if (auto v = a->asInt()) k = *v;
  }
  if (k < 0 && op.result(0)->type().rank() > 0) k = op.result(0)->type().shape().back();
  if (k < 0 || k > n)
    return invalidArgument(op.describe() + ": k = " + std::to_string(k) + " out of range for last dimension " +
                           std::to_string(n));
  std::vector<int64_t> outShape = x.shape();
  outShape.back() = k;
  Literal values = Literal::zeros(Type::tensor(outShape, t));
  ElementType indexType = op.result(1)->type().elementType();
  Literal indices = Literal::zeros(Type::tensor(outShape, indexType));
  if (n == 0 || k == 0) return std::vector<Literal>{std::move(values), std::move(indices)};

  std::vector<int64_t> keys = isFloat(t) ? totalOrderKeys(x) : integerKeys(x);
  int64_t rows = x.numElements() / n;
  size_t bytes = static_cast<size_t>(storageBytes(t));
  parallelRanges(rows, std::max<int64_t>(1, 4096 / n), [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t* key = keys.data() + r * n;
      std::iota(perm.begin(), perm.end(), 0);
      // Larger key first; among equal keys the lower index, so the order is total and unique.
      std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), [&](int64_t a, int64_t b) {
        return key[a] != key[b] ? key[a] > key[b] : a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = r * n + perm[static_cast<size_t>(j)];
        std::memcpy(values.data() + static_cast<size_t>(r * k + j) * bytes,
                    x.data() + static_cast<size_t>(src) * bytes, bytes);
        indices.setInt(r * k + j, perm[static_cast<size_t>(j)]);
      }
    }
  });
  return std::vector<Literal>{std::move(values), std::move(indices)};
}

}  // namespace

void registerSortKernels(KernelRegistry& registry) {
  registry.add(OpCode::Sort, sortKernel);
  registry.add(OpCode::ChloTopK, topKKernel);
}

}  // namespace wf
