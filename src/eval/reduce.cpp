// stablehlo.reduce and stablehlo.map.
//
// reduce has a general path that runs the body region once per input element (any body, any
// element type, variadic: e.g. the argmax reduces JAX emits), and fast paths for a body that is a
// single add/multiply/maximum/minimum/and/or/xor of its two arguments on f32, f64, bf16, f16,
// 8..64-bit integers and i1.
//
// Accumulation order in the fast paths (the spec leaves the reduction tree to the implementation):
// the reduced dimensions are merged into contiguous groups; a contiguous innermost reduced run is
// summed with 8 interleaved accumulators combined pairwise (and split across threads when long),
// an outer reduced run is summed row-blocked (blocks of 64 rows, then the blocks). Every step
// computes in the element type: f32 sums stay in f32 (JAX/XLA CPU does the same for f32), and
// bf16/f16 round after every add exactly as the body would, since JAX already upcasts bf16/f16 sums
// to f32 before emitting the reduce when it wants f32 accumulation. The init value is applied once
// per result element.
#include <numeric>

#include "eval/reduce_util.h"

namespace wf {
namespace {

using namespace reduce_detail;

// ---- Fast path ----------------------------------------------------------------------------------

// A dimension group after merging adjacent dimensions that are all reduced or all kept.
struct Group {
  int64_t size;
  bool reduced;
};

constexpr int64_t kLanes = 8;
constexpr int64_t kRowBlock = 64;

// Reduces n >= 1 contiguous values with kLanes interleaved accumulators.
template <typename Traits, typename Op, typename Src>
typename Traits::Compute reduceRun(const Src* x, int64_t n, Op op) {
  using T = typename Traits::Compute;
  auto load = [](Src v) -> T {
    if constexpr (std::is_same_v<Src, T>) return v;
    else return Traits::load(v);
  };
  if (n < 2 * kLanes) {
    T acc = load(x[0]);
    for (int64_t i = 1; i < n; ++i) acc = op(acc, load(x[i]));
    return acc;
  }
  T lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = load(x[l]);
  int64_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = op(lanes[l], load(x[i + l]));
  for (; i < n; ++i) lanes[0] = op(lanes[0], load(x[i]));
  for (int64_t w = kLanes / 2; w >= 1; w /= 2)
    for (int64_t l = 0; l < w; ++l) lanes[l] = op(lanes[l], lanes[l + w]);
  return lanes[0];
}

// Reduces a [rows, cols] block (row stride `cols`) over its rows, for columns [c0, c1), into out.
template <typename Traits, typename Op, typename Src>
void reduceRows(const Src* x, int64_t rows, int64_t cols, int64_t c0, int64_t c1, Op op,
                typename Traits::Compute* out) {
  using T = typename Traits::Compute;
  auto load = [](Src v) -> T {
    if constexpr (std::is_same_v<Src, T>) return v;
    else return Traits::load(v);
  };
  int64_t width = c1 - c0;
  std::vector<T> block(static_cast<size_t>(width));
  for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    int64_t r1 = std::min(rows, r0 + kRowBlock);
    const Src* row = x + r0 * cols + c0;
    for (int64_t j = 0; j < width; ++j) block[j] = load(row[j]);
    for (int64_t r = r0 + 1; r < r1; ++r) {
      row = x + r * cols + c0;
      for (int64_t j = 0; j < width; ++j) block[j] = op(block[j], load(row[j]));
    }
    if (r0 == 0) {
      std::copy(block.begin(), block.end(), out);
    } else {
      for (int64_t j = 0; j < width; ++j) out[j] = op(out[j], block[j]);
    }
  }
}

// Phase B: `groups` ends with [.., reduced Rb, kept I] and has at least one reduced group. Every
// [Rb, I] block (one per position of the leading groups) is reduced over its rows and combined
// into the output row its kept leading coordinates select. `out` starts filled with init.
template <typename Traits, typename Op, typename Src>
void reduceOuter(const Src* x, const std::vector<Group>& groups, Op op, typename Traits::Compute* out) {
  using T = typename Traits::Compute;
  size_t m = groups.size();
  int64_t cols = groups[m - 1].size;
  int64_t rows = groups[m - 2].size;
  std::vector<Group> lead(groups.begin(), groups.end() - 2);
  int64_t numLead = 1;
  bool leadReduces = false;
  for (const Group& g : lead) {
    numLead *= g.size;
    leadReduces |= g.reduced;
  }
  // Output row of each leading position, by an odometer over the leading groups.
  std::vector<int64_t> outRow(static_cast<size_t>(numLead));
  {
    std::vector<int64_t> idx(lead.size(), 0);
    for (int64_t p = 0; p < numLead; ++p) {
      int64_t o = 0;
      for (size_t g = 0; g < lead.size(); ++g)
        if (!lead[g].reduced) o = o * lead[g].size + idx[g];
      outRow[static_cast<size_t>(p)] = o;
      for (size_t g = lead.size(); g-- > 0;) {
        if (++idx[g] < lead[g].size) break;
        idx[g] = 0;
      }
    }
  }
  auto work = [&](int64_t p0, int64_t p1, int64_t c0, int64_t c1) {
    std::vector<T> col(static_cast<size_t>(c1 - c0));
    for (int64_t p = p0; p < p1; ++p) {
      reduceRows<Traits>(x + p * rows * cols, rows, cols, c0, c1, op, col.data());
      T* o = out + outRow[static_cast<size_t>(p)] * cols + c0;
      for (int64_t j = 0; j < c1 - c0; ++j) o[j] = op(o[j], col[static_cast<size_t>(j)]);
    }
  };
  int64_t grainElems = 1 << 15;
  if (!leadReduces) {
    // Each leading position owns its output row: split over positions.
    parallelRanges(numLead, std::max<int64_t>(1, grainElems / (rows * cols)),
                   [&](int64_t p0, int64_t p1) { work(p0, p1, 0, cols); });
  } else {
    // Several positions share an output row: split over columns.
    parallelRanges(cols, std::max<int64_t>(16, grainElems / std::max<int64_t>(1, rows * numLead)),
                   [&](int64_t c0, int64_t c1) { work(0, numLead, c0, c1); });
  }
}

template <typename Traits, typename Op>
void reduceFastTyped(const Literal& input, const std::vector<bool>& reducedDim, const Literal& init, Op op,
                     Literal& result) {
  using S = typename Traits::Storage;
  using T = typename Traits::Compute;
  const S* x = input.dataAs<S>();
  S* out = result.dataAs<S>();
  int64_t numOut = result.numElements();
  T initV = Traits::load(init.dataAs<S>()[0]);
  if (input.numElements() == 0) {
    for (int64_t i = 0; i < numOut; ++i) out[i] = Traits::store(initV);
    return;
  }
  // Merge dimensions into alternating groups; size-1 dimensions do not matter.
  std::vector<Group> groups;
  for (size_t d = 0; d < reducedDim.size(); ++d) {
    int64_t n = input.shape()[d];
    if (n == 1) continue;
    if (!groups.empty() && groups.back().reduced == reducedDim[d]) groups.back().size *= n;
    else groups.push_back({n, reducedDim[d]});
  }
  bool anyReduced = std::any_of(groups.begin(), groups.end(), [](const Group& g) { return g.reduced; });
  if (!anyReduced) {
    parallelRanges(numOut, 1 << 15, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) out[i] = Traits::store(op(initV, Traits::load(x[i])));
    });
    return;
  }
  std::vector<T> partial;  // results of phase A, the input of phase B when one follows
  if (groups.back().reduced) {
    // Phase A: contiguous innermost run of length n per row.
    int64_t n = groups.back().size;
    groups.pop_back();
    int64_t rows = input.numElements() / n;
    partial.resize(static_cast<size_t>(rows));
    constexpr int64_t kChunk = 1 << 16;
    if (rows < 4 && n >= 2 * kChunk) {
      // Few long rows: split each row into chunks reduced in parallel, then combine in order.
      int64_t chunks = (n + kChunk - 1) / kChunk;
      std::vector<T> chunkResult(static_cast<size_t>(rows * chunks));
      parallelRanges(rows * chunks, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          int64_t r = t / chunks, c = t % chunks;
          int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
          chunkResult[static_cast<size_t>(t)] = reduceRun<Traits>(x + r * n + begin, len, op);
        }
      });
      for (int64_t r = 0; r < rows; ++r)
        partial[static_cast<size_t>(r)] = reduceRun<Traits>(chunkResult.data() + r * chunks, chunks, op);
    } else {
      parallelRanges(rows, std::max<int64_t>(1, (1 << 15) / n), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) partial[static_cast<size_t>(r)] = reduceRun<Traits>(x + r * n, n, op);
      });
    }
    bool moreReduced = std::any_of(groups.begin(), groups.end(), [](const Group& g) { return g.reduced; });
    if (!moreReduced) {
      for (int64_t i = 0; i < numOut; ++i) out[i] = Traits::store(op(initV, partial[static_cast<size_t>(i)]));
      return;
    }
  }
  std::vector<T> acc(static_cast<size_t>(numOut), initV);
  if (partial.empty()) reduceOuter<Traits>(x, groups, op, acc.data());
  else reduceOuter<Traits>(partial.data(), groups, op, acc.data());
  for (int64_t i = 0; i < numOut; ++i) out[i] = Traits::store(acc[static_cast<size_t>(i)]);
}

// Runs the fast path when the body is recognised; false when it does not apply.
bool tryReduceFast(const Operation& op, std::span<const Literal> operands, const std::vector<bool>& reducedDim,
                   Literal& result) {
  if (!fastPathsEnabled() || operands.size() != 2) return false;
  const Literal& input = operands[0];
  ElementType et = input.elementType();
  if (operands[1].elementType() != et || result.elementType() != et || regionArgType(op.region(0), 0) != et)
    return false;
  BinaryKind kind = matchBinaryBody(op.region(0), 0, 1);
  if (kind == BinaryKind::kNone) return false;
  return dispatchReduction(et, kind, [&](auto traits, auto fn) {
    reduceFastTyped<decltype(traits)>(input, reducedDim, operands[1], fn, result);
  });
}

// ---- General path -------------------------------------------------------------------------------

Expected<std::vector<Literal>> reduceKernel(const Operation& op, std::span<const Literal> operands,
                                            EvalContext& ctx) {
  if (operands.empty() || operands.size() % 2 != 0 || op.numRegions() != 1)
    return invalidArgument(op.describe() + ": expects N inputs, N init values and one body region");
  size_t n = operands.size() / 2;
  const Region& body = op.region(0);
  if (body.empty() || body.front().numArguments() != 2 * n)
    return invalidArgument(op.describe() + ": body must take " + std::to_string(2 * n) + " arguments");
  const std::vector<int64_t>& shape = operands[0].shape();
  size_t rank = shape.size();
  for (size_t k = 0; k < n; ++k) {
    if (operands[k].shape() != shape)
      return invalidArgument(op.describe() + ": inputs have different shapes");
    if (operands[n + k].numElements() != 1)
      return invalidArgument(op.describe() + ": init value #" + std::to_string(k) + " is not a scalar");
  }
  const Attribute* dimsAttr = op.attr("dimensions");
  auto dims = dimsAttr ? dimsAttr->asIntList() : std::nullopt;
  if (!dims) return invalidArgument(op.describe() + ": missing or malformed 'dimensions'");
  std::vector<bool> reducedDim(rank, false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || reducedDim[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": bad reduce dimension " + std::to_string(d));
    reducedDim[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < rank; ++d)
    if (!reducedDim[d]) outShape.push_back(shape[d]);

  // Results take the body's types (which may promote the inputs').
  std::vector<ElementType> accTypes(n);
  std::vector<Literal> results(n);
  for (size_t k = 0; k < n; ++k) {
    accTypes[k] = regionArgType(body, n + k);
    results[k] = Literal::zeros(Type::tensor(outShape, accTypes[k]));
  }
  if (n == 1 && tryReduceFast(op, operands, reducedDim, results[0])) return results;

  // Offsets (into the inputs) of the first element of each result and of each reduced position.
  std::vector<int64_t> strides = rowMajorStrides(shape);
  auto offsetsOver = [&](bool reduced) {
    std::vector<int64_t> offsets{0};
    for (size_t d = 0; d < rank; ++d) {
      if (reducedDim[d] != reduced) continue;
      std::vector<int64_t> next;
      next.reserve(offsets.size() * static_cast<size_t>(shape[d]));
      for (int64_t base : offsets)
        for (int64_t i = 0; i < shape[d]; ++i) next.push_back(base + i * strides[d]);
      offsets = std::move(next);
    }
    return offsets;
  };
  std::vector<int64_t> outBase = offsetsOver(false);
  std::vector<int64_t> inner = offsetsOver(true);
  if (operands[0].numElements() == 0) inner.clear();  // a zero-size dimension: only the inits remain
  if (results[0].numElements() == 0) return results;

  std::vector<Literal> inits(n);
  for (size_t k = 0; k < n; ++k) inits[k] = scalarAtAs(operands[n + k], 0, accTypes[k]);
  std::vector<ElementType> inTypes(n);
  for (size_t k = 0; k < n; ++k) inTypes[k] = regionArgType(body, k);
  std::vector<Literal> args(2 * n);
  for (size_t o = 0; o < outBase.size(); ++o) {
    for (size_t k = 0; k < n; ++k) args[k] = inits[k];
    for (int64_t off : inner) {
      for (size_t k = 0; k < n; ++k) args[n + k] = scalarAtAs(operands[k], outBase[o] + off, inTypes[k]);
      WF_ASSIGN_OR_RETURN(std::vector<Literal> acc, Interpreter::runRegion(body, args, ctx));
      WF_RETURN_IF_ERROR(checkRegionResults(op, acc, accTypes));
      for (size_t k = 0; k < n; ++k) args[k] = std::move(acc[k]);
    }
    for (size_t k = 0; k < n; ++k) storeScalar(results[k], static_cast<int64_t>(o), args[k]);
  }
  return results;
}

// ---- map ----------------------------------------------------------------------------------------

Expected<std::vector<Literal>> mapKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (operands.empty() || op.numRegions() != 1 || op.numResults() != 1)
    return invalidArgument(op.describe() + ": expects inputs, one region and one result");
  const Region& body = op.region(0);
  if (body.empty() || body.front().numArguments() != operands.size())
    return invalidArgument(op.describe() + ": computation must take " + std::to_string(operands.size()) +
                           " arguments");
  const std::vector<int64_t>& shape = operands[0].shape();
  for (const Literal& l : operands)
    if (l.shape() != shape) return invalidArgument(op.describe() + ": inputs have different shapes");
  if (const Attribute* dimsAttr = op.attr("dimensions")) {
    auto dims = dimsAttr->asIntList();
    std::vector<int64_t> all(shape.size());
    std::iota(all.begin(), all.end(), 0);
    if (!dims || *dims != all)
      return invalidArgument(op.describe() + ": 'dimensions' must be [0, rank) in order");
  }
  ElementType resultType = op.result(0)->type().elementType();
  Literal result = Literal::zeros(Type::tensor(shape, resultType));
  std::vector<ElementType> argTypes(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) argTypes[k] = regionArgType(body, k);
  std::vector<Literal> args(operands.size());
  for (int64_t i = 0; i < result.numElements(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) args[k] = scalarAtAs(operands[k], i, argTypes[k]);
    WF_ASSIGN_OR_RETURN(std::vector<Literal> r, Interpreter::runRegion(body, args, ctx));
    WF_RETURN_IF_ERROR(checkRegionResults(op, r, {resultType}));
    storeScalar(result, i, r[0]);
  }
  return std::vector<Literal>{std::move(result)};
}

}  // namespace

void registerReduceKernels(KernelRegistry& registry) {
  registry.add(OpCode::Reduce, reduceKernel);
  registry.add(OpCode::Map, mapKernel);
  registerReduceWindowKernels(registry);
  registerSortKernels(registry);
}

}  // namespace wf
