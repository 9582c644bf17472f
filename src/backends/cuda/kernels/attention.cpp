// The attention composites through cuDNN's fused scaled-dot-product attention, built with the
// cuDNN frontend's graph API (Graph::sdpa with its softmax statistics, Graph::sdpa_backward):
//
//   %o, %lse = composite "warpforge.attention"(%q, %k, %v[, %mask])
//   %dq, %dk, %dv = composite "warpforge.attention_grad"(%q, %k, %v[, %mask], %o, %lse, %do)
//     composite_attributes = {scale : f32, mask = "select" | "add" | "none"}, version = 0
//
// q [B,H,Sq,D], k [B,H,Skv,D], v [B,H,Skv,Dv], o and do [B,H,Sq,Dv] of one element type T; lse
// [B,H,Sq] f32, the natural log of each row's sum of exp(scores): cuDNN's Stats [B,H,Sq,1], the
// same memory. The scores are (q . k^T) * scale, then the mask (select: -inf where false; add:
// plus the mask), each dim of the rank-4 mask being its dim of [B,H,Sq,Skv] or 1. Each
// composite means what its decomposition function computes, which the planner inlines where the
// lowering here declines (kUnimplemented): f32 or f64 (cuDNN's fused attention is bf16/f16
// only), types or shapes that do not fit the contract, cuDNN refusing the graph (a head dim it
// lacks, an old cuDNN or GPU), and a build without the frontend.
//
// A forward composite may read q, k or v and write o as [B, S, H, D] (the attribute q_layout,
// k_layout, v_layout or o_layout = "bshd", transforms/attention_layouts.h): cuDNN reads and writes
// those through strides, so the head transposes around the attention do not run. Such an operand
// may hold more heads than it reads (q_heads, k_heads, v_heads = [first, count]: q, k and v as
// heads of one merged projection): cuDNN reads them at the wider row stride, from the first head.
//
// A select mask marked `mask_is_causal` (transforms/causal_masks.h: the compiler evaluated it
// and found it true exactly where key j <= query i) runs as cuDNN's causal attention, which does
// not read the mask and skips the tiles above the diagonal. Other masks become cuDNN's additive
// bias, [1 or B, 1 or H, Sq, Skv] (cuDNN broadcasts the first two dims only, so a mask broadcast
// over Sq or Skv is expanded):
//   - select (i1): 0 where true and a large negative number where false, written into the
//     workspace before each run (attention_bias.cu). Not -inf: cuDNN's softmax goes NaN on the
//     difference of two -inf scores, which a tile of masked scores gives; JAX's cuDNN attention
//     uses the same numbers. exp() of the masked scores is exactly 0 in f32 beside any unmasked
//     one, so a row with an unmasked score gets what the decomposition gives; a fully masked
//     row gets a finite average of v's rows where the decomposition gives NaN.
//   - add: the mask itself, in its own type (T, or f32 declared as such to cuDNN), copied into
//     the workspace only where it broadcasts over Sq or Skv.
// The backward pass asks for cuDNN's deterministic algorithm: reruns give the same bits, as the
// rest of the backend does (a resumed training run reproduces the uninterrupted one).
//
// Graphs are built, checked and planned at lowering time (heuristics A, then the fallback list);
// launch() binds the stream to the device's cuDNN handle under its lock and executes.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel.h"

#if defined(WF_HAVE_CUDNN) && defined(WF_HAVE_CUDNN_FRONTEND)

#include <cudnn_frontend.h>

#include "backends/cuda/kernels/cudnn_graph.h"
#include "backends/cuda/tuning.h"

#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace wf::cuda {
namespace {

namespace fe = cudnn_frontend;

constexpr std::string_view kForward = "warpforge.attention";
constexpr std::string_view kBackward = "warpforge.attention_grad";

enum class MaskKind { kNone, kSelect, kAdd };

// What the composite computes, read from its attributes and types.
struct Signature {
  bool grad = false;
  ElementType t = ElementType::kBF16;
  int64_t b = 0, h = 0, sq = 0, skv = 0, d = 0, dv = 0;
  float scale = 1;
  MaskKind mask = MaskKind::kNone;
  // A select mask the compiler found to be the causal one (mask_is_causal): cuDNN's causal
  // attention runs instead of a bias, and the mask operand is not read.
  bool causal = false;
  std::vector<int64_t> maskShape;
  ElementType maskType = ElementType::kI1;
  // q, k, v and o stored [B, S, H, D] (the composite's *_layout = "bshd"), else [B, H, S, D].
  bool qSeqMajor = false, kSeqMajor = false, vSeqMajor = false, oSeqMajor = false;
  // q, k and v: the heads their operands hold (0: h, all of them) and the first one read.
  std::array<int64_t, 3> storedHeads{}, firstHead{};
};

// [B, H, S, D] as stored: swapped to [B, S, H, D] where `seqMajor`, of `heads` heads where that is
// not 0 (an operand holding more heads than it reads).
std::vector<int64_t> stored(std::vector<int64_t> bhsd, bool seqMajor, int64_t heads = 0) {
  if (heads > 0) bhsd[1] = heads;
  if (seqMajor) std::swap(bhsd[1], bhsd[2]);
  return bhsd;
}

// The strides of [B, H, S, D] stored as `stored` says.
std::vector<int64_t> stridesOf(const std::vector<int64_t>& bhsd, bool seqMajor, int64_t heads = 0) {
  std::vector<int64_t> strides = rowMajorStridesOf(stored(bhsd, seqMajor, heads));
  if (seqMajor) std::swap(strides[1], strides[2]);
  return strides;
}

// Tensor ids in the cuDNN graphs (its variant pack is keyed by them).
enum Uid : int64_t { kQ = 1, kK, kV, kBias, kO, kStats, kDO, kDQ, kDK, kDV };

Expected<Signature> readSignature(const Operation& op) {
  Signature s;
  s.grad = compositeName(op) == kBackward;
  if (const Attribute* version = op.attr("version"); version && version->asInt().value_or(0) != 0)
    return unsupportedOnCuda(op, "attention composite version " + std::to_string(*version->asInt()));
  const Attribute* attrs = op.attr("composite_attributes");
  const Attribute* scale = attrs ? attrs->field("scale") : nullptr;
  const Attribute* mask = attrs ? attrs->field("mask") : nullptr;
  if (!scale || (scale->kind() != Attribute::Kind::kFloat && scale->kind() != Attribute::Kind::kInteger) || !mask ||
      mask->kind() != Attribute::Kind::kString)
    return unsupportedOnCuda(op, "attention composite without a float scale and a string mask in its attributes");
  s.scale = static_cast<float>(scale->kind() == Attribute::Kind::kFloat ? scale->floatValue()
                                                                        : static_cast<double>(scale->intValue()));
  const std::string& m = mask->stringValue();
  if (m == "select") {
    s.mask = MaskKind::kSelect;
  } else if (m == "add") {
    s.mask = MaskKind::kAdd;
  } else if (m != "none") {
    return unsupportedOnCuda(op, "attention mask \"" + m + "\"");
  }
  if (const Attribute* causal = attrs->field("mask_is_causal"))
    s.causal = s.mask == MaskKind::kSelect && causal->kind() == Attribute::Kind::kBool && causal->boolValue();
  for (auto [name, seqMajor] : {std::pair{"q_layout", &s.qSeqMajor}, std::pair{"k_layout", &s.kSeqMajor},
                                std::pair{"v_layout", &s.vSeqMajor}, std::pair{"o_layout", &s.oSeqMajor}}) {
    const Attribute* layout = attrs->field(name);
    if (!layout) continue;
    const bool known = layout->kind() == Attribute::Kind::kString &&
                       (layout->stringValue() == "bshd" || layout->stringValue() == "bhsd");
    if (!known)
      return unsupportedOnCuda(op, std::string("attention ") + name + " other than \"bshd\" or \"bhsd\"");
    *seqMajor = layout->stringValue() == "bshd";
  }
  if (s.grad && (s.qSeqMajor || s.kSeqMajor || s.vSeqMajor || s.oSeqMajor))
    return unsupportedOnCuda(op, "attention gradient composite with [B, S, H, D] layouts");
  const bool seqMajor[3] = {s.qSeqMajor, s.kSeqMajor, s.vSeqMajor};
  static constexpr const char* kHeads[3] = {"q_heads", "k_heads", "v_heads"};
  std::array<int64_t, 3> headCount{};
  for (size_t i = 0; i < 3; ++i) {
    const Attribute* heads = attrs->field(kHeads[i]);
    if (!heads) continue;
    std::optional<std::vector<int64_t>> range = heads->asIntList();
    const Type& x = op.operand(i)->type();
    if (!range || range->size() != 2 || !seqMajor[i] || x.rank() != 4 || (*range)[0] < 0 || (*range)[1] <= 0 ||
        (*range)[0] + (*range)[1] > x.dim(2))
      return unsupportedOnCuda(op, std::string("attention ") + kHeads[i] + " other than [first, count] within " +
                                       x.toString() + " read [B, S, H, D]");
    s.firstHead[i] = (*range)[0];
    headCount[i] = (*range)[1];
    s.storedHeads[i] = x.dim(2);
    // cuDNN reads from 16-byte aligned addresses.
    if (s.firstHead[i] * x.dim(3) * storageBytes(x.elementType()) % 16 != 0)
      return unsupportedOnCuda(op, std::string("attention ") + kHeads[i] +
                                       " from an address that is not 16-byte aligned");
  }
  const size_t hasMask = s.mask == MaskKind::kNone ? 0 : 1;
  const size_t operands = (s.grad ? 6 : 3) + hasMask, results = s.grad ? 3 : 2;
  if (op.numOperands() != operands || op.numResults() != results)
    return unsupportedOnCuda(op, "attention composite with " + std::to_string(op.numOperands()) + " operands and " +
                                     std::to_string(op.numResults()) + " results");
  for (size_t i = 0; i < operands; ++i)
    if (!op.operand(i)->type().isTensor() || !op.operand(i)->type().hasStaticShape())
      return unsupportedOnCuda(op, "attention operand of type " + op.operand(i)->type().toString());
  const Type& q = op.operand(0)->type();
  const Type& k = op.operand(1)->type();
  const Type& v = op.operand(2)->type();
  s.t = q.elementType();
  if (s.t != ElementType::kBF16 && s.t != ElementType::kF16)
    return unsupportedOnCuda(op, "cuDNN's fused attention takes bf16 and f16, not " + std::string(elementTypeName(s.t)));
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4 || k.elementType() != s.t || v.elementType() != s.t)
    return unsupportedOnCuda(op, "attention operands " + q.toString() + ", " + k.toString() + ", " + v.toString());
  s.b = q.dim(0), s.h = headCount[0] > 0 ? headCount[0] : q.dim(s.qSeqMajor ? 2 : 1);
  s.sq = q.dim(s.qSeqMajor ? 1 : 2), s.d = q.dim(3);
  s.skv = k.dim(s.kSeqMajor ? 1 : 2), s.dv = v.dim(3);
  if (k.shape() != stored({s.b, s.h, s.skv, s.d}, s.kSeqMajor, s.storedHeads[1]) ||
      v.shape() != stored({s.b, s.h, s.skv, s.dv}, s.vSeqMajor, s.storedHeads[2]) || headCount[1] != headCount[0] ||
      headCount[2] != headCount[0])
    return unsupportedOnCuda(op, "attention operands " + q.toString() + ", " + k.toString() + ", " + v.toString() +
                                     " (key and value must share the query's batch and heads)");
  if (s.b * s.h * s.sq * s.skv * s.d * s.dv == 0) return unsupportedOnCuda(op, "attention over an empty dimension");
  const Type out = Type::tensor(stored({s.b, s.h, s.sq, s.dv}, s.oSeqMajor), s.t);
  const Type lse = Type::tensor({s.b, s.h, s.sq}, ElementType::kF32);
  if (q.shape() != stored({s.b, s.h, s.sq, s.d}, s.qSeqMajor, s.storedHeads[0]))
    return unsupportedOnCuda(op, "attention query " + q.toString() + " does not fit its heads");
  if (s.grad) {
    const size_t o = 3 + hasMask;
    if (op.operand(o)->type() != out || op.operand(o + 1)->type() != lse || op.operand(o + 2)->type() != out ||
        op.result(0)->type() != q || op.result(1)->type() != k || op.result(2)->type() != v)
      return unsupportedOnCuda(op, "attention gradient types do not fit the contract");
  } else if (op.result(0)->type() != out || op.result(1)->type() != lse) {
    return unsupportedOnCuda(op, "attention results " + op.result(0)->type().toString() + ", " +
                                     op.result(1)->type().toString() + " do not fit the contract");
  }
  if (s.mask != MaskKind::kNone) {
    const Type& mt = op.operand(3)->type();
    s.maskShape = mt.shape();
    s.maskType = mt.elementType();
    const std::vector<int64_t> full = {s.b, s.h, s.sq, s.skv};
    bool broadcasts = mt.rank() == 4;
    for (size_t i = 0; broadcasts && i < 4; ++i) broadcasts = s.maskShape[i] == full[i] || s.maskShape[i] == 1;
    const bool typed = s.mask == MaskKind::kSelect ? s.maskType == ElementType::kI1
                                                   : s.maskType == s.t || s.maskType == ElementType::kF32;
    if (!broadcasts || !typed) return unsupportedOnCuda(op, "attention mask of type " + mt.toString());
  }
  return s;
}

// q, k and v are bf16 or f16 (readSignature); an added mask is of their type or f32.
fe::DataType_t feType(ElementType t) { return cudnnGraphType(t).value_or(fe::DataType_t::FLOAT); }

// The large negative number a false select-mask entry adds to its score (see the top of the file):
// a power of two, exact in T, far below any score, and (in bf16) so large that every masked
// score rounds to the same f32 value.
float maskedScore(ElementType t) { return t == ElementType::kBF16 ? -0x1p41f : -0x1p15f; }

// What attention's errors are named by. A frontend error at lowering time (WF_FE_DECLINE) leaves
// the composite to its decomposition.
constexpr const char* kWhat = "cuDNN attention";

class AttentionKernel final : public OpKernel {
 public:
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (ctx.workspaceBytes < workspaceBytes_) return internalError("attention workspace too small");
    char* workspace = static_cast<char*>(ctx.workspace);
    void* bias = nullptr;
    if (maskOperand_ >= 0) bias = in[static_cast<size_t>(maskOperand_)];
    if (buildsBias_) {
      bias = workspace;
      WF_RETURN_IF_ERROR(launchAttentionBias(ctx.stream, biasPlan_, in[static_cast<size_t>(maskOperand_)], bias));
    }
    // The device's cuDNN handle is shared by its executables: bind the stream and launch as one.
    std::lock_guard<std::mutex> lock(ctx.device->cudnnLaunchMutex());
    for (auto& [uid, address] : pack_) {
      if (uid == kBias) {
        address = bias;
      } else {
        const auto& [isResult, index] = slots_.at(uid);
        address = isResult ? out[index] : in[index];
        if (auto offset = byteOffsets_.find(uid); offset != byteOffsets_.end())
          address = static_cast<char*>(address) + offset->second;
      }
    }
    return executeCudnnGraph(handle_, ctx.stream, *graph_, pack_,
                             cudnnWorkspaceBytes_ > 0 ? workspace + cudnnOffset_ : nullptr, plan_, kWhat);
  }

  std::shared_ptr<fe::graph::Graph> graph_;
  int64_t plan_ = 0;  // the graph's plan that runs (chooseCudnnPlan)
  cudnnHandle_t handle_ = nullptr;
  // The variant pack (tensor id -> address), filled at each launch from `slots_`: for each id,
  // whether it is a result and its index among the operands or results.
  std::unordered_map<int64_t, void*> pack_;
  std::unordered_map<int64_t, std::pair<bool, size_t>> slots_;
  std::unordered_map<int64_t, size_t> byteOffsets_;  // of the first head read, where not 0
  int maskOperand_ = -1;  // the mask's operand index, -1 without a mask
  bool buildsBias_ = false;  // the bias is written into the workspace (at offset 0) first
  AttentionBiasPlan biasPlan_;
  size_t cudnnOffset_ = 0, cudnnWorkspaceBytes_ = 0, workspaceBytes_ = 0;
};

// A graph tensor of `dims`, row-major or, for [B, H, S, D] stored as [B, S, H, D], `seqMajor`.
std::shared_ptr<fe::graph::Tensor_attributes> input(fe::graph::Graph& g, const char* name, Uid uid,
                                                    const std::vector<int64_t>& dims, fe::DataType_t type,
                                                    bool seqMajor = false, int64_t heads = 0) {
  auto attributes = fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims);
  return g.tensor(attributes.set_stride(stridesOf(dims, seqMajor, heads)).set_data_type(type));
}

void output(const std::shared_ptr<fe::graph::Tensor_attributes>& t, Uid uid, const std::vector<int64_t>& dims,
            fe::DataType_t type, bool seqMajor = false) {
  t->set_output(true).set_uid(uid).set_dim(dims).set_stride(stridesOf(dims, seqMajor)).set_data_type(type);
}

// Built graphs by problem (lowerAttention), for the life of the process; guarded by the device's
// cuDNN launch lock (the problem names the handle, which is the device's).
struct BuiltGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  CudnnPlan plan;
};
std::unordered_map<std::string, BuiltGraph>& builtGraphs() {
  static std::unordered_map<std::string, BuiltGraph> graphs;
  return graphs;
}

Expected<std::unique_ptr<OpKernel>> lowerAttention(const Operation& op, LowerContext& ctx) {
  WF_ASSIGN_OR_RETURN(Signature s, readSignature(op));
  WF_RETURN_IF_ERROR(ctx.device.activate());
  auto k = std::make_unique<AttentionKernel>();
  WF_ASSIGN_OR_RETURN(k->handle_, ctx.device.cudnn());
  const size_t hasMask = s.mask == MaskKind::kNone ? 0 : 1;  // the op's mask operand
  const bool hasBias = hasMask && !s.causal;                    // the graph's bias input

  // The bias: the mask itself where cuDNN can read it as is, else one written into the workspace.
  size_t biasBytes = 0;
  std::vector<int64_t> biasDims;
  ElementType biasType = s.t;
  if (hasBias) {
    k->maskOperand_ = 3;
    biasDims = {s.maskShape[0], s.maskShape[1], s.sq, s.skv};
    biasType = s.mask == MaskKind::kSelect ? s.t : s.maskType;
    k->buildsBias_ = s.mask == MaskKind::kSelect || s.maskShape != biasDims;
    if (k->buildsBias_) {
      AttentionBiasPlan& p = k->biasPlan_;
      int64_t strides[kMaxRank];
      if (!broadcastStrides(s.maskShape, biasDims, strides))
        return internalError(op.describe() + ": attention mask does not broadcast");
      std::copy(strides, strides + 4, p.maskStrides);
      std::copy(biasDims.begin(), biasDims.end(), p.dims);
      p.mask = s.maskType;
      p.bias = biasType;
      p.maskedValue = maskedScore(s.t);
      biasBytes = static_cast<size_t>(numElementsOf(biasDims)) * static_cast<size_t>(storageBytes(biasType));
    }
  }

  const std::vector<int64_t> qDims = {s.b, s.h, s.sq, s.d}, kDims = {s.b, s.h, s.skv, s.d},
                             vDims = {s.b, s.h, s.skv, s.dv}, oDims = {s.b, s.h, s.sq, s.dv},
                             statsDims = {s.b, s.h, s.sq, 1};
  const fe::DataType_t io = feType(s.t);
  // One graph per problem and cuDNN handle, shared by the kernels that run it (a BERT-large has
  // 24 attention layers of one shape; building and planning a graph takes tens of milliseconds).
  // Its executions are serialised by the launch lock like every use of the handle.
  std::string shape = std::string(s.grad ? "grad " : "fwd ") + std::to_string(static_cast<int>(s.t)) + " " +
                      std::to_string(static_cast<int>(biasType));
  for (int64_t v : {s.b, s.h, s.sq, s.skv, s.d, s.dv, static_cast<int64_t>(hasBias), static_cast<int64_t>(s.causal),
                    static_cast<int64_t>(s.qSeqMajor), static_cast<int64_t>(s.kSeqMajor),
                    static_cast<int64_t>(s.vSeqMajor), static_cast<int64_t>(s.oSeqMajor), s.storedHeads[0],
                    s.storedHeads[1], s.storedHeads[2]})
    shape += " " + std::to_string(v);
  for (int64_t v : biasDims) shape += " " + std::to_string(v);
  uint32_t scaleBits = 0;
  std::memcpy(&scaleBits, &s.scale, sizeof scaleBits);
  shape += " scale " + std::to_string(scaleBits);
  const std::string problem = std::to_string(reinterpret_cast<uintptr_t>(k->handle_)) + " " + shape;
  // The tensors by id and their bytes, for timing the plans: q, k and v as stored (all their
  // heads), the bias, o, the statistics, and the gradient's tensors.
  const size_t elem = static_cast<size_t>(storageBytes(s.t));
  auto bytesOf = [&](const std::vector<int64_t>& dims, size_t elemBytes) {
    return static_cast<size_t>(numElementsOf(dims)) * elemBytes;
  };
  std::vector<std::pair<int64_t, size_t>> tensorBytes = {
      {kQ, bytesOf(stored(qDims, s.qSeqMajor, s.storedHeads[0]), elem)},
      {kK, bytesOf(stored(kDims, s.kSeqMajor, s.storedHeads[1]), elem)},
      {kV, bytesOf(stored(vDims, s.vSeqMajor, s.storedHeads[2]), elem)},
      {kO, bytesOf(oDims, elem)},
      {kStats, bytesOf(statsDims, sizeof(float))}};
  if (hasBias) tensorBytes.emplace_back(kBias, bytesOf(biasDims, static_cast<size_t>(storageBytes(biasType))));
  if (s.grad)
    for (auto [uid, dims] :
         {std::pair{kDO, oDims}, std::pair{kDQ, qDims}, std::pair{kDK, kDims}, std::pair{kDV, vDims}})
      tensorBytes.emplace_back(uid, bytesOf(dims, elem));
  const double multiplyAdds =
      static_cast<double>(s.b * s.h) * static_cast<double>(s.sq * s.skv) * static_cast<double>(s.d + s.dv);
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  CudnnPlan plan;
  {
    // Building uses the handle (the graph keeps it for planning), which other executables'
    // launches bind streams to.
    std::lock_guard<std::mutex> lock(ctx.device.cudnnLaunchMutex());
    if (auto it = builtGraphs().find(problem); it != builtGraphs().end()) {
      graph = it->second.graph;
      plan = it->second.plan;
    } else try {
      auto q = input(*graph, "q", kQ, qDims, io, s.qSeqMajor, s.storedHeads[0]);
      auto key = input(*graph, "k", kK, kDims, io, s.kSeqMajor, s.storedHeads[1]);
      auto v = input(*graph, "v", kV, vDims, io, s.vSeqMajor, s.storedHeads[2]);
      std::shared_ptr<fe::graph::Tensor_attributes> bias;
      if (hasBias) bias = input(*graph, "bias", kBias, biasDims, feType(biasType));
      if (!s.grad) {
        auto attributes = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(true).set_attn_scale(
            s.scale);
        if (bias) attributes.set_bias(bias);
        if (s.causal) attributes.set_causal_mask(true);
        auto [o, stats] = graph->sdpa(q, key, v, std::move(attributes));
        output(o, kO, oDims, io, s.oSeqMajor);
        output(stats, kStats, statsDims, fe::DataType_t::FLOAT);
      } else {
        auto o = input(*graph, "o", kO, oDims, io);
        auto stats = input(*graph, "stats", kStats, statsDims, fe::DataType_t::FLOAT);
        auto dO = input(*graph, "do", kDO, oDims, io);
        auto attributes = fe::graph::SDPA_backward_attributes()
                              .set_name("attention_grad")
                              .set_attn_scale(s.scale)
                              .set_deterministic_algorithm(true);
        if (bias) attributes.set_bias(bias);
        if (s.causal) attributes.set_causal_mask(true);
        auto [dq, dk, dv] = graph->sdpa_backward(q, key, v, o, dO, stats, std::move(attributes));
        output(dq, kDQ, qDims, io);
        output(dk, kDK, kDims, io);
        output(dv, kDV, vDims, io);
      }
      WF_FE_DECLINE(op, kWhat, graph->validate());
      WF_FE_DECLINE(op, kWhat, graph->build_operation_graph(k->handle_));
      WF_FE_DECLINE(op, kWhat, graph->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
      WF_FE_DECLINE(op, kWhat, graph->check_support());
      const std::string tuned = "cudnnGraph attention " + std::to_string(cudnnGetVersion()) + " " + shape;
      WF_ASSIGN_OR_RETURN(plan, chooseCudnnPlan(op, ctx, k->handle_, *graph, kWhat, tuned, tensorBytes,
                                                multiplyAdds >= kTunedMinMultiplyAdds));
      builtGraphs()[problem] = {graph, plan};
    } catch (const std::exception& e) {
      return unsupportedOnCuda(op, "cuDNN attention: " + std::string(e.what()));
    }
  }

  // Operands and results by tensor id.
  if (!s.grad) {
    k->slots_ = {{kQ, {false, 0}}, {kK, {false, 1}}, {kV, {false, 2}}, {kO, {true, 0}}, {kStats, {true, 1}}};
  } else {
    const size_t o = 3 + hasMask;
    k->slots_ = {{kQ, {false, 0}},     {kK, {false, 1}},  {kV, {false, 2}},  {kO, {false, o}},  {kStats, {false, o + 1}},
                 {kDO, {false, o + 2}}, {kDQ, {true, 0}}, {kDK, {true, 1}}, {kDV, {true, 2}}};
  }
  for (const auto& [uid, slot] : k->slots_) k->pack_[uid] = nullptr;
  // The first head read, D elements per head ([B, S, H, D] rows hold H heads side by side).
  const Uid operandIds[3] = {kQ, kK, kV};
  const int64_t headElements[3] = {s.d, s.d, s.dv};
  for (size_t i = 0; i < 3; ++i)
    if (s.firstHead[i] > 0)
      k->byteOffsets_[operandIds[i]] =
          static_cast<size_t>(s.firstHead[i] * headElements[i]) * static_cast<size_t>(storageBytes(s.t));
  if (hasBias) k->pack_[kBias] = nullptr;
  k->cudnnOffset_ = (biasBytes + 255) / 256 * 256;
  k->cudnnWorkspaceBytes_ = static_cast<size_t>(plan.workspace);
  k->plan_ = plan.index;
  k->workspaceBytes_ = k->cudnnOffset_ + k->cudnnWorkspaceBytes_;
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, k->workspaceBytes_);
  k->graph_ = std::move(graph);
  return std::unique_ptr<OpKernel>(std::move(k));
}

}  // namespace

bool fusedAttentionBuilt() { return true; }

void registerAttentionLowerings(CudaKernelRegistry& r) {
  r.addComposite(std::string(kForward), lowerAttention);
  r.addComposite(std::string(kBackward), lowerAttention);
}

}  // namespace wf::cuda

#else  // without cuDNN or its frontend

namespace wf::cuda {

bool fusedAttentionBuilt() { return false; }

// The composites are still registered, so that a program keeps them whole for the planner,
// which counts them as decomposed (ExecutableStats::decomposedComposites) and runs their
// decompositions.
void registerAttentionLowerings(CudaKernelRegistry& r) {
  auto decline = [](const Operation& op, LowerContext&) -> Expected<std::unique_ptr<OpKernel>> {
    return unsupportedOnCuda(op, "this build has no cuDNN frontend: fused attention runs as its decomposition");
  };
  r.addComposite("warpforge.attention", decline);
  r.addComposite("warpforge.attention_grad", decline);
}

}  // namespace wf::cuda

#endif
