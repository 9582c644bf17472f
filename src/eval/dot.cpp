// dot_general, dot and chlo.ragged_dot on the CPU.
//
// dot_general runs as one GEMM per batch: C[M,N] = A[M,K] * B[K,N] with M the lhs free dims,
// N the rhs free dims and K the contracting dims. When an operand's dims already sit in
// [batch, M, K] or [batch, K, M] order (resp. [batch, K, N] / [batch, N, K]) its storage is passed
// to BLAS as is, with the transpose folded into the BLAS flag; otherwise it is copied into
// [batch, M, K] order first. f32/f64/complex go to OpenBLAS; f16/bf16/f8 are widened to f32
// (accumulating in f32) and rounded back; integers and booleans accumulate in wrapping int64.
//
// `precision_config` and `algorithm` are ignored: the CPU always computes at full precision.
#include <algorithm>
#include <optional>
#include <span>

#include "eval/dot_conv_util.h"
#include "support/thread_pool.h"

namespace wf::dotconv {
namespace {

Status checkDims(const Operation& op, const char* what, const std::vector<int64_t>& dims, int64_t rank,
                 std::vector<bool>& used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return invalidArgument(op.describe() + ": " + what + " dimension " + std::to_string(d) + " out of range");
    if (used[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": " + what + " dimension " + std::to_string(d) + " repeated");
    used[static_cast<size_t>(d)] = true;
  }
  return Status::ok();
}

struct GemmPlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  size_t numBatchDims = 0, numLhsFree = 0, numContract = 0;
  std::vector<int64_t> lhsMK, lhsKM, rhsKN, rhsNK;  // permutations of the operands' dims
  std::vector<int64_t> resultShape;
};

// One operand seen as a batch of row-major matrices: storage, whether BLAS should transpose it,
// its leading dimension, and any buffer that owns converted/permuted data.
template <typename T>
struct Operand {
  const T* data = nullptr;
  bool trans = false;
  int64_t ld = 0;
  std::vector<T> owned;
};

// `natural` is the [batch, rows, cols] permutation the GEMM wants, `flipped` the
// [batch, cols, rows] one that BLAS can read through its transpose flag.
template <typename T>
Operand<T> prepare(const Literal& l, const std::vector<int64_t>& natural, const std::vector<int64_t>& flipped,
                   int64_t rows, int64_t cols) {
  Operand<T> o;
  const T* base;
  std::vector<T> converted;
  if (storesNatively<T>(l.elementType())) {
    base = l.dataAs<T>();
  } else {
    converted = convertTo<T>(l);
    base = converted.data();
  }
  if (isIdentity(natural)) {
    o.ld = std::max<int64_t>(cols, 1);
  } else if (isIdentity(flipped)) {
    o.trans = true;
    o.ld = std::max<int64_t>(rows, 1);
  } else {
    o.owned = permuteCopy(base, l.shape(), natural);
    o.data = o.owned.data();
    o.ld = std::max<int64_t>(cols, 1);
    return o;
  }
  if (converted.empty()) {
    o.data = base;
  } else {
    o.owned = std::move(converted);
    o.data = o.owned.data();
  }
  return o;
}

// The stride of `dims` (in this order) of `shape` taken together as one dim, if they nest (the
// outer ones' strides multiples of the inner ones' sizes); dims of size 1 may sit anywhere.
std::optional<int64_t> collapsedStride(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                       std::span<const int64_t> dims) {
  std::optional<int64_t> inner;  // the innermost dim's stride
  int64_t extent = 1;            // the elements the dims seen so far span, in units of `inner`
  for (size_t i = dims.size(); i-- > 0;) {
    const auto d = static_cast<size_t>(dims[i]);
    if (shape[d] == 1) continue;
    if (!inner) {
      inner = strides[d];
    } else if (strides[d] != *inner * extent) {
      return std::nullopt;
    }
    extent *= shape[d];
  }
  return inner.value_or(1);
}

// The f32 product as one batched oneDNN matmul reading both operands in place
// (batchedGemmOneDnnF32): false where an operand's free or contracting dims do not collapse to
// one strided dim, or oneDNN declines.
bool batchedInPlace(const Literal& lhs, const Literal& rhs, const GemmPlan& p, float* c) {
  BatchedGemm g;
  g.m = p.m, g.n = p.n, g.k = p.k;
  for (int side = 0; side < 2; ++side) {
    const Literal& l = side == 0 ? lhs : rhs;
    if (!storesNatively<float>(l.elementType())) return false;
    // [batch..., rows, cols] of this operand: lhs [batch..., m, k], rhs [batch..., k, n].
    const std::vector<int64_t>& order = side == 0 ? p.lhsMK : p.rhsKN;
    const size_t nb = p.numBatchDims, nRows = side == 0 ? p.numLhsFree : p.numContract;
    const std::vector<int64_t> strides = rowMajorStrides(l.shape());
    std::vector<int64_t>& out = side == 0 ? g.aStrides : g.bStrides;
    for (size_t i = 0; i < nb; ++i) {
      const auto d = static_cast<size_t>(order[i]);
      out.push_back(strides[d]);
      if (side == 0) g.batch.push_back(l.shape()[d]);
    }
    const std::span<const int64_t> all(order);
    for (auto dims : {all.subspan(nb, nRows), all.subspan(nb + nRows)}) {
      std::optional<int64_t> stride = collapsedStride(l.shape(), strides, dims);
      if (!stride) return false;
      out.push_back(*stride);
    }
  }
  g.inPlaceOnly = (!isIdentity(p.lhsMK) && !isIdentity(p.lhsKM)) || (!isIdentity(p.rhsKN) && !isIdentity(p.rhsNK));
  return batchedGemmOneDnnF32(g, lhs.dataAs<float>(), rhs.dataAs<float>(), c);
}

template <typename T>
void runGemms(const Literal& lhs, const Literal& rhs, const GemmPlan& p, Literal& out) {
  // A batch of f32 GEMMs (attention's products) as one oneDNN matmul reading the operands where
  // they lie: on AVX-512 its blocked kernels run batch-major ones about 3x faster than one sgemm
  // per matrix, and heads that lie interleaved need no copy (docs/cpu-backend.md).
  if constexpr (std::is_same_v<T, float>) {
    if (p.batch > 1 && p.m * p.n * p.k >= (int64_t{1} << 15) && storesNatively<float>(out.elementType()) &&
        batchedInPlace(lhs, rhs, p, out.dataAs<float>()))
      return;
  }
  Operand<T> a = prepare<T>(lhs, p.lhsMK, p.lhsKM, p.m, p.k);
  Operand<T> b = prepare<T>(rhs, p.rhsKN, p.rhsNK, p.k, p.n);
  std::vector<T> tmp;
  T* c;
  if (storesNatively<T>(out.elementType())) {
    c = out.dataAs<T>();
  } else {
    tmp.resize(static_cast<size_t>(p.batch * p.m * p.n));
    c = tmp.data();
  }
  auto one = [&](int64_t i) {
    gemm<T>(a.trans, b.trans, p.m, p.n, p.k, a.data + i * p.m * p.k, a.ld, b.data + i * p.k * p.n, b.ld,
            c + i * p.m * p.n, std::max<int64_t>(p.n, 1));
  };
  // Small matrices in a large batch: one GEMM per thread beats OpenBLAS threading inside each.
  // So do attention's products (batch x heads of [seq, seq] x [seq, head dim]) wherever there
  // are batches for every thread: the library's threads each take a slice of one GEMM of a few
  // MFLOP, and split it with more overhead than work.
  // Integer GEMMs are our own loop, so they always split over batches.
  const int64_t macs = p.m * p.n * p.k;
  const bool splitOverBatch = macs < (int64_t{1} << 18) || std::is_same_v<T, int64_t> ||
                              (macs < (int64_t{1} << 24) && p.batch >= numThreads());
  if (p.batch > 1 && splitOverBatch) {
    parallelFor(p.batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < p.batch; ++i) one(i);
  }
  if (!tmp.empty()) storeFrom(tmp.data(), out);
}

}  // namespace

Expected<Literal> dotGeneral(const Operation& op, const Literal& lhs, const Literal& rhs, const DotDims& d,
                             ElementType resultType) {
  if (resultType == ElementType::kQuantized || lhs.elementType() == ElementType::kQuantized ||
      rhs.elementType() == ElementType::kQuantized)
    return unimplemented(op.describe() + ": quantized dot is not supported on the CPU");
  int64_t lr = static_cast<int64_t>(lhs.shape().size()), rr = static_cast<int64_t>(rhs.shape().size());
  if (d.lhsBatch.size() != d.rhsBatch.size() || d.lhsContract.size() != d.rhsContract.size())
    return invalidArgument(op.describe() + ": lhs and rhs batching/contracting dimension counts differ");
  std::vector<bool> lUsed(static_cast<size_t>(lr)), rUsed(static_cast<size_t>(rr));
  WF_RETURN_IF_ERROR(checkDims(op, "lhs batching", d.lhsBatch, lr, lUsed));
  WF_RETURN_IF_ERROR(checkDims(op, "lhs contracting", d.lhsContract, lr, lUsed));
  WF_RETURN_IF_ERROR(checkDims(op, "rhs batching", d.rhsBatch, rr, rUsed));
  WF_RETURN_IF_ERROR(checkDims(op, "rhs contracting", d.rhsContract, rr, rUsed));
  auto ldim = [&](int64_t i) { return lhs.shape()[static_cast<size_t>(i)]; };
  auto rdim = [&](int64_t i) { return rhs.shape()[static_cast<size_t>(i)]; };
  for (size_t i = 0; i < d.lhsBatch.size(); ++i)
    if (ldim(d.lhsBatch[i]) != rdim(d.rhsBatch[i]))
      return invalidArgument(op.describe() + ": batching dimension sizes differ");
  for (size_t i = 0; i < d.lhsContract.size(); ++i)
    if (ldim(d.lhsContract[i]) != rdim(d.rhsContract[i]))
      return invalidArgument(op.describe() + ": contracting dimension sizes differ");

  GemmPlan p;
  std::vector<int64_t> lFree, rFree;
  for (int64_t i = 0; i < lr; ++i)
    if (!lUsed[static_cast<size_t>(i)]) lFree.push_back(i);
  for (int64_t i = 0; i < rr; ++i)
    if (!rUsed[static_cast<size_t>(i)]) rFree.push_back(i);
  for (int64_t b : d.lhsBatch) {
    p.batch *= ldim(b);
    p.resultShape.push_back(ldim(b));
  }
  for (int64_t f : lFree) {
    p.m *= ldim(f);
    p.resultShape.push_back(ldim(f));
  }
  for (int64_t f : rFree) {
    p.n *= rdim(f);
    p.resultShape.push_back(rdim(f));
  }
  for (int64_t c : d.lhsContract) p.k *= ldim(c);
  auto cat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> v;
    for (const auto* part : parts) v.insert(v.end(), part->begin(), part->end());
    return v;
  };
  p.numBatchDims = d.lhsBatch.size();
  p.numLhsFree = lFree.size();
  p.numContract = d.lhsContract.size();
  p.lhsMK = cat({&d.lhsBatch, &lFree, &d.lhsContract});
  p.lhsKM = cat({&d.lhsBatch, &d.lhsContract, &lFree});
  p.rhsKN = cat({&d.rhsBatch, &d.rhsContract, &rFree});
  p.rhsNK = cat({&d.rhsBatch, &rFree, &d.rhsContract});

  // runGemms writes every element (beta 0, or zeros where k is 0).
  Literal out = Literal::uninitialized(Type::tensor(p.resultShape, resultType));
  if (out.numElements() == 0) return out;
  switch (chooseDomain(lhs.elementType(), rhs.elementType(), resultType)) {
    case Domain::kFloat: runGemms<float>(lhs, rhs, p, out); break;
    case Domain::kDouble: runGemms<double>(lhs, rhs, p, out); break;
    case Domain::kComplexFloat: runGemms<c64>(lhs, rhs, p, out); break;
    case Domain::kComplexDouble: runGemms<c128>(lhs, rhs, p, out); break;
    case Domain::kInt: runGemms<int64_t>(lhs, rhs, p, out); break;
  }
  return out;
}

namespace {

std::vector<int64_t> intListField(const Attribute& s, std::string_view name) {
  const Attribute* f = s.field(name);
  if (!f) return {};
  return f->asIntList().value_or(std::vector<int64_t>{});
}

Expected<DotDims> readDotDims(const Operation& op, const Attribute* a) {
  if (!a) return invalidArgument(op.describe() + ": missing dot dimension numbers");
  // Older producers nest the dot numbers inside ragged_dot's struct.
  if (const Attribute* inner = a->field("dot_dimension_numbers")) a = inner;
  DotDims d;
  d.lhsBatch = intListField(*a, "lhs_batching_dimensions");
  d.rhsBatch = intListField(*a, "rhs_batching_dimensions");
  d.lhsContract = intListField(*a, "lhs_contracting_dimensions");
  d.rhsContract = intListField(*a, "rhs_contracting_dimensions");
  return d;
}

ElementType resultElementType(const Operation& op) { return op.result(0)->type().elementType(); }

std::optional<std::vector<int64_t>> permutationOf(const Operation& transposeOp) {
  const Attribute* a = transposeOp.attr("permutation");
  if (!a) return std::nullopt;
  return a->asIntList();
}

// Operand `k` (0: lhs, 1: rhs) of dot_general `dot` is transpose(x, perm): the same dot on x
// has dims mapped through perm; allowed when x's free dims keep their relative order (the
// result lists them in operand order).
bool foldableOperand(const Operation& dot, size_t k, const std::vector<int64_t>& perm) {
  auto d = readDotDims(dot, dot.attr("dot_dimension_numbers"));
  if (!d) return false;
  const std::vector<int64_t>& batch = k == 0 ? d->lhsBatch : d->rhsBatch;
  const std::vector<int64_t>& contract = k == 0 ? d->lhsContract : d->rhsContract;
  auto rank = static_cast<int64_t>(perm.size());
  std::vector<bool> used(perm.size(), false);
  for (int64_t x : batch) {
    if (x < 0 || x >= rank) return false;
    used[static_cast<size_t>(x)] = true;
  }
  for (int64_t x : contract) {
    if (x < 0 || x >= rank) return false;
    used[static_cast<size_t>(x)] = true;
  }
  int64_t last = -1;
  for (int64_t i = 0; i < rank; ++i) {
    if (used[static_cast<size_t>(i)]) continue;
    if (perm[static_cast<size_t>(i)] < last) return false;
    last = perm[static_cast<size_t>(i)];
  }
  return true;
}

bool usedInRegions(const Operation& op, const Value* v) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        for (const Value* operand : inner->operands())
          if (operand == v) return true;
        if (usedInRegions(*inner, v)) return true;
      }
  return false;
}

Expected<std::vector<Literal>> dotGeneralKernel(const Operation& op, std::span<const Literal> operands,
                                                EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(DotDims d, readDotDims(op, op.attr("dot_dimension_numbers")));
  if (operands.size() != 2) return invalidArgument(op.describe() + ": expects lhs and rhs");
  Literal lhs = operands[0], rhs = operands[1];
  // An operand whose transpose was folded (see transposeFoldsIntoDots) holds the transpose's
  // input storage: view it with the input's shape and map the dims through the permutation.
  for (size_t k = 0; k < 2 && op.numOperands() == 2; ++k) {
    const Operation* t = op.operand(k)->definingOp();
    if (!t || t->code() != OpCode::Transpose || !transposeFoldsIntoDots(*t, ctx)) continue;
    std::optional<std::vector<int64_t>> perm = permutationOf(*t);
    Literal& l = k == 0 ? lhs : rhs;
    std::vector<int64_t> srcShape(perm->size());
    for (size_t j = 0; j < perm->size(); ++j) srcShape[static_cast<size_t>((*perm)[j])] = l.shape()[j];
    l = l.reshaped(srcShape);
    std::vector<int64_t>& batch = k == 0 ? d.lhsBatch : d.rhsBatch;
    std::vector<int64_t>& contract = k == 0 ? d.lhsContract : d.rhsContract;
    for (int64_t& x : batch) x = (*perm)[static_cast<size_t>(x)];
    for (int64_t& x : contract) x = (*perm)[static_cast<size_t>(x)];
  }
  WF_ASSIGN_OR_RETURN(Literal out, dotGeneral(op, lhs, rhs, d, resultElementType(op)));
  return std::vector<Literal>{std::move(out)};
}

// Legacy dot: [M?, K] x [K, N?] contracting lhs's last dim with rhs's first.
Expected<std::vector<Literal>> dotKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  int64_t lr = operands[0].type().rank(), rr = operands[1].type().rank();
  if (lr < 1 || lr > 2 || rr < 1 || rr > 2)
    return invalidArgument(op.describe() + ": dot operands must have rank 1 or 2");
  DotDims d;
  d.lhsContract = {lr - 1};
  d.rhsContract = {0};
  WF_ASSIGN_OR_RETURN(Literal out, dotGeneral(op, operands[0], operands[1], d, resultElementType(op)));
  return std::vector<Literal>{std::move(out)};
}

// chlo.ragged_dot: a dot_general whose lhs ragged dimension is split into groups of
// group_sizes[..., g] consecutive indices.
//   mode 1, ragged dim is an lhs free dim: rows of group i multiply rhs[group dim = i]; the result
//           is [batch, lhs free, rhs free (without the group dim)]; rows past the groups are 0.
//   mode 2, ragged dim is contracting: result [g, batch, lhs free, rhs free], each group
//           contracting only over its own slice.
//   mode 3, ragged dim is a batch dim: an ordinary dot_general (batches past the groups are 0).
// group_sizes may carry leading dims matching the lhs's non-contracting dims before the ragged
// dim, giving each of those indices its own grouping. Computed by direct loops (not a hot op).
template <typename T>
Status raggedDot(const Operation& op, const Literal& lhsL, const Literal& rhsL, const Literal& groupSizes,
                 const DotDims& d, int64_t raggedDim, int64_t groupDim, Literal& out) {
  std::vector<T> lhs = convertTo<T>(lhsL), rhs = convertTo<T>(rhsL);
  const auto& ls = lhsL.shape();
  const auto& rs = rhsL.shape();
  int64_t lr = static_cast<int64_t>(ls.size()), rr = static_cast<int64_t>(rs.size());
  auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  bool mode2 = contains(d.lhsContract, raggedDim);
  bool mode3 = contains(d.lhsBatch, raggedDim);
  std::vector<int64_t> lFree, rFree;
  for (int64_t i = 0; i < lr; ++i)
    if (!contains(d.lhsBatch, i) && !contains(d.lhsContract, i)) lFree.push_back(i);
  for (int64_t i = 0; i < rr; ++i)
    if (!contains(d.rhsBatch, i) && !contains(d.rhsContract, i) && i != groupDim) rFree.push_back(i);
  std::vector<int64_t> prefixDims;
  for (int64_t i = 0; i < raggedDim; ++i)
    if (!contains(d.lhsContract, i)) prefixDims.push_back(i);
  int64_t gsRank = groupSizes.type().rank();
  if (gsRank < 1) return invalidArgument(op.describe() + ": group_sizes must have rank >= 1");
  int64_t numGroups = groupSizes.shape().back();
  if (gsRank - 1 != static_cast<int64_t>(prefixDims.size())) {
    if (gsRank != 1)
      return unimplemented(op.describe() + ": group_sizes of shape " + groupSizes.type().toString() +
                           " does not match the lhs dims before the ragged dimension");
    prefixDims.clear();
  }
  std::vector<int64_t> ends(static_cast<size_t>(groupSizes.numElements()));
  for (int64_t i = 0; i < groupSizes.numElements(); i += numGroups) {
    int64_t acc = 0;
    for (int64_t g = 0; g < numGroups; ++g) ends[static_cast<size_t>(i + g)] = acc += groupSizes.getInt(i + g);
  }
  auto lStr = rowMajorStrides(ls), rStr = rowMajorStrides(rs);
  // Contracting index space: offsets into lhs/rhs and the lhs ragged coordinate (mode 2).
  std::vector<int64_t> kShape;
  for (int64_t c : d.lhsContract) kShape.push_back(ls[static_cast<size_t>(c)]);
  int64_t kTotal = product(kShape);
  std::vector<int64_t> kL(static_cast<size_t>(kTotal)), kR(static_cast<size_t>(kTotal)), kRag(static_cast<size_t>(kTotal));
  for (int64_t k = 0; k < kTotal; ++k) {
    int64_t rem = k, lo = 0, ro = 0, rag = 0;
    for (size_t j = kShape.size(); j-- > 0;) {
      int64_t idx = rem % kShape[j];
      rem /= kShape[j];
      lo += idx * lStr[static_cast<size_t>(d.lhsContract[j])];
      ro += idx * rStr[static_cast<size_t>(d.rhsContract[j])];
      if (d.lhsContract[j] == raggedDim) rag = idx;
    }
    kL[static_cast<size_t>(k)] = lo;
    kR[static_cast<size_t>(k)] = ro;
    kRag[static_cast<size_t>(k)] = rag;
  }
  const auto& os = out.shape();
  std::vector<T> result(static_cast<size_t>(out.numElements()), T(0));
  std::vector<int64_t> lIdx(static_cast<size_t>(lr));
  for (int64_t o = 0; o < out.numElements(); ++o) {
    // Decode the result index: [g (mode 2)], batch..., lhs free..., rhs free...
    std::vector<int64_t> idx(os.size());
    for (int64_t rem = o, j = static_cast<int64_t>(os.size()) - 1; j >= 0; --j) {
      idx[static_cast<size_t>(j)] = rem % os[static_cast<size_t>(j)];
      rem /= os[static_cast<size_t>(j)];
    }
    size_t pos = 0;
    int64_t group = mode2 ? idx[pos++] : 0;
    int64_t lOff = 0, rOff = 0;
    for (size_t b = 0; b < d.lhsBatch.size(); ++b, ++pos) {
      lIdx[static_cast<size_t>(d.lhsBatch[b])] = idx[pos];
      lOff += idx[pos] * lStr[static_cast<size_t>(d.lhsBatch[b])];
      rOff += idx[pos] * rStr[static_cast<size_t>(d.rhsBatch[b])];
    }
    for (int64_t f : lFree) {
      lIdx[static_cast<size_t>(f)] = idx[pos];
      lOff += idx[pos++] * lStr[static_cast<size_t>(f)];
    }
    for (int64_t f : rFree) rOff += idx[pos++] * rStr[static_cast<size_t>(f)];
    int64_t gsRow = 0;
    for (int64_t pd : prefixDims) gsRow = gsRow * ls[static_cast<size_t>(pd)] + lIdx[static_cast<size_t>(pd)];
    const int64_t* rowEnds = ends.data() + gsRow * numGroups;
    int64_t kBegin = 0, kEnd = kTotal;
    if (mode2) {
      int64_t lo = group == 0 ? 0 : rowEnds[group - 1], hi = rowEnds[group];
      T acc(0);
      for (int64_t k = 0; k < kTotal; ++k)
        if (kRag[static_cast<size_t>(k)] >= lo && kRag[static_cast<size_t>(k)] < hi)
          acc += lhs[static_cast<size_t>(lOff + kL[static_cast<size_t>(k)])] *
                 rhs[static_cast<size_t>(rOff + kR[static_cast<size_t>(k)])];
      result[static_cast<size_t>(o)] = acc;
      continue;
    }
    int64_t r = lIdx[static_cast<size_t>(raggedDim)];
    int64_t g = 0;
    while (g < numGroups && r >= rowEnds[g]) ++g;
    if (g == numGroups) continue;  // past the last group: zero
    if (!mode3) rOff += g * rStr[static_cast<size_t>(groupDim)];
    T acc(0);
    for (int64_t k = kBegin; k < kEnd; ++k)
      acc += lhs[static_cast<size_t>(lOff + kL[static_cast<size_t>(k)])] *
             rhs[static_cast<size_t>(rOff + kR[static_cast<size_t>(k)])];
    result[static_cast<size_t>(o)] = acc;
  }
  storeFrom(result.data(), out);
  return Status::ok();
}

Expected<std::vector<Literal>> raggedDotKernel(const Operation& op, std::span<const Literal> operands,
                                               EvalContext&) {
  if (operands.size() != 3) return invalidArgument(op.describe() + ": expects lhs, rhs and group_sizes");
  const Attribute* a = op.attr("ragged_dot_dimension_numbers");
  WF_ASSIGN_OR_RETURN(DotDims d, readDotDims(op, a));
  std::vector<int64_t> ragged = intListField(*a, "lhs_ragged_dimensions");
  std::vector<int64_t> group = intListField(*a, "rhs_group_dimensions");
  if (ragged.size() != 1) return invalidArgument(op.describe() + ": needs exactly one lhs ragged dimension");
  int64_t groupDim = group.empty() ? -1 : group[0];
  bool raggedIsFree = std::find(d.lhsContract.begin(), d.lhsContract.end(), ragged[0]) == d.lhsContract.end() &&
                      std::find(d.lhsBatch.begin(), d.lhsBatch.end(), ragged[0]) == d.lhsBatch.end();
  if (raggedIsFree && groupDim < 0)
    return invalidArgument(op.describe() + ": a ragged non-contracting dimension needs an rhs group dimension");
  const Type& rt = op.result(0)->type();
  if (!rt.hasStaticShape()) return unimplemented(op.describe() + ": dynamic result shape");
  Literal out = Literal::zeros(rt);
  ElementType et = rt.elementType();
  Status s;
  if (isComplex(et)) {
    s = raggedDot<c128>(op, operands[0], operands[1], operands[2], d, ragged[0], groupDim, out);
  } else if (isFloat(et)) {
    s = raggedDot<double>(op, operands[0], operands[1], operands[2], d, ragged[0], groupDim, out);
  } else {
    s = raggedDot<int64_t>(op, operands[0], operands[1], operands[2], d, ragged[0], groupDim, out);
  }
  WF_RETURN_IF_ERROR(s);
  return std::vector<Literal>{std::move(out)};
}

}  // namespace

bool transposeFoldsIntoDots(const Operation& t, const EvalContext& ctx) {
  if (t.code() != OpCode::Transpose || t.numResults() != 1 || t.numOperands() != 1 || ctx.onResult) return false;
  if (ctx.transposeFolds) {
    auto it = ctx.transposeFolds->find(&t);
    if (it != ctx.transposeFolds->end()) return it->second;
  }
  // A scan of the block for every reader: once per transpose and per dot reading one, on each run.
  const Block* block = t.parentBlock();
  std::optional<std::vector<int64_t>> perm = permutationOf(t);
  if (!block || !perm || static_cast<int64_t>(perm->size()) != t.operand(0)->type().rank()) return false;
  std::vector<bool> seen(perm->size(), false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm->size()) || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  const Value* v = t.result(0);
  bool used = false;
  for (const auto& user : block->operations()) {
    for (size_t k = 0; k < user->numOperands(); ++k) {
      if (user->operand(k) != v) continue;
      if (user->code() != OpCode::DotGeneral || user->numOperands() != 2 || !foldableOperand(*user, k, *perm))
        return false;
      used = true;
    }
    if (user->numRegions() > 0 && usedInRegions(*user, v)) return false;
  }
  return used;
}

void registerDotKernels(KernelRegistry& registry) {
  registry.add(OpCode::DotGeneral, dotGeneralKernel);
  registry.add(OpCode::Dot, dotKernel);
  registry.add(OpCode::ChloRaggedDot, raggedDotKernel);
}

}  // namespace wf::dotconv
