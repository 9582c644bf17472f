#include "backends/cuda/codegen/fusion.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "eval/shape_util.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/codegen/nvrtc.h"
#include "eval/element_math.h"

namespace wf::cuda {
namespace {

// kReduce: a row reduction, which joins the groups of its row shape; kRunsReduce: a runs
// reduction (runsReduceInfo), which only roots a group of its own.
enum class FuseKind { kNone, kCompute, kMove, kReduce, kRunsReduce };


enum class RowReduce { kSum, kProd, kMax, kMin };

// A reduce that fusion takes: one float operand and a rank-0 init, a body that is one add,
// multiply, maximum or minimum of its two arguments. Its kind, or nothing.
std::optional<RowReduce> fusibleReduceKind(const Operation& op) {
  if (op.code() != OpCode::Reduce || op.numOperands() != 2 || op.numResults() != 1 || op.numRegions() != 1)
    return std::nullopt;
  const Type& in = op.operand(0)->type();
  if (!in.isTensor() || !in.hasStaticShape() || !isFloat(in.elementType()) || op.operand(1)->type().rank() != 0)
    return std::nullopt;
  const ElementType et = in.elementType();
  if (et != ElementType::kF32 && et != ElementType::kBF16 && et != ElementType::kF16 && et != ElementType::kF64)
    return std::nullopt;
  if (op.result(0)->type().elementType() != et || op.operand(1)->type().elementType() != et) return std::nullopt;
  if (op.region(0).empty()) return std::nullopt;
  const Block& b = op.region(0).front();
  if (b.numArguments() != 2 || b.operations().size() != 2) return std::nullopt;
  const Operation& f = *b.operations()[0];
  const Operation& ret = *b.operations()[1];
  if (f.numOperands() != 2 || f.numResults() != 1 || ret.numOperands() != 1 || ret.operand(0) != f.result(0))
    return std::nullopt;
  if (!((f.operand(0) == b.argument(0) && f.operand(1) == b.argument(1)) ||
        (f.operand(0) == b.argument(1) && f.operand(1) == b.argument(0))))
    return std::nullopt;
  switch (f.code()) {
    case OpCode::Add: return RowReduce::kSum;
    case OpCode::Multiply: return RowReduce::kProd;
    case OpCode::Maximum: return RowReduce::kMax;
    case OpCode::Minimum: return RowReduce::kMin;
    default: return std::nullopt;
  }
}

// Which dims of a fusible reduce's operand it reduces, or nothing.
std::optional<std::vector<bool>> reducedDims(const Operation& op) {
  Expected<std::vector<int64_t>> dims = cpu::intListAttr(op, "dimensions");
  if (!dims || dims->empty()) return std::nullopt;
  std::vector<bool> reduced(static_cast<size_t>(op.operand(0)->type().rank()), false);
  for (int64_t d : *dims) {
    if (d < 0 || static_cast<size_t>(d) >= reduced.size() || reduced[static_cast<size_t>(d)]) return std::nullopt;
    reduced[static_cast<size_t>(d)] = true;
  }
  return reduced;
}

// A reduce that row fusion takes: a fusible reduce over the trailing dims of the operand.
struct ReduceInfo {
  RowReduce kind;
  std::vector<int64_t> rows, cols;  // operand shape split at the first reduced dim
};

std::optional<ReduceInfo> rowReduceInfo(const Operation& op) {
  std::optional<RowReduce> kind = fusibleReduceKind(op);
  if (!kind) return std::nullopt;
  std::optional<std::vector<bool>> reduced = reducedDims(op);
  if (!reduced) return std::nullopt;
  const std::vector<int64_t>& shape = op.operand(0)->type().shape();
  size_t split = reduced->size();
  while (split > 0 && (*reduced)[split - 1]) --split;
  for (size_t d = 0; d < split; ++d)
    if ((*reduced)[d]) return std::nullopt;
  ReduceInfo info;
  info.kind = *kind;
  info.rows.assign(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(split));
  info.cols.assign(shape.begin() + static_cast<std::ptrdiff_t>(split), shape.end());
  if (numElementsOf(info.cols) == 0) return std::nullopt;
  return info;
}

// A reduce that runs fusion takes: a fusible reduce whose operand's innermost dim is reduced and
// that keeps a dim (of more than one element) after a reduced one, as a batch norm's statistics
// of NCHW do (reduced over N, H and W). Each result element then reads runs of contiguous
// elements, and the kernel (generateRuns) computes the reduce's operand as it reads it.
struct RunsInfo {
  RowReduce kind;
  std::vector<bool> reduced;
  int64_t numOut = 1, numRed = 1;
};

std::optional<RunsInfo> runsReduceInfo(const Operation& op) {
  std::optional<RowReduce> kind = fusibleReduceKind(op);
  if (!kind) return std::nullopt;
  std::optional<std::vector<bool>> reduced = reducedDims(op);
  if (!reduced || !reduced->back()) return std::nullopt;
  const std::vector<int64_t>& shape = op.operand(0)->type().shape();
  RunsInfo info;
  info.kind = *kind;
  info.reduced = *reduced;
  bool seenReduced = false, keptAfterReduced = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    (info.reduced[d] ? info.numRed : info.numOut) *= shape[d];
    if (info.reduced[d]) seenReduced = true;
    else if (seenReduced && shape[d] != 1) keptAfterReduced = true;
  }
  // Enough elements per result that a block of threads has work: fewer go to reduce.cu.
  if (!keptAfterReduced || info.numRed < 1024 || info.numOut == 0) return std::nullopt;
  return info;
}

bool isFusibleType(const Type& t) {
  if (!t.isTensor() || !t.hasStaticShape()) return false;
  switch (t.elementType()) {
    case ElementType::kI1:
    case ElementType::kSI8: case ElementType::kSI16: case ElementType::kSI32: case ElementType::kSI64:
    case ElementType::kUI8: case ElementType::kUI16: case ElementType::kUI32: case ElementType::kUI64:
    case ElementType::kBF16: case ElementType::kF16: case ElementType::kF32: case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

// The ops of element_math.h's lists: each one's functor (as generated code names it) and the
// element categories it takes.
struct SharedOp {
  OpCode code;
  const char* functor;
  unsigned cats;
  int arity;
};
constexpr SharedOp kSharedOps[] = {
#define WF_UNARY(code, F) {OpCode::code, "wf::em::" #F, em::F::kCats, 1},
#define WF_BINARY(code, F) {OpCode::code, "wf::em::" #F, em::F::kCats, 2},
    WF_EM_UNARY_OPS(WF_UNARY) WF_EM_CHLO_UNARY_OPS(WF_UNARY)
    WF_EM_BINARY_OPS(WF_BINARY) WF_EM_CHLO_BINARY_OPS(WF_BINARY)
#undef WF_UNARY
#undef WF_BINARY
};

const SharedOp* sharedOp(OpCode code) {
  for (const SharedOp& o : kSharedOps)
    if (o.code == code) return &o;
  return nullptr;
}

// Every float op of the lists fuses.
bool isFloatOp(OpCode c) {
  const SharedOp* o = sharedOp(c);
  return o && (o->cats & em::kFloat);
}
// Integer and boolean ops that fuse. Their functors compute in the element's own C type here
// (the one-op kernels compute in 64 bits), which gives the same bits; division, remainder,
// shifts and powers keep their own kernels for now.
bool isIntBinary(OpCode c) {
  return c == OpCode::Add || c == OpCode::Subtract || c == OpCode::Multiply || c == OpCode::Maximum ||
         c == OpCode::Minimum || c == OpCode::And || c == OpCode::Or || c == OpCode::Xor;
}
bool isBoolBinary(OpCode c) { return c == OpCode::And || c == OpCode::Or || c == OpCode::Xor; }

// A constant whose elements are all the same bytes.
bool isSplatConstant(const Operation& op) {
  const Attribute* value = op.attr("value");
  if (value && value->splatValue()) return true;  // dense<v> of a large shape: never made whole
  if (!value || !value->literal()) return false;
  const Literal& lit = *value->literal();
  const int64_t n = lit.numElements();
  const size_t bytes = static_cast<size_t>(storageBytes(lit.elementType()));
  if (n == 0) return false;
  for (int64_t i = 1; i < n; ++i)
    if (std::memcmp(lit.data(), lit.data() + static_cast<size_t>(i) * bytes, bytes) != 0) return false;
  return true;
}

// An embedding lookup: gather of whole rows of a [rows, width] table by indices of shape
// [batch..., 1] into [batch..., width] (what the exporter writes for nn.Embedding). Fused, the
// table's dtype conversion happens on the rows read instead of on the whole table.
bool isRowGather(const Operation& op) {
  if (op.code() != OpCode::Gather || op.numOperands() != 2 || op.numResults() != 1) return false;
  const Type& table = op.operand(0)->type();
  const Type& idx = op.operand(1)->type();
  const Type& out = op.result(0)->type();
  if (!table.hasStaticShape() || !idx.hasStaticShape() || !out.hasStaticShape() || table.rank() != 2 ||
      idx.rank() < 1 || idx.shape().back() != 1 || !isInteger(idx.elementType()) || out.rank() != idx.rank())
    return false;
  const Attribute* dn = op.attr("dimension_numbers");
  if (!dn) return false;
  auto list = [&](const char* name) -> std::vector<int64_t> {
    const Attribute* f = dn->field(name);
    if (!f) return {};
    auto v = f->asIntList();
    return v ? *v : std::vector<int64_t>{};
  };
  const Attribute* ivd = dn->field("index_vector_dim");
  if (!ivd || !ivd->asInt() || *ivd->asInt() != idx.rank() - 1) return false;
  if (list("offset_dims") != std::vector<int64_t>{out.rank() - 1} || list("collapsed_slice_dims") != std::vector<int64_t>{0} ||
      list("start_index_map") != std::vector<int64_t>{0} || !list("operand_batching_dims").empty())
    return false;
  Expected<std::vector<int64_t>> sizes = cpu::intListAttr(op, "slice_sizes");
  if (!sizes || *sizes != std::vector<int64_t>{1, table.shape()[1]}) return false;
  for (int64_t d = 0; d + 1 < idx.rank(); ++d)
    if (idx.shape()[static_cast<size_t>(d)] != out.shape()[static_cast<size_t>(d)]) return false;
  return out.shape().back() == table.shape()[1];
}

// A concatenate of more operands keeps its own copies (each element reads every operand).
constexpr size_t kMaxFusedConcatOperands = 4;

FuseKind fuseKind(const Operation& op) {
  if (op.code() == OpCode::Reduce)
    return rowReduceInfo(op) ? FuseKind::kReduce : runsReduceInfo(op) ? FuseKind::kRunsReduce : FuseKind::kNone;
  if (op.code() == OpCode::Gather)
    return isRowGather(op) && isFusibleType(op.operand(0)->type()) && isFusibleType(op.operand(1)->type())
               ? FuseKind::kMove
               : FuseKind::kNone;
  if (op.numResults() != 1 || op.numRegions() != 0) return FuseKind::kNone;
  const Type& rt = op.result(0)->type();
  if (!isFusibleType(rt)) return FuseKind::kNone;
  for (const Value* v : op.operands())
    if (!isFusibleType(v->type())) return FuseKind::kNone;
  const ElementType et = rt.elementType();
  const OpCode c = op.code();
  switch (c) {
    case OpCode::BroadcastInDim:
    case OpCode::Transpose:
    case OpCode::Reshape:
    case OpCode::Slice:
    case OpCode::Iota:
      return FuseKind::kMove;
    case OpCode::Concatenate:
      // Read from its operands where it is used (RoPE's rotate_half: the halves of q, negated
      // and swapped), rather than copied into a buffer of its own operand by operand.
      return op.numOperands() <= kMaxFusedConcatOperands ? FuseKind::kMove : FuseKind::kNone;
    case OpCode::Constant:
      return isSplatConstant(op) ? FuseKind::kMove : FuseKind::kNone;
    case OpCode::Compare: {
      const Attribute* t = op.attr("compare_type");
      if (t && t->stringValue() == "TOTALORDER") return FuseKind::kNone;
      return op.attr("comparison_direction") ? FuseKind::kCompute : FuseKind::kNone;
    }
    case OpCode::Select:
    case OpCode::Clamp:
      return FuseKind::kCompute;
    case OpCode::Convert: {
      const ElementType from = op.operand(0)->type().elementType();
      // float -> integer conversions (saturation, NaN) keep their own kernel.
      if (isFloat(from) && isInteger(et)) return FuseKind::kNone;
      // Widening a float is exact and costs less to redo than the wider copy costs to store and
      // read back (a bf16 activation that a batch norm reads in f32 for its statistics, its
      // normalisation and its gradients): every group that reads it converts it for itself.
      if (isFloat(from) && isFloat(et) && storageBytes(from) < storageBytes(et)) return FuseKind::kMove;
      return FuseKind::kCompute;
    }
    default:
      break;
  }
  if (isFloat(et)) return isFloatOp(c) ? FuseKind::kCompute : FuseKind::kNone;
  if (isBoolean(et)) return (c == OpCode::Not || isBoolBinary(c)) ? FuseKind::kCompute : FuseKind::kNone;
  if (c == OpCode::Not || c == OpCode::Negate || c == OpCode::Abs || isIntBinary(c)) return FuseKind::kCompute;
  return FuseKind::kNone;
}

// --- planning ---------------------------------------------------------------------------------

struct UseInfo {
  int uses = 0;             // operand slots of top-level ops that read the value
  bool needsBuffer = false; // read by a nested region, the terminator, or a tap
  std::vector<int> users;   // block positions of the top-level ops reading it (or holding a reader)
};

// Values read inside the regions of `op` (a while or if body capturing them, `op` at block
// position `at`) need buffers, and keep their producers alive.
void countNestedUses(const Operation& op, int at, std::unordered_map<const Value*, UseInfo>& info,
                     std::unordered_set<const Value*>& live) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        for (const Value* v : inner->operands()) {
          info[v].needsBuffer = true;
          info[v].users.push_back(at);
          live.insert(v);
        }
        countNestedUses(*inner, at, info, live);
      }
}

}  // namespace

bool isFusible(const Operation& op) { return fuseKind(op) != FuseKind::kNone; }

bool FusionGroup::hasReduce() const {
  for (const Operation* op : ops)
    if (op->code() == OpCode::Reduce) return true;
  return false;
}

bool FusionGroup::reducesRuns() const { return root()->code() == OpCode::Reduce && runsReduceInfo(*root()).has_value(); }

FusionPlan planFusion(const Block& block, const std::unordered_set<const Value*>& materialize,
                      const FusionOptions& options) {
  FusionPlan plan;
  const auto& ops = block.operations();
  std::unordered_map<const Operation*, int> position;
  std::unordered_map<const Value*, UseInfo> uses;
  // Uses by live ops only: a fusible op none of whose results is used (the mean and inverse
  // deviation a norm also returns, reshaped and dropped) needs no step, and its reads must not
  // keep its producers from fusing.
  std::unordered_set<const Value*> liveValues(materialize.begin(), materialize.end());
  for (size_t i = ops.size(); i-- > 0;) {
    const Operation& op = *ops[i];
    position[&op] = static_cast<int>(i);
    const bool isTerminator = op.code() == OpCode::FuncReturn || op.code() == OpCode::Return;
    bool live = isTerminator || !isFusible(op) || op.numResults() == 0;
    for (size_t r = 0; r < op.numResults() && !live; ++r) live = liveValues.count(op.result(r)) > 0;
    if (!live) {
      plan.absorbed.insert(&op);
      continue;
    }
    for (const Value* v : op.operands()) {
      liveValues.insert(v);
      UseInfo& u = uses[v];
      ++u.uses;
      u.users.push_back(static_cast<int>(i));
      if (isTerminator || !isFusible(op)) u.needsBuffer = true;
    }
    countNestedUses(op, static_cast<int>(i), uses, liveValues);
  }
  for (const Value* v : materialize) uses[v].needsBuffer = true;
  std::unordered_map<const Value*, int> absorbedUses;
  // Values a planned group reads from memory. A move op (or work recomputed per user) that a
  // group computes for itself reads its operands there; where such an operand's only user is
  // that op, the op's own group must not absorb the operand's producer, or nothing would store
  // it. Groups are planned from the block's end, so the readers come first.
  std::unordered_set<const Value*> readFromMemory;

  auto producerInBlock = [&](const Value* v) -> const Operation* {
    const Operation* p = v->definingOp();
    return p && p->parentBlock() == &block ? p : nullptr;
  };

  // Cheap elementwise work with several users that every group using it computes for itself,
  // as it does move ops, when that reads no more bytes per element than storing the value would
  // write: the f32 values a bf16 network's batch norms compute from its bf16 activations (the
  // centred activation, the incoming gradient times the scale), each read by several
  // reductions and by the next layer's input. The bytes are those of the stored values the work
  // reads at full size (a broadcast of a much smaller value counts nothing), up to a few ops
  // deep, so that recomputation stays bounded.
  std::map<std::pair<const Value*, int>, int64_t> leafBytesMemo;  // by value and depth
  std::function<int64_t(const Value*, int)> leafBytes = [&](const Value* v, int depth) -> int64_t {
    constexpr int64_t kTooMany = int64_t{1} << 20;
    constexpr int kMaxDepth = 4;
    if (v->type().rank() == 0) return 0;
    const int64_t own = storageBytes(v->type().elementType());
    const Operation* p = producerInBlock(v);
    if (!p || uses[v].needsBuffer) return own;
    if (auto it = leafBytesMemo.find({v, depth}); it != leafBytesMemo.end()) return it->second;
    int64_t bytes = own;
    const FuseKind kind = fuseKind(*p);
    const OpCode c = p->code();
    if (c == OpCode::Constant || c == OpCode::Iota) {
      bytes = kind == FuseKind::kMove ? 0 : own;
    } else if (c == OpCode::BroadcastInDim && kind == FuseKind::kMove) {
      bytes = p->operand(0)->type().numElements() * 16 <= v->type().numElements() ? 0 : leafBytes(p->operand(0), depth + 1);
    } else if (depth < kMaxDepth && kind != FuseKind::kNone && kind != FuseKind::kReduce &&
               kind != FuseKind::kRunsReduce &&
               (c == OpCode::Convert || c == OpCode::Add || c == OpCode::Subtract || c == OpCode::Multiply ||
                c == OpCode::Negate || c == OpCode::Abs || c == OpCode::Maximum || c == OpCode::Minimum ||
                c == OpCode::Select || c == OpCode::Compare || c == OpCode::Clamp)) {
      bytes = 0;
      for (const Value* o : p->operands()) bytes = std::min(kTooMany, bytes + leafBytes(o, depth + 1));
    }
    return leafBytesMemo[{v, depth}] = bytes;
  };
  // Values computed from constant arguments and constants alone (FusionOptions::constantArguments).
  std::unordered_map<const Value*, bool> constantMemo;
  std::function<bool(const Value*)> computedFromConstants = [&](const Value* v) -> bool {
    if (v->isBlockArgument()) return options.constantArguments.count(v) > 0;
    if (auto it = constantMemo.find(v); it != constantMemo.end()) return it->second;
    const Operation* p = producerInBlock(v);
    bool constant = p && p->numRegions() == 0 && p->code() != OpCode::RngBitGenerator && p->code() != OpCode::Rng;
    for (size_t i = 0; constant && i < p->numOperands(); ++i) constant = computedFromConstants(p->operand(i));
    return constantMemo[v] = constant;
  };
  // A broadcast of a value worth computing once, at its own shape, before the run: computed
  // (not only moved or widened) from constant arguments, at most 1/16 of the broadcast's size.
  auto hoistableBeneathBroadcast = [&](const Operation& broadcast, const Operation& p) {
    if (broadcast.code() != OpCode::BroadcastInDim || options.constantArguments.empty()) return false;
    const Value* v = p.result(0);
    return fuseKind(p) == FuseKind::kCompute && p.numResults() == 1 && v->type().rank() > 0 &&
           v->type().numElements() * 16 <= broadcast.result(0)->type().numElements() && computedFromConstants(v);
  };
  // A vector concatenated from values computed from constant arguments (the biases of merged
  // products, transforms/merge_products.h): computed once and read from memory, where a bias
  // epilogue (kernels/dot.h) finds it in one buffer.
  auto constantVectorConcat = [&](const Operation& p) {
    return p.code() == OpCode::Concatenate && !options.constantArguments.empty() && p.numResults() == 1 &&
           p.result(0)->type().rank() == 1 && computedFromConstants(p.result(0));
  };
  auto recomputedPerUser = [&](const Operation& p) {
    if (fuseKind(p) != FuseKind::kCompute || p.numResults() != 1) return false;
    const Value* v = p.result(0);
    // A value stored anyway (an op that is not fused reads it) is read, not recomputed.
    if (uses[v].uses < 2 || uses[v].needsBuffer || !isFloat(v->type().elementType())) return false;
    return leafBytes(v, 0) <= storageBytes(v->type().elementType());
  };

  // Grows a group from `root`; returns its members and the uses it absorbs. With
  // `allowReduce`, reductions over the trailing dims of one row shape may join (row fusion).
  // With `allowSide` too, values that must be stored anyway may join as side outputs (`sides`):
  // the group writes them beside its root (see FusionGroup::sideOutputs).
  auto grow = [&](const Operation& root, int maxOps, bool allowReduce, bool allowSide,
                  std::vector<const Operation*>& members, std::vector<const Operation*>& sides,
                  std::vector<const Value*>& absorbedEdges) {
    std::unordered_set<const Operation*> inGroup{&root};
    std::unordered_set<const Operation*> exclusive{&root};  // computed for this group only
    std::vector<const Operation*> work{&root};
    members = {&root};
    sides.clear();
    absorbedEdges.clear();
    const std::vector<int64_t>& rootShape = root.result(0)->type().shape();
    const int64_t rootElements = root.result(0)->type().numElements();
    std::optional<ReduceInfo> sig = root.code() == OpCode::Reduce ? rowReduceInfo(root) : std::nullopt;
    // A reduction may join if its row shape is the group's (the root is rows x cols, as that
    // shape or reshaped with the same elements, or it is rows).
    auto reduceFits = [&](const Operation& p) {
      if (!allowReduce) return false;
      std::optional<ReduceInfo> info = rowReduceInfo(p);
      if (!info) return false;
      if (sig) return info->rows == sig->rows && info->cols == sig->cols;
      return rootElements == numElementsOf(info->rows) * numElementsOf(info->cols) || rootShape == info->rows;
    };
    // Producers that could join as side outputs: their value is stored for readers outside.
    std::vector<const Operation*> sideCandidates;
    // A side output is elementwise work of the root's element count (written at the root's
    // linear index), read outside the group only by ops after the root (the group runs there).
    // Readers through members that other groups compute for themselves too (move ops, cheap
    // work recomputed per user) count as readers: such a group reads the stored value.
    auto sideFits = [&](const Operation& p) {
      if (!allowSide || fuseKind(p) != FuseKind::kCompute || p.numResults() != 1 ||
          p.result(0)->type().numElements() != rootElements || members.size() >= static_cast<size_t>(maxOps))
        return false;
      std::vector<const Value*> readValues = {p.result(0)};
      std::unordered_set<const Value*> seen;
      while (!readValues.empty()) {
        const Value* v = readValues.back();
        readValues.pop_back();
        if (!seen.insert(v).second) continue;
        for (int at : uses[v].users) {
          const Operation* user = ops[static_cast<size_t>(at)].get();
          if (!inGroup.count(user)) {
            if (at <= position[&root]) return false;
          } else if (!exclusive.count(user) && user->numResults() == 1) {
            readValues.push_back(user->result(0));
          }
        }
      }
      return true;
    };
    auto add = [&](const Operation* p, bool isExclusive) {
      inGroup.insert(p);
      members.push_back(p);
      work.push_back(p);
      if (isExclusive) exclusive.insert(p);
      if (p->code() == OpCode::Reduce && !sig) sig = rowReduceInfo(*p);
    };
    // Computing producers with several users, or read through a move op with several users.
    std::vector<const Operation*> pending;
    for (;;) {
      while (!work.empty()) {
        const Operation* m = work.back();
        work.pop_back();
        for (const Value* v : m->operands()) {
          const Operation* p = producerInBlock(v);
          if (!p) continue;
          if (inGroup.count(p)) {
            absorbedEdges.push_back(v);
            continue;
          }
          if (uses[v].needsBuffer || readFromMemory.count(v)) {
            if (allowSide) sideCandidates.push_back(p);
            continue;
          }
          // Read from memory, computed once.
          if (hoistableBeneathBroadcast(*m, *p) || constantVectorConcat(*p)) continue;
          const FuseKind kind = fuseKind(*p);
          if (kind == FuseKind::kNone || kind == FuseKind::kRunsReduce || (kind == FuseKind::kReduce && !allowReduce))
            continue;
          if (static_cast<int>(members.size()) >= maxOps) continue;
          if (kind == FuseKind::kMove || recomputedPerUser(*p)) {
            add(p, exclusive.count(m) && uses[v].uses == 1);
            absorbedEdges.push_back(v);
          } else if (kind == FuseKind::kReduce && !reduceFits(*p)) {
            continue;
          } else if (uses[v].uses == 1 && exclusive.count(m)) {
            // The group is the producer's single user and computes the consumer for itself
            // alone (no duplicated math through a shared broadcast).
            add(p, true);
            absorbedEdges.push_back(v);
          } else if (uses[v].uses == 1 && p->code() == OpCode::Convert && m->code() == OpCode::Gather &&
                     m->operand(0) == v) {
            // An embedding table read through a dtype conversion (a bf16 table a low-precision
            // export computes on in f32): each group that gathers rows converts the rows it
            // reads, instead of one step converting the whole table into a second copy of it.
            add(p, false);
            absorbedEdges.push_back(v);
          } else if (std::find(pending.begin(), pending.end(), p) == pending.end()) {
            pending.push_back(p);
          }
        }
      }
      // How many operand slots of members read `v`, and whether every one of those members is
      // exclusive.
      auto readsInside = [&](const Value* v, bool& allExclusive) {
        int inside = 0;
        allExclusive = true;
        for (const Operation* m : members)
          for (const Value* o : m->operands())
            if (o == v) {
              ++inside;
              allExclusive = allExclusive && exclusive.count(m);
            }
        return inside;
      };
      bool grew = false;
      // A move op with several users (a reshape both halves of a GELU read) is computed for this
      // group alone once all its users are exclusive members: then its producers may join too.
      for (const Operation* p : members) {
        if (exclusive.count(p) || (fuseKind(*p) != FuseKind::kMove && !recomputedPerUser(*p))) continue;
        bool allExclusive = false;
        const Value* v = p->result(0);
        if (readsInside(v, allExclusive) != uses[v].uses || !allExclusive) continue;
        exclusive.insert(p);
        grew = true;
      }
      // A producer with several users joins once all of them are exclusive members.
      for (const Operation* p : pending) {
        if (inGroup.count(p) || static_cast<int>(members.size()) >= maxOps) continue;
        if (p->code() == OpCode::Reduce && !reduceFits(*p)) continue;
        const Value* v = p->result(0);
        bool allExclusive = false;
        const int inside = readsInside(v, allExclusive);
        if (inside != uses[v].uses || !allExclusive) continue;
        add(p, true);
        for (int k = 0; k < inside; ++k) absorbedEdges.push_back(v);
        grew = true;
      }
      // Once nothing else joins, a value stored anyway (or a producer with users outside) may
      // join as a side output: then its producers may join too (a pre-norm residual sum and the
      // norm's reductions over it, a layer norm's f32 output beside its bf16 copy).
      if (!grew) {
        sideCandidates.insert(sideCandidates.end(), pending.begin(), pending.end());
        for (const Operation* p : sideCandidates) {
          if (inGroup.count(p) || !sideFits(*p)) continue;
          // (Its readers inside may be members that other groups compute too: those read the
          // stored value, so they need not all be exclusive.)
          bool allExclusiveUnused = false;
          const int inside = readsInside(p->result(0), allExclusiveUnused);
          add(p, true);
          sides.push_back(p);
          for (int k = 0; k < inside; ++k) absorbedEdges.push_back(p->result(0));
          grew = true;
        }
        sideCandidates.clear();
      }
      if (!grew) break;
    }
    std::sort(members.begin(), members.end(),
              [&](const Operation* a, const Operation* b) { return position[a] < position[b]; });
  };

  std::vector<FusionGroup> reversed;
  for (size_t i = ops.size(); i-- > 0;) {
    const Operation& op = *ops[i];
    const FuseKind kind = fuseKind(op);
    if (kind == FuseKind::kNone || plan.absorbed.count(&op)) continue;
    const Value* v = op.result(0);
    const UseInfo& u = uses[v];
    if (!u.needsBuffer && u.uses > 0 && absorbedUses[v] >= u.uses && !readFromMemory.count(v)) {
      plan.absorbed.insert(&op);
      continue;
    }
    // Reshapes stay aliases of their operand's buffer and splat constants stay uploaded once;
    // neither is worth a kernel of its own. A reshape kept so is read from memory by whatever
    // reads it: its operand must be stored, even where a group that computes the reshape for
    // itself counted its own read of that operand as absorbed.
    if (op.code() == OpCode::Reshape) {
      readFromMemory.insert(op.operand(0));
      continue;
    }
    if (op.code() == OpCode::Constant) continue;
    std::vector<const Operation*> members, sides;
    std::vector<const Value*> edges;
    FusionGroup group;
    // A runs reduction roots a group of the elementwise work before it, no other reduction.
    const bool runsRoot = kind == FuseKind::kRunsReduce;
    bool allowReduce = !runsRoot;
    // Side outputs: a row group writes them in its last pass over the row, a loop group beside
    // its root (a residual sum stored in f32 for the next block and rounded to bf16 for the next
    // convolution, in one pass).
    bool allowSide = allowReduce && op.code() != OpCode::Reduce;
    for (int maxOps = options.maxOps;; maxOps = std::max(1, maxOps / 2)) {
      grow(op, maxOps, allowReduce, allowSide, members, sides, edges);
      group.ops = members;
      // A loop kernel writes a side output at its root's coordinates: it must have the root's
      // shape (a row group writes it at the root's linear index, any shape of that many
      // elements).
      bool sidesFit = true;
      for (const Operation* side : sides)
        sidesFit = sidesFit && (group.hasReduce() || side->result(0)->type().shape() == op.result(0)->type().shape());
      if (!sidesFit) {
        allowSide = false;
        maxOps = options.maxOps * 2;
        continue;
      }
      std::sort(sides.begin(), sides.end(),
                [&](const Operation* a, const Operation* b) { return position[a] < position[b]; });
      group.sideOutputs = sides;
      group.inputs.clear();
      std::unordered_set<const Operation*> set(members.begin(), members.end());
      for (const Operation* m : members)
        for (const Value* in : m->operands()) {
          const Operation* p = in->definingOp();
          if ((!p || !set.count(p)) && std::find(group.inputs.begin(), group.inputs.end(), in) == group.inputs.end())
            group.inputs.push_back(in);
        }
      const bool fits = static_cast<int>(group.inputs.size()) <= options.maxInputs;
      // A row group whose reductions the code generator cannot place (a reduction's result
      // read at other coordinates than its row) is planned again without reductions.
      if (fits && group.hasReduce() && allowReduce && !generateFusedKernel(group, "probe")) {
        if (allowSide && !sides.empty()) {  // first without side outputs
          allowSide = false;
          maxOps = options.maxOps * 2;
          continue;
        }
        allowReduce = allowSide = false;
        if (op.code() == OpCode::Reduce) break;
        maxOps = options.maxOps * 2;
        continue;
      }
      if (fits || maxOps == 1) break;
    }
    if (static_cast<int>(group.inputs.size()) > options.maxInputs) continue;  // the op's own kernel
    if (op.code() == OpCode::Reduce && !runsRoot && !allowReduce) continue;
    // A runs reduction that absorbed nothing keeps reduce.cu's kernel (which sizes its slices to
    // the device), as does one the code generator cannot write.
    if (runsRoot && (members.size() == 1 || !generateFusedKernel(group, "probe"))) continue;
    for (const Value* e : edges) ++absorbedUses[e];
    for (const Operation* side : group.sideOutputs) plan.absorbed.insert(side);  // stored by the group
    readFromMemory.insert(group.inputs.begin(), group.inputs.end());
    reversed.push_back(std::move(group));
  }
  for (size_t i = reversed.size(); i-- > 0;) {
    plan.groupOfRoot[reversed[i].root()] = static_cast<int>(plan.groups.size());
    plan.groups.push_back(std::move(reversed[i]));
  }
  return plan;
}

// --- code generation --------------------------------------------------------------------------

namespace {

const char* storageCType(ElementType t) {
  switch (t) {
    case ElementType::kI1: return "unsigned char";
    case ElementType::kSI8: return "signed char";
    case ElementType::kSI16: return "short";
    case ElementType::kSI32: return "int";
    case ElementType::kSI64: return "long long";
    case ElementType::kUI8: return "unsigned char";
    case ElementType::kUI16: return "unsigned short";
    case ElementType::kUI32: return "unsigned int";
    case ElementType::kUI64: return "unsigned long long";
    case ElementType::kBF16: case ElementType::kF16: return "unsigned short";
    case ElementType::kF32: return "float";
    case ElementType::kF64: return "double";
    default: return nullptr;
  }
}

const char* computeCType(ElementType t) {
  switch (t) {
    case ElementType::kI1: return "bool";
    case ElementType::kBF16: case ElementType::kF16: case ElementType::kF32: return "float";
    default: return storageCType(t);
  }
}

// The element math (eval/element_math.h, the precompiled kernels' functors) and the helpers of
// the row kernels.
const std::string& preludeText() {
  static const std::string text = std::string("#include \"") + kElementMathInclude + "\"\n" + R"(
// N consecutive elements, moved by one load or store of up to 16 bytes (two where they take
// 32): vector loop kernels, and row kernels with rows in registers (four).
template <typename S, int N> struct alignas(N * sizeof(S) < 16 ? N * sizeof(S) : 16) wf_vec { S v[N]; };
template <typename S> using wf_vec4 = wf_vec<S, 4>;
// Four consecutive elements of a vector every row reads (a norm's scale), loaded where a pass
// reads them: volatile, so that the compiler keeps them out of registers between the passes.
__device__ __forceinline__ wf_vec4<float> wf_column_load(const float* p) {
  wf_vec4<float> v;
  asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.v[0]), "=f"(v.v[1]), "=f"(v.v[2]), "=f"(v.v[3]) : "l"(p));
  return v;
}
__device__ __forceinline__ wf_vec4<unsigned short> wf_column_load(const unsigned short* p) {
  wf_vec4<unsigned short> v;
  asm volatile("ld.global.nc.v4.u16 {%0, %1, %2, %3}, [%4];" : "=h"(v.v[0]), "=h"(v.v[1]), "=h"(v.v[2]), "=h"(v.v[3]) : "l"(p));
  return v;
}
// Every lane ends with the combination of the warp's values (the same order on every lane).
template <typename T, typename F> __device__ __forceinline__ T wf_warp_allreduce(T v, F f) {
  for (int o = 16; o > 0; o /= 2) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Every thread of the block (256 threads, as every generated kernel runs) ends with the
// combination of the block's values: the warps' own, then the eight warps' by one more butterfly
// over eight lanes, each reading one warp's (the same order on every lane). One shared-memory
// read and three shuffles, where reading all eight partials took eight reads and a loop: the
// reductions of a norm over rows of 1,024 spent more issue slots than its arithmetic.
template <typename T, typename S, typename F> __device__ __forceinline__ T wf_block_allreduce(T v, F f, S* smem) {
  v = wf_warp_allreduce(v, f);
  __syncthreads();
  if (threadIdx.x % 32 == 0) smem[threadIdx.x / 32] = (S)v;
  __syncthreads();
  T r = (T)smem[threadIdx.x % 8];
  for (int o = 4; o > 0; o /= 2) r = f(r, __shfl_xor_sync(0xffffffffu, r, o));
  return r;
}
)";
  return text;
}

std::string hexLiteral(uint64_t bits, int bytes) {
  char buf[40];
  if (bytes == 8) std::snprintf(buf, sizeof buf, "0x%016" PRIx64 "ull", bits);
  else std::snprintf(buf, sizeof buf, "0x%08" PRIx64 "u", bits);
  return buf;
}

// The value of a splat constant as a C expression of its compute type.
std::string splatLiteral(const Literal& lit) {
  const ElementType t = lit.elementType();
  const int bytes = storageBytes(t);
  uint64_t raw = 0;
  std::memcpy(&raw, lit.data(), static_cast<size_t>(bytes));
  switch (t) {
    case ElementType::kI1: return raw ? "true" : "false";
    case ElementType::kF32: return "__uint_as_float(" + hexLiteral(raw, 4) + ")";
    case ElementType::kF64: return "__longlong_as_double((long long)" + hexLiteral(raw, 8) + ")";
    case ElementType::kBF16: return "wf::em::bf16Load((unsigned short)" + hexLiteral(raw, 4) + ")";
    case ElementType::kF16: return "wf::em::f16Load((unsigned short)" + hexLiteral(raw, 4) + ")";
    default: return std::string("((") + storageCType(t) + ")" + hexLiteral(raw, 8) + ")";
  }
}

// Loop kernels: elements per thread, the elements a block computes per pass, and the most blocks
// launched (larger roots loop).
constexpr int64_t kLoopElementsPerThread = 4;
constexpr int64_t kLoopStride = 256;  // between a thread's elements (a block's threads)
constexpr int64_t kLoopChunk = kLoopStride * kLoopElementsPerThread;
constexpr int64_t kMaxLoopBlocks = int64_t{1} << 20;

// The blocks a loop kernel launches over `n` elements, `perBlock` of them per block and pass.
int64_t loopBlocks(int64_t n, int64_t perBlock) {
  return std::max<int64_t>(1, std::min<int64_t>((n + perBlock - 1) / perBlock, kMaxLoopBlocks));
}

class KernelEmitter {
 public:
  KernelEmitter(const FusionGroup& group, const ValueStrides* strides) : group_(group), strides_(strides) {
    for (size_t i = 0; i < group.inputs.size(); ++i) inputIndex_[group.inputs[i]] = static_cast<int>(i);
  }

  Expected<FusedKernelSource> generate(const std::string& name) {
    const Type& rt = group_.root()->result(0)->type();
    rootShape_ = rt.shape();
    const int64_t n = rt.numElements();
    // (The loop's index passes n by up to a grid's stride before it stops.)
    bool wide = n > INT32_MAX - kMaxLoopBlocks * kLoopChunk;
    for (const Value* in : group_.inputs) wide = wide || in->type().numElements() > INT32_MAX;
    for (const Operation* op : group_.ops) wide = wide || op->result(0)->type().numElements() > INT32_MAX;
    idx_ = wide ? "long long" : "int";
    memo_.emplace_back();
    rootStrides_ = stridesOf(group_.root()->result(0));
    if (!group_.sideOutputs.empty() && group_.reducesRuns())
      return internalError("side outputs of a runs reduction");
    if (group_.reducesRuns()) {
      if (!rootStrides_.empty()) return internalError("a runs reduction written in another storage order");
      return generateRuns(name);
    }
    if (group_.hasReduce()) {
      if (!rootStrides_.empty()) return internalError("a row-fused group written in another storage order");
      for (const Value* in : group_.inputs)
        if (!stridesOf(in).empty()) return internalError("a row-fused group reading another storage order");
      return generateRows(name);
    }

    if (const int64_t vec = vectorWidth(n); vec > 0) return generateVectorLoop(name, n, vec);

    // The threads walk the root's storage order: `i` is the offset written.
    loopKernel_ = true;
    std::vector<std::string> coords = rootStrides_.empty() ? declareCoords(rootShape_, 0, "i", "    ")
                                                           : declareStoredCoords(rootShape_, rootStrides_);
    loopKernel_ = false;
    WF_ASSIGN_OR_RETURN(std::string result, emit(group_.root()->result(0), coords, true));
    // Side outputs at the root's coordinates, each stored in its own layout.
    std::string sideStores;
    for (size_t w = 0; w < group_.sideOutputs.size(); ++w) {
      const Value* v = group_.sideOutputs[w]->result(0);
      if (v->type().shape() != rootShape_) return internalError("a loop group's side output of another shape than its root");
      WF_ASSIGN_OR_RETURN(std::string x, emit(v, coords, true));
      const std::vector<int64_t> stored = stridesOf(v);
      const std::string at = stored == rootStrides_ ? "i"
                             : stored.empty()       ? linearIndex(rootShape_, coords)
                                                    : stridedIndex(rootShape_, stored, coords);
      sideStores += "    out" + std::to_string(w + 1) + "[" + at + "] = " + storeRoot(v->type().elementType(), x) + ";\n";
    }
    FusedKernelSource out;
    std::ostringstream src;
    src << signature(name);
    // Each thread computes kLoopElementsPerThread elements 256 apart (a warp's accesses stay
    // contiguous), unrolled so that their loads are in flight together: with one bf16 element
    // per thread a multiprocessor has about 4 KB in flight, and 3 TB/s at HBM's latency takes
    // about 14 KB (BERT-large's bias + transpose kernels moved 1.1 TB/s).
    src << "  for (" << idx_ << " base = blockIdx.x * " << kLoopChunk << " + threadIdx.x; base < " << n
        << "; base += gridDim.x * " << kLoopChunk << ") {\n";
    src << "#pragma unroll\n  for (int k = 0; k < " << kLoopElementsPerThread << "; ++k) {\n";
    src << "    const " << idx_ << " i = base + k * " << kLoopStride << ";\n";
    // A grid-stride chunk lies wholly inside the root when the root is a whole number of them.
    const bool guard = n % kLoopChunk != 0;
    if (guard) src << "    if (i < " << n << ") {\n";
    src << body_.str();
    src << "    out[i] = " << storeRoot(rt.elementType(), result) << ";\n" << sideStores;
    if (guard) src << "    }\n";
    src << "  }\n  }\n}\n";
    out.code = src.str();
    out.threads = 256;
    out.blocks = loopBlocks(n, kLoopChunk);
    return out;
  }

  static std::string prelude() { return preludeText(); }

  // Vector loop kernels: each thread computes `vec` consecutive elements of a row-major root
  // whose rows are whole vectors, and moves them with one load or store of up to 16 bytes (a
  // bf16 root: 8 elements). Scalar loads of 2 bytes, 4 per thread 256 apart, moved 1.5 TB/s of
  // the H200's 4.8 in BERT-large's bias + head-transpose kernels; 16-byte ones moved 2.6.
  // An input is read the same way where every element of the group reads the next element of
  // it (classify), once where they all read one element, else element by element.
  // The element width, or 0 where the loop kernel stays scalar.
  int64_t vectorWidth(int64_t n) const {
    if (!rootStrides_.empty() || rootShape_.empty() || idx_ != "int") return 0;
    const int bytes = storageBytes(group_.root()->result(0)->type().elementType());
    const int64_t vec = bytes <= 2 ? 8 : (bytes == 4 ? 4 : 0);
    if (vec == 0 || rootShape_.back() % vec != 0) return 0;
    // The index passes n by up to a grid's stride before the loop stops.
    return n + loopBlocks(n, kLoopStride * vec) * kLoopStride * vec > INT32_MAX ? 0 : vec;
  }

  // How a value's row-major linear index moves over a thread's `vec` consecutive root
  // elements: as the root's (the next element each, from a multiple of vec), not at all, or
  // otherwise.
  enum class Along { kAligned, kUniform, kVarying };

  // Walks the group from `v`, read with `along`, to its inputs; `inputAlong_` gets each
  // input's way, kVarying where two reads of it differ.
  void classify(const Value* v, Along along, int64_t vec, std::set<std::pair<const Value*, Along>>& seen) {
    if (!seen.insert({v, along}).second) return;
    if (inputIndex_.count(v)) {
      // A vector read needs the input row-major: its linear index is then its offset.
      if (along == Along::kAligned && !stridesOf(v).empty()) along = Along::kVarying;
      auto [it, added] = inputAlong_.emplace(v, along);
      if (!added && it->second != along) it->second = Along::kVarying;
      return;
    }
    const Operation& op = *v->definingOp();
    const std::vector<int64_t>& shape = v->type().shape();
    auto each = [&](Along a) {
      for (const Value* o : op.operands()) classify(o, o->type().rank() == 0 ? Along::kUniform : a, vec, seen);
    };
    if (along != Along::kAligned) return each(along);
    // An aligned value whose rows are whole vectors has its last coordinate step and the
    // others stay; an operand read at that last coordinate, as its own last, is aligned too.
    const bool wholeRows = !shape.empty() && shape.back() % vec == 0;
    switch (op.code()) {
      case OpCode::Constant:
      case OpCode::Iota:
        return;
      case OpCode::Reshape:  // row-major both sides: the linear index is kept
        return each(Along::kAligned);
      case OpCode::Transpose: {
        auto perm = cpu::intListAttr(op, "permutation");
        const bool lastStays = perm && !perm->empty() && perm->back() == static_cast<int64_t>(perm->size()) - 1;
        return each(wholeRows && lastStays ? Along::kAligned : Along::kVarying);
      }
      case OpCode::BroadcastInDim: {
        auto dims = cpu::intListAttr(op, "broadcast_dimensions");
        const std::vector<int64_t>& in = op.operand(0)->type().shape();
        if (!wholeRows || !dims || dims->size() != in.size()) return each(Along::kVarying);
        const auto last = std::find(dims->begin(), dims->end(), static_cast<int64_t>(shape.size()) - 1);
        if (last == dims->end() || in[static_cast<size_t>(last - dims->begin())] == 1) return each(Along::kUniform);
        return each(last - dims->begin() == static_cast<std::ptrdiff_t>(in.size()) - 1 ? Along::kAligned : Along::kVarying);
      }
      case OpCode::Slice: {
        // A slice of unit stride along the last dim, from a multiple of `vec` in rows of whole
        // vectors, reads the next element of its operand for each next element, from an aligned
        // one: a merged product's result read back per projection (merge_products.h).
        auto start = cpu::intListAttr(op, "start_indices");
        auto strides = cpu::intListAttr(op, "strides");
        const std::vector<int64_t>& in = op.operand(0)->type().shape();
        const size_t last = shape.size() - 1;
        const bool keepsVectors = wholeRows && start && strides && start->size() == shape.size() &&
                                  strides->size() == shape.size() && (*strides)[last] == 1 &&
                                  (*start)[last] % vec == 0 && in[last] % vec == 0;
        return each(keepsVectors ? Along::kAligned : Along::kVarying);
      }
      case OpCode::Gather:
      case OpCode::Concatenate:
        return each(Along::kVarying);
      default:
        // Elementwise ops read their operands at their own coordinates (emitUncached).
        for (const Value* o : op.operands())
          classify(o, o->type().rank() == 0 ? Along::kUniform : (o->type().shape() == shape ? along : Along::kVarying),
                   vec, seen);
        return;
    }
  }

  Expected<FusedKernelSource> generateVectorLoop(const std::string& name, int64_t n, int64_t vec) {
    std::set<std::pair<const Value*, Along>> seen;
    classify(group_.root()->result(0), Along::kAligned, vec, seen);
    for (const Operation* side : group_.sideOutputs) classify(side->result(0), Along::kAligned, vec, seen);
    vec_ = vec;
    const std::vector<std::string> coords = declareCoords(rootShape_, 0, "i", "    ");
    WF_ASSIGN_OR_RETURN(std::string result, emit(group_.root()->result(0), coords, true));
    // The root and the side outputs stored like it go out as vectors after the group; others
    // element by element.
    struct Out {
      std::string name, type;
    };
    std::vector<Out> vectors = {{"out", storageCType(group_.root()->result(0)->type().elementType())}};
    std::string stores = "    wf_v0.v[wf_e] = " + storeRoot(group_.root()->result(0)->type().elementType(), result) + ";\n";
    for (size_t w = 0; w < group_.sideOutputs.size(); ++w) {
      const Value* v = group_.sideOutputs[w]->result(0);
      if (v->type().shape() != rootShape_) return internalError("a loop group's side output of another shape than its root");
      WF_ASSIGN_OR_RETURN(std::string x, emit(v, coords, true));
      const std::vector<int64_t> stored = stridesOf(v);
      const std::string o = "out" + std::to_string(w + 1), value = storeRoot(v->type().elementType(), x);
      if (stored.empty()) {
        stores += "    wf_v" + std::to_string(vectors.size()) + ".v[wf_e] = " + value + ";\n";
        vectors.push_back({o, storageCType(v->type().elementType())});
      } else {
        stores += "    " + o + "[" + stridedIndex(rootShape_, stored, coords) + "] = " + value + ";\n";
      }
    }
    std::ostringstream src;
    src << signature(name);
    // Buffers of the arena are 256-byte aligned; a caller's may not be: then the same elements
    // move one at a time.
    src << "  const bool wf_aligned = true";
    for (size_t k = 0; k < group_.inputs.size(); ++k)
      if (auto way = inputAlong_.find(group_.inputs[k]); way != inputAlong_.end() && way->second == Along::kAligned)
        src << " && (unsigned long long)in" << k << " % 16 == 0";
    for (const Out& o : vectors) src << " && (unsigned long long)" << o.name << " % 16 == 0";
    src << ";\n";
    src << "  for (" << idx_ << " base = (blockIdx.x * " << kLoopStride << " + threadIdx.x) * " << vec << "; base < " << n
        << "; base += gridDim.x * " << kLoopStride * vec << ") {\n";
    src << vectorDecls_.str();
    for (size_t k = 0; k < vectors.size(); ++k)
      src << "    wf_vec<" << vectors[k].type << ", " << vec << "> wf_v" << k << ";\n";
    src << "#pragma unroll\n  for (int wf_e = 0; wf_e < " << vec << "; ++wf_e) {\n";
    src << "    const " << idx_ << " i = base + wf_e;\n";
    src << body_.str() << stores << "  }\n";
    for (size_t k = 0; k < vectors.size(); ++k) {
      const std::string v = "wf_v" + std::to_string(k), t = "wf_vec<" + vectors[k].type + ", " + std::to_string(vec) + ">";
      src << "  if (wf_aligned) *reinterpret_cast<" << t << "*>(" << vectors[k].name << " + base) = " << v << ";\n"
          << "  else for (int wf_q = 0; wf_q < " << vec << "; ++wf_q) " << vectors[k].name << "[base + wf_q] = " << v
          << ".v[wf_q];\n";
    }
    src << "  }\n}\n";
    FusedKernelSource out;
    out.code = src.str();
    out.threads = static_cast<int>(kLoopStride);
    out.blocks = loopBlocks(n, kLoopStride * vec);
    return out;
  }

  // The multi-tensor form of a flat group (generateMultiTensorKernel): the group's work on
  // element i of each of several tensors at once, every operand read at i or at its one element.
  Expected<MultiTensorKernelSource> generateMultiTensor(const std::string& name) {
    const Value* root = group_.root()->result(0);
    const int64_t n = root->type().numElements();
    if (group_.hasReduce()) return unimplemented("a reduction");
    if (n <= 1) return unimplemented("a root of one element");
    if (!stridesOf(root).empty()) return unimplemented("a root stored channels-last");
    for (const Value* in : group_.inputs)
      if (!stridesOf(in).empty()) return unimplemented("an input stored channels-last");
    for (const Operation* side : group_.sideOutputs)
      if (side->result(0)->type().numElements() != n || !stridesOf(side->result(0)).empty())
        return unimplemented("a side output of another shape or layout");
    // The inputs numbered in the order the expressions reach them (from the root, then the side
    // outputs, operands in order), not the group's: groups that differ only in the order their
    // inputs were first met (after common subexpressions were merged) get the same code.
    std::vector<size_t> order;
    {
      std::unordered_map<const Value*, size_t> position;
      for (size_t k = 0; k < group_.inputs.size(); ++k) position[group_.inputs[k]] = k;
      std::unordered_set<const Operation*> members(group_.ops.begin(), group_.ops.end());
      std::unordered_set<const Value*> seen;
      std::vector<const Value*> stack;
      auto visit = [&](const Value* from) {
        stack.push_back(from);
        while (!stack.empty()) {
          const Value* v = stack.back();
          stack.pop_back();
          if (!seen.insert(v).second) continue;
          if (auto it = position.find(v); it != position.end()) {
            order.push_back(it->second);
            continue;
          }
          const Operation* op = v->definingOp();
          if (!op || !members.count(op)) continue;
          for (size_t k = op->numOperands(); k-- > 0;) stack.push_back(op->operand(k));
        }
      };
      visit(root);
      for (const Operation* side : group_.sideOutputs) visit(side->result(0));
      if (order.size() != group_.inputs.size()) return unimplemented("an input that the results do not read");
    }
    inputIndex_.clear();
    for (size_t k = 0; k < order.size(); ++k) inputIndex_[group_.inputs[order[k]]] = static_cast<int>(k);
    flat_ = true;
    flatN_ = n;
    // (The index passes a tensor's end by up to a pass before the loop stops.)
    idx_ = n > INT32_MAX / 2 ? "long long" : "int";
    memo_.emplace_back();
    const int bytes = storageBytes(root->type().elementType());
    vec_ = bytes <= 2 ? 8 : (bytes == 4 ? 4 : 1);
    WF_ASSIGN_OR_RETURN(std::string result, emit(root, {}, true));
    std::vector<std::pair<std::string, std::string>> stores = {{"out", storeRoot(root->type().elementType(), result)}};
    std::vector<ElementType> outTypes = {root->type().elementType()};
    for (size_t w = 0; w < group_.sideOutputs.size(); ++w) {
      const Value* v = group_.sideOutputs[w]->result(0);
      WF_ASSIGN_OR_RETURN(std::string x, emit(v, {}, true));
      stores.push_back({"out" + std::to_string(w + 1), storeRoot(v->type().elementType(), x)});
      outTypes.push_back(v->type().elementType());
    }
    MultiTensorKernelSource out;
    out.inputOrder = order;
    out.pointersPerTensor = static_cast<int>(group_.inputs.size() + stores.size());
    // The table is the kernel's one parameter: T entries of 8 * (P + 1) + 4 bytes, one more start.
    constexpr int kTableBytes = static_cast<int>(kMultiTensorTableBytes);
    out.maxTensors = std::min(64, (kTableBytes - 8) / (8 * (out.pointersPerTensor + 1) + 4));
    out.threads = static_cast<int>(kLoopStride);
    out.elementsPerBlock = kLoopStride * vec_;
    const int T = out.maxTensors, P = out.pointersPerTensor;
    const std::string table = name + "_tensors";
    std::ostringstream src;
    src << "struct " << table << " {\n  void* p[" << T << "][" << P << "];\n  long long n[" << T << "];\n  int start["
        << T + 1 << "];\n};\n";
    src << "extern \"C\" __global__ void __launch_bounds__(256) " << name << "(const __grid_constant__ " << table
        << " wf_t) {\n";
    // The tensor of this block: the last whose first block is at most blockIdx.x.
    src << "  int wf_lo = 0, wf_hi = " << T - 1 << ";\n"
        << "  while (wf_lo < wf_hi) {\n    const int wf_mid = (wf_lo + wf_hi + 1) / 2;\n"
        << "    if (wf_t.start[wf_mid] <= (int)blockIdx.x) wf_lo = wf_mid; else wf_hi = wf_mid - 1;\n  }\n"
        << "  const " << idx_ << " wf_n = (" << idx_ << ")wf_t.n[wf_lo];\n"
        << "  const int wf_block = (int)blockIdx.x - wf_t.start[wf_lo], wf_blocks = wf_t.start[wf_lo + 1] - wf_t.start[wf_lo];\n";
    for (size_t k = 0; k < order.size(); ++k) {
      const char* s = storageCType(group_.inputs[order[k]]->type().elementType());
      src << "  const " << s << "* __restrict__ in" << k << " = (const " << s << "*)wf_t.p[wf_lo][" << k << "];\n";
    }
    for (size_t k = 0; k < stores.size(); ++k) {
      const char* s = storageCType(outTypes[k]);
      src << "  " << s << "* __restrict__ " << stores[k].first << " = (" << s << "*)wf_t.p[wf_lo]["
          << group_.inputs.size() + k << "];\n";
    }
    // Tensors are read and written `vec` elements at a time where all of them are 16-byte aligned
    // (an arena's buffers are), and the last elements of a tensor one at a time.
    src << "  const bool wf_aligned = true";
    for (size_t k : alignedInputs_) src << " && (unsigned long long)in" << k << " % 16 == 0";
    for (const auto& s : stores) src << " && (unsigned long long)" << s.first << " % 16 == 0";
    src << ";\n";
    src << "  for (" << idx_ << " base = ((" << idx_ << ")wf_block * " << kLoopStride << " + threadIdx.x) * " << vec_
        << "; base < wf_n; base += (" << idx_ << ")wf_blocks * " << kLoopStride * vec_ << ") {\n";
    src << "    const bool wf_full = wf_aligned && base + " << vec_ << " <= wf_n;\n";
    src << vectorDecls_.str();
    for (size_t k = 0; k < stores.size(); ++k)
      src << "    wf_vec<" << storageCType(outTypes[k]) << ", " << vec_ << "> wf_v" << k << ";\n";
    src << "#pragma unroll\n  for (int wf_e = 0; wf_e < " << vec_ << "; ++wf_e) {\n";
    // (Past a tensor's end, in the last vector, the index stays on its last element: what is
    // read at coordinates from it stays inside every operand, and nothing of it is stored.)
    src << "    const " << idx_ << " i = base + wf_e;\n";
    src << "    const " << idx_ << " wf_i = i < wf_n ? i : wf_n - 1;\n";
    src << body_.str();
    for (size_t k = 0; k < stores.size(); ++k) src << "    wf_v" << k << ".v[wf_e] = " << stores[k].second << ";\n";
    src << "  }\n";
    for (size_t k = 0; k < stores.size(); ++k) {
      const std::string t = "wf_vec<" + std::string(storageCType(outTypes[k])) + ", " + std::to_string(vec_) + ">";
      src << "  if (wf_full) *reinterpret_cast<" << t << "*>(" << stores[k].first << " + base) = wf_v" << k << ";\n"
          << "  else for (int wf_q = 0; wf_q < " << vec_ << " && base + wf_q < wf_n; ++wf_q) " << stores[k].first
          << "[base + wf_q] = wf_v" << k << ".v[wf_q];\n";
    }
    src << "  }\n}\n";
    out.code = src.str();
    return out;
  }

  // A region of scalar ops as a device function (generateRegionFunction): the block's arguments
  // are the parameters a0.., every op is emitted once at no coordinates, and the returned values
  // are written to r0...
  Expected<RegionFunction> generateRegion(const Block& block, const std::string& name) {
    idx_ = "int";
    memo_.emplace_back();
    RegionFunction out;
    std::vector<std::string> params;
    for (size_t i = 0; i < block.numArguments(); ++i) {
      const ElementType t = block.argument(i)->type().elementType();
      const std::string a = "a" + std::to_string(i);
      memo_.back()[key(block.argument(i), {})] = a;
      out.argTypes.push_back(t);
      params.push_back(std::string(computeCType(t)) + " " + a);
    }
    const Operation& ret = *block.terminator();
    std::vector<std::string> results;
    for (size_t i = 0; i < ret.numOperands(); ++i) {
      WF_ASSIGN_OR_RETURN(std::string r, emit(ret.operand(i), {}, false));
      const ElementType t = ret.operand(i)->type().elementType();
      results.push_back(r);
      out.resultTypes.push_back(t);
      params.push_back(std::string(computeCType(t)) + "* r" + std::to_string(i));
    }
    std::ostringstream src;
    src << "__device__ __forceinline__ void " << name << "(";
    for (size_t i = 0; i < params.size(); ++i) src << (i ? ", " : "") << params[i];
    src << ") {\n" << body_.str();
    for (size_t i = 0; i < results.size(); ++i) src << "    *r" << i << " = " << results[i] << ";\n";
    src << "}\n";
    out.code = src.str();
    return out;
  }

 private:
  // A value's storage strides if it is not row-major, else empty.
  std::vector<int64_t> stridesOf(const Value* v) const {
    if (!strides_) return {};
    auto it = strides_->find(v);
    return it == strides_->end() ? std::vector<int64_t>{} : it->second;
  }

  // The index a coordinate of period `period` (it repeats every `period` elements of `i`) is
  // computed from: in a loop kernel, where a thread's elements lie kLoopStride apart, one that
  // repeats within that stride is the same for all of them, so it is computed from the thread's
  // first element `base`. The expressions, and the loads and work at those coordinates alone (a
  // per-channel scale of channels-last activations), are then the same for each element, and
  // the compiler computes them once.
  std::string periodic(int64_t period) const {
    return loopKernel_ && period > 0 && kLoopStride % period == 0 ? "base" : "i";
  }

  // Coordinates of the element at storage offset `i` of a value of `shape` stored with
  // `strides` (a permutation of a row-major layout).
  std::vector<std::string> declareStoredCoords(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
    std::vector<std::string> coords(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) {
        coords[d] = "0";
        continue;
      }
      int64_t outer = 1;  // the extent of the dims stored outside d: i / stride % size
      for (size_t e = 0; e < shape.size(); ++e)
        if (strides[e] > strides[d]) outer *= shape[e];
      const std::string from = periodic(strides[d] * shape[d]);
      std::string expr = strides[d] == 1 ? from : from + " / " + std::to_string(strides[d]);
      if (outer > 1) expr = "(" + expr + ") % " + std::to_string(shape[d]);
      coords[d] = "c" + std::to_string(d);
      body_ << "    const " << idx_ << " " << coords[d] << " = " << expr << ";\n";
    }
    return coords;
  }

  // The offset of the element at `coords` in a value stored with `strides`.
  std::string stridedIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                           const std::vector<std::string>& coords) const {
    std::string expr;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (coords[d] == "0" || shape[d] == 1) continue;
      std::string term = strides[d] == 1 ? coords[d] : "(" + idx_ + ")" + coords[d] + " * " + std::to_string(strides[d]);
      expr = expr.empty() ? term : expr + " + " + term;
    }
    return expr.empty() ? "0" : expr;
  }

  std::string signature(const std::string& name) const {
    std::ostringstream src;
    src << "extern \"C\" __global__ void __launch_bounds__(256) " << name << "(";
    for (size_t i = 0; i < group_.inputs.size(); ++i)
      src << "const " << storageCType(group_.inputs[i]->type().elementType()) << "* __restrict__ in" << i << ", ";
    src << storageCType(group_.root()->result(0)->type().elementType()) << "* __restrict__ out";
    for (size_t s = 0; s < group_.sideOutputs.size(); ++s)
      src << ", " << storageCType(group_.sideOutputs[s]->result(0)->type().elementType()) << "* __restrict__ out"
          << s + 1;
    src << ") {\n";
    return src.str();
  }

  // Declares coordinate variables c<first>.. of `shape` from the linear index `linear` and
  // returns their names ("0" for dims of size 1).
  std::vector<std::string> declareCoords(const std::vector<int64_t>& shape, size_t first, const std::string& linear,
                                         const std::string& indent) {
    std::vector<std::string> coords(shape.size());
    std::vector<std::string> decl(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      std::string from = linear == "i" ? periodic(stride * shape[d]) : linear;
      // A vector loop's group lies in one row (vectorWidth): its outer coordinates are those of
      // its first element, and the last steps from that one's.
      if (vec_ > 0 && linear == "i") from = "base";
      std::string expr = stride == 1 ? from : from + " / " + std::to_string(stride);
      if (d > 0) expr = "(" + expr + ") % " + std::to_string(shape[d]);
      if (vec_ > 0 && linear == "i" && d + 1 == shape.size()) expr = "(" + expr + ") + wf_e";
      const std::string c = "c" + std::to_string(first + d);
      decl[d] = indent + "const " + idx_ + " " + c + " = " + expr + ";\n";
      coords[d] = shape[d] == 1 ? "0" : c;
      stride *= shape[d];
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1) body_ << decl[d];
    return coords;
  }

  bool loopKernel_ = false;  // declaring a loop kernel's coordinates (periodic())
  static constexpr const char* kPreloadMarker = "@@WF_PRELOAD@@\n";

  // A pass over this thread's columns of the row: unrolled over its cached elements, or a
  // strided loop when the row is too long to cache.
  std::string columnLoop(const std::string& indent) const {
    if (!cacheRows_)
      return indent + "for (" + idx_ + " k = lane; k < " + std::to_string(numCols_) + "; k += " +
             std::to_string(lanes_) + ") {\n";
    // When the threads' elements tile the row exactly, every column is inside it.
    const std::string guard = perThread_ * lanes_ == numCols_ ? "{\n" : "if (k < " + std::to_string(numCols_) + ") {\n";
    return "#pragma unroll\n" + indent + "for (int j = 0; j < " + std::to_string(perThread_) + "; ++j) {\n" + indent +
           "  const " + idx_ + " k = " + columnOf("j") + ";\n" + indent + "  " + guard;
  }
  // The column a thread's j-th cached element holds: lane + j * lanes, or with vectors, element
  // j % 4 of the thread's (j / 4)-th group of four consecutive columns.
  std::string columnOf(const std::string& j) const {
    if (!vec4_) return "lane + " + j + " * " + std::to_string(lanes_);
    return "(lane + (" + j + ") / 4 * " + std::to_string(lanes_) + ") * 4 + (" + j + ") % 4";
  }
  std::string columnLoopEnd(const std::string& indent) const {
    return cacheRows_ ? indent + "  }\n" + indent + "}\n" : indent + "}\n";
  }

  // The identity of a reduction's combiner in its accumulator type (double or float), as C.
  static std::string identityOf(RowReduce k, bool f64) {
    switch (k) {
      case RowReduce::kSum: return f64 ? "0.0" : "0.0f";
      case RowReduce::kProd: return f64 ? "1.0" : "1.0f";
      case RowReduce::kMax: return f64 ? "-__longlong_as_double(0x7ff0000000000000ll)" : "-__int_as_float(0x7f800000)";
      default: return f64 ? "__longlong_as_double(0x7ff0000000000000ll)" : "__int_as_float(0x7f800000)";
    }
  }

  static const char* combineFn(RowReduce k) {
    switch (k) {
      case RowReduce::kSum: return "wf::em::Add";
      case RowReduce::kProd: return "wf::em::Mul";
      case RowReduce::kMax: return "wf::em::Max";
      default: return "wf::em::Min";
    }
  }

  // Row fusion: one warp (many rows) or one block (few rows) per row of the reductions' row
  // shape; a pass over the row per reduction, then the root.
  Expected<FusedKernelSource> generateRows(const std::string& name) {
    std::optional<ReduceInfo> sig;
    for (const Operation* op : group_.ops)
      if (op->code() == OpCode::Reduce) {
        sig = rowReduceInfo(*op);
        if (!sig) return internalError(op->describe() + ": not a row reduction");
        break;
      }
    rows_ = sig->rows;
    cols_ = sig->cols;
    std::vector<int64_t> full = rows_;
    full.insert(full.end(), cols_.begin(), cols_.end());
    // The root is the row shape rows x cols (as it, or reshaped with the same elements: the
    // final pass computes it at each element's linear index), or rows.
    const int64_t numRows = numElementsOf(rows_), numCols = numElementsOf(cols_);
    fullShape_ = full;
    rootFull_ = rootShape_ == full || (rootShape_ != rows_ && numElementsOf(rootShape_) == numRows * numCols);
    if (!rootFull_ && rootShape_ != rows_) return internalError("row group root of another shape");
    if (!rootFull_ && !group_.sideOutputs.empty()) return internalError("side outputs of a row group rooted at a row value");
    nextCoord_ = full.size();
    // A warp per row for many short rows, else a block per row. Each thread keeps its elements of
    // the group's row-shaped inputs in registers (when it has at most kCachedPerThread of them),
    // so every pass after the first reads registers instead of memory.
    //
    // Rows of up to 1,024 columns (a multiple of four) also take a warp each where the group
    // reads at most two row-shaped inputs (a norm's residual and the product before it): 32
    // elements a lane of each. There the vectors of the row's length (a bias, the norm's scale
    // and shift) are read where each pass uses them, four columns per load from L1, instead of
    // being held in registers: BERT-large's layer norm (3,072 rows of 1,024) then takes 64
    // registers a thread where holding them took 169, four blocks of eight rows fit an SM
    // instead of one, and it ran in 10.4 us against 11.0 with a block per row on an H200.
    constexpr int64_t kCachedPerThread = 16;
    constexpr int64_t kLongWarpRowPerLane = 32;
    int rowShapedInputs = 0;
    for (const Value* in : group_.inputs) rowShapedInputs += in->type().numElements() == numRows * numCols;
    const bool longWarpRows = rootFull_ && numCols % 4 == 0 && numCols <= 32 * kLongWarpRowPerLane && rowShapedInputs <= 2;
    const bool warpPerRow = numRows >= 1024 && (numCols <= 32 * kCachedPerThread || longWarpRows);
    const int64_t cacheLimit = warpPerRow && numCols > 32 * kCachedPerThread ? kLongWarpRowPerLane : kCachedPerThread;
    const int lanes = warpPerRow ? 32 : 256;
    perThread_ = (numCols + lanes - 1) / lanes;
    cacheRows_ = rootFull_ && perThread_ <= cacheLimit;
    // Rows of a multiple of four columns move four elements per load and store (8 or 16 bytes
    // instead of 2 or 4): a 2-byte load per lane leaves most of each memory transaction unused.
    const int64_t perThreadVec = (numCols + 4 * lanes - 1) / (4 * lanes) * 4;
    vec4_ = cacheRows_ && numCols % 4 == 0 && perThreadVec <= cacheLimit;
    if (vec4_) perThread_ = perThreadVec;
    lazyColumns_ = warpPerRow && vec4_ && perThread_ > kCachedPerThread;
    lanes_ = lanes;
    numCols_ = numCols;
    bool anyF64 = false;
    for (const Operation* op : group_.ops)
      anyF64 = anyF64 || (op->code() == OpCode::Reduce && op->operand(0)->type().elementType() == ElementType::kF64);
    const std::string smemType = anyF64 ? "double" : "float";

    const std::string in1 = "    ", in2 = "      ";
    rowCoords_ = declareCoords(rows_, 0, "row", in1);
    if (!rootFull_) body_ << in1 << "const " << idx_ << " i = row;\n";
    body_ << kPreloadMarker;
    for (const Operation* op : group_.ops) {
      if (op->code() != OpCode::Reduce) continue;
      std::optional<ReduceInfo> info = rowReduceInfo(*op);
      if (!info || info->rows != rows_ || info->cols != cols_) return internalError(op->describe() + ": another row shape");
      const ElementType et = op->result(0)->type().elementType();
      const std::string acc = et == ElementType::kF64 ? "double" : "float";
      const std::string identity = identityOf(info->kind, et == ElementType::kF64);
      const std::string a = fresh();
      body_ << in1 << acc << " " << a << " = " << identity << ";\n";
      body_ << columnLoop(in1);
      memo_.emplace_back();
      std::vector<std::string> coords = rowCoords_;
      std::vector<std::string> colCoords = declareCoords(cols_, rows_.size(), "k", in2);
      coords.insert(coords.end(), colCoords.begin(), colCoords.end());
      if (rootFull_) body_ << in2 << "const " << idx_ << " i = row * " << numCols << " + k;\n";
      fullCoords_ = coords;
      columnOffset_ = linearIndex(cols_, colCoords);
      WF_ASSIGN_OR_RETURN(std::string x, emit(op->operand(0), coords, rootFull_));
      fullCoords_.clear();
      columnOffset_.clear();
      body_ << in2 << a << " = " << combineFn(info->kind) << "()(" << a << ", (" << acc << ")" << x << ");\n";
      // With the row in registers, the reduced value is kept there too: the later passes (the next
      // reduction, the root) read it instead of computing it again (softmax's exp, a norm's
      // centred value).
      std::string kept;
      if (cacheRows_) {
        kept = "red" + std::to_string(passCache_.size());
        passCache_.emplace_back(kept, computeCType(op->operand(0)->type().elementType()));
        body_ << in2 << kept << "[j] = " << x << ";\n";
      }
      memo_.pop_back();
      if (!kept.empty()) memo_.back()[key(op->operand(0), coords)] = kept + "[j]";
      body_ << columnLoopEnd(in1);
      body_ << in1 << a << " = " << (warpPerRow ? "wf_warp_allreduce(" + a + ", " + combineFn(info->kind) + "())"
                                                 : "wf_block_allreduce(" + a + ", " + combineFn(info->kind) + "(), wf_smem)")
            << ";\n";
      WF_ASSIGN_OR_RETURN(std::string init, emit(op->operand(1), {}, false));
      const std::string r = declare(et, rounded(et, std::string(combineFn(info->kind)) + "()((" + acc + ")" + init + ", " + a + ")"));
      memo_.back()[key(op->result(0), rowCoords_)] = r;
    }
    const ElementType rte = group_.root()->result(0)->type().elementType();
    if (rootFull_) {
      body_ << columnLoop(in1);
      memo_.emplace_back();
      std::vector<std::string> coords = rowCoords_;
      std::vector<std::string> colCoords = declareCoords(cols_, rows_.size(), "k", in2);
      coords.insert(coords.end(), colCoords.begin(), colCoords.end());
      body_ << in2 << "const " << idx_ << " i = row * " << numCols << " + k;\n";
      fullCoords_ = coords;
      columnOffset_ = linearIndex(cols_, colCoords);
      // The root, then each side output, at the element of linear index i.
      std::vector<const Value*> written = {group_.root()->result(0)};
      for (const Operation* side : group_.sideOutputs) written.push_back(side->result(0));
      for (size_t w = 0; w < written.size(); ++w) {
        const Value* v = written[w];
        const std::vector<int64_t>& shape = v->type().shape();
        std::vector<std::string> at = shape == full ? coords : declareCoords(shape, nextCoord_, "i", in2);
        if (shape != full) nextCoord_ += shape.size();
        WF_ASSIGN_OR_RETURN(std::string x, emit(v, at, true));
        const ElementType et = v->type().elementType();
        const std::string o = w == 0 ? "out" : "out" + std::to_string(w);
        body_ << in2 << (vec4_ ? o + "v.v[j % 4] = " : o + "[i] = ") << storeRoot(et, x) << ";\n";
        if (vec4_)
          body_ << in2 << "if (j % 4 == 3) *reinterpret_cast<wf_vec4<" << storageCType(et) << ">*>(" << o
                << " + i - 3) = " << o << "v;\n";
      }
      fullCoords_.clear();
      columnOffset_.clear();
      memo_.pop_back();
      body_ << columnLoopEnd(in1);
    } else {
      WF_ASSIGN_OR_RETURN(std::string x, emit(group_.root()->result(0), rowCoords_, true));
      body_ << in1 << "if (lane == 0) out[row] = " << storeRoot(rte, x) << ";\n";
    }

    std::string body = body_.str();
    std::string preload;
    for (const auto& [input, name] : cached_) {
      const ElementType et = input->type().elementType();
      preload += "    " + std::string(computeCType(et)) + " " + name + "[" + std::to_string(perThread_) + "];\n";
      const std::string src = "in" + std::to_string(inputIndex_.at(input));
      const std::string rowStart = readAtColumn_.count(input) ? "" : "row * " + std::to_string(numCols) + " + ";
      if (vec4_) {
        // One load of four consecutive columns per group; a group is wholly inside or outside.
        const std::string vt = std::string("wf_vec4<") + storageCType(et) + ">";
        preload += "#pragma unroll\n    for (int q = 0; q < " + std::to_string(perThread_ / 4) + "; ++q) {\n";
        preload += "      const " + idx_ + " k = " + columnOf("q * 4") + ";\n";
        preload += "      " + vt + " v = {};\n";
        preload += "      if (k < " + std::to_string(numCols) + ") v = *reinterpret_cast<const " + vt + "*>(" + src +
                   " + " + rowStart + "k);\n";
        preload += "#pragma unroll\n      for (int e = 0; e < 4; ++e) " + name + "[q * 4 + e] = " + load(et, "v.v[e]") + ";\n";
        preload += "    }\n";
        continue;
      }
      preload += "#pragma unroll\n    for (int j = 0; j < " + std::to_string(perThread_) + "; ++j) {\n";
      preload += "      const " + idx_ + " k = lane + j * " + std::to_string(lanes) + ";\n";
      preload += "      " + name + "[j] = k < " + std::to_string(numCols) + " ? " +
                 load(et, src + "[" + rowStart + "k]") +
                 " : (" + computeCType(et) + ")0;\n    }\n";
    }
    for (const auto& [input, name] : columnVectors_)
      preload += std::string("    wf_vec4<") + storageCType(input->type().elementType()) + "> " + name + ";\n";
    for (const auto& [name, ctype] : passCache_)
      preload += "    " + ctype + " " + name + "[" + std::to_string(perThread_) + "];\n";
    if (vec4_ && rootFull_) {
      preload += std::string("    wf_vec4<") + storageCType(rte) + "> outv;\n";
      for (size_t w = 0; w < group_.sideOutputs.size(); ++w)
        preload += std::string("    wf_vec4<") + storageCType(group_.sideOutputs[w]->result(0)->type().elementType()) +
                   "> out" + std::to_string(w + 1) + "v;\n";
    }
    body.replace(body.find(kPreloadMarker), std::strlen(kPreloadMarker), preload);

    FusedKernelSource out;
    std::ostringstream src;
    src << signature(name);
    src << "  __shared__ " << smemType << " wf_smem[8];\n";
    if (warpPerRow) {
      src << "  const int lane = threadIdx.x % 32;\n";
      src << "  for (" << idx_ << " row = blockIdx.x * 8 + threadIdx.x / 32; row < " << numRows
          << "; row += gridDim.x * 8) {\n";
    } else {
      src << "  const int lane = threadIdx.x;\n";
      src << "  for (" << idx_ << " row = blockIdx.x; row < " << numRows << "; row += gridDim.x) {\n";
    }
    src << body << "  }\n}\n";
    out.code = src.str();
    out.threads = 256;
    out.blocks = std::max<int64_t>(1, std::min<int64_t>(warpPerRow ? (numRows + 7) / 8 : numRows, int64_t{1} << 20));
    return out;
  }

  // Runs fusion: the root is a runs reduction (runsReduceInfo) of the group's elementwise work.
  // Block b takes result j = b % numOut and slice b / numOut of its elements, which it walks in
  // row-major order of the reduced dims, so that neighbouring threads read neighbouring elements
  // of the runs; each element of the operand is computed where it is read. The slices fill the
  // device (about 1024 blocks, each at least 2048 elements); several write partial results that
  // phase 1 combines in slice order, so the result is the same on every run.
  Expected<FusedKernelSource> generateRuns(const std::string& name) {
    const Operation& red = *group_.root();
    std::optional<RunsInfo> info = runsReduceInfo(red);
    if (!info) return internalError(red.describe() + ": not a runs reduction");
    const std::vector<int64_t>& shape = red.operand(0)->type().shape();
    std::vector<int64_t> keptShape, redShape;
    for (size_t d = 0; d < shape.size(); ++d) (info->reduced[d] ? redShape : keptShape).push_back(shape[d]);
    const int64_t numOut = info->numOut, numRed = info->numRed;
    constexpr int64_t kBlocks = 1024, kMinSlice = 2048;
    int64_t slices = std::clamp<int64_t>((kBlocks + numOut - 1) / numOut, 1, std::max<int64_t>(1, numRed / kMinSlice));
    const int64_t perSlice = (numRed + slices - 1) / slices;
    slices = (numRed + perSlice - 1) / perSlice;
    const ElementType et = red.result(0)->type().elementType();
    const bool d = et == ElementType::kF64;
    const std::string acc = d ? "double" : "float";
    const std::string identity = identityOf(info->kind, d);
    const std::string combine = std::string(combineFn(info->kind)) + "()";
    const std::string in1 = "    ", in2 = "      ";

    // Phase 0: this block's slice of result j.
    body_ << "  if (phase == 0) {\n";
    body_ << in1 << "const " << idx_ << " j = blockIdx.x % " << numOut << ";\n";
    body_ << in1 << "const " << idx_ << " first = blockIdx.x / " << numOut << " * " << perSlice << ";\n";
    body_ << in1 << "const " << idx_ << " end = first + " << perSlice << " < " << numRed << " ? first + " << perSlice
          << " : " << numRed << ";\n";
    memo_.emplace_back();
    std::vector<std::string> keptCoords = declareCoords(keptShape, 0, "j", in1);
    body_ << in1 << acc << " a = " << identity << ";\n";
    body_ << "#pragma unroll 4\n";
    body_ << in1 << "for (" << idx_ << " r = first + threadIdx.x; r < end; r += 256) {\n";
    memo_.emplace_back();
    std::vector<std::string> redCoords = declareCoords(redShape, keptShape.size(), "r", in2);
    std::vector<std::string> coords(shape.size());
    for (size_t dim = 0, k = 0, r = 0; dim < shape.size(); ++dim)
      coords[dim] = info->reduced[dim] ? redCoords[r++] : keptCoords[k++];
    WF_ASSIGN_OR_RETURN(std::string x, emit(red.operand(0), coords, false));
    body_ << in2 << "a = " << combine << "(a, (" << acc << ")" << x << ");\n";
    memo_.pop_back();
    body_ << in1 << "}\n";
    body_ << in1 << "a = wf_block_allreduce(a, " << combine << ", wf_smem);\n";
    body_ << in1 << "if (threadIdx.x != 0) return;\n";
    if (slices == 1) {
      WF_ASSIGN_OR_RETURN(std::string init, emit(red.operand(1), {}, false));
      const std::string r = declare(et, rounded(et, combine + "((" + acc + ")" + init + ", a)"));
      body_ << in1 << "out[j] = " << storeRoot(et, r) << ";\n";
    } else {
      body_ << in1 << "static_cast<" << acc << "*>(partial)[blockIdx.x] = a;\n";
    }
    memo_.pop_back();
    body_ << "  } else {\n";
    // Phase 1: each result from its slices' partial results, in slice order.
    if (slices > 1) {
      memo_.emplace_back();
      body_ << in1 << "const " << acc << "* p = static_cast<const " << acc << "*>(partial);\n";
      body_ << in1 << "for (" << idx_ << " j = blockIdx.x * 256 + threadIdx.x; j < " << numOut
            << "; j += gridDim.x * 256) {\n";
      body_ << in2 << acc << " a = p[j];\n";
      body_ << in2 << "for (int s = 1; s < " << slices << "; ++s) a = " << combine << "(a, p[s * " << numOut
            << " + j]);\n";
      WF_ASSIGN_OR_RETURN(std::string init, emit(red.operand(1), {}, false));
      const std::string r = declare(et, rounded(et, combine + "((" + acc + ")" + init + ", a)"));
      body_ << in2 << "out[j] = " << storeRoot(et, r) << ";\n";
      body_ << in1 << "}\n";
      memo_.pop_back();
    }
    body_ << "  }\n";

    FusedKernelSource out;
    std::ostringstream src;
    src << "extern \"C\" __global__ void __launch_bounds__(256) " << name << "(";
    for (size_t i = 0; i < group_.inputs.size(); ++i)
      src << "const " << storageCType(group_.inputs[i]->type().elementType()) << "* __restrict__ in" << i << ", ";
    src << storageCType(et) << "* __restrict__ out, void* __restrict__ partial, int phase) {\n";
    src << "  __shared__ " << acc << " wf_smem[8];\n";
    src << body_.str() << "}\n";
    out.code = src.str();
    out.threads = 256;
    out.blocks = numOut * slices;
    out.twoPhase = true;
    if (slices > 1) {
      out.finishBlocks = std::min<int64_t>((numOut + 255) / 256, int64_t{1} << 20);
      out.workspaceBytes = static_cast<size_t>(numOut * slices) * (d ? sizeof(double) : sizeof(float));
    }
    return out;
  }

  static std::string key(const Value* v, const std::vector<std::string>& coords) {
    std::string k = std::to_string(reinterpret_cast<uintptr_t>(v));
    for (const std::string& c : coords) k += "," + c;
    return k;
  }

  std::string fresh() { return "t" + std::to_string(next_++); }

  std::string declare(ElementType t, const std::string& expr) {
    std::string v = fresh();
    body_ << "    const " << computeCType(t) << " " << v << " = " << expr << ";\n";
    return v;
  }

 public:
  // Expressions of generated code, shared with kernels written around a region function.
  static std::string load(ElementType t, const std::string& ref) {
    switch (t) {
      case ElementType::kBF16: return "wf::em::bf16Load(" + ref + ")";
      case ElementType::kF16: return "wf::em::f16Load(" + ref + ")";
      case ElementType::kI1: return "(" + ref + " != 0)";
      default: return ref;
    }
  }
  static std::string store(ElementType t, const std::string& v) {
    switch (t) {
      case ElementType::kBF16: return "wf::em::bf16Store(" + v + ")";
      case ElementType::kF16: return "wf::em::f16Store(" + v + ")";
      case ElementType::kI1: return "(unsigned char)(" + v + " ? 1 : 0)";
      default: return v;
    }
  }
  // Stores a group's root value. Every narrow-float value of a fused kernel is already rounded
  // to its type, so a bf16 root only needs its upper 16 bits (bf16Store would round again).
  static std::string storeRoot(ElementType t, const std::string& v) {
    return t == ElementType::kBF16 ? "wf::em::bf16Bits(" + v + ")" : store(t, v);
  }
  // Narrow floats round to their type after every op.
  static std::string rounded(ElementType t, const std::string& expr) {
    if (t == ElementType::kBF16) return "wf::em::bf16Round(" + expr + ")";
    if (t == ElementType::kF16) return "wf::em::f16Round(" + expr + ")";
    return expr;
  }
  // A compute value of `from` as `to` (stablehlo.convert of the types the fused kernels take).
  static std::string converted(ElementType from, ElementType to, const std::string& x) {
    if (isBoolean(to) && !isBoolean(from)) return "(" + x + " != 0)";
    if ((to == ElementType::kBF16 || to == ElementType::kF16) && !isBoolean(from)) {
      // One rounding to the narrow type: the float in between rounds to odd (element_math.h).
      if (from == ElementType::kF64) return rounded(to, "wf::em::doubleToFloatRoundOdd(" + x + ")");
      if (isUnsignedInteger(from)) return rounded(to, "wf::em::unsignedToFloatRoundOdd((unsigned long long)(" + x + "))");
      if (isInteger(from)) return rounded(to, "wf::em::signedToFloatRoundOdd((long long)(" + x + "))");
    }
    return rounded(to, std::string("(") + computeCType(to) + ")(" + x + ")");
  }

 private:

  std::string linearIndex(const std::vector<int64_t>& shape, const std::vector<std::string>& coords) {
    std::string expr;
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      if (coords[d] != "0" && shape[d] != 1) {
        std::string term = stride == 1 ? coords[d] : "(" + idx_ + ")" + coords[d] + " * " + std::to_string(stride);
        expr = expr.empty() ? term : term + " + " + expr;
      }
      stride *= shape[d];
    }
    return expr.empty() ? "0" : expr;
  }

  Expected<std::string> emit(const Value* v, const std::vector<std::string>& coords, bool identity) {
    const std::string k = key(v, coords);
    for (const auto& layer : memo_)
      if (auto it = layer.find(k); it != layer.end()) return it->second;
    WF_ASSIGN_OR_RETURN(std::string r, emitUncached(v, coords, identity));
    memo_.back()[k] = r;
    return r;
  }

  Expected<std::string> emitUncached(const Value* v, const std::vector<std::string>& coords, bool identity) {
    const ElementType t = v->type().elementType();
    const std::vector<int64_t>& shape = v->type().shape();
    if (flat_ && coords.empty()) {
      // The multi-tensor form: a value of the root's element count is read or computed at the
      // root's linear index i (no coordinates) while the ops on the way keep the element order
      // (elementwise ops, reshapes, broadcasts adding dims of size 1), one of a single element at
      // that element. An op that moves elements is emitted at its coordinates, worked out from i
      // (the element order kept so far, i is its linear index too): the standard path from there.
      const int64_t count = v->type().numElements();
      auto atCoordinates = [&]() {
        std::vector<std::string> at = declareCoords(shape, flatCoords_, "wf_i", "    ");
        flatCoords_ += shape.size();
        return emit(v, at, false);
      };
      if (count == 1) {
        // (Not at the root's index: the identity path would read element i.)
        if (identity || coords.size() != shape.size())
          return emit(v, std::vector<std::string>(shape.size(), "0"), false);
      } else if (count != flatN_) {
        return unimplemented(v->nameHint() + ": a value of " + std::to_string(count) + " elements");
      } else if (auto it = inputIndex_.find(v); it != inputIndex_.end()) {
        const std::string in = "in" + std::to_string(it->second), r = "wf_r" + std::to_string(nextRead_++);
        const std::string vt = "wf_vec<" + std::string(storageCType(t)) + ", " + std::to_string(vec_) + ">";
        vectorDecls_ << "    " << vt << " " << r << ";\n";
        alignedInputs_.insert(it->second);
        body_ << "    if (wf_e == 0) {\n      if (wf_full) " << r << " = *reinterpret_cast<const " << vt << "*>(" << in
              << " + base);\n      else for (int wf_q = 0; wf_q < " << vec_ << " && base + wf_q < wf_n; ++wf_q) " << r
              << ".v[wf_q] = " << in << "[base + wf_q];\n    }\n";
        return declare(t, load(t, r + ".v[wf_e]"));
      } else {
        const Operation& op = *v->definingOp();
        switch (op.code()) {
          case OpCode::Reshape:
            return emit(op.operand(0), {}, true);
          case OpCode::BroadcastInDim: {
            // Of one element, or adding dims of size 1 (the element order kept).
            WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, cpu::intListAttr(op, "broadcast_dimensions"));
            const int64_t from = op.operand(0)->type().numElements();
            if (from == 1 || (from == count && std::is_sorted(dims.begin(), dims.end())))
              return emit(op.operand(0), {}, true);
            return atCoordinates();
          }
          case OpCode::Constant:
            if (!op.attr("value")->splatValue()) return atCoordinates();
            break;
          case OpCode::Convert:
          case OpCode::Compare:
          case OpCode::Select:
          case OpCode::Clamp:
            break;
          default:
            if (!sharedOp(op.code())) return atCoordinates();
            break;
        }
      }
    }
    if (auto it = inputIndex_.find(v); it != inputIndex_.end()) {
      if (cacheRows_ && identity && numElementsOf(shape) == numCols_ * numElementsOf(rows_) && stridesOf(v).empty()) {
        // A row-shaped input read at this thread's column: from the registers preloaded once.
        auto [c, added] = cached_.emplace(v, "pre" + std::to_string(it->second));
        return declare(t, c->second + "[j]");
      }
      const std::vector<int64_t> stored = stridesOf(v);
      if (cacheRows_ && !columnOffset_.empty() && numElementsOf(shape) == numCols_ && stored.empty() &&
          linearIndex(shape, coords) == columnOffset_) {
        // A vector of the row's length read at this thread's column (a bias, a norm's scale):
        // from registers loaded once, four columns per load, instead of a load per element.
        if (lazyColumns_ && (t == ElementType::kBF16 || t == ElementType::kF16 || t == ElementType::kF32)) {
          // Read where this pass uses it (long warp rows, generateRows).
          const std::string name = "colv" + std::to_string(it->second);
          columnVectors_.emplace(v, name);
          body_ << "          if (j % 4 == 0) " << name << " = wf_column_load(in" << it->second << " + (" << columnOffset_
                << "));\n";
          return declare(t, load(t, name + ".v[j % 4]"));
        }
        auto [c, added] = cached_.emplace(v, "col" + std::to_string(it->second));
        readAtColumn_.insert(v);
        return declare(t, c->second + "[j]");
      }
      // `identity`: these coordinates are the root's, or (with a row-major root) have its
      // row-major linear index i, as a reshape keeps it. Then a row-major input is read at i.
      const bool atI = identity && ((shape == rootShape_ && stored == rootStrides_) || (rootStrides_.empty() && stored.empty()));
      std::string off = atI             ? "i"
                        : stored.empty() ? linearIndex(shape, coords)
                                         : stridedIndex(shape, stored, coords);
      const std::string in = "in" + std::to_string(it->second);
      const auto way = vec_ > 0 ? inputAlong_.find(v) : inputAlong_.end();
      if (way != inputAlong_.end() && way->second != Along::kVarying) {
        // Read at the group's first element: `vec` elements from there, or that one alone.
        const std::string r = "wf_r" + std::to_string(nextRead_++), s = storageCType(t);
        const std::string o = "(" + off + ")";
        if (way->second == Along::kAligned) {
          const std::string vt = "wf_vec<" + s + ", " + std::to_string(vec_) + ">";
          vectorDecls_ << "    " << vt << " " << r << ";\n";
          body_ << "    if (wf_e == 0) {\n      if (wf_aligned) " << r << " = *reinterpret_cast<const " << vt << "*>(" << in
                << " + " << o << ");\n      else for (int wf_q = 0; wf_q < " << vec_ << "; ++wf_q) " << r << ".v[wf_q] = "
                << in << "[" << o << " + wf_q];\n    }\n";
          return declare(t, load(t, r + ".v[wf_e]"));
        }
        vectorDecls_ << "    " << s << " " << r << ";\n";
        body_ << "    if (wf_e == 0) " << r << " = " << in << "[" << off << "];\n";
        return declare(t, load(t, r));
      }
      return declare(t, load(t, in + "[" + off + "]"));
    }
    const Operation& op = *v->definingOp();
    const OpCode c = op.code();
    auto operandAt = [&](size_t k) -> Expected<std::string> {
      const Value* o = op.operand(k);
      if (o->type().rank() == 0) return emit(o, {}, false);
      return emit(o, coords, identity);
    };
    switch (c) {
      case OpCode::Reduce:
        // Row reductions are computed before the passes that read them, at their row.
        return invalidArgument(op.describe() + ": reduction result read at other coordinates than its row");
      case OpCode::Constant: {
        const Attribute* value = op.attr("value");
        return declare(t, splatLiteral(value->splatValue() ? *value->splatValue() : *value->literal()));
      }
      case OpCode::Iota: {
        WF_ASSIGN_OR_RETURN(int64_t dim, cpu::intAttr(op, "iota_dimension"));
        if (dim < 0 || dim >= static_cast<int64_t>(coords.size()))
          return invalidArgument(op.describe() + ": iota_dimension out of range");
        return declare(t, rounded(t, std::string("(") + computeCType(t) + ")(" + coords[static_cast<size_t>(dim)] + ")"));
      }
      case OpCode::BroadcastInDim: {
        WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, cpu::intListAttr(op, "broadcast_dimensions"));
        const std::vector<int64_t>& inShape = op.operand(0)->type().shape();
        if (dims.size() != inShape.size()) return invalidArgument(op.describe() + ": bad broadcast_dimensions");
        std::vector<std::string> inCoords(inShape.size());
        bool same = inShape == shape;
        for (size_t j = 0; j < inShape.size(); ++j) {
          inCoords[j] = inShape[j] == 1 ? "0" : coords[static_cast<size_t>(dims[j])];
          same = same && dims[j] == static_cast<int64_t>(j);
        }
        return emit(op.operand(0), inCoords, identity && same);
      }
      case OpCode::Transpose: {
        WF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, cpu::intListAttr(op, "permutation"));
        std::vector<std::string> inCoords(perm.size());
        bool same = true;
        for (size_t d = 0; d < perm.size(); ++d) {
          inCoords[static_cast<size_t>(perm[d])] = coords[d];
          same = same && perm[d] == static_cast<int64_t>(d);
        }
        return emit(op.operand(0), inCoords, identity && same);
      }
      case OpCode::Reshape: {
        const std::vector<int64_t>& inShape = op.operand(0)->type().shape();
        // In a pass over a row, coordinates at the root's linear index i are the row's own
        // coordinates in the row shape: read so, the operand is the value the other passes
        // computed (or kept in registers) there.
        if (identity && rootStrides_.empty() && !fullCoords_.empty() && inShape == fullShape_)
          return emit(op.operand(0), fullCoords_, true);
        // A reshape that only adds or drops dims of size 1 (a keepdim reduction's result made
        // [.., 1] to broadcast) keeps the other coordinates as they are, so a row reduction's
        // result is still read at its row.
        std::vector<int64_t> outDims, inDims;
        std::vector<std::string> kept;
        for (size_t d = 0; d < shape.size(); ++d)
          if (shape[d] != 1) {
            outDims.push_back(shape[d]);
            kept.push_back(coords[d]);
          }
        for (int64_t x : inShape)
          if (x != 1) inDims.push_back(x);
        if (outDims == inDims) {
          std::vector<std::string> inCoords(inShape.size(), "0");
          for (size_t d = 0, next = 0; d < inShape.size(); ++d)
            if (inShape[d] != 1) inCoords[d] = kept[next++];
          return emit(op.operand(0), inCoords, identity && (inShape == rootShape_ || rootStrides_.empty()));
        }
        // In a pass over a row, an operand whose trailing dims are the row's columns is read at
        // this thread's columns, its leading coordinates those of the row: the element at the
        // linear index i, named by the column, so that a vector of the row's length (a bias, a
        // norm's scale and shift) reached through a broadcast is seen as read at k (readAtColumn).
        if (identity && rootStrides_.empty() && !fullCoords_.empty() && inShape.size() >= cols_.size() &&
            std::equal(cols_.begin(), cols_.end(), inShape.end() - static_cast<std::ptrdiff_t>(cols_.size()))) {
          const size_t lead = inShape.size() - cols_.size();
          std::vector<std::string> inCoords(inShape.size());
          int64_t stride = 1;
          for (size_t d = lead; d-- > 0;) {
            std::string e = stride == 1 ? std::string("row") : "(row / " + std::to_string(stride) + ")";
            if (d > 0) e = "(" + e + " % " + std::to_string(inShape[d]) + ")";
            inCoords[d] = inShape[d] == 1 ? "0" : e;
            stride *= inShape[d];
          }
          if (stride == numElementsOf(rows_)) {
            for (size_t d = 0; d < cols_.size(); ++d) inCoords[lead + d] = fullCoords_[rows_.size() + d];
            return emit(op.operand(0), inCoords, true);
          }
        }
        std::string lin = identity && rootStrides_.empty() ? "i" : linearIndex(shape, coords);
        std::string l = fresh();
        body_ << "    const " << idx_ << " " << l << " = " << lin << ";\n";
        std::vector<std::string> inCoords(inShape.size());
        int64_t stride = 1;
        for (size_t d = inShape.size(); d-- > 0;) {
          if (inShape[d] == 1) {
            inCoords[d] = "0";
          } else {
            std::string e = stride == 1 ? l : "(" + l + " / " + std::to_string(stride) + ")";
            if (d > 0) e = "(" + e + " % " + std::to_string(inShape[d]) + ")";
            inCoords[d] = e;
          }
          stride *= inShape[d];
        }
        // A row-major reshape keeps the linear index, so the operand's coordinates still have i.
        return emit(op.operand(0), inCoords, identity && (inShape == rootShape_ || rootStrides_.empty()));
      }
      case OpCode::Gather: {
        // Row r of the table, r clamped into range as the spec clamps start indices.
        std::vector<std::string> idxCoords(coords.begin(), coords.end() - 1);
        idxCoords.push_back("0");
        WF_ASSIGN_OR_RETURN(std::string idx, emit(op.operand(1), idxCoords, false));
        const int64_t rows = op.operand(0)->type().shape()[0];
        std::string r = fresh();
        body_ << "    const " << idx_ << " " << r << " = (" << idx_ << ")(" << idx << " < 0 ? 0 : (" << idx << " > "
              << rows - 1 << " ? " << rows - 1 << " : " << idx << "));\n";
        return emit(op.operand(0), {r, coords.back()}, false);
      }
      case OpCode::Slice: {
        WF_ASSIGN_OR_RETURN(std::vector<int64_t> start, cpu::intListAttr(op, "start_indices"));
        WF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, cpu::intListAttr(op, "strides"));
        std::vector<std::string> inCoords(coords.size());
        for (size_t d = 0; d < coords.size(); ++d) {
          std::string e = coords[d];
          if (strides[d] != 1) e = "(" + e + " * " + std::to_string(strides[d]) + ")";
          if (start[d] != 0) e = "(" + e + " + " + std::to_string(start[d]) + ")";
          inCoords[d] = e;
        }
        return emit(op.operand(0), inCoords, false);
      }
      case OpCode::Concatenate: {
        // Every operand is read at the coordinate clamped into its own extent along the
        // dimension (in bounds; the ops are pure), and the one whose range holds the coordinate
        // is picked.
        WF_ASSIGN_OR_RETURN(int64_t dim, cpu::intAttr(op, "dimension"));
        if (dim < 0 || dim >= static_cast<int64_t>(coords.size()))
          return invalidArgument(op.describe() + ": dimension out of range");
        const auto d = static_cast<size_t>(dim);
        std::vector<std::string> values;
        std::vector<int64_t> ends;
        int64_t offset = 0;
        for (const Value* o : op.operands()) {
          const int64_t size = o->type().shape()[d];
          if (size == 0) continue;
          std::vector<std::string> inCoords = coords;
          if (size == 1) {
            inCoords[d] = "0";
          } else {
            const std::string shifted = fresh(), at = fresh();
            body_ << "    const " << idx_ << " " << shifted << " = (" << idx_ << ")(" << coords[d] << ") - " << offset
                  << ";\n    const " << idx_ << " " << at << " = " << shifted << " < 0 ? 0 : (" << shifted << " > "
                  << size - 1 << " ? " << size - 1 << " : " << shifted << ");\n";
            inCoords[d] = at;
          }
          WF_ASSIGN_OR_RETURN(std::string value, emit(o, inCoords, false));
          values.push_back(value);
          offset += size;
          ends.push_back(offset);
        }
        if (values.empty()) return internalError(op.describe() + ": concatenate of empty operands in a fused group");
        std::string picked = values.back();
        for (size_t k = values.size() - 1; k-- > 0;)
          picked = "((" + coords[d] + ") < " + std::to_string(ends[k]) + " ? " + values[k] + " : " + picked + ")";
        return declare(t, picked);
      }
      case OpCode::Convert: {
        WF_ASSIGN_OR_RETURN(std::string x, operandAt(0));
        return declare(t, converted(op.operand(0)->type().elementType(), t, x));
      }
      case OpCode::Compare: {
        WF_ASSIGN_OR_RETURN(std::string a, operandAt(0));
        WF_ASSIGN_OR_RETURN(std::string b, operandAt(1));
        const std::string& d = op.attr("comparison_direction")->stringValue();
        if (d != "EQ" && d != "NE" && d != "GE" && d != "GT" && d != "LE" && d != "LT")
          return invalidArgument(op.describe() + ": unknown comparison_direction '" + d + "'");
        return declare(t, "wf::em::Compare" + d + "::apply(" + a + ", " + b + ")");
      }
      case OpCode::Select: {
        WF_ASSIGN_OR_RETURN(std::string p, operandAt(0));
        WF_ASSIGN_OR_RETURN(std::string a, operandAt(1));
        WF_ASSIGN_OR_RETURN(std::string b, operandAt(2));
        return declare(t, "(" + p + " ? " + a + " : " + b + ")");
      }
      case OpCode::Clamp: {
        WF_ASSIGN_OR_RETURN(std::string lo, operandAt(0));
        WF_ASSIGN_OR_RETURN(std::string x, operandAt(1));
        WF_ASSIGN_OR_RETURN(std::string hi, operandAt(2));
        if (isFloat(t)) return declare(t, "wf::em::Min::apply(wf::em::Max::apply(" + x + ", " + lo + "), " + hi + ")");
        std::string m = declare(t, "wf::em::Max::apply(" + x + ", " + lo + ")");
        return declare(t, "wf::em::Min::apply(" + m + ", " + hi + ")");
      }
      default:
        break;
    }
    // Every other fusible op is a functor of element_math.h, computing in the compute C type
    // (narrow floats in float, rounded after the op).
    const SharedOp* shared = sharedOp(c);
    if (!shared || shared->arity != static_cast<int>(op.numOperands()))
      return internalError(op.describe() + ": no fused form");
    std::string args;
    for (size_t k = 0; k < op.numOperands(); ++k) {
      WF_ASSIGN_OR_RETURN(std::string x, operandAt(k));
      args += (k ? ", " : "") + x;
    }
    return declare(t, rounded(t, std::string(shared->functor) + "::apply(" + args + ")"));
  }

  const FusionGroup& group_;
  const ValueStrides* strides_ = nullptr;
  std::vector<int64_t> rootStrides_;  // empty: row-major
  std::unordered_map<const Value*, int> inputIndex_;
  // Emitted values by (value, coordinates); a layer per loop scope (row fusion).
  std::vector<std::unordered_map<std::string, std::string>> memo_;
  std::vector<int64_t> rows_, cols_;
  std::vector<std::string> rowCoords_;
  std::vector<int64_t> fullShape_;        // row fusion: rows x cols
  std::vector<std::string> fullCoords_;   // ... and, inside a pass over the row, its coordinates there
  size_t nextCoord_ = 0;                  // the next free coordinate variable number
  bool rootFull_ = false;
  bool cacheRows_ = false;  // row fusion: row-shaped inputs held in registers (columnLoop)
  bool vec4_ = false;       // ... and moved four consecutive columns at a time (columnOf)
  int64_t perThread_ = 0, numCols_ = 0;
  int lanes_ = 0;
  std::map<const Value*, std::string> cached_;  // input -> its register array
  std::set<const Value*> readAtColumn_;          // ... of those, the vectors of the row's length
  bool lazyColumns_ = false;  // row fusion: vectors of the row's length read at each pass (long warp rows)
  std::map<const Value*, std::string> columnVectors_;  // ... those vectors -> their four-column register
  std::string columnOffset_;  // inside a pass over the row: the column's linear index (k) as coordinates
  std::vector<std::pair<std::string, std::string>> passCache_;  // reduced values kept per row: name, C type
  std::ostringstream body_;
  std::vector<int64_t> rootShape_;
  std::string idx_;
  int next_ = 0;
  // A vector loop kernel (generateVectorLoop): its width, how each input is read, the
  // registers its reads fill (declared before the group's elements), and their next number.
  int64_t vec_ = 0;
  std::map<const Value*, Along> inputAlong_;
  std::ostringstream vectorDecls_;
  int nextRead_ = 0;
  // The multi-tensor form (generateMultiTensor): on, the root's element count, the coordinates
  // declared so far (c0.. for the values emitted at coordinates), and the inputs read as vectors.
  bool flat_ = false;
  int64_t flatN_ = 0;
  size_t flatCoords_ = 0;
  std::set<size_t> alignedInputs_;
};

}  // namespace

std::string fusedKernelPrelude() { return KernelEmitter::prelude(); }

Expected<MultiTensorKernelSource> generateMultiTensorKernel(const FusionGroup& group, const std::string& name,
                                                          const ValueStrides* strides) {
  if (group.ops.empty()) return internalError("empty fusion group");
  KernelEmitter emitter(group, strides);
  return emitter.generateMultiTensor(name);
}

Expected<FusedKernelSource> generateFusedKernel(const FusionGroup& group, const std::string& name,
                                                const ValueStrides* strides) {
  if (group.ops.empty()) return internalError("empty fusion group");
  KernelEmitter emitter(group, strides);
  return emitter.generate(name);
}

Expected<RegionFunction> generateRegionFunction(const Region& region, const std::string& name,
                                               const std::vector<int64_t>* elementwiseShape) {
  if (region.blocks().size() != 1)
    return unimplemented("a region of " + std::to_string(region.blocks().size()) + " blocks (unimplemented on cuda)");
  const Block& block = region.front();
  const Operation* ret = block.terminator();
  if (!ret || ret->code() != OpCode::Return) return invalidArgument("a region that does not end in stablehlo.return");
  auto scalar = [](const Value* v) { return isFusibleType(v->type()) && v->type().rank() == 0; };
  // With elementwiseShape, a value of that shape is a scalar too: the function computes one of
  // its elements, which only elementwise ops allow (their element i reads their operands'
  // element i, or the one element of a rank-0 operand).
  auto element = [&](const Value* v) {
    return scalar(v) || (elementwiseShape && isFusibleType(v->type()) && v->type().shape() == *elementwiseShape);
  };
  auto elementwise = [&](const Operation& op) {
    const FuseKind kind = fuseKind(op);
    if (kind == FuseKind::kCompute) return true;
    if (op.code() == OpCode::Convert) return kind == FuseKind::kMove;  // a widening one
    if (op.code() == OpCode::Constant) return kind == FuseKind::kMove;  // a splat
    // A broadcast of a rank-0 value holds that value everywhere.
    return op.code() == OpCode::BroadcastInDim && kind == FuseKind::kMove && scalar(op.operand(0));
  };
  // Values from outside the region (implicit captures) are not parameters of the function.
  auto local = [&](const Value* v) {
    return v->isBlockArgument() ? v->ownerBlock() == &block : v->definingOp()->parentBlock() == &block;
  };
  for (size_t i = 0; i < block.numArguments(); ++i)
    if (!element(block.argument(i)))
      return unimplemented("a region argument of type " + block.argument(i)->type().toString() + " (unimplemented on cuda)");
  for (const auto& op : block.operations()) {
    bool ok = true;
    if (op.get() != ret) {
      const FuseKind kind = fuseKind(*op);
      ok = kind == FuseKind::kCompute || kind == FuseKind::kMove;
      // A compare_type of the other signedness reinterprets the bits, which the generated
      // compare does not.
      if (const Attribute* ct = op->code() == OpCode::Compare ? op->attr("compare_type") : nullptr) {
        const ElementType et = op->operand(0)->type().elementType();
        if ((ct->stringValue() == "SIGNED" && isUnsignedInteger(et)) || (ct->stringValue() == "UNSIGNED" && isSignedInteger(et)))
          ok = false;
      }
      bool allScalar = true, allElements = true;
      for (size_t r = 0; r < op->numResults(); ++r) {
        allScalar = allScalar && scalar(op->result(r));
        allElements = allElements && element(op->result(r));
      }
      for (const Value* v : op->operands()) {
        allScalar = allScalar && scalar(v);
        allElements = allElements && element(v);
      }
      ok = ok && (allScalar || (allElements && elementwise(*op)));
    }
    for (const Value* v : op->operands()) ok = ok && element(v) && local(v);
    if (!ok) return unimplemented(op->describe() + ": no CUDA code for this op in a region (unimplemented on cuda)");
  }
  FusionGroup none;  // a region function reads no buffers
  KernelEmitter emitter(none, nullptr);
  return emitter.generateRegion(block, name);
}

const char* storageTypeName(ElementType t) { return storageCType(t); }
const char* computeTypeName(ElementType t) { return storageCType(t) ? computeCType(t) : nullptr; }
std::string loadExpr(ElementType t, const std::string& ref) { return KernelEmitter::load(t, ref); }
std::string storeExpr(ElementType t, const std::string& value) { return KernelEmitter::store(t, value); }
std::string convertExpr(ElementType from, ElementType to, const std::string& value) {
  return from == to ? value : KernelEmitter::converted(from, to, value);
}

}  // namespace wf::cuda
