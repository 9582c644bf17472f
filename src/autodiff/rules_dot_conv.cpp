// VJP rules of dot_general, dot and convolution: each operand's cotangent is another
// contraction of the result's cotangent with the other operand, as in JAX's
// _dot_general_transpose_lhs/_rhs and _conv_general_dilated_transpose_lhs/_rhs.
#include <algorithm>
#include <numeric>

#include "autodiff/rules.h"
#include "ir/attr_reader.h"
#include "ir/window.h"

namespace wf::autodiff {
namespace {

using Dims = std::vector<int64_t>;

Dims remaining(int64_t rank, const Dims& a, const Dims& b) {
  Dims out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  return out;
}

Dims range(int64_t from, size_t n) {
  Dims r(n);
  std::iota(r.begin(), r.end(), from);
  return r;
}

Dims argsort(const Dims& v) {
  Dims idx = range(0, v.size());
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return v[static_cast<size_t>(a)] < v[static_cast<size_t>(b)]; });
  return idx;
}

// The cotangent of x in dot_general(x, y) (or of y, with swapAns, when the result holds y's
// free dims before x's): contract the cotangent g with y over y's free dims, then put the
// dims back in x's order.
Value* dotTransposeLhs(OpBuilder& b, Value* g, Value* y, int64_t xRank, const Dims& xBatch, const Dims& xContract,
                       const Dims& yBatch, const Dims& yContract, bool swapAns, const Attribute* precision) {
  Dims xKept = remaining(xRank, xContract, xBatch);
  Dims yKept = remaining(y->type().rank(), yContract, yBatch);
  size_t nb = xBatch.size();
  Dims ansBatch = range(0, nb);
  Dims ansY = swapAns ? range(static_cast<int64_t>(nb), yKept.size())
                      : range(static_cast<int64_t>(nb + xKept.size()), yKept.size());
  Value* r = b.dotGeneral(g, y, ansBatch, yBatch, ansY, yKept, precision);
  Dims order = xBatch;
  order.insert(order.end(), xKept.begin(), xKept.end());
  Dims ySorted = argsort(yContract);
  for (int64_t i : ySorted) order.push_back(xContract[static_cast<size_t>(i)]);
  return b.transpose(r, argsort(order));
}

// precision_config is per operand; the transposes see the operands in another order, so it is
// kept only where both entries agree.
const Attribute* symmetricPrecision(const Operation& op) {
  const Attribute* p = op.attr("precision_config");
  if (!p || p->kind() != Attribute::Kind::kArray) return nullptr;
  for (const Attribute& e : p->elements())
    if (e != p->elements().front()) return nullptr;
  return p;
}

Status dotGeneralRule(VjpContext& c) {
  OpBuilder& b = c.b;
  Dims lb, rb, lc, rc;
  if (c.op.code() == OpCode::Dot) {
    lc = {c.operandType(0).rank() - 1};
    rc = {0};
  } else {
    WF_ASSIGN_OR_RETURN(const Attribute* dn, AttrReader(c.op).dialectStruct("dot_dimension_numbers"));
    lb = AttrReader::fieldInts(*dn, "lhs_batching_dimensions");
    rb = AttrReader::fieldInts(*dn, "rhs_batching_dimensions");
    lc = AttrReader::fieldInts(*dn, "lhs_contracting_dimensions");
    rc = AttrReader::fieldInts(*dn, "rhs_contracting_dimensions");
  }
  const Attribute* precision = symmetricPrecision(c.op);
  Value* g = c.cotangent();
  // A widened result (preferred element type: bf16 operands, an f32 result) whose cotangent is
  // itself a widened value of the operands' type (the cotangent of a bf16 addmm, whose f32
  // product and bias sum are rounded once): the cotangent narrowed back is exact, so the
  // transposes contract the narrow values on tensor cores as PyTorch's backward does, each
  // rounded once to the operand's type (the same f32 sums as contracting the widened values).
  const ElementType narrow = c.operandType(0).elementType();
  if (const Operation* def = g->definingOp();
      def && def->code() == OpCode::Convert && c.operandType(1).elementType() == narrow &&
      def->operand(0)->type().elementType() == narrow &&
      (narrow == ElementType::kBF16 || narrow == ElementType::kF16) && g->type().elementType() == ElementType::kF32)
    g = def->operand(0);
  ElementType ge = g->type().elementType();
  // Otherwise a widened result contracts in the result's type, then narrows.
  Value* x = b.convert(c.operand(0), ge);
  Value* y = b.convert(c.operand(1), ge);
  if (c.active(0)) {
    Value* xBar = dotTransposeLhs(b, g, y, c.operandType(0).rank(), lb, lc, rb, rc, false, precision);
    c.accumulate(0, b.convert(xBar, c.operandType(0).elementType()));
  }
  if (c.active(1)) {
    Value* yBar = dotTransposeLhs(b, g, x, c.operandType(1).rank(), rb, rc, lb, lc, true, precision);
    c.accumulate(1, b.convert(yBar, c.operandType(1).elementType()));
  }
  return Status::ok();
}

// Convolution dimension numbers as JAX spells them: (batch, feature, spatial...) for the input
// and the output, (output feature, input feature, spatial...) for the kernel.
struct ConvSpec {
  Dims lhs, rhs, out;
};

struct ConvParams {
  ConvSpec spec;
  Dims strides, lhsDilation, rhsDilation, padLow, padHigh;
  int64_t featureGroups = 1, batchGroups = 1;
};

Expected<ConvParams> readConv(const Operation& op, size_t spatialRank) {
  AttrReader attrs(op);
  WF_ASSIGN_OR_RETURN(const Attribute* dn, attrs.dialectStruct("dimension_numbers"));
  auto field = [&](const char* name) { return AttrReader::fieldInt(*dn, name).value_or(0); };
  ConvParams p;
  p.spec.lhs = {field("input_batch_dimension"), field("input_feature_dimension")};
  p.spec.rhs = {field("kernel_output_feature_dimension"), field("kernel_input_feature_dimension")};
  p.spec.out = {field("output_batch_dimension"), field("output_feature_dimension")};
  for (int64_t d : AttrReader::fieldInts(*dn, "input_spatial_dimensions")) p.spec.lhs.push_back(d);
  for (int64_t d : AttrReader::fieldInts(*dn, "kernel_spatial_dimensions")) p.spec.rhs.push_back(d);
  for (int64_t d : AttrReader::fieldInts(*dn, "output_spatial_dimensions")) p.spec.out.push_back(d);
  Dims ones(spatialRank, 1);
  WF_ASSIGN_OR_RETURN(p.strides, attrs.ints("window_strides", ones));
  WF_ASSIGN_OR_RETURN(p.lhsDilation, attrs.ints("lhs_dilation", ones));
  WF_ASSIGN_OR_RETURN(p.rhsDilation, attrs.ints("rhs_dilation", ones));
  WF_ASSIGN_OR_RETURN(Dims pad, attrs.ints("padding", Dims(2 * spatialRank, 0)));
  for (size_t i = 0; i < spatialRank; ++i) {
    p.padLow.push_back(pad[2 * i]);
    p.padHigh.push_back(pad[2 * i + 1]);
  }
  WF_ASSIGN_OR_RETURN(p.featureGroups, attrs.integer("feature_group_count", 1));
  WF_ASSIGN_OR_RETURN(p.batchGroups, attrs.integer("batch_group_count", 1));
  return p;
}

Value* convolution(OpBuilder& b, Value* lhs, Value* rhs, const ConvParams& p, const Attribute* precision) {
  size_t n = p.spec.lhs.size() - 2;
  auto spatial = [](const Dims& s) { return Dims(s.begin() + 2, s.end()); };
  std::vector<NamedAttribute> fields = {
      {"input_batch_dimension", Attribute::integer(p.spec.lhs[0])},
      {"input_feature_dimension", Attribute::integer(p.spec.lhs[1])},
      {"input_spatial_dimensions", i64ArrayAttr(spatial(p.spec.lhs))},
      {"kernel_input_feature_dimension", Attribute::integer(p.spec.rhs[1])},
      {"kernel_output_feature_dimension", Attribute::integer(p.spec.rhs[0])},
      {"kernel_spatial_dimensions", i64ArrayAttr(spatial(p.spec.rhs))},
      {"output_batch_dimension", Attribute::integer(p.spec.out[0])},
      {"output_feature_dimension", Attribute::integer(p.spec.out[1])},
      {"output_spatial_dimensions", i64ArrayAttr(spatial(p.spec.out))},
  };
  Dims pads;
  for (size_t i = 0; i < n; ++i) {
    pads.push_back(p.padLow[i]);
    pads.push_back(p.padHigh[i]);
  }
  std::vector<NamedAttribute> attrs = {
      {"dimension_numbers", Attribute::dialectStruct("stablehlo.conv", std::move(fields))},
      {"window_strides", i64DenseArray(p.strides)},
      {"padding", i64Matrix(pads, static_cast<int64_t>(n), 2)},
      {"lhs_dilation", i64DenseArray(p.lhsDilation)},
      {"rhs_dilation", i64DenseArray(p.rhsDilation)},
      {"feature_group_count", Attribute::integer(p.featureGroups)},
      {"batch_group_count", Attribute::integer(p.batchGroups)},
  };
  if (precision) attrs.emplace_back("precision_config", *precision);
  return b.create1("stablehlo.convolution", {lhs, rhs}, std::move(attrs));
}

// Splits dim `src` of x into (size1, size / size1).
Value* reshapeAxisOutOf(OpBuilder& b, int64_t src, int64_t size1, Value* x) {
  Dims shape = x->type().shape();
  int64_t size2 = shape[static_cast<size_t>(src)] / size1;
  shape[static_cast<size_t>(src)] = size2;
  shape.insert(shape.begin() + src, size1);
  return b.reshape(x, shape);
}

// Merges dim `src` of x into dim `dst` (numbered with `src` removed), `src` as the major part.
Value* reshapeAxisInto(OpBuilder& b, int64_t src, int64_t dst, Value* x) {
  Dims shape = x->type().shape();
  Dims perm;
  for (int64_t i = 0; i < x->type().rank(); ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  Dims newShape;
  for (int64_t i = 0; i < x->type().rank(); ++i)
    if (i != src) newShape.push_back(shape[static_cast<size_t>(i)]);
  newShape[static_cast<size_t>(dst)] *= shape[static_cast<size_t>(src)];
  return b.reshape(b.transpose(x, perm), newShape);
}

Dims takeDims(const Type& t, const Dims& spec) {
  Dims out;
  for (size_t i = 2; i < spec.size(); ++i) out.push_back(t.dim(spec[i]));
  return out;
}

Status convolutionRule(VjpContext& c) {
  OpBuilder& b = c.b;
  const Type& lhsType = c.operandType(0);
  const Type& rhsType = c.operandType(1);
  size_t n = static_cast<size_t>(lhsType.rank() - 2);
  if (const Attribute* rev = c.op.attr("window_reversal"))
    if (auto flags = rev->asIntList())
      for (int64_t f : *flags)
        if (f) return c.unsupported("convolution with window_reversal has no VJP rule");
  WF_ASSIGN_OR_RETURN(ConvParams p, readConv(c.op, n));
  const Attribute* precision = symmetricPrecision(c.op);
  Value* g = c.cotangent();
  ElementType ge = g->type().elementType();
  Dims inShape = takeDims(lhsType, p.spec.lhs), window = takeDims(rhsType, p.spec.rhs),
       outShape = takeDims(g->type(), p.spec.out);
  Dims lhsDilated(n), rhsDilated(n), outDilated(n);
  for (size_t i = 0; i < n; ++i) {
    lhsDilated[i] = dilatedSize(inShape[i], p.lhsDilation[i]);
    rhsDilated[i] = dilatedSize(window[i], p.rhsDilation[i]);
    outDilated[i] = dilatedSize(outShape[i], p.strides[i]);
  }

  if (c.active(0)) {
    Value* rhs = b.convert(c.operand(1), ge);
    ConvParams t;
    t.featureGroups = p.featureGroups;
    if (p.featureGroups > 1) {
      // Move the group from the kernel's output features into its input features.
      rhs = reshapeAxisOutOf(b, p.spec.rhs[0], p.featureGroups, rhs);
      rhs = reshapeAxisInto(b, p.spec.rhs[0], p.spec.rhs[1], rhs);
    } else if (p.batchGroups > 1) {
      rhs = reshapeAxisOutOf(b, p.spec.rhs[0], p.batchGroups, rhs);
      rhs = reshapeAxisInto(b, p.spec.rhs[0], p.spec.rhs[1], rhs);
      t.featureGroups = p.batchGroups;
    }
    Dims tRhs = p.spec.rhs;
    std::swap(tRhs[0], tRhs[1]);
    t.spec = {p.spec.out, tRhs, p.spec.lhs};
    for (size_t i = 0; i < n; ++i) {
      int64_t before = rhsDilated[i] - p.padLow[i] - 1;
      t.padLow.push_back(before);
      t.padHigh.push_back(lhsDilated[i] + rhsDilated[i] - 1 - outDilated[i] - before);
    }
    t.strides = p.lhsDilation;
    t.lhsDilation = p.strides;
    t.rhsDilation = p.rhsDilation;
    Value* reversed = b.reverse(rhs, Dims(p.spec.rhs.begin() + 2, p.spec.rhs.end()));
    Value* out = convolution(b, g, reversed, t, precision);
    if (p.batchGroups > 1) {
      out = reshapeAxisOutOf(b, p.spec.lhs[1], p.batchGroups, out);
      out = reshapeAxisInto(b, p.spec.lhs[1], p.spec.lhs[0], out);
    }
    c.accumulate(0, b.convert(out, lhsType.elementType()));
  }

  if (c.active(1)) {
    Value* lhs = b.convert(c.operand(0), ge);
    ConvParams t;
    if (p.batchGroups > 1) {
      t.featureGroups = p.batchGroups;
    } else if (p.featureGroups > 1) {
      t.batchGroups = p.featureGroups;
    }
    auto swapFirst = [](Dims s) {
      std::swap(s[0], s[1]);
      return s;
    };
    t.spec = {swapFirst(p.spec.lhs), swapFirst(p.spec.out), swapFirst(p.spec.rhs)};
    for (size_t i = 0; i < n; ++i) {
      t.padLow.push_back(p.padLow[i]);
      t.padHigh.push_back(outDilated[i] - lhsDilated[i] + rhsDilated[i] - p.padLow[i] - 1);
    }
    t.strides = p.rhsDilation;
    t.lhsDilation = p.lhsDilation;
    t.rhsDilation = p.strides;
    Value* out = convolution(b, lhs, g, t, precision);
    c.accumulate(1, b.convert(out, rhsType.elementType()));
  }
  return Status::ok();
}

}  // namespace

void registerDotConvRules(RuleTable& t) {
  t.add(OpCode::DotGeneral, dotGeneralRule);
  t.add(OpCode::Dot, dotGeneralRule);
  t.add(OpCode::Convolution, convolutionRule);
}

}  // namespace wf::autodiff
