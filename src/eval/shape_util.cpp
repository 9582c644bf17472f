#include "eval/shape_util.h"

#include <algorithm>
#include <optional>
#include <cstring>

#include "support/thread_pool.h"

namespace wf::cpu {

namespace {

// Boxes smaller than this many bytes are copied on the calling thread.
constexpr int64_t kParallelBytes = int64_t{1} << 20;
// Each parallel chunk moves at least this many bytes.
constexpr int64_t kChunkBytes = int64_t{256} << 10;
// Tile edge (elements) for transposes.
constexpr int64_t kTile = 32;

// Strided element copy with the element size known at compile time, so memcpy becomes a move.
template <int N>
void copyRunFixed(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds * N, s + i * ss * N, N);
}

void copyRun(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n, int e) {
  switch (e) {
    case 1: return copyRunFixed<1>(d, ds, s, ss, n);
    case 2: return copyRunFixed<2>(d, ds, s, ss, n);
    case 4: return copyRunFixed<4>(d, ds, s, ss, n);
    case 8: return copyRunFixed<8>(d, ds, s, ss, n);
    case 16: return copyRunFixed<16>(d, ds, s, ss, n);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds * e, s + i * ss * e, static_cast<size_t>(e));
  }
}

// Copies box rows [begin, end) with the cheapest inner loop the strides allow.
void copyRows(std::byte* dst, const std::byte* src, const StridedBox& box, int e, int64_t begin, int64_t end) {
  const int64_t ai = box.aInner(), bi = box.bInner();
  if (ai == 1 && bi == 1) {
    forEachRow(box, begin, end, [&](int64_t a, int64_t b, int64_t n) {
      std::memcpy(dst + a * e, src + b * e, static_cast<size_t>(n * e));
    });
  } else if (ai == 1 && bi == 0) {
    forEachRow(box, begin, end, [&](int64_t a, int64_t b, int64_t n) { fillElements(dst + a * e, n, src + b * e, e); });
  } else {
    forEachRow(box, begin, end, [&](int64_t a, int64_t b, int64_t n) { copyRun(dst + a * e, ai, src + b * e, bi, n, e); });
  }
}

// A transpose: the destination's inner dim is contiguous, the source's is not, but dim `j` of
// the source is. Walk kTile x kTile tiles of (j, inner) so both sides stay in cache.
void copyTransposed(std::byte* dst, const std::byte* src, const StridedBox& box, int e, int64_t j, bool threads) {
  const int64_t r = box.rank();
  const int64_t last = r - 1;
  const int64_t nj = box.shape[static_cast<size_t>(j)], nl = box.shape[static_cast<size_t>(last)];
  const int64_t ajs = box.aStrides[static_cast<size_t>(j)], als = box.aStrides[static_cast<size_t>(last)];
  const int64_t bjs = box.bStrides[static_cast<size_t>(j)], bls = box.bStrides[static_cast<size_t>(last)];
  std::vector<int64_t> outerDims;
  for (int64_t d = 0; d < last; ++d)
    if (d != j) outerDims.push_back(d);
  int64_t outerCount = 1;
  for (int64_t d : outerDims) outerCount *= box.shape[static_cast<size_t>(d)];
  const int64_t jTiles = (nj + kTile - 1) / kTile;

  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t o = item / jTiles, jt = item % jTiles;
      int64_t a = 0, b = 0;
      for (auto it = outerDims.rbegin(); it != outerDims.rend(); ++it) {
        const auto u = static_cast<size_t>(*it);
        int64_t i = o % box.shape[u];
        o /= box.shape[u];
        a += i * box.aStrides[u];
        b += i * box.bStrides[u];
      }
      const int64_t j0 = jt * kTile, j1 = std::min(nj, j0 + kTile);
      for (int64_t l0 = 0; l0 < nl; l0 += kTile) {
        const int64_t l1 = std::min(nl, l0 + kTile);
        for (int64_t jj = j0; jj < j1; ++jj)
          copyRun(dst + (a + jj * ajs + l0 * als) * e, als, src + (b + jj * bjs + l0 * bls) * e, bls, l1 - l0, e);
      }
    }
  };
  const int64_t items = outerCount * jTiles;
  const int64_t bytesPerItem = std::max<int64_t>(1, kTile * nl * e);
  if (threads && box.numElements * e >= kParallelBytes)
    parallelFor(items, std::max<int64_t>(1, kChunkBytes / bytesPerItem), work);
  else
    work(0, items);
}

}  // namespace

StridedBox StridedBox::make(const std::vector<int64_t>& shape, const std::vector<int64_t>& aStrides,
                            const std::vector<int64_t>& bStrides) {
  StridedBox box;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      box.shape.clear();
      box.aStrides.clear();
      box.bStrides.clear();
      box.numElements = 0;
      return box;
    }
    box.numElements *= shape[d];
    if (shape[d] == 1) continue;
    // Merge into the previous (outer) dim when both views are contiguous across the two.
    if (!box.shape.empty() && box.aStrides.back() == aStrides[d] * shape[d] &&
        box.bStrides.back() == bStrides[d] * shape[d]) {
      box.shape.back() *= shape[d];
      box.aStrides.back() = aStrides[d];
      box.bStrides.back() = bStrides[d];
      continue;
    }
    box.shape.push_back(shape[d]);
    box.aStrides.push_back(aStrides[d]);
    box.bStrides.push_back(bStrides[d]);
  }
  return box;
}

void copyBox(std::byte* dst, const std::byte* src, const StridedBox& box, int elemBytes, bool allowThreads) {
  if (box.numElements == 0) return;
  const int e = elemBytes;
  const bool threads = allowThreads && box.numElements * e >= kParallelBytes;
  // Transposes: find a source dim that is contiguous while the source's inner dim is not.
  if (box.rank() >= 2 && box.aInner() == 1 && box.bInner() != 1 && box.bInner() != 0 && box.innerSize() >= 4) {
    for (int64_t j = box.rank() - 2; j >= 0; --j) {
      if (box.bStrides[static_cast<size_t>(j)] == 1 && box.shape[static_cast<size_t>(j)] >= 4) {
        copyTransposed(dst, src, box, e, j, threads);
        return;
      }
    }
  }
  const int64_t rows = box.numRows();
  if (threads && rows > 1) {
    const int64_t rowBytes = box.innerSize() * e;
    parallelFor(rows, std::max<int64_t>(1, kChunkBytes / rowBytes),
                [&](int64_t begin, int64_t end) { copyRows(dst, src, box, e, begin, end); });
  } else {
    copyRows(dst, src, box, e, 0, rows);
  }
}

void copyBox(std::byte* dst, const std::vector<int64_t>& dstStrides, const std::byte* src,
             const std::vector<int64_t>& srcStrides, const std::vector<int64_t>& shape, int elemBytes) {
  copyBox(dst, src, StridedBox::make(shape, dstStrides, srcStrides), elemBytes, true);
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t p = 1;
  for (int64_t d : shape) p *= d;
  return p;
}

namespace {
Status checkTensorShape(const Operation& op, const std::vector<int64_t>& shape, ElementType element) {
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalidArgument(op.describe() + ": invalid result shape " + shapeString(shape));
    if (d != 0 && total > (int64_t{1} << 40) / d)
      return invalidArgument(op.describe() + ": result shape " + shapeString(shape) + " is too large");
    total *= d;
  }
  if (element == ElementType::kQuantized)
    return unimplemented(op.describe() + ": quantized element types are not computed");
  return Status::ok();
}
}  // namespace

Expected<Literal> makeTensor(const Operation& op, const std::vector<int64_t>& shape, ElementType element) {
  WF_RETURN_IF_ERROR(checkTensorShape(op, shape, element));
  return Literal::zeros(Type::tensor(shape, element));
}

Expected<Literal> makeTensorToOverwrite(const Operation& op, const std::vector<int64_t>& shape, ElementType element) {
  WF_RETURN_IF_ERROR(checkTensorShape(op, shape, element));
  return Literal::uninitialized(Type::tensor(shape, element));
}

std::vector<int64_t> intValues(const Literal& l) {
  std::vector<int64_t> out(static_cast<size_t>(l.numElements()));
  for (int64_t i = 0; i < l.numElements(); ++i) out[static_cast<size_t>(i)] = l.getInt(i);
  return out;
}

Expected<std::vector<int64_t>> intListAttr(const Operation& op, std::string_view name) {
  const Attribute* a = op.attr(name);
  if (!a) return invalidArgument(op.describe() + ": missing attribute '" + std::string(name) + "'");
  auto v = a->asIntList();
  if (!v) return invalidArgument(op.describe() + ": attribute '" + std::string(name) + "' is not an integer list");
  return *v;
}

Expected<std::vector<int64_t>> intListAttrOr(const Operation& op, std::string_view name,
                                             std::vector<int64_t> fallback) {
  if (!op.attr(name)) return fallback;
  return intListAttr(op, name);
}

Expected<int64_t> intAttr(const Operation& op, std::string_view name) {
  const Attribute* a = op.attr(name);
  if (!a) return invalidArgument(op.describe() + ": missing attribute '" + std::string(name) + "'");
  auto v = a->asInt();
  if (!v) return invalidArgument(op.describe() + ": attribute '" + std::string(name) + "' is not an integer");
  return *v;
}

Expected<std::vector<int64_t>> structIntList(const Operation& op, const Attribute& s, std::string_view field) {
  const Attribute* f = s.field(field);
  if (!f) return std::vector<int64_t>{};
  if (f->kind() == Attribute::Kind::kInteger) return std::vector<int64_t>{f->intValue()};
  auto v = f->asIntList();
  if (!v) return invalidArgument(op.describe() + ": field '" + std::string(field) + "' is not an integer list");
  return *v;
}

std::string shapeString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

bool isPermutation(const std::vector<int64_t>& perm, int64_t n) {
  if (static_cast<int64_t>(perm.size()) != n) return false;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= n || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

bool boolAttr(const Operation& op, std::string_view name, bool fallback) {
  const Attribute* a = op.attr(name);
  if (!a) return fallback;
  if (a->kind() == Attribute::Kind::kBool || a->kind() == Attribute::Kind::kInteger) return a->boolValue();
  return fallback;
}

Expected<ReducePrecisionFormat> reducePrecisionFormat(const Operation& op) {
  const Attribute* eAttr = op.attr("exponent_bits");
  const Attribute* mAttr = op.attr("mantissa_bits");
  const std::optional<int64_t> e = eAttr ? eAttr->asInt() : std::nullopt;
  const std::optional<int64_t> m = mAttr ? mAttr->asInt() : std::nullopt;
  if (!e || !m || *e < 1 || *m < 0)
    return invalidArgument(op.describe() + ": needs exponent_bits >= 1 and mantissa_bits >= 0");
  return ReducePrecisionFormat{static_cast<int>(std::min<int64_t>(*e, 64)), static_cast<int>(std::min<int64_t>(*m, 64))};
}

}  // namespace wf::cpu
