// convolution and dynamic_conv on the CPU.
//
// Every layout is first brought to a canonical one: input [N, C, spatial...], kernel
// [O, I, spatial...], output [N', O, spatial'...] (NCHW / OIHW; PyTorch's layouts need no copy).
// Then, per output batch and group, an im2col matrix [I * prod(kernel spatial), prod(output
// spatial)] is built and multiplied by the group's kernel rows with one GEMM (OpenBLAS for
// f32/f64/complex, f16/bf16/f8 widened to f32; wrapping int64 loops for integers and booleans).
// im2col applies padding (negative too), lhs dilation (input holes), rhs dilation, strides and
// window reversal, so one path covers the spec's full generality.
//
// Groups follow the spec: with feature_group_count G, input features and kernel output features
// are split into G consecutive chunks; with batch_group_count G, input batches and kernel output
// features are. `precision_config` is ignored: the CPU always computes at full precision.
#include <algorithm>

#include "eval/dot_conv_util.h"
#include "ir/window.h"
#include "support/thread_pool.h"

namespace wf::dotconv {
namespace {

struct ConvParams {
  int64_t inBatch = 0, inFeature = 0, kIn = 0, kOut = 0, outBatch = 0, outFeature = 0;
  std::vector<int64_t> inSpatial, kSpatial, outSpatial;
  std::vector<int64_t> strides, padLo, padHi, lhsDil, rhsDil;
  std::vector<int64_t> reversal;
  int64_t featureGroups = 1, batchGroups = 1;
};

// Sizes in canonical order.
struct ConvShape {
  int64_t n = 0, c = 0, o = 0, i = 0, nOut = 0, groups = 1;
  std::vector<int64_t> in, k, out;  // spatial sizes
  int64_t inSize() const { return product(in); }
  int64_t kSize() const { return product(k); }
  int64_t outSize() const { return product(out); }
};

Expected<int64_t> intField(const Operation& op, const Attribute& s, const char* name) {
  const Attribute* f = s.field(name);
  std::optional<int64_t> v = f ? f->asInt() : std::nullopt;
  if (!v) return invalidArgument(op.describe() + ": dimension_numbers lacks " + name);
  return *v;
}

// `padding` is an [R, 2] tensor (from the attribute, or dynamic_conv's third operand).
Expected<ConvParams> readParams(const Operation& op, const Literal* paddingOperand) {
  const Attribute* dn = op.attr("dimension_numbers");
  if (!dn) return invalidArgument(op.describe() + ": missing dimension_numbers");
  ConvParams p;
  WF_ASSIGN_OR_RETURN(p.inBatch, intField(op, *dn, "input_batch_dimension"));
  WF_ASSIGN_OR_RETURN(p.inFeature, intField(op, *dn, "input_feature_dimension"));
  WF_ASSIGN_OR_RETURN(p.kIn, intField(op, *dn, "kernel_input_feature_dimension"));
  WF_ASSIGN_OR_RETURN(p.kOut, intField(op, *dn, "kernel_output_feature_dimension"));
  WF_ASSIGN_OR_RETURN(p.outBatch, intField(op, *dn, "output_batch_dimension"));
  WF_ASSIGN_OR_RETURN(p.outFeature, intField(op, *dn, "output_feature_dimension"));
  auto list = [&](const char* name) {
    const Attribute* f = dn->field(name);
    return f ? f->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
  };
  p.inSpatial = list("input_spatial_dimensions");
  p.kSpatial = list("kernel_spatial_dimensions");
  p.outSpatial = list("output_spatial_dimensions");
  size_t r = p.inSpatial.size();
  if (p.kSpatial.size() != r || p.outSpatial.size() != r)
    return invalidArgument(op.describe() + ": spatial dimension counts differ");
  p.strides = windowAttributeOr(op, "window_strides", r, 1);
  p.lhsDil = windowAttributeOr(op, "lhs_dilation", r, 1);
  p.rhsDil = windowAttributeOr(op, "rhs_dilation", r, 1);
  p.reversal = windowAttributeOr(op, "window_reversal", r, 0);
  std::vector<int64_t> pad;
  if (paddingOperand) {
    for (int64_t i = 0; i < paddingOperand->numElements(); ++i) pad.push_back(paddingOperand->getInt(i));
  } else {
    pad = windowAttributeOr(op, "padding", 2 * r, 0);
  }
  if (p.strides.size() != r || p.lhsDil.size() != r || p.rhsDil.size() != r || p.reversal.size() != r ||
      pad.size() != 2 * r)
    return invalidArgument(op.describe() + ": window attributes must have one entry per spatial dimension");
  for (size_t d = 0; d < r; ++d) {
    if (p.strides[d] <= 0 || p.lhsDil[d] <= 0 || p.rhsDil[d] <= 0)
      return invalidArgument(op.describe() + ": strides and dilations must be positive");
    p.padLo.push_back(pad[2 * d]);
    p.padHi.push_back(pad[2 * d + 1]);
  }
  if (const Attribute* a = op.attr("feature_group_count")) p.featureGroups = a->asInt().value_or(1);
  if (const Attribute* a = op.attr("batch_group_count")) p.batchGroups = a->asInt().value_or(1);
  if (p.featureGroups < 1 || p.batchGroups < 1 || (p.featureGroups > 1 && p.batchGroups > 1))
    return invalidArgument(op.describe() + ": invalid feature_group_count / batch_group_count");
  return p;
}

bool isPermutation(const std::vector<int64_t>& v) {
  std::vector<int64_t> s = v;
  std::sort(s.begin(), s.end());
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// The operand in canonical order as T: in place when possible, else converted / permuted.
template <typename T>
const T* canonical(const Literal& l, const std::vector<int64_t>& perm, std::vector<T>& owned) {
  bool native = storesNatively<T>(l.elementType());
  if (native && isIdentity(perm)) return l.dataAs<T>();
  if (native) {
    owned = permuteCopy(l.dataAs<T>(), l.shape(), perm);
  } else {
    owned = convertTo<T>(l);
    if (!isIdentity(perm)) owned = permuteCopy(owned.data(), l.shape(), perm);
  }
  return owned.data();
}

// Per spatial dim, for each (output position, kernel tap): the input index it reads, or -1 for
// padding / a dilation hole.
std::vector<std::vector<int64_t>> tapTables(const ConvParams& p, const ConvShape& s) {
  std::vector<std::vector<int64_t>> tabs(s.in.size());
  for (size_t d = 0; d < s.in.size(); ++d) {
    int64_t dilatedIn = dilatedSize(s.in[d], p.lhsDil[d]);
    auto& t = tabs[d];
    t.resize(static_cast<size_t>(s.out[d] * s.k[d]));
    for (int64_t o = 0; o < s.out[d]; ++o) {
      for (int64_t k = 0; k < s.k[d]; ++k) {
        // The spec reverses the lhs window; pairing tap k with window position K-1-k is the same.
        int64_t w = p.reversal[d] ? s.k[d] - 1 - k : k;
        int64_t pos = o * p.strides[d] + w * p.rhsDil[d] - p.padLo[d];
        int64_t idx = -1;
        if (pos >= 0 && pos < dilatedIn && pos % p.lhsDil[d] == 0) idx = pos / p.lhsDil[d];
        t[static_cast<size_t>(o * s.k[d] + k)] = idx;
      }
    }
  }
  return tabs;
}

// Fills rows [rowBegin, rowEnd) of the im2col matrix for one (batch, group): row = channel * KK +
// kernel tap, column = output position.
template <typename T>
void im2col(const T* src, const ConvShape& s, const std::vector<std::vector<int64_t>>& tabs, int64_t rowBegin,
            int64_t rowEnd, T* col) {
  size_t r = s.in.size();
  int64_t kk = s.kSize(), inSize = s.inSize(), outSize = s.outSize();
  int64_t lastOut = s.out[r - 1], lastK = s.k[r - 1];
  std::vector<int64_t> inStrides = rowMajorStrides(s.in);
  std::vector<int64_t> tap(r);
  const std::vector<int64_t>& lastTab = tabs[r - 1];
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    const T* chan = src + (row / kk) * inSize;
    for (int64_t rem = row % kk, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      tap[static_cast<size_t>(d)] = rem % s.k[static_cast<size_t>(d)];
      rem /= s.k[static_cast<size_t>(d)];
    }
    int64_t kl = tap[r - 1];
    T* dst = col + row * outSize;
    for (int64_t outer = 0; outer < outSize; outer += lastOut) {
      // Offset of the outer spatial dims, or -1 when any of them falls into padding.
      int64_t base = 0;
      for (int64_t rem = outer / lastOut, d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
        auto du = static_cast<size_t>(d);
        int64_t o = rem % s.out[du];
        rem /= s.out[du];
        int64_t idx = tabs[du][static_cast<size_t>(o * s.k[du] + tap[du])];
        if (idx < 0 || base < 0) {
          base = -1;
        } else {
          base += idx * inStrides[du];
        }
      }
      T* drow = dst + outer;
      if (base < 0) {
        std::fill(drow, drow + lastOut, T(0));
        continue;
      }
      const T* srow = chan + base;
      for (int64_t o = 0; o < lastOut; ++o) {
        int64_t idx = lastTab[static_cast<size_t>(o * lastK + kl)];
        drow[o] = idx >= 0 ? srow[idx] : T(0);
      }
    }
  }
}

template <typename T>
void runConv(const ConvParams& p, const ConvShape& s, const Literal& lhs, const Literal& rhs, Literal& out) {
  std::vector<int64_t> inPerm{p.inBatch, p.inFeature}, kPerm{p.kOut, p.kIn}, outPerm{p.outBatch, p.outFeature};
  inPerm.insert(inPerm.end(), p.inSpatial.begin(), p.inSpatial.end());
  kPerm.insert(kPerm.end(), p.kSpatial.begin(), p.kSpatial.end());
  outPerm.insert(outPerm.end(), p.outSpatial.begin(), p.outSpatial.end());
  std::vector<T> inOwned, kOwned, outOwned;
  const T* in = canonical<T>(lhs, inPerm, inOwned);
  const T* w = canonical<T>(rhs, kPerm, kOwned);
  T* dst;
  bool direct = storesNatively<T>(out.elementType()) && isIdentity(outPerm);
  if (direct) {
    dst = out.dataAs<T>();
  } else {
    outOwned.resize(static_cast<size_t>(out.numElements()));
    dst = outOwned.data();
  }

  int64_t kk = s.kSize(), inSize = s.inSize(), outSize = s.outSize();
  int64_t rows = s.i * kk, og = s.o / s.groups;
  bool pointwise = true;  // 1x1 kernel, stride 1, no padding/dilation: the input is its own im2col
  for (size_t d = 0; d < s.in.size(); ++d)
    pointwise = pointwise && s.k[d] == 1 && p.strides[d] == 1 && p.padLo[d] == 0 && p.padHi[d] == 0 &&
                p.lhsDil[d] == 1;
  std::vector<std::vector<int64_t>> tabs = tapTables(p, s);

  auto oneGroup = [&](int64_t n, int64_t g, std::vector<T>& col, bool parallelIm2col) {
    int64_t inBatch = p.batchGroups > 1 ? g * s.nOut + n : n;
    int64_t chanOffset = p.featureGroups > 1 ? g * s.i : 0;
    const T* src = in + (inBatch * s.c + chanOffset) * inSize;
    const T* b = src;
    if (!pointwise) {
      col.resize(static_cast<size_t>(rows * outSize));
      if (parallelIm2col) {
        parallelFor(rows, 4, [&](int64_t begin, int64_t end) { im2col(src, s, tabs, begin, end, col.data()); });
      } else {
        im2col(src, s, tabs, 0, rows, col.data());
      }
      b = col.data();
    }
    gemm<T>(false, false, og, outSize, rows, w + g * og * rows, std::max<int64_t>(rows, 1), b,
            std::max<int64_t>(outSize, 1), dst + (n * s.o + g * og) * outSize, std::max<int64_t>(outSize, 1));
  };

  int64_t units = s.nOut * s.groups;
  // Many small GEMMs (depthwise or grouped convolutions, batches): one (batch, group) per thread.
  // Otherwise OpenBLAS threads each large GEMM and im2col is split by rows.
  bool perUnit = units > 1 && (og * rows * outSize < (int64_t{1} << 22) || std::is_same_v<T, int64_t>);
  if (perUnit) {
    parallelFor(units, 1, [&](int64_t begin, int64_t end) {
      std::vector<T> col;
      for (int64_t u = begin; u < end; ++u) oneGroup(u / s.groups, u % s.groups, col, false);
    });
  } else {
    std::vector<T> col;
    for (int64_t u = 0; u < units; ++u) oneGroup(u / s.groups, u % s.groups, col, true);
  }

  if (!direct) {
    std::vector<int64_t> canonShape{s.nOut, s.o};
    if (!p.outSpatial.empty()) canonShape.insert(canonShape.end(), s.out.begin(), s.out.end());
    if (!isIdentity(outPerm)) outOwned = permuteCopy(outOwned.data(), canonShape, inversePermutation(outPerm));
    storeFrom(outOwned.data(), out);
  }
}

Expected<Literal> convolution(const Operation& op, const Literal& lhs, const Literal& rhs, const ConvParams& p) {
  ElementType resultType = op.result(0)->type().elementType();
  if (resultType == ElementType::kQuantized || lhs.elementType() == ElementType::kQuantized ||
      rhs.elementType() == ElementType::kQuantized)
    return unimplemented(op.describe() + ": quantized convolution is not supported on the CPU");
  int64_t rank = lhs.type().rank();
  size_t r = p.inSpatial.size();
  if (rhs.type().rank() != rank || static_cast<int64_t>(r) + 2 != rank)
    return invalidArgument(op.describe() + ": lhs and rhs must have rank 2 + spatial dimensions");
  std::vector<int64_t> inDims{p.inBatch, p.inFeature}, kDims{p.kOut, p.kIn}, outDims{p.outBatch, p.outFeature};
  inDims.insert(inDims.end(), p.inSpatial.begin(), p.inSpatial.end());
  kDims.insert(kDims.end(), p.kSpatial.begin(), p.kSpatial.end());
  outDims.insert(outDims.end(), p.outSpatial.begin(), p.outSpatial.end());
  if (!isPermutation(inDims) || !isPermutation(kDims) || !isPermutation(outDims))
    return invalidArgument(op.describe() + ": dimension_numbers are not permutations of the dimensions");

  const auto& ls = lhs.shape();
  const auto& ks = rhs.shape();
  auto at = [](const std::vector<int64_t>& v, int64_t i) { return v[static_cast<size_t>(i)]; };
  ConvShape s;
  s.n = at(ls, p.inBatch);
  s.c = at(ls, p.inFeature);
  s.o = at(ks, p.kOut);
  s.i = at(ks, p.kIn);
  s.groups = p.featureGroups * p.batchGroups;
  if (s.c % p.featureGroups != 0 || s.i * p.featureGroups != s.c)
    return invalidArgument(op.describe() + ": kernel input features must be input features / feature_group_count");
  if (s.n % p.batchGroups != 0 || s.o % s.groups != 0)
    return invalidArgument(op.describe() + ": batch or output feature size not divisible by the group count");
  s.nOut = s.n / p.batchGroups;
  for (size_t d = 0; d < r; ++d) {
    int64_t in = at(ls, p.inSpatial[d]), k = at(ks, p.kSpatial[d]);
    int64_t out = windowOutputSize(in, k, p.strides[d], p.padLo[d], p.padHi[d], p.lhsDil[d], p.rhsDil[d]);
    s.in.push_back(in);
    s.k.push_back(k);
    s.out.push_back(out);
  }
  std::vector<int64_t> resultShape(static_cast<size_t>(rank));
  resultShape[static_cast<size_t>(p.outBatch)] = s.nOut;
  resultShape[static_cast<size_t>(p.outFeature)] = s.o;
  for (size_t d = 0; d < r; ++d) resultShape[static_cast<size_t>(p.outSpatial[d])] = s.out[d];

  Literal out = Literal::zeros(Type::tensor(resultShape, resultType));
  if (out.numElements() == 0) return out;
  if (r == 0) {
    // No spatial dims: a grouped matrix product; give im2col one unit dim to walk.
    s.in = {1};
    s.k = {1};
    s.out = {1};
  }
  ConvParams q = p;
  if (r == 0) {
    q.strides = q.lhsDil = q.rhsDil = {1};
    q.padLo = q.padHi = q.reversal = {0};
  }
  if (resultType == ElementType::kF32 && lhs.elementType() == ElementType::kF32 &&
      rhs.elementType() == ElementType::kF32 && r >= 1 && p.batchGroups == 1) {
    // oneDNN's direct convolution; it declines what it cannot express (then im2col runs).
    bool plain = true;
    for (size_t d = 0; d < r; ++d) plain = plain && p.lhsDil[d] == 1 && p.reversal[d] == 0;
    // A 1x1, stride-1, unpadded convolution on NCHW / OIHW operands is one GEMM per batch on the
    // operands as they are (runConv's pointwise path, on oneDNN's sgemm); oneDNN's convolution
    // would first reorder the weights into its blocked layout on every call.
    bool pointwiseGemm = p.featureGroups == 1 && p.inBatch == 0 && p.inFeature == 1 && p.kOut == 0 &&
                         p.kIn == 1 && p.outBatch == 0 && p.outFeature == 1;
    for (size_t d = 0; d < r; ++d)
      pointwiseGemm = pointwiseGemm && s.k[d] == 1 && p.strides[d] == 1 && p.padLo[d] == 0 && p.padHi[d] == 0 &&
                      p.inSpatial[d] == static_cast<int64_t>(d) + 2 && p.kSpatial[d] == static_cast<int64_t>(d) + 2 &&
                      p.outSpatial[d] == static_cast<int64_t>(d) + 2;
    if (plain && !pointwiseGemm) {
      OneDnnConv c;
      c.n = s.n;
      c.c = s.c;
      c.o = s.o;
      c.groups = p.featureGroups;
      c.in = s.in;
      c.k = s.k;
      c.out = s.out;
      c.strides = p.strides;
      c.padLo = p.padLo;
      c.padHi = p.padHi;
      c.rhsDil = p.rhsDil;
      auto stridesOf = [](const std::vector<int64_t>& shape, int64_t a, int64_t b, const std::vector<int64_t>& sp) {
        std::vector<int64_t> st = rowMajorStrides(shape);
        std::vector<int64_t> v{st[static_cast<size_t>(a)], st[static_cast<size_t>(b)]};
        for (int64_t d : sp) v.push_back(st[static_cast<size_t>(d)]);
        return v;
      };
      c.srcStrides = stridesOf(ls, p.inBatch, p.inFeature, p.inSpatial);
      c.weiStrides = stridesOf(ks, p.kOut, p.kIn, p.kSpatial);
      c.dstStrides = stridesOf(resultShape, p.outBatch, p.outFeature, p.outSpatial);
      if (convOneDnnF32(c, lhs.dataAs<float>(), rhs.dataAs<float>(), out.dataAs<float>())) return out;
    }
  }
  switch (chooseDomain(lhs.elementType(), rhs.elementType(), resultType)) {
    case Domain::kFloat: runConv<float>(q, s, lhs, rhs, out); break;
    case Domain::kDouble: runConv<double>(q, s, lhs, rhs, out); break;
    case Domain::kComplexFloat: runConv<c64>(q, s, lhs, rhs, out); break;
    case Domain::kComplexDouble: runConv<c128>(q, s, lhs, rhs, out); break;
    case Domain::kInt: runConv<int64_t>(q, s, lhs, rhs, out); break;
  }
  return out;
}

Expected<std::vector<Literal>> convolutionKernel(const Operation& op, std::span<const Literal> operands,
                                                 EvalContext&) {
  if (operands.size() != 2) return invalidArgument(op.describe() + ": expects lhs and rhs");
  WF_ASSIGN_OR_RETURN(ConvParams p, readParams(op, nullptr));
  WF_ASSIGN_OR_RETURN(Literal out, convolution(op, operands[0], operands[1], p));
  return std::vector<Literal>{std::move(out)};
}

Expected<std::vector<Literal>> dynamicConvKernel(const Operation& op, std::span<const Literal> operands,
                                                 EvalContext&) {
  if (operands.size() != 3) return invalidArgument(op.describe() + ": expects lhs, rhs and padding");
  WF_ASSIGN_OR_RETURN(ConvParams p, readParams(op, &operands[2]));
  WF_ASSIGN_OR_RETURN(Literal out, convolution(op, operands[0], operands[1], p));
  return std::vector<Literal>{std::move(out)};
}

}  // namespace

void registerConvolutionKernels(KernelRegistry& registry) {
  registry.add(OpCode::Convolution, convolutionKernel);
  registry.add(OpCode::DynamicConv, dynamicConvKernel);
}

}  // namespace wf::dotconv
