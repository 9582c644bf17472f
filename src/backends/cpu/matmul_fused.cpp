// Fused matrix products on oneDNN (matmul_fused.h).
#include "backends/cpu/matmul_fused.h"

#include <atomic>
#include <cstring>
#include <unordered_map>

#include "eval/dot_conv_util.h"

#if WF_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace wf::cpu {
namespace {

std::vector<int64_t> intList(const Attribute* a, const char* name) {
  const Attribute* f = a ? a->field(name) : nullptr;
  return f ? f->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
}

bool isF32Matrix(const Type& t) {
  return t.isTensor() && t.hasStaticShape() && t.elementType() == ElementType::kF32 && t.rank() == 2;
}


std::atomic<bool> gNeedsPacked{true};

}  // namespace

void setFusedMatmulNeedsPackedWeights(bool needed) { gNeedsPacked.store(needed); }

namespace {

#if WF_HAVE_DNNL
// The process's one oneDNN engine (eval/dot_conv_util.h).
dnnl::engine& engine() { return dotconv::oneDnnCpuEngine(); }

// Whether oneDNN's matmul for [M, K] x [K, N] asks for weights in a packed (blocked) layout.
bool packedWeights(int64_t m, int64_t n, int64_t k) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  try {
    matmul::primitive_desc pd(matmul::desc(memory::desc({m, k}, dt::f32, tag::ab), memory::desc({k, n}, dt::f32, tag::any),
                                           memory::desc({m, n}, dt::f32, tag::ab)),
                              engine());
    return pd.weights_desc() != memory::desc({k, n}, dt::f32, tag::ab) &&
           pd.weights_desc() != memory::desc({k, n}, dt::f32, tag::ba);
  } catch (const dnnl::error&) {
    return false;
  }
}
#else
bool packedWeights(int64_t, int64_t, int64_t) { return false; }
#endif

}  // namespace

#if WF_HAVE_DNNL

struct FusedMatmul::Prepared {
  dnnl::matmul prim;
  dnnl::memory::desc src, dst;
  dnnl::memory weights, bias;
  Literal keptWeights;  // the bound weights, when the primitive reads them in place
};

Status FusedMatmul::prepare(const std::function<const Literal*(const Value*)>& hoisted) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  const Literal* w = hoisted(weights);
  if (!w || w->elementType() != ElementType::kF32 || w->shape() != weights->type().shape())
    return internalError(dot->describe() + ": the weights " + weights->nameHint() + " are not bound in the prologue");
  const Literal* b = bias ? hoisted(bias) : nullptr;
  if (bias && (!b || b->elementType() != ElementType::kF32 || b->numElements() != n))
    return internalError(dot->describe() + ": the bias " + bias->nameHint() + " is not a bound [" + std::to_string(n) +
                         "] f32 vector");
  try {
    auto p = std::make_shared<Prepared>();
    p->src = memory::desc({m, k}, dt::f32, tag::ab);
    p->dst = memory::desc({m, n}, dt::f32, tag::ab);
    memory::desc biasDesc = bias ? memory::desc({1, n}, dt::f32, tag::ab) : memory::desc();
    // [N, K] row-major is [K, N] with strides (1, K): format ba.
    memory::desc userDesc({k, n}, dt::f32, weightsTransposed ? tag::ba : tag::ab);
    matmul::primitive_desc pd(matmul::desc(p->src, memory::desc({k, n}, dt::f32, tag::any), biasDesc, p->dst), engine());
    // The weights go into the layout the primitive asks for, once. Reading [N, K] weights in
    // place as a transposed [K, N] operand is possible, but oneDNN 2.6's sgemm-based matmul on
    // AVX2 runs about 2.5x slower on it than on a row-major copy (BERT-base on one core).
    p->prim = matmul(pd);
    memory user(userDesc, engine(), const_cast<std::byte*>(w->data()));
    if (pd.weights_desc() == userDesc) {
      p->keptWeights = *w;  // shares the bound Literal's storage
      p->weights = user;
    } else {
      dotconv::useLibraryThreads();
      stream s(engine());
      p->weights = memory(pd.weights_desc(), engine());
      reorder(user, p->weights).execute(s, user, p->weights);
      s.wait();
    }
    if (bias) {
      p->bias = memory(pd.bias_desc(), engine());
      std::memcpy(p->bias.get_data_handle(), b->data(), static_cast<size_t>(n) * sizeof(float));
    }
    prepared_ = std::move(p);
    return Status::ok();
  } catch (const dnnl::error& e) {
    return internalError(dot->describe() + ": oneDNN could not build the fused matrix product: " + e.what());
  }
}

Expected<Literal> FusedMatmul::run(const Literal& x) const {
  if (!prepared_) return internalError(dot->describe() + ": fused matrix product run before its prologue");
  const Prepared& p = *prepared_;
  if (x.elementType() != ElementType::kF32 || x.numElements() != m * k)
    return internalError(dot->describe() + ": fused matrix product operand does not match the plan");
  try {
    dotconv::useLibraryThreads();
    dnnl::stream s(engine());
    Literal out = Literal::uninitialized(result->type());
    dnnl::memory src(p.src, engine(), const_cast<std::byte*>(x.data()));
    dnnl::memory dst(p.dst, engine(), out.data());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, dst}};
    if (bias) args.emplace(DNNL_ARG_BIAS, p.bias);
    p.prim.execute(s, args);
    s.wait();
    return out;
  } catch (const dnnl::error& e) {
    return internalError(dot->describe() + ": oneDNN fused matrix product failed: " + e.what());
  }
}

#else

struct FusedMatmul::Prepared {};
Status FusedMatmul::prepare(const std::function<const Literal*(const Value*)>&) {
  return unimplemented("fused matrix products need oneDNN");
}
Expected<Literal> FusedMatmul::run(const Literal&) const { return unimplemented("fused matrix products need oneDNN"); }

#endif

FusedMatmul::FusedMatmul() = default;
FusedMatmul::~FusedMatmul() = default;
FusedMatmul::FusedMatmul(FusedMatmul&&) noexcept = default;

std::string FusedMatmul::describe() const {
  return std::string("fused_matmul[dot_general") + (bias ? ",add(bias)" : "") + "]";
}

std::optional<FusedMatmulMatch> matchFusedMatmul(
    const Operation& dot, const std::function<const std::vector<const Operation*>&(const Value*)>& usersOf,
    const std::function<bool(const Value*)>& hoisted, const std::function<bool(const Value*)>& kept,
    const std::function<bool(const Operation*)>& taken) {
#if !WF_HAVE_DNNL
  return std::nullopt;
#endif
  if (!dotconv::haveOneDnn()) return std::nullopt;
  if (dot.code() != OpCode::DotGeneral || dot.numOperands() != 2 || dot.numResults() != 1) return std::nullopt;
  const Value* x = dot.operand(0);
  const Value* rhs = dot.operand(1);
  if (!isF32Matrix(x->type()) || !isF32Matrix(rhs->type()) || !isF32Matrix(dot.result(0)->type()) || hoisted(x))
    return std::nullopt;
  const Attribute* dn = dot.attr("dot_dimension_numbers");
  if (!intList(dn, "lhs_batching_dimensions").empty() || !intList(dn, "rhs_batching_dimensions").empty() ||
      intList(dn, "lhs_contracting_dimensions") != std::vector<int64_t>{1})
    return std::nullopt;
  const std::vector<int64_t> rc = intList(dn, "rhs_contracting_dimensions");
  FusedMatmulMatch m;
  FusedMatmul& mm = m.matmul;
  mm.dot = &dot;
  mm.lhs = x;
  mm.m = x->type().dim(0);
  mm.k = x->type().dim(1);
  mm.n = dot.result(0)->type().dim(1);
  // Small products stay with the interpreter (OpenBLAS there, as in dot.cpp): nothing to gain.
  if (mm.m * mm.n * mm.k < (int64_t{1} << 18)) return std::nullopt;
  if (gNeedsPacked.load() && !packedWeights(mm.m, mm.n, mm.k)) return std::nullopt;
  const Operation* t = rhs->definingOp();
  if (rc == std::vector<int64_t>{0} && t && t->code() == OpCode::Transpose && !taken(t) && !kept(rhs) &&
      t->attr("permutation") && t->attr("permutation")->asIntList() == std::vector<int64_t>{1, 0} &&
      hoisted(t->operand(0))) {
    // transpose(w [N, K]) -> [K, N]: read w itself.
    mm.weights = t->operand(0);
    mm.weightsTransposed = true;
    if (usersOf(rhs).size() == 1 && !hoisted(rhs)) m.absorbed.push_back(t);
  } else if (rc == std::vector<int64_t>{0} && hoisted(rhs)) {
    mm.weights = rhs;
  } else if (rc == std::vector<int64_t>{1} && hoisted(rhs)) {
    mm.weights = rhs;  // [N, K] contracted on its dim 1
    mm.weightsTransposed = true;
  } else {
    return std::nullopt;
  }
  m.ops.push_back(&dot);
  const Value* cur = dot.result(0);
  const auto& users = usersOf(cur);
  if (!kept(cur) && users.size() == 1 && !taken(users[0]) && users[0]->code() == OpCode::Add &&
      users[0]->numOperands() == 2 && users[0]->result(0)->type() == cur->type()) {
    const Operation* add = users[0];
    const Value* other = add->operand(0) == cur ? add->operand(1) : add->operand(0);
    const Operation* b = other->definingOp();
    if (other != cur && b && b->code() == OpCode::BroadcastInDim && b->attr("broadcast_dimensions") &&
        b->attr("broadcast_dimensions")->asIntList() == std::vector<int64_t>{1} &&
        b->operand(0)->type().isTensor() && b->operand(0)->type().shape() == std::vector<int64_t>{mm.n} &&
        b->operand(0)->type().elementType() == ElementType::kF32 && hoisted(b->operand(0))) {
      mm.bias = b->operand(0);
      m.ops.push_back(add);
      if (usersOf(other).size() == 1 && !kept(other) && !hoisted(other)) m.absorbed.push_back(b);
      cur = add->result(0);
    }
  }
  mm.result = cur;
  return m;
}

}  // namespace wf::cpu
