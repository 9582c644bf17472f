// stablehlo.reduce_window and stablehlo.select_and_scatter.
//
// Both walk windows over a padded (and, for reduce_window, base-dilated) input. A window element
// that falls on padding or on a base-dilation hole reads the init value, as the spec's
// `pad(inputs..., init_values..., ...)` says; select_and_scatter skips such elements, like the
// StableHLO reference interpreter. Each window is folded in row-major window order starting from
// the init value: acc = body(acc, element). General paths run the regions per element; fast paths
// cover a single-op body (reduce_window: add/max/min/...; select_and_scatter on floats: a compare
// as select and a single-op scatter), which is what pooling and its gradient produce.
#include "eval/reduce_util.h"
#include "ir/window.h"

namespace wf {
namespace {

using namespace reduce_detail;

struct WindowGeometry {
  std::vector<int64_t> inShape;
  std::vector<int64_t> outShape;
  std::vector<int64_t> window;
  int64_t windowSize = 1;
  std::vector<int64_t> inStrides;
  // table[d][o * window[d] + w]: the input coordinate that window coordinate w of output
  // coordinate o reads along dimension d, or -1 for padding or a base-dilation hole.
  std::vector<std::vector<int64_t>> table;

  // The input linear index of each window element of output `o` (-1: padding).
  void windowIndices(int64_t o, std::vector<int64_t>& idx, std::vector<int64_t>& scratch) const {
    size_t rank = inShape.size();
    std::vector<int64_t> coord(rank);
    for (size_t d = rank; d-- > 0;) {
      coord[d] = o % outShape[d];
      o /= outShape[d];
    }
    idx.assign(1, 0);
    for (size_t d = 0; d < rank; ++d) {
      scratch.clear();
      const int64_t* t = table[d].data() + coord[d] * window[d];
      for (int64_t base : idx)
        for (int64_t w = 0; w < window[d]; ++w)
          scratch.push_back(base < 0 || t[w] < 0 ? -1 : base + t[w] * inStrides[d]);
      idx.swap(scratch);
    }
  }
};

Expected<WindowGeometry> makeGeometry(const Operation& op, const std::vector<int64_t>& inShape) {
  size_t rank = inShape.size();
  WindowGeometry g;
  g.inShape = inShape;
  g.inStrides = rowMajorStrides(inShape);
  WF_ASSIGN_OR_RETURN(Window w, readWindow(op, static_cast<int64_t>(rank)));
  g.window = w.size;
  g.table.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t n = w.outputSize(d, inShape[d]);
    g.outShape.push_back(n);
    g.windowSize *= g.window[d];
    auto& t = g.table[d];
    t.resize(static_cast<size_t>(n * g.window[d]));
    for (int64_t o = 0; o < n; ++o)
      for (int64_t k = 0; k < g.window[d]; ++k) {
        int64_t q = o * w.strides[d] + k * w.windowDilation[d] - w.padLow[d];  // position in the dilated input
        bool inside = q >= 0 && q % w.baseDilation[d] == 0 && q / w.baseDilation[d] < inShape[d];
        t[static_cast<size_t>(o * g.window[d] + k)] = inside ? q / w.baseDilation[d] : -1;
      }
  }
  return g;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// ---- reduce_window ------------------------------------------------------------------------------

template <typename Traits, typename Op>
void reduceWindowFastTyped(const WindowGeometry& g, const Literal& input, const Literal& init, Op op,
                           Literal& result) {
  using S = typename Traits::Storage;
  using T = typename Traits::Compute;
  const S* x = input.dataAs<S>();
  S* out = result.dataAs<S>();
  T initV = Traits::load(init.dataAs<S>()[0]);
  const size_t rank = g.inShape.size();
  constexpr size_t kMaxRank = 8;
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.windowSize));
  if (rank == 0 || rank > kMaxRank) {
    parallelRanges(result.numElements(), grain, [&](int64_t o0, int64_t o1) {
      std::vector<int64_t> idx, scratch;
      for (int64_t o = o0; o < o1; ++o) {
        g.windowIndices(o, idx, scratch);
        T acc = initV;
        for (int64_t i : idx) acc = op(acc, i < 0 ? initV : Traits::load(x[i]));
        out[o] = Traits::store(acc);
      }
    });
    return;
  }
  // Dims whose window is wider than one element ("active"), outermost first. A window is
  // folded in row-major order, which is row-major order over the active dims alone.
  size_t active[kMaxRank];
  size_t numActive = 0;
  for (size_t d = 0; d < rank; ++d)
    if (g.window[d] > 1) active[numActive++] = d;
  parallelRanges(result.numElements(), grain, [&](int64_t o0, int64_t o1) {
    int64_t coord[kMaxRank];
    for (int64_t rem = o0, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      auto u = static_cast<size_t>(d);
      coord[u] = g.outShape[u] == 0 ? 0 : rem % g.outShape[u];
      rem = g.outShape[u] == 0 ? 0 : rem / g.outShape[u];
    }
    const int64_t* tab[kMaxRank];  // per active dim: the window's input coordinates
    int64_t w[kMaxRank];
    for (int64_t o = o0; o < o1; ++o) {
      // Offset of the single-element dims; padding there makes the whole window padding.
      int64_t base = 0;
      bool padded = false;
      for (size_t d = 0; d < rank; ++d) {
        if (g.window[d] > 1) continue;
        int64_t t = g.table[d][static_cast<size_t>(coord[d])];
        if (t < 0) padded = true;
        base += t * g.inStrides[d];
      }
      T acc = initV;
      if (padded) {
        for (int64_t i = 0; i < g.windowSize; ++i) acc = op(acc, initV);
      } else if (numActive == 0) {
        acc = op(acc, Traits::load(x[base]));
      } else {
        for (size_t a = 0; a < numActive; ++a) {
          size_t d = active[a];
          tab[a] = g.table[d].data() + coord[d] * g.window[d];
          w[a] = 0;
        }
        const size_t last = numActive - 1;
        const int64_t lastStride = g.inStrides[active[last]];
        const int64_t lastWindow = g.window[active[last]];
        for (;;) {
          // Offset of the outer active dims (or padding), then a run along the last one.
          int64_t off = base;
          bool pad = false;
          for (size_t a = 0; a < last; ++a) {
            int64_t t = tab[a][w[a]];
            if (t < 0) pad = true;
            off += t * g.inStrides[active[a]];
          }
          const int64_t* lt = tab[last];
          if (pad) {
            for (int64_t k = 0; k < lastWindow; ++k) acc = op(acc, initV);
          } else {
            for (int64_t k = 0; k < lastWindow; ++k)
              acc = op(acc, lt[k] < 0 ? initV : Traits::load(x[off + lt[k] * lastStride]));
          }
          size_t a = last;
          while (a-- > 0) {
            if (++w[a] < g.window[active[a]]) break;
            w[a] = 0;
          }
          if (a == static_cast<size_t>(-1)) break;
        }
      }
      out[o] = Traits::store(acc);
      for (size_t d = rank; d-- > 0;) {
        if (++coord[d] < g.outShape[d]) break;
        coord[d] = 0;
      }
    }
  });
}

bool tryReduceWindowFast(const Operation& op, const WindowGeometry& g, std::span<const Literal> operands,
                         Literal& result) {
  if (!fastPathsEnabled() || operands.size() != 2) return false;
  ElementType et = operands[0].elementType();
  if (operands[1].elementType() != et || result.elementType() != et || regionArgType(op.region(0), 0) != et)
    return false;
  BinaryKind kind = matchBinaryBody(op.region(0), 0, 1);
  if (kind == BinaryKind::kNone) return false;
  return dispatchReduction(et, kind, [&](auto traits, auto fn) {
    reduceWindowFastTyped<decltype(traits)>(g, operands[0], operands[1], fn, result);
  });
}

Expected<std::vector<Literal>> reduceWindowKernel(const Operation& op, std::span<const Literal> operands,
                                                  EvalContext& ctx) {
  if (operands.empty() || operands.size() % 2 != 0 || op.numRegions() != 1)
    return invalidArgument(op.describe() + ": expects N inputs, N init values and one body region");
  size_t n = operands.size() / 2;
  const Region& body = op.region(0);
  if (body.empty() || body.front().numArguments() != 2 * n)
    return invalidArgument(op.describe() + ": body must take " + std::to_string(2 * n) + " arguments");
  const std::vector<int64_t>& shape = operands[0].shape();
  for (size_t k = 0; k < n; ++k) {
    if (operands[k].shape() != shape) return invalidArgument(op.describe() + ": inputs have different shapes");
    if (operands[n + k].numElements() != 1)
      return invalidArgument(op.describe() + ": init value #" + std::to_string(k) + " is not a scalar");
  }
  WF_ASSIGN_OR_RETURN(WindowGeometry g, makeGeometry(op, shape));

  std::vector<ElementType> accTypes(n), inTypes(n);
  std::vector<Literal> results(n);
  for (size_t k = 0; k < n; ++k) {
    inTypes[k] = regionArgType(body, k);
    accTypes[k] = regionArgType(body, n + k);
    results[k] = Literal::zeros(Type::tensor(g.outShape, accTypes[k]));
  }
  if (n == 1 && tryReduceWindowFast(op, g, operands, results[0])) return results;

  std::vector<Literal> inits(n), padValues(n);
  for (size_t k = 0; k < n; ++k) {
    inits[k] = scalarAtAs(operands[n + k], 0, accTypes[k]);
    padValues[k] = scalarAtAs(operands[n + k], 0, inTypes[k]);
  }
  std::vector<Literal> args(2 * n);
  std::vector<int64_t> idx, scratch;
  int64_t numOut = product(g.outShape);
  for (int64_t o = 0; o < numOut; ++o) {
    g.windowIndices(o, idx, scratch);
    for (size_t k = 0; k < n; ++k) args[k] = inits[k];
    for (int64_t i : idx) {
      for (size_t k = 0; k < n; ++k) args[n + k] = i < 0 ? padValues[k] : scalarAtAs(operands[k], i, inTypes[k]);
      WF_ASSIGN_OR_RETURN(std::vector<Literal> acc, Interpreter::runRegion(body, args, ctx));
      WF_RETURN_IF_ERROR(checkRegionResults(op, acc, accTypes));
      for (size_t k = 0; k < n; ++k) args[k] = std::move(acc[k]);
    }
    for (size_t k = 0; k < n; ++k) storeScalar(results[k], o, args[k]);
  }
  return results;
}

// ---- select_and_scatter -------------------------------------------------------------------------

template <typename Traits, typename ScatterOp>
void selectAndScatterFastTyped(const WindowGeometry& g, const Literal& operand, const Literal& source,
                               const Literal& init, CompareMatch select, ScatterOp scatter, Literal& result) {
  using S = typename Traits::Storage;
  using T = typename Traits::Compute;
  const S* x = operand.dataAs<S>();
  const S* src = source.dataAs<S>();
  T initV = Traits::load(init.dataAs<S>()[0]);
  std::vector<T> acc(static_cast<size_t>(result.numElements()), initV);
  std::vector<int64_t> idx, scratch;
  // Windows overlap, so several sources may scatter into one element: run serially, in source order.
  for (int64_t s = 0; s < source.numElements(); ++s) {
    g.windowIndices(s, idx, scratch);
    int64_t chosen = -1;
    T best{};
    for (int64_t i : idx) {
      if (i < 0) continue;
      T v = Traits::load(x[i]);
      if (chosen < 0 || !compareOp<T>(select.dir, select.totalOrder, best, v)) {
        chosen = i;
        best = v;
      }
    }
    if (chosen >= 0) acc[static_cast<size_t>(chosen)] = scatter(acc[static_cast<size_t>(chosen)], Traits::load(src[s]));
  }
  S* out = result.dataAs<S>();
  for (size_t i = 0; i < acc.size(); ++i) out[i] = Traits::store(acc[i]);
}

bool trySelectAndScatterFast(const Operation& op, const WindowGeometry& g, std::span<const Literal> operands,
                             Literal& result) {
  if (!fastPathsEnabled()) return false;
  ElementType et = operands[0].elementType();
  if (operands[1].elementType() != et || operands[2].elementType() != et || result.elementType() != et ||
      regionArgType(op.region(0), 0) != et || regionArgType(op.region(1), 0) != et)
    return false;
  std::optional<CompareMatch> select = matchCompareBody(op.region(0), 0, 1);
  BinaryKind scatter = matchBinaryBody(op.region(1), 0, 1);
  // Floats only (max-pool gradients): the integer instances of dispatchReduction drop signedness,
  // which the select compare needs.
  if (!select || scatter == BinaryKind::kNone || !isFloat(et)) return false;
  return dispatchReduction(et, scatter, [&](auto traits, auto fn) {
    selectAndScatterFastTyped<decltype(traits)>(g, operands[0], operands[1], operands[2], *select, fn, result);
  });
}

Expected<std::vector<Literal>> selectAndScatterKernel(const Operation& op, std::span<const Literal> operands,
                                                      EvalContext& ctx) {
  if (operands.size() != 3 || op.numRegions() != 2)
    return invalidArgument(op.describe() + ": expects operand, source, init_value and two regions");
  const Region& select = op.region(0);
  const Region& scatter = op.region(1);
  if (select.empty() || select.front().numArguments() != 2 || scatter.empty() ||
      scatter.front().numArguments() != 2)
    return invalidArgument(op.describe() + ": select and scatter must take two arguments each");
  const Literal& operand = operands[0];
  const Literal& source = operands[1];
  if (operands[2].numElements() != 1) return invalidArgument(op.describe() + ": init_value is not a scalar");
  WF_ASSIGN_OR_RETURN(WindowGeometry g, makeGeometry(op, operand.shape()));
  if (source.shape() != g.outShape)
    return invalidArgument(op.describe() + ": source shape " + source.type().toString() +
                           " does not match the number of windows " + Type::tensor(g.outShape, source.elementType()).toString());

  ElementType resultType = regionArgType(scatter, 0);
  Literal result = Literal::zeros(Type::tensor(operand.shape(), resultType));
  if (trySelectAndScatterFast(op, g, operands, result)) return std::vector<Literal>{std::move(result)};

  Literal init = scalarAtAs(operands[2], 0, resultType);
  for (int64_t i = 0; i < result.numElements(); ++i) storeScalar(result, i, init);
  ElementType selectType = regionArgType(select, 0);
  ElementType sourceType = regionArgType(scatter, 1);
  std::vector<int64_t> idx, scratch;
  std::vector<Literal> args(2);
  for (int64_t s = 0; s < source.numElements(); ++s) {
    g.windowIndices(s, idx, scratch);
    int64_t chosen = -1;
    Literal best;
    for (int64_t i : idx) {
      if (i < 0) continue;
      Literal v = scalarAtAs(operand, i, selectType);
      if (chosen >= 0) {
        args[0] = best;
        args[1] = v;
        WF_ASSIGN_OR_RETURN(std::vector<Literal> keep, Interpreter::runRegion(select, args, ctx));
        WF_RETURN_IF_ERROR(checkRegionResults(op, keep, {ElementType::kI1}));
        if (keep[0].getInt(0) != 0) continue;
      }
      chosen = i;
      best = std::move(v);
    }
    if (chosen < 0) continue;
    args[0] = scalarAt(result, chosen);
    args[1] = scalarAtAs(source, s, sourceType);
    WF_ASSIGN_OR_RETURN(std::vector<Literal> updated, Interpreter::runRegion(scatter, args, ctx));
    WF_RETURN_IF_ERROR(checkRegionResults(op, updated, {resultType}));
    storeScalar(result, chosen, updated[0]);
  }
  return std::vector<Literal>{std::move(result)};
}

}  // namespace

void registerReduceWindowKernels(KernelRegistry& registry) {
  registry.add(OpCode::ReduceWindow, reduceWindowKernel);
  registry.add(OpCode::SelectAndScatter, selectAndScatterKernel);
}

}  // namespace wf
