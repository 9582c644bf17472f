// Fused convolutions on oneDNN (conv_fused.h).
#include "backends/cpu/conv_fused.h"

#include <cmath>
#include <cstring>

#include "backends/cpu/fused_elementwise.h"
#include "eval/dot_conv_util.h"

#if WF_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace wf::cpu {
namespace {

std::optional<float> splatValue(const Value* v) {
  const Operation* def = v->definingOp();
  if (!def) return std::nullopt;
  if (def->code() == OpCode::BroadcastInDim && def->operand(0)->type().isTensor() &&
      def->operand(0)->type().hasStaticShape() && def->operand(0)->type().numElements() == 1)
    return splatValue(def->operand(0));
  return splatF32Constant(*def);
}

std::optional<std::vector<int64_t>> ints(const Operation& op, const char* name) {
  const Attribute* a = op.attr(name);
  if (!a) return std::nullopt;
  return a->asIntList();
}

// The convolution's geometry, when it is a 2-D f32 NCHW x OIHW -> NCHW one oneDNN runs as is.
struct Geometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups;
  int64_t strides[2], padLo[2], padHi[2], dil[2];
};

std::optional<Geometry> geometry(const Operation& conv) {
  if (conv.code() != OpCode::Convolution || conv.numOperands() != 2 || conv.numResults() != 1) return std::nullopt;
  const Type &in = conv.operand(0)->type(), &k = conv.operand(1)->type(), &out = conv.result(0)->type();
  for (const Type* t : {&in, &k, &out})
    if (!t->isTensor() || !t->hasStaticShape() || t->elementType() != ElementType::kF32 || t->rank() != 4)
      return std::nullopt;
  const Attribute* dn = conv.attr("dimension_numbers");
  if (!dn) return std::nullopt;
  auto field = [&](const char* name) -> std::optional<int64_t> {
    const Attribute* f = dn->field(name);
    return f ? f->asInt() : std::nullopt;
  };
  auto list = [&](const char* name) -> std::vector<int64_t> {
    const Attribute* f = dn->field(name);
    return f ? f->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
  };
  const std::vector<int64_t> spatial{2, 3};
  if (field("input_batch_dimension") != 0 || field("input_feature_dimension") != 1 ||
      field("kernel_output_feature_dimension") != 0 || field("kernel_input_feature_dimension") != 1 ||
      field("output_batch_dimension") != 0 || field("output_feature_dimension") != 1 ||
      list("input_spatial_dimensions") != spatial || list("kernel_spatial_dimensions") != spatial ||
      list("output_spatial_dimensions") != spatial)
    return std::nullopt;
  if (auto lhs = ints(conv, "lhs_dilation"); lhs && *lhs != std::vector<int64_t>{1, 1}) return std::nullopt;
  if (auto rev = ints(conv, "window_reversal"); rev)
    for (int64_t r : *rev)
      if (r) return std::nullopt;
  if (const Attribute* b = conv.attr("batch_group_count"); b && b->asInt().value_or(1) != 1) return std::nullopt;
  Geometry g{};
  g.groups = 1;
  if (const Attribute* f = conv.attr("feature_group_count")) g.groups = f->asInt().value_or(1);
  g.n = in.dim(0), g.c = in.dim(1), g.h = in.dim(2), g.w = in.dim(3);
  g.o = k.dim(0), g.kh = k.dim(2), g.kw = k.dim(3);
  g.oh = out.dim(2), g.ow = out.dim(3);
  if (g.groups < 1 || g.c % g.groups || g.o % g.groups || k.dim(1) * g.groups != g.c || out.dim(1) != g.o ||
      out.dim(0) != g.n)
    return std::nullopt;
  std::vector<int64_t> strides = ints(conv, "window_strides").value_or(std::vector<int64_t>{1, 1});
  std::vector<int64_t> dil = ints(conv, "rhs_dilation").value_or(std::vector<int64_t>{1, 1});
  std::vector<int64_t> pad = ints(conv, "padding").value_or(std::vector<int64_t>{0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pad.size() != 4) return std::nullopt;
  for (int d = 0; d < 2; ++d) {
    g.strides[d] = strides[static_cast<size_t>(d)];
    g.dil[d] = dil[static_cast<size_t>(d)];
    g.padLo[d] = pad[static_cast<size_t>(2 * d)];
    g.padHi[d] = pad[static_cast<size_t>(2 * d + 1)];
    if (g.strides[d] < 1 || g.dil[d] < 1 || g.padLo[d] < 0 || g.padHi[d] < 0) return std::nullopt;
  }
  if (g.n <= 0 || g.c <= 0 || g.o <= 0 || g.oh <= 0 || g.ow <= 0) return std::nullopt;
  return g;
}

}  // namespace

#if WF_HAVE_DNNL

namespace {
// The process's one oneDNN engine (eval/dot_conv_util.h).
dnnl::engine& engine() { return dotconv::oneDnnCpuEngine(); }

// The convolution's primitive descriptor for `algorithm`, with the step's post-ops: the residual
// as the sum post-op, then the ReLU (throws dnnl::error where oneDNN has no implementation).
dnnl::convolution_forward::primitive_desc convolutionDesc(const Geometry& g, bool residual, bool relu,
                                                          dnnl::algorithm algorithm) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  memory::dims src{g.n, g.c, g.h, g.w}, dst{g.n, g.o, g.oh, g.ow}, bias{g.o};
  memory::dims wei = g.groups > 1 ? memory::dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw}
                                  : memory::dims{g.o, g.c, g.kh, g.kw};
  post_ops po;
  if (residual) po.append_sum(1.0f);
  if (relu) po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
  primitive_attr attr;
  attr.set_post_ops(po);
  convolution_forward::desc d(prop_kind::forward_inference, algorithm, memory::desc(src, dt::f32, tag::any),
                              memory::desc(wei, dt::f32, tag::any), memory::desc(bias, dt::f32, tag::x),
                              memory::desc(dst, dt::f32, tag::any), {g.strides[0], g.strides[1]},
                              {g.dil[0] - 1, g.dil[1] - 1}, {g.padLo[0], g.padLo[1]}, {g.padHi[0], g.padHi[1]});
  return convolution_forward::primitive_desc(d, attr, engine());
}
}  // namespace

bool FusedConv::offersWinograd() const {
  std::optional<Geometry> g = geometry(*conv);
  if (!g || g->kh != 3 || g->kw != 3 || g->groups != 1 || g->strides[0] != 1 || g->strides[1] != 1 || g->dil[0] != 1 ||
      g->dil[1] != 1)
    return false;
  try {
    convolutionDesc(*g, residual != nullptr, relu, dnnl::algorithm::convolution_winograd);
    return true;
  } catch (const dnnl::error&) {
    return false;  // no Winograd kernel for this CPU (oneDNN has them for AVX-512) or shape
  }
}

struct FusedConv::Prepared {
  dnnl::convolution_forward prim;
  dnnl::pooling_forward poolPrim;  // when FusedConv::pool
  // srcIn: how the input arrives (plain NCHW, or the producer's layout); src/convDst: the
  // convolution's layouts; dst: the step's result in the layout it is computed in (the
  // pooling's when pooling); dstOut: how the result leaves (plain NCHW, or dst when blocked);
  // resIn: how the residual arrives.
  dnnl::memory::desc srcIn, src, convDst, dst, dstOut, resIn;
  dnnl::memory weights, bias;
  dnnl::reorder srcReorder, dstReorder, residualReorder;
  Type resultType;
};

Status FusedConv::prepare(const std::function<const Literal*(const Value*)>& hoisted) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  std::optional<Geometry> geo = geometry(*conv);
  if (!geo) return internalError(conv->describe() + ": no longer a fusible convolution");
  const Geometry& g = *geo;
  const Literal* w = hoisted(kernel);
  if (!w || w->elementType() != ElementType::kF32 || w->shape() != kernel->type().shape())
    return internalError(conv->describe() + ": the kernel " + kernel->nameHint() + " is not bound in the prologue");
  // scale and shift per output channel, composed in double in the chain's order.
  std::vector<double> scale(static_cast<size_t>(g.o), 1.0), shift(static_cast<size_t>(g.o), 0.0);
  for (const Affine& a : affine) {
    const float* v = nullptr;
    if (a.vector) {
      const Literal* l = hoisted(a.vector);
      if (!l || l->elementType() != ElementType::kF32 || l->numElements() != g.o)
        return internalError(conv->describe() + ": the per-channel operand " + a.vector->nameHint() +
                             " is not a bound [" + std::to_string(g.o) + "] f32 vector");
      v = l->dataAs<float>();
    }
    for (int64_t o = 0; o < g.o; ++o) {
      double x = v ? v[o] : a.scalar;
      auto i = static_cast<size_t>(o);
      switch (a.code) {
        case OpCode::Add: shift[i] += x; break;
        case OpCode::Subtract: shift[i] -= x; break;
        default: scale[i] *= x, shift[i] *= x; break;  // Multiply
      }
    }
  }
  const int64_t perOut = w->numElements() / g.o;
  std::vector<float> folded(static_cast<size_t>(w->numElements()));
  std::vector<float> biasValues(static_cast<size_t>(g.o));
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t j = 0; j < perOut; ++j)
      folded[static_cast<size_t>(o * perOut + j)] =
          static_cast<float>(w->dataAs<float>()[o * perOut + j] * scale[static_cast<size_t>(o)]);
    biasValues[static_cast<size_t>(o)] = static_cast<float>(shift[static_cast<size_t>(o)]);
  }
  try {
    auto p = std::make_shared<Prepared>();
    p->resultType = result->type();
    memory::dims src{g.n, g.c, g.h, g.w}, dst{g.n, g.o, g.oh, g.ow}, bias{g.o};
    memory::dims out{result->type().dim(0), result->type().dim(1), result->type().dim(2), result->type().dim(3)};
    memory::dims wei = g.groups > 1 ? memory::dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw}
                                    : memory::dims{g.o, g.c, g.kh, g.kw};
    convolution_forward::primitive_desc pd = convolutionDesc(
        g, residual != nullptr, relu, winograd ? algorithm::convolution_winograd : algorithm::convolution_direct);
    p->prim = convolution_forward(pd);
    p->src = pd.src_desc();
    p->convDst = pd.dst_desc();
    p->dst = p->convDst;
    if (pool) {
      const auto& r = result->type();
      memory::dims pooled{r.dim(0), r.dim(1), r.dim(2), r.dim(3)};
      pooling_forward::desc pool(prop_kind::forward_inference, algorithm::pooling_max, p->convDst,
                                 memory::desc(pooled, dt::f32, tag::any), {poolStride[0], poolStride[1]},
                                 {poolWindow[0], poolWindow[1]}, {poolPadLo[0], poolPadLo[1]},
                                 {poolPadHi[0], poolPadHi[1]});
      pooling_forward::primitive_desc poolPd(pool, engine());
      p->poolPrim = pooling_forward(poolPd);
      p->dst = poolPd.dst_desc();
    }
    auto producerDst = [&](const FusedConv* producer) -> Expected<memory::desc> {
      if (!producer || !producer->prepared_)
        return internalError(conv->describe() + ": its blocked operand's convolution is not prepared");
      return producer->prepared_->dst;
    };
    if (inputProducer) {
      WF_ASSIGN_OR_RETURN(p->srcIn, producerDst(inputProducer));
    } else {
      p->srcIn = memory::desc(src, dt::f32, tag::nchw);
    }
    p->dstOut = blockedOutput ? p->dst : memory::desc(out, dt::f32, tag::nchw);
    if (residualProducer) {
      WF_ASSIGN_OR_RETURN(p->resIn, producerDst(residualProducer));
    } else {
      p->resIn = memory::desc(dst, dt::f32, tag::nchw);
    }
    if (p->srcIn != p->src) p->srcReorder = reorder(reorder::primitive_desc(engine(), p->srcIn, engine(), p->src));
    if (p->dstOut != p->dst) p->dstReorder = reorder(reorder::primitive_desc(engine(), p->dst, engine(), p->dstOut));
    if (residual && p->resIn != p->convDst)
      p->residualReorder = reorder(reorder::primitive_desc(engine(), p->resIn, engine(), p->convDst));
    dotconv::useLibraryThreads();
    stream s(engine());
    memory userWeights(memory::desc(wei, dt::f32, g.groups > 1 ? tag::goihw : tag::oihw), engine(), folded.data());
    p->weights = memory(pd.weights_desc(), engine());
    reorder(userWeights, p->weights).execute(s, userWeights, p->weights);
    p->bias = memory(pd.bias_desc(), engine());
    std::memcpy(p->bias.get_data_handle(), biasValues.data(), biasValues.size() * sizeof(float));
    s.wait();
    prepared_ = std::move(p);
    return Status::ok();
  } catch (const dnnl::error& e) {
    return internalError(conv->describe() + ": oneDNN could not build the fused convolution: " + e.what());
  }
}

Expected<Literal> FusedConv::run(const Literal& in, const Literal* res, Literal* residualIsDead) const {
  using dnnl::memory;
  if (!prepared_) return internalError(conv->describe() + ": fused convolution run before its prologue");
  const Prepared& p = *prepared_;
  if (in.elementType() != ElementType::kF32 || in.sizeBytes() != p.srcIn.get_size() ||
      (residual && (!res || res->elementType() != ElementType::kF32 || res->sizeBytes() != p.resIn.get_size())))
    return internalError(conv->describe() + ": fused convolution operands do not match the plan");
  try {
    dotconv::useLibraryThreads();
    dnnl::stream s(engine());
    // The residual, dead after this step and in the destination's layout, as the destination:
    // the sum post-op adds into it where it lies.
    const bool inPlace = residual && residualIsDead && residualIsDead == res && residualIsDead->ownsStorageAlone() &&
                         !pool && p.dstOut == p.dst && p.resIn == p.convDst && &in != res &&
                         res->sizeBytes() == p.dstOut.get_size();
    // A blocked result travels as a flat f32 carrier of the layout's (padded) size.
    const Type outType =
        blockedOutput ? Type::tensor({static_cast<int64_t>(p.dstOut.get_size() / sizeof(float))}, ElementType::kF32)
                      : p.resultType;
    Literal out = inPlace ? std::move(*residualIsDead) : Literal::uninitialized(outType);
    if (inPlace) res = &out;
    memory srcIn(p.srcIn, engine(), const_cast<std::byte*>(in.data()));
    memory dstOut(p.dstOut, engine(), out.data());
    memory src = srcIn, dst = dstOut;
    if (p.srcIn != p.src) {
      src = memory(p.src, engine());
      p.srcReorder.execute(s, srcIn, src);
    }
    if (p.dstOut != p.dst) dst = memory(p.dst, engine());
    memory convDst = pool ? memory(p.convDst, engine()) : dst;
    if (residual && !inPlace) {
      // The sum post-op adds the primitive's result to what its destination holds.
      memory resIn(p.resIn, engine(), const_cast<std::byte*>(res->data()));
      if (p.resIn != p.convDst)
        p.residualReorder.execute(s, resIn, convDst);
      else
        std::memcpy(convDst.get_data_handle(), res->data(), p.convDst.get_size());
    }
    p.prim.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_BIAS, p.bias}, {DNNL_ARG_DST, convDst}});
    if (pool) p.poolPrim.execute(s, {{DNNL_ARG_SRC, convDst}, {DNNL_ARG_DST, dst}});
    if (p.dstOut != p.dst) p.dstReorder.execute(s, dst, dstOut);
    s.wait();
    return out;
  } catch (const dnnl::error& e) {
    return internalError(conv->describe() + ": oneDNN fused convolution failed: " + e.what());
  }
}

#else

struct FusedConv::Prepared {};
bool FusedConv::offersWinograd() const { return false; }
Status FusedConv::prepare(const std::function<const Literal*(const Value*)>&) {
  return unimplemented("fused convolutions need oneDNN");
}
Expected<Literal> FusedConv::run(const Literal&, const Literal*, Literal*) const {
  return unimplemented("fused convolutions need oneDNN");
}

#endif

FusedConv::FusedConv() = default;
FusedConv::~FusedConv() = default;
FusedConv::FusedConv(FusedConv&&) noexcept = default;

std::vector<const Value*> FusedConv::perRunInputs() const {
  std::vector<const Value*> v{input};
  if (residual) v.push_back(residual);
  return v;
}

std::string FusedConv::describe() const {
  std::string s = "fused_convolution[convolution";
  for (const Affine& a : affine)
    s += a.code == OpCode::Add ? ",add" : a.code == OpCode::Subtract ? ",subtract" : ",multiply";
  if (residual) s += ",add(residual)";
  if (relu) s += ",relu";
  if (pool) s += ",max_pool";
  return s + (winograd ? "] winograd" : "]");
}

namespace {

// The chain's value `cur` pooled by a reduce_window max over H and W (init -inf, no dilation):
// the pooling joins the step.
void matchMaxPool(FusedConvMatch& m, const Value* cur,
                  const std::function<const std::vector<const Operation*>&(const Value*)>& usersOf,
                  const std::function<bool(const Value*)>& hoisted, const std::function<bool(const Value*)>& kept,
                  const std::function<bool(const Operation*)>& taken) {
  const auto& users = usersOf(cur);
  if (users.size() != 1) return;
  const Operation* rw = users[0];
  if (taken(rw) || rw->code() != OpCode::ReduceWindow || rw->numOperands() != 2 || rw->numResults() != 1 ||
      rw->operand(0) != cur || rw->numRegions() != 1 || rw->region(0).empty())
    return;
  const Type& rt = rw->result(0)->type();
  if (!rt.isTensor() || !rt.hasStaticShape() || rt.elementType() != ElementType::kF32 || rt.rank() != 4) return;
  // The body: return maximum(arg0, arg1).
  const Block& body = rw->region(0).front();
  if (body.numArguments() != 2 || body.operations().size() != 2) return;
  const Operation& mx = *body.operations().front();
  if (mx.code() != OpCode::Maximum || mx.numOperands() != 2 ||
      !((mx.operand(0) == body.argument(0) && mx.operand(1) == body.argument(1)) ||
        (mx.operand(0) == body.argument(1) && mx.operand(1) == body.argument(0))))
    return;
  const Operation& ret = *body.operations().back();
  if (ret.numOperands() != 1 || ret.operand(0) != mx.result(0)) return;
  // The init: -inf.
  const Operation* init = rw->operand(1)->definingOp();
  std::optional<float> initValue = init ? splatF32Constant(*init) : std::nullopt;
  if (!initValue || !(std::isinf(*initValue) && *initValue < 0)) return;
  auto list = [&](const char* name, int64_t fill) {
    return ints(*rw, name).value_or(std::vector<int64_t>(name[0] == 'p' ? 8 : 4, fill));
  };
  std::vector<int64_t> window = list("window_dimensions", 1), strides = list("window_strides", 1),
                       baseDil = list("base_dilations", 1), winDil = list("window_dilations", 1),
                       pad = list("padding", 0);
  if (window.size() != 4 || strides.size() != 4 || baseDil.size() != 4 || winDil.size() != 4 || pad.size() != 8) return;
  if (window[0] != 1 || window[1] != 1 || strides[0] != 1 || strides[1] != 1 || pad[0] || pad[1] || pad[2] || pad[3])
    return;
  for (int64_t d : baseDil)
    if (d != 1) return;
  for (int64_t d : winDil)
    if (d != 1) return;
  for (int d = 0; d < 2; ++d) {
    const auto i = static_cast<size_t>(2 + d);
    // A window wholly in the padding would give -inf; oneDNN would give something else.
    if (pad[2 * i] < 0 || pad[2 * i + 1] < 0 || pad[2 * i] >= window[i] || pad[2 * i + 1] >= window[i]) return;
    m.conv.poolWindow[d] = window[i];
    m.conv.poolStride[d] = strides[i];
    m.conv.poolPadLo[d] = pad[2 * i];
    m.conv.poolPadHi[d] = pad[2 * i + 1];
  }
  m.conv.pool = true;
  m.ops.push_back(rw);
  if (!hoisted(rw->operand(1)) && !kept(rw->operand(1)) && usersOf(rw->operand(1)).size() == 1)
    m.absorbed.push_back(init);
}

}  // namespace

std::optional<FusedConvMatch> matchFusedConv(
    const Operation& conv, const std::function<const std::vector<const Operation*>&(const Value*)>& usersOf,
    const std::function<bool(const Value*)>& hoisted, const std::function<bool(const Value*)>& kept,
    const std::function<bool(const Operation*)>& taken) {
#if !WF_HAVE_DNNL
  return std::nullopt;
#endif
  if (!dotconv::haveOneDnn()) return std::nullopt;
  std::optional<Geometry> g = geometry(conv);
  if (!g || hoisted(conv.operand(0)) || !hoisted(conv.operand(1))) return std::nullopt;
  FusedConvMatch m;
  m.conv.conv = &conv;
  m.conv.input = conv.operand(0);
  m.conv.kernel = conv.operand(1);
  m.ops.push_back(&conv);
  const Type& type = conv.result(0)->type();
  const Value* cur = conv.result(0);
  // An operand read only by `user` (and not returned) is absorbed into the step.
  auto absorb = [&](const Value* v, const Operation* user) {
    const Operation* def = v->definingOp();
    if (!def || kept(v) || hoisted(v)) return;
    const auto& users = usersOf(v);
    if (users.size() == 1 && users[0] == user) {
      m.absorbed.push_back(def);
      if (def->code() == OpCode::BroadcastInDim && def->operand(0)->definingOp() &&
          def->operand(0)->definingOp()->code() == OpCode::Constant && !hoisted(def->operand(0)) &&
          !kept(def->operand(0)) && usersOf(def->operand(0)).size() == 1)
        m.absorbed.push_back(def->operand(0)->definingOp());
    }
  };
  while (!kept(cur)) {
    const auto& users = usersOf(cur);
    if (users.size() != 1) break;
    const Operation* u = users[0];
    if (taken(u) || u->numOperands() != 2 || u->numResults() != 1 || u->operand(0) == u->operand(1) ||
        u->result(0)->type() != type || u->numRegions() != 0)
      break;
    const bool curLeft = u->operand(0) == cur;
    const Value* other = curLeft ? u->operand(1) : u->operand(0);
    const OpCode code = u->code();
    if (code == OpCode::Maximum) {
      std::optional<float> zero = splatValue(other);
      if (!zero || *zero != 0.0f) break;
      m.conv.relu = true;
      absorb(other, u);
      m.ops.push_back(u);
      cur = u->result(0);
      break;
    }
    if (m.conv.residual || (code != OpCode::Add && code != OpCode::Multiply && code != OpCode::Subtract) ||
        (code == OpCode::Subtract && !curLeft))
      break;
    FusedConv::Affine a;
    a.code = code;
    const Operation* def = other->definingOp();
    if (std::optional<float> s = splatValue(other)) {
      a.scalar = *s;
    } else if (def && def->code() == OpCode::BroadcastInDim && ints(*def, "broadcast_dimensions") == std::vector<int64_t>{1} &&
               def->operand(0)->type().isTensor() && def->operand(0)->type().shape() == std::vector<int64_t>{g->o} &&
               def->operand(0)->type().elementType() == ElementType::kF32 && hoisted(def->operand(0))) {
      a.vector = def->operand(0);
    } else if (code == OpCode::Add && other->type() == type && !hoisted(other)) {
      m.conv.residual = other;
      m.ops.push_back(u);
      cur = u->result(0);
      continue;
    } else {
      break;
    }
    m.conv.affine.push_back(a);
    absorb(other, u);
    m.ops.push_back(u);
    cur = u->result(0);
  }
  if (!m.conv.residual && !kept(cur)) matchMaxPool(m, cur, usersOf, hoisted, kept, taken);
  m.conv.result = m.ops.back()->result(0);
  return m;
}

}  // namespace wf::cpu
