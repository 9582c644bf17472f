// Shape and stride helpers shared by the CPU data-movement and indexing kernels.
//
// Most data movement (transpose, broadcast, slice, reverse, pad, concatenate, gather/scatter
// windows, dynamic_slice) is one primitive: walk a box of `shape` through two strided views,
// A (usually the destination) and B (usually the source), strides counted in elements and
// allowed to be zero (broadcast) or negative (reverse). `StridedBox` simplifies such a walk once
// (drops unit dims, merges dims that are contiguous in both views) so the inner loop is a long
// run, and `copyBox` turns it into memcpy runs, fills, tiled transposes or element loops.
// Elements are opaque `elemBytes`-sized byte strings, so every element type moves the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/fill.h"
#include "ir/ir.h"
#include "ir/literal.h"
#include "support/status.h"

namespace wf::cpu {

// A box walked through two strided views, simplified for fast iteration.
struct StridedBox {
  // Outermost first; empty for a single element. Never contains a size-1 dim.
  std::vector<int64_t> shape;
  std::vector<int64_t> aStrides;  // in elements
  std::vector<int64_t> bStrides;
  int64_t numElements = 1;  // 0 when the box is empty

  static StridedBox make(const std::vector<int64_t>& shape, const std::vector<int64_t>& aStrides,
                         const std::vector<int64_t>& bStrides);
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  // Rows are the inner dimension's runs; there are numElements / innerSize of them.
  int64_t innerSize() const { return shape.empty() ? 1 : shape.back(); }
  int64_t aInner() const { return shape.empty() ? 1 : aStrides.back(); }
  int64_t bInner() const { return shape.empty() ? 1 : bStrides.back(); }
  int64_t numRows() const { return numElements == 0 ? 0 : numElements / innerSize(); }
};

// Calls fn(aOffset, bOffset, n) for rows [rowBegin, rowEnd) of `box`: n elements starting at the
// given element offsets (relative to the views' origins), stepping by box.aInner()/bInner().
template <typename F>
void forEachRow(const StridedBox& box, int64_t rowBegin, int64_t rowEnd, F&& fn) {
  if (rowBegin >= rowEnd) return;
  const int64_t outerRank = box.rank() > 0 ? box.rank() - 1 : 0;
  const int64_t n = box.innerSize();
  // Multi-index of the first row, then an odometer with running offsets.
  std::vector<int64_t> idx(static_cast<size_t>(outerRank), 0);
  int64_t a = 0, b = 0;
  int64_t rem = rowBegin;
  for (int64_t d = outerRank - 1; d >= 0; --d) {
    const auto u = static_cast<size_t>(d);
    idx[u] = rem % box.shape[u];
    rem /= box.shape[u];
    a += idx[u] * box.aStrides[u];
    b += idx[u] * box.bStrides[u];
  }
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    fn(a, b, n);
    for (int64_t d = outerRank - 1; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      a += box.aStrides[u];
      b += box.bStrides[u];
      if (++idx[u] < box.shape[u]) break;
      a -= box.aStrides[u] * box.shape[u];
      b -= box.bStrides[u] * box.shape[u];
      idx[u] = 0;
    }
  }
}

template <typename F>
void forEachRow(const StridedBox& box, F&& fn) {
  forEachRow(box, 0, box.numRows(), std::forward<F>(fn));
}

// Copies every element of the box from view B (src) to view A (dst). `dst` and `src` point at
// the box's origin element of each view. Uses the thread pool for large boxes.
void copyBox(std::byte* dst, const std::vector<int64_t>& dstStrides, const std::byte* src,
             const std::vector<int64_t>& srcStrides, const std::vector<int64_t>& shape, int elemBytes);
// Same, with a pre-simplified box (for callers that copy many boxes of one shape, e.g. gather).
void copyBox(std::byte* dst, const std::byte* src, const StridedBox& box, int elemBytes, bool allowThreads = true);


// Product of dims (1 for rank 0).
int64_t product(const std::vector<int64_t>& shape);

// Calls fn(index) for every multi-index of `shape` in row-major order.
template <typename F>
void forEachIndex(const std::vector<int64_t>& shape, F&& fn) {
  for (int64_t d : shape)
    if (d == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    fn(static_cast<const std::vector<int64_t>&>(idx));
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      if (++idx[u] < shape[u]) break;
      idx[u] = 0;
    }
    if (d < 0) return;
  }
}

// A new zero-filled tensor Literal; fails (instead of aborting) on negative or dynamic dims.
Expected<Literal> makeTensor(const Operation& op, const std::vector<int64_t>& shape, ElementType element);
// The same, its bytes left unwritten, for ops that write every element (a transpose's or a
// slice's copy, a pad's fill): it saves a memset of the result (dot_general's results are
// allocated so too; on BERT-base those memsets had cost about 9 ms of 155 a run).
Expected<Literal> makeTensorToOverwrite(const Operation& op, const std::vector<int64_t>& shape, ElementType element);

// The values of an integer (or boolean) tensor operand, as int64.
std::vector<int64_t> intValues(const Literal& l);

// Attribute readers that name the op on failure.
Expected<std::vector<int64_t>> intListAttr(const Operation& op, std::string_view name);
// Absent attribute -> `fallback`.
Expected<std::vector<int64_t>> intListAttrOr(const Operation& op, std::string_view name,
                                             std::vector<int64_t> fallback);
Expected<int64_t> intAttr(const Operation& op, std::string_view name);
// A bool (or 0/1 integer) attribute; absent or of another kind -> `fallback`.
bool boolAttr(const Operation& op, std::string_view name, bool fallback);
// reduce_precision's exponent_bits (>= 1) and mantissa_bits (>= 0), each clamped to 64.
struct ReducePrecisionFormat {
  int exponentBits = 0, mantissaBits = 0;
};
Expected<ReducePrecisionFormat> reducePrecisionFormat(const Operation& op);
// A field of a dialect-struct attribute (gather/scatter dimension numbers): absent = empty.
Expected<std::vector<int64_t>> structIntList(const Operation& op, const Attribute& s, std::string_view field);

// "[1, 2, 3]" for error messages.
std::string shapeString(const std::vector<int64_t>& v);

// True if `perm` is a permutation of [0, n).
bool isPermutation(const std::vector<int64_t>& perm, int64_t n);

}  // namespace wf::cpu
