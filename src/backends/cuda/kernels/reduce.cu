// CUDA kernels for stablehlo.reduce and stablehlo.reduce_window with a one-op body (sum,
// product, max, min, and, or) over one operand, and the two-operand argmax/argmin reduce (values
// and indices, recognised structurally). Other bodies and operand counts go to the kernels
// generated around the body (region_kernels.h). reduce_window (pooling) takes strides, window
// and base dilation and padding (padded positions and base-dilation holes hold the init value,
// as the spec says). f16 and bf16 accumulate in f32; integers accumulate in 64 bits and wrap to
// their width.
// Four shapes of launch: a block per result element (the reduced dims are the innermost, or there
// are few results), blocks over runs of contiguous elements (the innermost dims reduced, a kept
// dim before them and reduced dims before that: reduceRuns), column blocks (the innermost dim is
// kept: reduceColumns), else a thread per result element (coalesced across results).
#include <algorithm>
#include <optional>
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"
#include "backends/cuda/kernels/reduce_body.cuh"
#include "backends/cuda/codegen/region_kernels.h"

namespace wf::cuda {

Expected<RedKind> bodyKind(const Operation& op) {
  auto unsupportedBody = [&] { return unsupportedOnCuda(op, "no CUDA kernel for this reduction body"); };
  if (op.numRegions() != 1 || op.region(0).empty()) return unsupportedBody();
  const Block& b = op.region(0).front();
  if (b.numArguments() != 2 || b.operations().size() != 2) return unsupportedBody();
  const Operation& f = *b.operations()[0];
  const Operation& ret = *b.operations()[1];
  if (f.numOperands() != 2 || f.numResults() != 1) return unsupportedBody();
  if (ret.numOperands() != 1 || ret.operand(0) != f.result(0)) return unsupportedBody();
  const Value* x = f.operand(0);
  const Value* y = f.operand(1);
  if (!((x == b.argument(0) && y == b.argument(1)) || (x == b.argument(1) && y == b.argument(0))))
    return unsupportedBody();
  switch (f.code()) {
    case OpCode::Add: return RedKind::kSum;
    case OpCode::Multiply: return RedKind::kProd;
    case OpCode::Maximum: return RedKind::kMax;
    case OpCode::Minimum: return RedKind::kMin;
    case OpCode::And: return RedKind::kAnd;
    case OpCode::Or: return RedKind::kOr;
    default: return unsupportedBody();
  }
}

namespace {

template <typename Tr>
struct AccOf {
  using type = typename Tr::C;
};
template <>
struct AccOf<BoolT> {
  using type = uint32_t;
};

template <typename Tr>
__device__ typename AccOf<Tr>::type identity(RedKind k) {
  using A = typename AccOf<Tr>::type;
  if constexpr (Tr::kCat == Cat::kBool) {
    return (k == RedKind::kProd || k == RedKind::kMin || k == RedKind::kAnd) ? 1u : 0u;
  } else if constexpr (Tr::kCat == Cat::kFloat) {
    switch (k) {
      case RedKind::kSum: return A(0);
      case RedKind::kProd: return A(1);
      case RedKind::kMax: return -INFINITY;
      case RedKind::kMin: return INFINITY;
      default: return A(0);
    }
  } else if constexpr (Tr::kCat == Cat::kSInt) {
    switch (k) {
      case RedKind::kSum: case RedKind::kOr: return 0;
      case RedKind::kProd: return 1;
      case RedKind::kMax: return INT64_MIN;
      case RedKind::kMin: return INT64_MAX;
      case RedKind::kAnd: return -1;
    }
    return 0;
  } else {
    switch (k) {
      case RedKind::kSum: case RedKind::kOr: case RedKind::kMax: return 0;
      case RedKind::kProd: return 1;
      case RedKind::kMin: case RedKind::kAnd: return ~uint64_t{0};
    }
    return 0;
  }
}

template <typename Tr>
__device__ typename AccOf<Tr>::type loadAcc(typename Tr::S s) {
  if constexpr (Tr::kCat == Cat::kBool) return s != 0 ? 1u : 0u;
  else return Tr::load(s);
}
template <typename Tr>
__device__ typename Tr::S storeAcc(typename AccOf<Tr>::type a) {
  if constexpr (Tr::kCat == Cat::kBool) return a != 0 ? 1 : 0;
  else return Tr::store(a);
}

struct ReducePlan {
  int64_t numOut = 0;
  int64_t numRed = 0;
  bool trailing = false;  // the reduced dims are the innermost: element r of output j is at j*numRed + r
  bool innermostReduced = false;  // the input's last dim is one of the reduced
  IndexMap<1> outMap;     // kept dims -> input offset
  IndexMap<1> redMap;     // reduced dims -> input offset
};

__device__ inline int64_t outBase(const ReducePlan& p, int64_t j) {
  if (p.trailing) return j * p.numRed;
  int64_t off[1];
  p.outMap.offsets(j, off);
  return off[0];
}
__device__ inline int64_t redOffset(const ReducePlan& p, int64_t r) {
  if (p.trailing) return r;
  int64_t off[1];
  p.redMap.offsets(r, off);
  return off[0];
}

template <typename Tr>
__global__ void reduceThreadPerOutput(RedKind k, const typename Tr::S* in, const typename Tr::S* init,
                                      typename Tr::S* out, ReducePlan p) {
  WF_GRID_STRIDE_LOOP(j, p.numOut) {
    const int64_t base = outBase(p, j);
    auto acc = loadAcc<Tr>(*init);
    for (int64_t r = 0; r < p.numRed; ++r) acc = combine<Tr>(k, acc, loadAcc<Tr>(in[base + redOffset(p, r)]));
    out[j] = storeAcc<Tr>(acc);
  }
}

// The block's values combined: thread 0 returns the result (the others an unspecified value).
// `warpAcc` holds one value per warp; the block is in step at entry and at return.
template <typename Tr>
__device__ typename AccOf<Tr>::type blockCombine(RedKind k, typename AccOf<Tr>::type acc, typename AccOf<Tr>::type* warpAcc) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int s = 16; s > 0; s /= 2) acc = combine<Tr>(k, acc, __shfl_down_sync(0xffffffffu, acc, s));
  if (lane == 0) warpAcc[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < warps ? warpAcc[lane] : identity<Tr>(k);
    for (int s = 16; s > 0; s /= 2) acc = combine<Tr>(k, acc, __shfl_down_sync(0xffffffffu, acc, s));
  }
  __syncthreads();
  return acc;
}

template <typename Tr>
__global__ void reduceBlockPerOutput(RedKind k, const typename Tr::S* in, const typename Tr::S* init,
                                     typename Tr::S* out, ReducePlan p) {
  using A = typename AccOf<Tr>::type;
  __shared__ A warpAcc[kThreads / 32];
  for (int64_t j = blockIdx.x; j < p.numOut; j += gridDim.x) {
    const int64_t base = outBase(p, j);
    A acc = identity<Tr>(k);
    for (int64_t r = threadIdx.x; r < p.numRed; r += blockDim.x)
      acc = combine<Tr>(k, acc, loadAcc<Tr>(in[base + redOffset(p, r)]));
    acc = blockCombine<Tr>(k, acc, warpAcc);
    if (threadIdx.x == 0) out[j] = storeAcc<Tr>(combine<Tr>(k, loadAcc<Tr>(*init), acc));
  }
}

// Column reduction: the results vary along the input's innermost dim (it is kept), so a warp
// reads 32 neighbouring results' elements at once. A block of kColumnWidth x kColumnRows
// threads takes 32 results and a slice of the reduced elements; with several slices
// (gridDim.y > 1) each writes its partial results to `partial` (one row per slice) and
// reduceColumnsFinish combines them, in slice order, with the init value: enough blocks to fill
// the GPU even where a thread per result would leave it idle (a bias gradient: 4096 results of
// 3072 elements each).
constexpr int kColumnWidth = 32;
constexpr int kColumnRows = 8;

template <typename Tr>
__global__ void reduceColumns(RedKind k, const typename Tr::S* in, const typename Tr::S* init, typename Tr::S* out,
                              typename AccOf<Tr>::type* partial, ReducePlan p, int64_t rowsPerSlice) {
  using A = typename AccOf<Tr>::type;
  __shared__ A tile[kColumnRows][kColumnWidth + 1];
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kColumnWidth + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rowsPerSlice;
  const int64_t r1 = r0 + rowsPerSlice < p.numRed ? r0 + rowsPerSlice : p.numRed;
  A acc = identity<Tr>(k);
  if (j < p.numOut) {
    const int64_t base = outBase(p, j);
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kColumnRows) acc = combine<Tr>(k, acc, loadAcc<Tr>(in[base + redOffset(p, r)]));
  }
  tile[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || j >= p.numOut) return;
  for (int y = 1; y < kColumnRows; ++y) acc = combine<Tr>(k, acc, tile[y][threadIdx.x]);
  if (gridDim.y == 1) out[j] = storeAcc<Tr>(combine<Tr>(k, loadAcc<Tr>(*init), acc));
  else partial[static_cast<int64_t>(blockIdx.y) * p.numOut + j] = acc;
}

template <typename Tr>
__global__ void reduceColumnsFinish(RedKind k, const typename AccOf<Tr>::type* partial, int64_t slices,
                                    const typename Tr::S* init, typename Tr::S* out, int64_t numOut) {
  WF_GRID_STRIDE_LOOP(j, numOut) {
    auto acc = loadAcc<Tr>(*init);
    for (int64_t y = 0; y < slices; ++y) acc = combine<Tr>(k, acc, partial[y * numOut + j]);
    out[j] = storeAcc<Tr>(acc);
  }
}

// Slices of the reduced elements for reduceColumns: about four blocks per multiprocessor in
// all, each slice at least 64 elements long.
struct ColumnSplit {
  int64_t slices = 1;
  int64_t rowsPerSlice = 0;
};
ColumnSplit splitColumns(const ReducePlan& p, int multiprocessors) {
  const int64_t columnBlocks = (p.numOut + kColumnWidth - 1) / kColumnWidth;
  const int64_t wanted = (int64_t{4} * multiprocessors + columnBlocks - 1) / columnBlocks;
  const int64_t most = std::max<int64_t>(1, p.numRed / 64);
  ColumnSplit c;
  c.slices = std::clamp<int64_t>(wanted, 1, std::min<int64_t>(most, 65535));
  c.rowsPerSlice = (p.numRed + c.slices - 1) / c.slices;
  c.slices = (p.numRed + c.rowsPerSlice - 1) / c.rowsPerSlice;
  return c;
}

// Runs reduction: the innermost dims are reduced and a kept dim comes before them (a batch
// norm's statistics of NCHW, reduced over N, H and W), so each result's elements lie in `outer`
// runs of `inner` contiguous elements (`inner` is the product of the trailing reduced dims, the
// runs are the other reduced dims). A block takes one result and a slice of its runs, its
// threads reading along the runs (several runs at once where a run is shorter than the block);
// with several slices (gridDim.y > 1) each writes its partial result and reduceColumnsFinish
// combines them in slice order, so the sum is the same every run. The block-per-result kernel
// would give a block all of a result's elements (a few dozen blocks for a network's first
// channels) and index each through every reduced dim.
struct RunPlan {
  int64_t inner = 1;      // elements per run, contiguous
  int64_t outer = 1;      // runs per result
  IndexMap<1> outerMap;   // run index -> input offset (the reduced dims before the run's)
  int64_t runsPerSlice = 1;
  int64_t slices = 1;
};

__device__ inline int64_t runOffset(const RunPlan& rp, int64_t o) {
  if (rp.outerMap.rank == 1) return o * rp.outerMap.strides[0][0];
  int64_t off[1];
  rp.outerMap.offsets(o, off);
  return off[0];
}

template <typename Tr>
__global__ void reduceRuns(RedKind k, const typename Tr::S* in, const typename Tr::S* init, typename Tr::S* out,
                           typename AccOf<Tr>::type* partial, ReducePlan p, RunPlan rp) {
  using A = typename AccOf<Tr>::type;
  __shared__ A warpAcc[kThreads / 32];
  const int64_t j = blockIdx.x;
  const typename Tr::S* x = in + outBase(p, j);
  const int64_t o0 = static_cast<int64_t>(blockIdx.y) * rp.runsPerSlice;
  const int64_t o1 = o0 + rp.runsPerSlice < rp.outer ? o0 + rp.runsPerSlice : rp.outer;
  A acc = identity<Tr>(k);
  if (rp.inner >= blockDim.x) {
    for (int64_t o = o0; o < o1; ++o) {
      const typename Tr::S* run = x + runOffset(rp, o);
      for (int64_t i = threadIdx.x; i < rp.inner; i += blockDim.x) acc = combine<Tr>(k, acc, loadAcc<Tr>(run[i]));
    }
  } else {
    const int inner = static_cast<int>(rp.inner);
    const int perPass = static_cast<int>(blockDim.x) / inner;  // runs read at once
    if (static_cast<int>(threadIdx.x) < perPass * inner) {
      const int i = static_cast<int>(threadIdx.x) % inner;
      for (int64_t o = o0 + static_cast<int>(threadIdx.x) / inner; o < o1; o += perPass)
        acc = combine<Tr>(k, acc, loadAcc<Tr>(x[runOffset(rp, o) + i]));
    }
  }
  acc = blockCombine<Tr>(k, acc, warpAcc);
  if (threadIdx.x != 0) return;
  if (gridDim.y == 1) out[j] = storeAcc<Tr>(combine<Tr>(k, loadAcc<Tr>(*init), acc));
  else partial[static_cast<int64_t>(blockIdx.y) * p.numOut + j] = acc;
}

// The runs of a reduction whose innermost dim is reduced and that is not trailing (a kept dim of
// more than one element after a reduced one), and its slices: about four blocks per
// multiprocessor in all, each slice at least 4096 elements.
std::optional<RunPlan> planRuns(const ReduceGeometry& g, int64_t numOut, int multiprocessors) {
  const size_t rank = g.inShape.size();
  size_t d = rank;
  RunPlan rp;
  while (d > 0 && (g.reduced[d - 1] || g.inShape[d - 1] == 1)) rp.inner *= g.inShape[--d];
  if (d == rank || d == 0 || rp.inner <= 1) return std::nullopt;
  for (size_t e = 0; e < d; ++e) {
    if (!g.reduced[e]) continue;
    rp.outerMap.dims[rp.outerMap.rank] = g.inShape[e];
    rp.outerMap.strides[0][rp.outerMap.rank] = g.inStrides[e];
    ++rp.outerMap.rank;
    rp.outer *= g.inShape[e];
  }
  if (rp.outerMap.rank == 0) return std::nullopt;  // trailing: a block per result reads contiguously
  const int64_t wanted = (int64_t{4} * multiprocessors + numOut - 1) / std::max<int64_t>(numOut, 1);
  const int64_t most = std::max<int64_t>(1, rp.outer * rp.inner / 4096);
  rp.slices = std::clamp<int64_t>(wanted, 1, std::min<int64_t>({most, rp.outer, 65535}));
  rp.runsPerSlice = (rp.outer + rp.slices - 1) / rp.slices;
  rp.slices = (rp.outer + rp.runsPerSlice - 1) / rp.runsPerSlice;
  return rp;
}

// ---- argmax / argmin: reduce of (values, indices) ----------------------------------------------
//
// The two-operand reduce JAX emits for argmax/argmin (jax.lax.argmax), recognised structurally:
//   ^bb0(%v1, %i1, %v2, %i2):
//     %p = or(compare GT|LT %v1 %v2, compare NE %v1 %v1)      (the NaN test optional for ints)
//     %q = or(%p, and(compare EQ %v1 %v2, compare LT %i1 %i2))
//     return select(%p, %v1, %v2), select(%q, %i1, %i2)
// (either operand order of or/and/eq, compares written with swapped operands, GT/LT as LT/GT).
// Its result: the largest (smallest) value, NaN above everything, and among equal values (or
// NaNs) the smallest index; that is what the CPU's sequential application of the body gives when
// the indices grow along the reduced dims (an iota, as JAX and PyTorch exporters produce). The
// selection is associative, commutative and idempotent, so every thread starts from the init
// pair and partial results combine in any order.

// The block argument index of v, or -1.
int argIndexOf(const Value* v, const Block& b) {
  for (size_t i = 0; i < b.numArguments(); ++i)
    if (b.argument(i) == v) return static_cast<int>(i);
  return -1;
}

std::string compareDir(const Operation& c) {
  const Attribute* a = c.attr("comparison_direction");
  return a ? a->stringValue() : std::string();
}

// compare DIR (arg x, arg y) with DIR as seen from (x, y); "" if v is not such a compare.
std::string compareOfArgs(const Value* v, const Block& b, int x, int y) {
  const Operation* c = definedBy(v, OpCode::Compare);
  if (!c || c->numOperands() != 2) return "";
  if (const Attribute* t = c->attr("compare_type")) {
    // TOTALORDER orders NaNs and zeros otherwise; SIGNED/UNSIGNED of the other signedness
    // reinterprets bits.
    const std::string& ct = t->stringValue();
    const ElementType et = c->operand(0)->type().elementType();
    if (ct == "TOTALORDER" || (ct == "SIGNED" && isUnsignedInteger(et)) || (ct == "UNSIGNED" && isSignedInteger(et)))
      return "";
  }
  const int l = argIndexOf(c->operand(0), b), r = argIndexOf(c->operand(1), b);
  const std::string d = compareDir(*c);
  if (l == x && r == y) return d;
  if (l == y && r == x) {
    if (d == "LT") return "GT";
    if (d == "GT") return "LT";
    if (d == "LE") return "GE";
    if (d == "GE") return "LE";
    return d;
  }
  return "";
}

// The operands of a binary op of `code`, in either order, as (a, b) with pred(a) true.
template <typename Pred>
bool splitBinary(const Value* v, OpCode code, Pred pred, const Value*& a, const Value*& b) {
  const Operation* o = definedBy(v, code);
  if (!o || o->numOperands() != 2) return false;
  if (pred(o->operand(0))) {
    a = o->operand(0);
    b = o->operand(1);
    return true;
  }
  if (pred(o->operand(1))) {
    a = o->operand(1);
    b = o->operand(0);
    return true;
  }
  return false;
}

// 1 argmax, -1 argmin, 0 not the pattern.
int matchArgReduceBody(const Operation& op, bool floatValues) {
  if (op.numRegions() != 1 || op.region(0).empty()) return 0;
  const Block& b = op.region(0).front();
  const Operation* ret = b.terminator();
  if (b.numArguments() != 4 || !ret || ret->numOperands() != 2) return 0;
  const Operation* selV = definedBy(ret->operand(0), OpCode::Select);
  const Operation* selI = definedBy(ret->operand(1), OpCode::Select);
  if (!selV || !selI || selV->numOperands() != 3 || selI->numOperands() != 3) return 0;
  if (argIndexOf(selV->operand(1), b) != 0 || argIndexOf(selV->operand(2), b) != 2 ||
      argIndexOf(selI->operand(1), b) != 1 || argIndexOf(selI->operand(2), b) != 3)
    return 0;
  const Value* p = selV->operand(0);
  // %p: compare GT|LT (v1, v2), or'ed with the NaN test compare NE (v1, v1).
  int kind = 0;
  auto isOrder = [&](const Value* v) {
    const std::string d = compareOfArgs(v, b, 0, 2);
    return d == "GT" || d == "LT";
  };
  const Value* order = nullptr;
  const Value* nanTest = nullptr;
  if (isOrder(p)) {
    if (floatValues) return 0;  // floats need the NaN test
    order = p;
  } else if (splitBinary(p, OpCode::Or, isOrder, order, nanTest)) {
    if (compareOfArgs(nanTest, b, 0, 0) != "NE") return 0;
  } else {
    return 0;
  }
  kind = compareOfArgs(order, b, 0, 2) == "GT" ? 1 : -1;
  // %q: or(%p, and(compare EQ (v1, v2), compare LT (i1, i2))).
  const Value* q = selI->operand(0);
  const Value* pp = nullptr;
  const Value* tie = nullptr;
  if (!splitBinary(q, OpCode::Or, [&](const Value* v) { return v == p; }, pp, tie)) return 0;
  const Value* eq = nullptr;
  const Value* lt = nullptr;
  if (!splitBinary(tie, OpCode::And, [&](const Value* v) { return compareOfArgs(v, b, 0, 2) == "EQ"; }, eq, lt))
    return 0;
  if (compareOfArgs(lt, b, 1, 3) != "LT") return 0;
  return kind;
}

template <typename Tr>
struct ArgPair {
  typename Tr::C v;
  int64_t i;
};

// The better of two candidates: larger (kind 1) or smaller (kind -1) value, NaN first, ties to
// the smaller index.
template <typename Tr>
__device__ inline ArgPair<Tr> argBetter(int kind, ArgPair<Tr> a, ArgPair<Tr> b) {
  if constexpr (Tr::kCat == Cat::kFloat) {
    const bool an = isnan(a.v), bn = isnan(b.v);
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
  }
  if (kind > 0 ? a.v > b.v : a.v < b.v) return a;
  if (kind > 0 ? b.v > a.v : b.v < a.v) return b;
  return a.i <= b.i ? a : b;
}

template <typename I>
__device__ inline int64_t loadArgIndex(const I* p, int64_t off) {
  return static_cast<int64_t>(p[off]);
}

template <typename Tr, typename I>
__global__ void argReduceThreadPerOutput(int kind, const typename Tr::S* __restrict__ vals, const I* __restrict__ idx,
                                         const typename Tr::S* initV, const I* initI, typename Tr::S* outV, I* outI,
                                         ReducePlan p) {
  WF_GRID_STRIDE_LOOP(j, p.numOut) {
    const int64_t base = outBase(p, j);
    ArgPair<Tr> acc{Tr::load(*initV), static_cast<int64_t>(*initI)};
    for (int64_t r = 0; r < p.numRed; ++r) {
      const int64_t off = base + redOffset(p, r);
      acc = argBetter<Tr>(kind, acc, ArgPair<Tr>{Tr::load(vals[off]), loadArgIndex(idx, off)});
    }
    outV[j] = Tr::store(acc.v);
    outI[j] = static_cast<I>(acc.i);
  }
}

template <typename Tr, typename I>
__global__ void argReduceBlockPerOutput(int kind, const typename Tr::S* __restrict__ vals, const I* __restrict__ idx,
                                        const typename Tr::S* initV, const I* initI, typename Tr::S* outV, I* outI,
                                        ReducePlan p) {
  using C = typename Tr::C;
  __shared__ C sv[kThreads];
  __shared__ int64_t si[kThreads];
  for (int64_t j = blockIdx.x; j < p.numOut; j += gridDim.x) {
    const int64_t base = outBase(p, j);
    ArgPair<Tr> acc{Tr::load(*initV), static_cast<int64_t>(*initI)};
    for (int64_t r = threadIdx.x; r < p.numRed; r += blockDim.x) {
      const int64_t off = base + redOffset(p, r);
      acc = argBetter<Tr>(kind, acc, ArgPair<Tr>{Tr::load(vals[off]), loadArgIndex(idx, off)});
    }
    sv[threadIdx.x] = acc.v;
    si[threadIdx.x] = acc.i;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
      if (threadIdx.x < s) {
        const ArgPair<Tr> other{sv[threadIdx.x + s], si[threadIdx.x + s]};
        const ArgPair<Tr> mine{sv[threadIdx.x], si[threadIdx.x]};
        const ArgPair<Tr> best = argBetter<Tr>(kind, mine, other);
        sv[threadIdx.x] = best.v;
        si[threadIdx.x] = best.i;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      outV[j] = Tr::store(sv[0]);
      outI[j] = static_cast<I>(si[0]);
    }
    __syncthreads();
  }
}

using Results = Expected<std::unique_ptr<OpKernel>>;

// The plan of a reduction of `inShape` over the op's dimensions (shared by the one- and
// two-operand paths).
Expected<ReducePlan> planReduce(const Operation& op, const ReduceGeometry& g) {
  const std::vector<int64_t>& inShape = g.inShape;
  if (inShape.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "rank " + std::to_string(inShape.size()) + " is over the CUDA kernels' limit");
  ReducePlan p;
  p.numOut = g.numOut;
  p.numRed = g.numRed;
  bool seenReduced = false;
  p.trailing = true;
  for (size_t d = 0; d < inShape.size(); ++d) {
    IndexMap<1>& m = g.reduced[d] ? p.redMap : p.outMap;
    m.dims[m.rank] = inShape[d];
    m.strides[0][m.rank] = g.inStrides[d];
    ++m.rank;
    if (g.reduced[d]) seenReduced = true;
    else if (seenReduced && inShape[d] != 1) p.trailing = false;
  }
  p.innermostReduced = !inShape.empty() && g.reduced.back();
  return p;
}

template <typename I>
Results argReduceKernel(const Operation& op, ElementType et, int kind, const ReducePlan& p, bool blockPerOutput) {
  return dispatchType(et, Results(unsupportedOnCuda(op, "no CUDA kernel for argmax/argmin of " + std::string(elementTypeName(et)))),
                      [&](auto tag) -> Results {
                        using Tr = decltype(tag);
                        if constexpr (Tr::kCat == Cat::kBool) {
                          return unsupportedOnCuda(op, "no CUDA kernel for argmax/argmin of i1");
                        } else {
                          return makeKernel([kind, p, blockPerOutput](const LaunchContext& ctx, std::span<void* const> in,
                                                                      std::span<void* const> out) -> Status {
                            if (p.numOut == 0) return Status::ok();
                            using S = typename Tr::S;
                            const auto* v = static_cast<const S*>(in[0]);
                            const auto* ix = static_cast<const I*>(in[1]);
                            const auto* iv = static_cast<const S*>(in[2]);
                            const auto* ii = static_cast<const I*>(in[3]);
                            auto* ov = static_cast<S*>(out[0]);
                            auto* oi = static_cast<I*>(out[1]);
                            if (blockPerOutput) {
                              const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(p.numOut, 65535 * 8));
                              argReduceBlockPerOutput<Tr, I><<<blocks, kThreads, 0, ctx.stream>>>(kind, v, ix, iv, ii, ov, oi, p);
                              WF_CUDA_CHECK_LAUNCH("argReduceBlockPerOutput");
                            } else {
                              argReduceThreadPerOutput<Tr, I><<<gridFor(p.numOut), kThreads, 0, ctx.stream>>>(kind, v, ix, iv, ii, ov, oi, p);
                              WF_CUDA_CHECK_LAUNCH("argReduceThreadPerOutput");
                            }
                            return Status::ok();
                          });
                        }
                      });
}

Results lowerArgReduce(const Operation& op, LowerContext& ctx) {
  const ElementType et = op.operand(0)->type().elementType();
  const ElementType it = op.operand(1)->type().elementType();
  const int kind = matchArgReduceBody(op, isFloat(et));
  if (kind == 0)
    return unsupportedOnCuda(op, "no CUDA kernel for this two-operand reduction body (only argmax/argmin)");
  if (op.operand(2)->type().elementType() != et || op.result(0)->type().elementType() != et ||
      op.operand(3)->type().elementType() != it || op.result(1)->type().elementType() != it)
    return unsupportedOnCuda(op, "no CUDA kernel for an argmax/argmin that changes element types");
  const Block& b = op.region(0).front();
  if (b.argument(0)->type().elementType() != et || b.argument(1)->type().elementType() != it)
    return unsupportedOnCuda(op, "no CUDA kernel for an argmax/argmin body on promoted types");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> idxShape, staticShape(op, op.operand(1)->type()));
  if (idxShape != inShape) return invalidArgument(op.describe() + ": inputs have different shapes");
  WF_ASSIGN_OR_RETURN(ReduceGeometry geometry, planReduceGeometry(op, inShape));
  WF_ASSIGN_OR_RETURN(ReducePlan p, planReduce(op, geometry));
  const bool innermostReduced = p.redMap.rank > 0 && p.trailing;
  const int sms = ctx.device.info().multiprocessors;
  const bool blockPerOutput = p.numRed >= 32 && (innermostReduced || p.numOut < int64_t{8} * sms);
  switch (it) {
    case ElementType::kSI32: return argReduceKernel<int32_t>(op, et, kind, p, blockPerOutput);
    case ElementType::kSI64: return argReduceKernel<int64_t>(op, et, kind, p, blockPerOutput);
    default:
      return unsupportedOnCuda(op, "no CUDA kernel for argmax/argmin indices of type " + std::string(elementTypeName(it)));
  }
}

// reduce.cu's own kernels, or Unimplemented when they do not take the op.
Results lowerFastReduce(const Operation& op, LowerContext& ctx) {
  if (op.numOperands() == 4 && op.numResults() == 2) return lowerArgReduce(op, ctx);
  if (op.numOperands() != 2 || op.numResults() != 1)
    return unsupportedOnCuda(op, "no CUDA kernel for a reduction of " + std::to_string(op.numOperands() / 2) +
                                     " operands");
  WF_ASSIGN_OR_RETURN(RedKind kind, bodyKind(op));
  const ElementType et = op.operand(0)->type().elementType();
  if (op.result(0)->type().elementType() != et || op.operand(1)->type().elementType() != et)
    return unsupportedOnCuda(op, "no CUDA kernel for a reduction that changes the element type");
  if (isFloat(et) && (kind == RedKind::kAnd || kind == RedKind::kOr))
    return invalidArgument(op.describe() + ": and/or reduction of floats");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(ReduceGeometry geometry, planReduceGeometry(op, inShape));
  WF_ASSIGN_OR_RETURN(ReducePlan p, planReduce(op, geometry));
  const int sms = ctx.device.info().multiprocessors;
  // Reduced dims outside the innermost (kept) one: the column kernel.
  const bool columns = !p.innermostReduced && p.numRed >= 8;
  const ColumnSplit split = columns ? splitColumns(p, sms) : ColumnSplit{};
  // The innermost dims reduced, a kept dim before them and reduced dims before that: runs.
  const std::optional<RunPlan> runs =
      !columns && p.numRed >= 32 && p.numOut <= 0x7fffffff ? planRuns(geometry, p.numOut, sms) : std::nullopt;
  const bool blockPerOutput = p.numRed >= 32 && (p.innermostReduced || p.numOut < int64_t{8} * sms);
  const int64_t slices = columns ? split.slices : runs ? runs->slices : 1;
  return dispatchType(et, Results(unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(et)))),
                      [&](auto tag) -> Results {
                        using Tr = decltype(tag);
                        using A = typename AccOf<Tr>::type;
                        const size_t partialBytes = slices > 1 ? static_cast<size_t>(slices * p.numOut) * sizeof(A) : 0;
                        ctx.workspaceBytes = std::max(ctx.workspaceBytes, partialBytes);
                        return makeKernel([kind, p, blockPerOutput, columns, split, runs, partialBytes](
                                              const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
                          if (p.numOut == 0) return Status::ok();
                          using S = typename Tr::S;
                          const auto* x = static_cast<const S*>(in[0]);
                          const auto* init = static_cast<const S*>(in[1]);
                          auto* o = static_cast<S*>(out[0]);
                          if (partialBytes > 0 && (!ctx.workspace || ctx.workspaceBytes < partialBytes))
                            return internalError("reduce: workspace too small for the partial results");
                          auto* partial = static_cast<A*>(ctx.workspace);
                          if (runs) {
                            const dim3 grid(static_cast<unsigned>(p.numOut), static_cast<unsigned>(runs->slices));
                            reduceRuns<Tr><<<grid, kThreads, 0, ctx.stream>>>(kind, x, init, o, partial, p, *runs);
                            WF_CUDA_CHECK_LAUNCH("reduceRuns");
                            if (runs->slices > 1) {
                              reduceColumnsFinish<Tr><<<gridFor(p.numOut), kThreads, 0, ctx.stream>>>(kind, partial, runs->slices,
                                                                                                     init, o, p.numOut);
                              WF_CUDA_CHECK_LAUNCH("reduceColumnsFinish");
                            }
                          } else if (columns) {
                            const dim3 grid(static_cast<unsigned>((p.numOut + kColumnWidth - 1) / kColumnWidth),
                                            static_cast<unsigned>(split.slices));
                            reduceColumns<Tr><<<grid, dim3(kColumnWidth, kColumnRows), 0, ctx.stream>>>(kind, x, init, o, partial, p,
                                                                                                       split.rowsPerSlice);
                            WF_CUDA_CHECK_LAUNCH("reduceColumns");
                            if (split.slices > 1) {
                              reduceColumnsFinish<Tr><<<gridFor(p.numOut), kThreads, 0, ctx.stream>>>(kind, partial, split.slices,
                                                                                                     init, o, p.numOut);
                              WF_CUDA_CHECK_LAUNCH("reduceColumnsFinish");
                            }
                          } else if (blockPerOutput) {
                            const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(p.numOut, 65535 * 8));
                            reduceBlockPerOutput<Tr><<<blocks, kThreads, 0, ctx.stream>>>(kind, x, init, o, p);
                            WF_CUDA_CHECK_LAUNCH("reduceBlockPerOutput");
                          } else {
                            reduceThreadPerOutput<Tr><<<gridFor(p.numOut), kThreads, 0, ctx.stream>>>(kind, x, init, o, p);
                            WF_CUDA_CHECK_LAUNCH("reduceThreadPerOutput");
                          }
                          return Status::ok();
                        });
                      });
}

// The fast kernels when they take the op, else the kernel generated around its body.
Results lowerReduce(const Operation& op, LowerContext& ctx) {
  Results fast = lowerFastReduce(op, ctx);
  if (fast || fast.status().code() != StatusCode::kUnimplemented) return fast;
  return lowerRegionKernel(op, ctx);
}

// ---- reduce_window ----------------------------------------------------------------------------

// Index math in I: 32-bit where the operand's and result's offsets fit (64-bit division costs
// tens of instructions, and a 3x3 pooling window does a few per element). The window is walked
// by an odometer, so only the result's coordinates are divided out.
template <typename Tr, typename I>
__global__ void reduceWindowKernel(RedKind k, const typename Tr::S* in, const typename Tr::S* init,
                                   typename Tr::S* out, WindowPlan p) {
  const I n = static_cast<I>(p.n);
  for (I j = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += static_cast<I>(blockDim.x) * gridDim.x) {
    I first[kMaxRank], w[kMaxRank];
    I rem = j;
    for (int d = p.rank - 1; d >= 0; --d) {
      const I outDim = static_cast<I>(p.outDims[d]);
      // The window's first position in the dilated, padded input.
      first[d] = rem % outDim * static_cast<I>(p.strides[d]) - static_cast<I>(p.padLo[d]);
      rem /= outDim;
      w[d] = 0;
    }
    // Padded positions and base-dilation holes hold the init value (the spec pads and dilates
    // the operand with it), and the reduction starts from it too.
    const auto initValue = loadAcc<Tr>(*init);
    auto acc = initValue;
    for (;;) {
      I off = 0;
      bool inside = true;
      for (int d = 0; d < p.rank; ++d) {
        // x: the position in the dilated, padded input; xi = x / baseDilation in the input.
        const I x = first[d] + w[d] * static_cast<I>(p.dilation[d]);
        const I b = static_cast<I>(p.baseDilation[d]);
        I xi = x;
        if (b != 1) {
          if (x % b != 0) inside = false;
          xi = x / b;
        }
        if (x < 0 || xi >= static_cast<I>(p.inDims[d])) inside = false;
        off += xi * static_cast<I>(p.inStrides[d]);
      }
      acc = combine<Tr>(k, acc, inside ? loadAcc<Tr>(in[off]) : initValue);
      int d = p.rank - 1;  // the next window position, row-major
      while (d >= 0 && w[d] == static_cast<I>(p.window[d]) - 1) w[d--] = 0;
      if (d < 0) break;
      ++w[d];
    }
    out[j] = storeAcc<Tr>(acc);
  }
}

// Pooling over the last two dims (every other dim's window 1, stride 1, no padding, no
// dilations): planes of H x W with the coordinates in scalars, which stay in registers where the
// general kernel's per-dim arrays, indexed at run time, live in local memory.
struct PoolWindow {
  int32_t h = 0, w = 0, oh = 0, ow = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int32_t n = 0;
  int32_t c = 0;  // channels-last storage ([N, C, H, W] stored [N, H, W, C]): the C of it
};

bool poolWindowForm(const WindowPlan& p, PoolWindow* q) {
  if (p.rank < 2 || p.n > INT32_MAX) return false;
  int64_t inElements = 1;
  for (int d = 0; d < p.rank; ++d) {
    inElements *= p.inDims[d];
    if (p.dilation[d] != 1 || p.baseDilation[d] != 1) return false;
    if (d + 2 < p.rank && (p.window[d] != 1 || p.strides[d] != 1 || p.padLo[d] != 0 || p.outDims[d] != p.inDims[d]))
      return false;
  }
  if (inElements > INT32_MAX) return false;
  const int a = p.rank - 2, b = p.rank - 1;
  *q = PoolWindow{static_cast<int32_t>(p.inDims[a]),  static_cast<int32_t>(p.inDims[b]),
                  static_cast<int32_t>(p.outDims[a]), static_cast<int32_t>(p.outDims[b]),
                  static_cast<int32_t>(p.window[a]),  static_cast<int32_t>(p.window[b]),
                  static_cast<int32_t>(p.strides[a]), static_cast<int32_t>(p.strides[b]),
                  static_cast<int32_t>(p.padLo[a]),   static_cast<int32_t>(p.padLo[b]),
                  static_cast<int32_t>(p.n)};
  return true;
}

template <typename Tr>
__global__ void reducePoolWindowKernel(RedKind k, const typename Tr::S* __restrict__ in, const typename Tr::S* init,
                                       typename Tr::S* __restrict__ out, PoolWindow p) {
  const auto initValue = loadAcc<Tr>(*init);
  for (int32_t j = static_cast<int32_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < p.n; j += blockDim.x * gridDim.x) {
    const int32_t ox = j % p.ow, t = j / p.ow, oy = t % p.oh, plane = t / p.oh;
    const int32_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
    const typename Tr::S* base = in + static_cast<int64_t>(plane) * p.h * p.w;
    // Padded positions hold the init value, and the reduction starts from it, in window order.
    auto acc = initValue;
    for (int32_t ky = 0; ky < p.kh; ++ky) {
      const int32_t y = y0 + ky;
      const bool rowInside = y >= 0 && y < p.h;
      for (int32_t kx = 0; kx < p.kw; ++kx) {
        const int32_t x = x0 + kx;
        acc = combine<Tr>(k, acc, rowInside && x >= 0 && x < p.w ? loadAcc<Tr>(base[y * p.w + x]) : initValue);
      }
    }
    out[j] = storeAcc<Tr>(acc);
  }
}

// The same pooling of [N, C, H, W] values stored channels-last ([N, H, W, C], the planner's
// layout around convolutions), input and result alike: consecutive threads take consecutive
// groups of V channels of one output position (one vector load each), so each window position
// is read in contiguous runs.
template <typename S, int V>
struct alignas(sizeof(S) * V) ChannelVector {
  S v[V];
};

template <typename Tr, int V>
__global__ void reducePoolWindowChannelsLastKernel(RedKind k, const typename Tr::S* __restrict__ in,
                                                   const typename Tr::S* init, typename Tr::S* __restrict__ out,
                                                   PoolWindow p) {
  using S = typename Tr::S;
  using Vec = ChannelVector<S, V>;
  const auto initValue = loadAcc<Tr>(*init);
  const int32_t groups = p.c / V, n = p.n / V;
  for (int32_t j = static_cast<int32_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += blockDim.x * gridDim.x) {
    const int32_t g = j % groups, t = j / groups, ox = t % p.ow, u = t / p.ow, oy = u % p.oh, image = u / p.oh;
    const int32_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
    const Vec* base = reinterpret_cast<const Vec*>(in + static_cast<int64_t>(image) * p.h * p.w * p.c) + g;
    typename AccOf<Tr>::type acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = initValue;
    for (int32_t ky = 0; ky < p.kh; ++ky) {
      const int32_t y = y0 + ky;
      const bool rowInside = y >= 0 && y < p.h;
      for (int32_t kx = 0; kx < p.kw; ++kx) {
        const int32_t x = x0 + kx;
        if (rowInside && x >= 0 && x < p.w) {
          const Vec v = base[(y * p.w + x) * groups];
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = combine<Tr>(k, acc[e], loadAcc<Tr>(v.v[e]));
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = combine<Tr>(k, acc[e], initValue);
        }
      }
    }
    Vec r;
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = storeAcc<Tr>(acc[e]);
    reinterpret_cast<Vec*>(out)[j] = r;
  }
}

// True if every offset and count of `p` fits in 32 bits (with room for the padded positions).
bool windowFits32(const WindowPlan& p) {
  int64_t inElements = 1, reach = 0;
  for (int d = 0; d < p.rank; ++d) {
    inElements *= p.inDims[d];
    reach = std::max(reach, p.outDims[d] * p.strides[d] + p.window[d] * p.dilation[d] + p.padLo[d]);
  }
  const int64_t limit = int64_t{1} << 30;
  return p.n < limit && inElements < limit && reach < limit;
}

// reduce.cu's own kernel (one operand, one-op body), or Unimplemented when it does not take the op.
Results lowerFastReduceWindow(const Operation& op, LowerContext& ctx) {
  if (op.numOperands() != 2 || op.numResults() != 1)
    return unsupportedOnCuda(op, "no CUDA kernel for a reduce_window of " + std::to_string(op.numOperands() / 2) +
                                     " operands");
  WF_ASSIGN_OR_RETURN(RedKind kind, bodyKind(op));
  const ElementType et = op.operand(0)->type().elementType();
  if (op.result(0)->type().elementType() != et || op.operand(1)->type().elementType() != et)
    return unsupportedOnCuda(op, "no CUDA kernel for a reduce_window that changes the element type");
  if (isFloat(et) && (kind == RedKind::kAnd || kind == RedKind::kOr))
    return invalidArgument(op.describe() + ": and/or reduction of floats");
  WF_ASSIGN_OR_RETURN(WindowPlan p, planWindow(op));
  // Channels-last storage, which the planner gives the operand and the result together
  // (poolTakesChannelsLast).
  PoolWindow channelsLast;
  if (ctx.operandStrides || ctx.resultStrides) {
    if (!ctx.operandStrides || !ctx.resultStrides || p.rank != 4 || !poolWindowForm(p, &channelsLast))
      return internalError(op.describe() + ": channels-last storage for a window its kernel cannot pool so");
    channelsLast.c = static_cast<int32_t>(p.inDims[1]);
  }
  return dispatchType(et, Results(unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(et)))),
                      [&](auto tag) -> Results {
                        using Tr = decltype(tag);
                        return makeKernel([kind, p, channelsLast](const LaunchContext& ctx, std::span<void* const> in,
                                                                  std::span<void* const> out) {
                          if (p.n == 0) return Status::ok();
                          using S = typename Tr::S;
                          PoolWindow pool;
                          // Four channels per thread where they make an aligned vector of at most 16 bytes
                          // (buffers are allocated aligned to 256 bytes).
                          if (channelsLast.c > 0 && channelsLast.c % 4 == 0 && sizeof(S) <= 4)
                            reducePoolWindowChannelsLastKernel<Tr, 4><<<gridFor(p.n / 4), kThreads, 0, ctx.stream>>>(
                                kind, static_cast<const S*>(in[0]), static_cast<const S*>(in[1]),
                                static_cast<S*>(out[0]), channelsLast);
                          else if (channelsLast.c > 0)
                            reducePoolWindowChannelsLastKernel<Tr, 1><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
                                kind, static_cast<const S*>(in[0]), static_cast<const S*>(in[1]),
                                static_cast<S*>(out[0]), channelsLast);
                          else if (poolWindowForm(p, &pool))
                            reducePoolWindowKernel<Tr><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
                                kind, static_cast<const S*>(in[0]), static_cast<const S*>(in[1]),
                                static_cast<S*>(out[0]), pool);
                          else if (windowFits32(p))
                            reduceWindowKernel<Tr, int32_t><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
                                kind, static_cast<const S*>(in[0]), static_cast<const S*>(in[1]),
                                static_cast<S*>(out[0]), p);
                          else
                            reduceWindowKernel<Tr, int64_t><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
                                kind, static_cast<const S*>(in[0]), static_cast<const S*>(in[1]),
                                static_cast<S*>(out[0]), p);
                          WF_CUDA_CHECK_LAUNCH("reduceWindowKernel");
                          return Status::ok();
                        });
                      });
}

// The fast kernel when it takes the op, else the kernel generated around its body.
Results lowerReduceWindow(const Operation& op, LowerContext& ctx) {
  Results fast = lowerFastReduceWindow(op, ctx);
  if (fast || fast.status().code() != StatusCode::kUnimplemented) return fast;
  return lowerRegionKernel(op, ctx);
}

}  // namespace

Expected<ReduceGeometry> planReduceGeometry(const Operation& op, const std::vector<int64_t>& inShape) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, cpu::intListAttr(op, "dimensions"));
  ReduceGeometry g;
  g.inShape = inShape;
  g.inStrides = rowMajorStridesOf(inShape);
  g.reduced.assign(inShape.size(), false);
  for (int64_t d : dims) {
    if (d < 0 || static_cast<size_t>(d) >= inShape.size() || g.reduced[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": bad reduce dimension " + std::to_string(d));
    g.reduced[static_cast<size_t>(d)] = true;
  }
  for (size_t d = 0; d < inShape.size(); ++d) (g.reduced[d] ? g.numRed : g.numOut) *= inShape[d];
  return g;
}

Expected<WindowPlan> planWindow(const Operation& op) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  const size_t r = inShape.size();
  if (r > static_cast<size_t>(kMaxRank) || outShape.size() != r)
    return unsupportedOnCuda(op, "rank " + std::to_string(r) + " is over the CUDA kernels' limit");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> window, cpu::intListAttr(op, "window_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, cpu::intListAttrOr(op, "window_strides", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> baseDil, cpu::intListAttrOr(op, "base_dilations", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> winDil, cpu::intListAttrOr(op, "window_dilations", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> padding, cpu::intListAttrOr(op, "padding", std::vector<int64_t>(2 * r, 0)));
  if (window.size() != r || strides.size() != r || baseDil.size() != r || winDil.size() != r || padding.size() != 2 * r)
    return invalidArgument(op.describe() + ": window attributes must have one entry per dimension");
  WindowPlan p;
  p.rank = static_cast<int>(r);
  p.n = numElementsOf(outShape);
  const std::vector<int64_t> inStrides = rowMajorStridesOf(inShape);
  for (size_t d = 0; d < r; ++d) {
    if (window[d] <= 0 || strides[d] <= 0 || baseDil[d] <= 0 || winDil[d] <= 0)
      return invalidArgument(op.describe() + ": window sizes, strides and dilations must be positive");
    p.outDims[d] = outShape[d];
    p.inDims[d] = inShape[d];
    p.inStrides[d] = inStrides[d];
    p.window[d] = window[d];
    p.strides[d] = strides[d];
    p.dilation[d] = winDil[d];
    p.baseDilation[d] = baseDil[d];
    p.padLo[d] = padding[2 * d];
    p.windowSize *= window[d];
  }
  return p;
}

bool poolTakesChannelsLast(const Operation& op) {
  if (op.code() != OpCode::ReduceWindow || op.numOperands() != 2 || op.numResults() != 1) return false;
  const Type& x = op.operand(0)->type();
  if (!x.hasStaticShape() || x.rank() != 4 || !isFloat(x.elementType()) ||
      op.result(0)->type().elementType() != x.elementType() || op.operand(1)->type().elementType() != x.elementType())
    return false;
  if (!bodyKind(op)) return false;
  Expected<WindowPlan> p = planWindow(op);
  PoolWindow pool;
  return p && poolWindowForm(*p, &pool);
}

void registerReduceLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::Reduce, lowerReduce);
  r.add(OpCode::ReduceWindow, lowerReduceWindow);
}

}  // namespace wf::cuda
