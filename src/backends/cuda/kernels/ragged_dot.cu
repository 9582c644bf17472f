// chlo.ragged_dot on a direct kernel: one thread per result element, the CPU backend's semantics
// (eval/dot.cpp). The lhs ragged dimension is split into groups of group_sizes[..., g]
// consecutive indices:
//   ragged dim an lhs free dim (mode 1): rows of group g multiply rhs[group dim = g]; rows past
//     the last group are 0.
//   ragged dim contracting (mode 2): result [g, batch, lhs free, rhs free], group g contracting
//     only over its own slice of the ragged dim.
//   ragged dim a batch dim (mode 3): an ordinary dot_general; batches past the groups are 0.
// group_sizes may carry leading dims matching the lhs's non-contracting dims before the ragged
// dim, giving each of those indices its own grouping.
//
// group_sizes lives on the device and may change between runs, so each thread sums the small
// group_sizes row it needs instead of the host computing offsets at lowering time. Not tuned for
// speed: a grouped cuBLASLt path (one matrix product per group) would be the next step for large
// float ragged dots.
//
// Numerics follow the direct dot (dot_direct.cu): f16/bf16/f32 operands sum in f32 (f64 when the
// result is f64), f64 in f64, each result rounded once; integers widen to 64 bits, wrap there and
// are narrowed to the result's width, as on the CPU.
#include <algorithm>
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

struct RaggedDotPlan {
  int64_t n = 0;  // result elements
  // Result dims -> lhs offset (0), rhs offset (1), offset of the group_sizes row in elements (2),
  // and a key (3): the lhs ragged coordinate (modes 1 and 3) or the group (mode 2, result dim 0).
  IndexMap<4> out;
  // Contracting dims -> lhs offset (0), rhs offset (1), lhs ragged coordinate (2, mode 2 only).
  IndexMap<3> contract;
  int64_t k = 1;               // product of the contracting dims
  int64_t groups = 0;          // group_sizes' last dim
  int64_t rhsGroupStride = 0;  // rhs stride of the group dim (mode 1; 0 otherwise)
  bool raggedContracts = false;  // mode 2
  IndexType sizeType = IndexType::kS64;
  int sizeBytes = 8;
};

__device__ inline int64_t groupSize(const char* sizes, const RaggedDotPlan& p, int64_t at) {
  return loadIndex(sizes + at * p.sizeBytes, p.sizeType);
}

// InT: the operands' element traits (device_util.cuh); OutT: the result's; Acc: the sum's type.
template <typename InT, typename OutT, typename Acc>
__global__ void raggedDot(const typename InT::S* __restrict__ lhs, const typename InT::S* __restrict__ rhs,
                          const char* __restrict__ sizes, typename OutT::S* __restrict__ out, RaggedDotPlan p) {
  WF_GRID_STRIDE_LOOP(i, p.n) {
    int64_t at[4], step[3];
    p.out.offsets(i, at);
    const int64_t row = at[2], key = at[3];
    // The slice [begin, end) of the ragged coordinate that this element sums over (mode 2), or
    // the group whose rhs matrix it uses (modes 1 and 3).
    int64_t begin = 0, end = 0, rhsAt = at[1];
    if (p.raggedContracts) {
      for (int64_t g = 0; g < key; ++g) begin += groupSize(sizes, p, row + g);
      end = begin + groupSize(sizes, p, row + key);
    } else {
      int64_t g = 0;
      for (; g < p.groups; ++g) {
        end += groupSize(sizes, p, row + g);
        if (key < end) break;
      }
      if (g == p.groups) {  // in no group
        out[i] = OutT::store(static_cast<typename OutT::C>(0));
        continue;
      }
      rhsAt += g * p.rhsGroupStride;
    }
    Acc acc = 0;
    for (int64_t k = 0; k < p.k; ++k) {
      p.contract.offsets(k, step);
      if (p.raggedContracts && (step[2] < begin || step[2] >= end)) continue;
      acc += static_cast<Acc>(InT::load(lhs[at[0] + step[0]])) * static_cast<Acc>(InT::load(rhs[rhsAt + step[1]]));
    }
    out[i] = OutT::store(static_cast<typename OutT::C>(acc));
  }
}

template <typename InT, typename OutT, typename Acc>
Status launchRaggedDot(const LaunchContext& ctx, const RaggedDotPlan& p, std::span<void* const> in,
                       std::span<void* const> out) {
  raggedDot<InT, OutT, Acc><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
      static_cast<const typename InT::S*>(in[0]), static_cast<const typename InT::S*>(in[1]),
      static_cast<const char*>(in[2]), static_cast<typename OutT::S*>(out[0]), p);
  WF_CUDA_CHECK_LAUNCH("raggedDot");
  return Status::ok();
}

using Launcher = Status (*)(const LaunchContext&, const RaggedDotPlan&, std::span<void* const>, std::span<void* const>);

template <typename InT>
Launcher floatLauncher(ElementType out) {
  constexpr bool kF64In = std::is_same_v<typename InT::C, double>;
  switch (out) {
    case ElementType::kF16: return &launchRaggedDot<InT, F16T, std::conditional_t<kF64In, double, float>>;
    case ElementType::kBF16: return &launchRaggedDot<InT, BF16T, std::conditional_t<kF64In, double, float>>;
    case ElementType::kF32: return &launchRaggedDot<InT, NativeFloatT<float>, std::conditional_t<kF64In, double, float>>;
    case ElementType::kF64: return &launchRaggedDot<InT, NativeFloatT<double>, double>;
    default: return nullptr;
  }
}

// Float operands with a float result, or integer operands with an integer result (the sum kept in
// uint64_t, so that it wraps, and stored through the unsigned type of the result's width).
Launcher launcherFor(ElementType in, ElementType out) {
  const bool intOut = isInteger(out) && storageBytes(out) <= 8 && !isF8OrSmaller(out);
  return dispatchType(in, Launcher{nullptr}, [&](auto inT) -> Launcher {
    using InT = decltype(inT);
    if constexpr (InT::kCat == Cat::kFloat) {
      return floatLauncher<InT>(out);
    } else if constexpr (InT::kCat == Cat::kSInt || InT::kCat == Cat::kUInt) {
      if (!intOut) return nullptr;
      switch (storageBytes(out)) {
        case 1: return &launchRaggedDot<InT, UIntT<uint8_t>, uint64_t>;
        case 2: return &launchRaggedDot<InT, UIntT<uint16_t>, uint64_t>;
        case 4: return &launchRaggedDot<InT, UIntT<uint32_t>, uint64_t>;
        default: return &launchRaggedDot<InT, UIntT<uint64_t>, uint64_t>;
      }
    } else {
      return nullptr;
    }
  });
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Expected<std::unique_ptr<OpKernel>> lowerRaggedDot(const Operation& op, LowerContext&) {
  if (op.numOperands() != 3 || op.numResults() != 1)
    return invalidArgument(op.describe() + ": expects lhs, rhs and group_sizes");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ls, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rs, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> gs, staticShape(op, op.operand(2)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> os, staticShape(op, op.result(0)->type()));
  const ElementType in = op.operand(0)->type().elementType(), outType = op.result(0)->type().elementType();
  if (op.operand(1)->type().elementType() != in) return unsupportedOnCuda(op, "no ragged_dot kernel for mixed operand types");
  const Launcher launch = launcherFor(in, outType);
  if (!launch) return unsupportedOnCuda(op, "no ragged_dot kernel for these element types");

  RaggedDotPlan p;
  // group_sizes of any integer type, read as int64; ui64 reinterpreted as si64 as the CPU reads it.
  const ElementType sizeType = op.operand(2)->type().elementType();
  if (!indexTypeFor(sizeType, &p.sizeType)) return unsupportedOnCuda(op, "group_sizes must be integers");
  if (p.sizeType == IndexType::kU64) p.sizeType = IndexType::kS64;
  p.sizeBytes = storageBytes(sizeType);

  // The dimension numbers: the dot's own, possibly nested (older producers), and the ragged ones.
  const Attribute* a = op.attr("ragged_dot_dimension_numbers");
  if (!a) return invalidArgument(op.describe() + ": missing ragged_dot_dimension_numbers");
  const Attribute* dn = a->field("dot_dimension_numbers") ? a->field("dot_dimension_numbers") : a;
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> lb, cpu::structIntList(op, *dn, "lhs_batching_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rb, cpu::structIntList(op, *dn, "rhs_batching_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> lc, cpu::structIntList(op, *dn, "lhs_contracting_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rc, cpu::structIntList(op, *dn, "rhs_contracting_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ragged, cpu::structIntList(op, *a, "lhs_ragged_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> group, cpu::structIntList(op, *a, "rhs_group_dimensions"));
  const auto lr = static_cast<int64_t>(ls.size()), rr = static_cast<int64_t>(rs.size());
  auto inRange = [](const std::vector<int64_t>& v, int64_t rank) {
    return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < rank; });
  };
  if (lb.size() != rb.size() || lc.size() != rc.size() || ragged.size() != 1 || group.size() > 1 ||
      !inRange(lb, lr) || !inRange(lc, lr) || !inRange(ragged, lr) || !inRange(rb, rr) || !inRange(rc, rr) ||
      !inRange(group, rr))
    return invalidArgument(op.describe() + ": invalid ragged_dot dimension numbers");
  const int64_t raggedDim = ragged[0], groupDim = group.empty() ? -1 : group[0];
  p.raggedContracts = contains(lc, raggedDim);
  const bool raggedIsFree = !p.raggedContracts && !contains(lb, raggedDim);
  if (raggedIsFree && groupDim < 0)
    return invalidArgument(op.describe() + ": a ragged non-contracting dimension needs an rhs group dimension");

  // group_sizes: [prefix..., groups], the prefix matching the lhs's non-contracting dims before
  // the ragged dim, or rank 1 (one grouping for all of them), as on the CPU.
  if (gs.empty()) return invalidArgument(op.describe() + ": group_sizes must have rank >= 1");
  p.groups = gs.back();
  std::vector<int64_t> prefixDims;
  for (int64_t d = 0; d < raggedDim; ++d)
    if (!contains(lc, d)) prefixDims.push_back(d);
  if (gs.size() - 1 != prefixDims.size()) {
    if (gs.size() != 1)
      return unsupportedOnCuda(op, "group_sizes does not match the lhs dims before the ragged dimension");
    prefixDims.clear();
  }
  for (size_t j = 0; j < prefixDims.size(); ++j)
    if (gs[j] != ls[static_cast<size_t>(prefixDims[j])])
      return invalidArgument(op.describe() + ": group_sizes' leading dims differ from the lhs's");
  if (raggedIsFree && rs[static_cast<size_t>(groupDim)] != p.groups)
    return invalidArgument(op.describe() + ": the rhs group dimension differs from the number of groups");

  // Per lhs dim: its stride in the group_sizes row index (elements), 0 outside the prefix.
  const std::vector<int64_t> lsStrides = rowMajorStridesOf(ls), rsStrides = rowMajorStridesOf(rs);
  std::vector<int64_t> rowStride(ls.size(), 0);
  for (int64_t j = static_cast<int64_t>(prefixDims.size()) - 1, s = p.groups; j >= 0; --j) {
    rowStride[static_cast<size_t>(prefixDims[static_cast<size_t>(j)])] = s;
    s *= gs[static_cast<size_t>(j)];
  }

  // Result dims in order: [group (mode 2)], batch, lhs free, rhs free (without the group dim).
  struct ResultDim {
    int64_t size, lhs, rhs, row, key;  // size and strides in the four views of RaggedDotPlan::out
  };
  std::vector<ResultDim> dims;
  if (p.raggedContracts) dims.push_back({p.groups, 0, 0, 0, 1});
  auto lhsDim = [&](int64_t d, int64_t rhsStride) {
    const auto u = static_cast<size_t>(d);
    dims.push_back({ls[u], lsStrides[u], rhsStride, rowStride[u], d == raggedDim ? 1 : 0});
  };
  for (size_t b = 0; b < lb.size(); ++b) {
    if (ls[static_cast<size_t>(lb[b])] != rs[static_cast<size_t>(rb[b])])
      return invalidArgument(op.describe() + ": batch dimensions differ in size");
    lhsDim(lb[b], rsStrides[static_cast<size_t>(rb[b])]);
  }
  for (int64_t d = 0; d < lr; ++d)
    if (!contains(lb, d) && !contains(lc, d)) lhsDim(d, 0);
  for (int64_t d = 0; d < rr; ++d)
    if (!contains(rb, d) && !contains(rc, d) && d != groupDim)
      dims.push_back({rs[static_cast<size_t>(d)], 0, rsStrides[static_cast<size_t>(d)], 0, 0});
  if (dims.size() != os.size()) return invalidArgument(op.describe() + ": result rank does not match the operands");
  if (os.size() > static_cast<size_t>(kMaxRank) || lc.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "ragged_dot of rank over 8");
  p.n = numElementsOf(os);
  p.out.rank = static_cast<int>(os.size());
  for (size_t d = 0; d < os.size(); ++d) {
    if (dims[d].size != os[d]) return invalidArgument(op.describe() + ": result shape does not match the operands");
    p.out.dims[d] = os[d];
    p.out.strides[0][d] = dims[d].lhs;
    p.out.strides[1][d] = dims[d].rhs;
    p.out.strides[2][d] = dims[d].row;
    p.out.strides[3][d] = dims[d].key;
  }
  if (raggedIsFree) p.rhsGroupStride = rsStrides[static_cast<size_t>(groupDim)];

  p.contract.rank = static_cast<int>(lc.size());
  for (size_t j = 0; j < lc.size(); ++j) {
    const auto l = static_cast<size_t>(lc[j]), r = static_cast<size_t>(rc[j]);
    if (ls[l] != rs[r]) return invalidArgument(op.describe() + ": contracting dimensions differ in size");
    p.contract.dims[j] = ls[l];
    p.contract.strides[0][j] = lsStrides[l];
    p.contract.strides[1][j] = rsStrides[r];
    p.contract.strides[2][j] = lc[j] == raggedDim ? 1 : 0;
    p.k *= ls[l];
  }
  return makeKernel([p, launch](const LaunchContext& ctx, std::span<void* const> ins,
                                std::span<void* const> outs) -> Status {
    if (p.n == 0) return Status::ok();
    return launch(ctx, p, ins, outs);
  });
}

}  // namespace

void registerRaggedDotLowerings(CudaKernelRegistry& r) { r.add(OpCode::ChloRaggedDot, lowerRaggedDot); }

}  // namespace wf::cuda
