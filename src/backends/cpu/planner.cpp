// planCpu: hoisting, fused elementwise groups and fused convolutions over the entry function
// (plan.h).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "backends/cpu/conv_fused.h"
#include "backends/cpu/matmul_fused.h"
#include "backends/cpu/plan.h"

namespace wf::cpu {
namespace {

// Ops whose result is not a function of their operands alone (random numbers, I/O, ops that
// meet other processes or report checks): never hoisted.
bool hasEffects(OpCode code) {
  switch (code) {
    case OpCode::Rng:
    case OpCode::RngBitGenerator:
    case OpCode::CustomCall:
    case OpCode::Infeed:
    case OpCode::Outfeed:
    case OpCode::Send:
    case OpCode::Recv:
    case OpCode::AllGather:
    case OpCode::AllReduce:
    case OpCode::AllToAll:
    case OpCode::ReduceScatter:
    case OpCode::CollectivePermute:
    case OpCode::CollectiveBroadcast:
    case OpCode::ReplicaId:
    case OpCode::PartitionId:
    case OpCode::OptimizationBarrier:
    case OpCode::InterpreterProbe:
    case OpCode::InterpreterPrint:
    case OpCode::FuncCall:
      return true;
    default:
      return false;
  }
}

bool isF32Tensor(const Type& t) { return t.isTensor() && t.hasStaticShape() && t.elementType() == ElementType::kF32; }

int64_t elements(const Type& t) { return t.isTensor() && t.hasStaticShape() ? t.numElements() : -1; }

void collectNestedUses(const Operation& op, std::vector<const Value*>& uses) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        uses.insert(uses.end(), inner->operands().begin(), inner->operands().end());
        collectNestedUses(*inner, uses);
      }
}

class Planner {
 public:
  Planner(const Operation& entry, const CompileOptions& options, const std::vector<const Value*>& taps)
      : entry_(entry), options_(options), body_(FuncOp(&entry).body()) {
    for (const Value* t : taps) kept_.insert(t);
  }

  Expected<CpuPlan> run() {
    plan_.entry = &entry_;
    for (const auto& op : body_.operations()) {
      if (op->code() == OpCode::Return || op->code() == OpCode::FuncReturn) {
        for (const Value* v : op->operands()) kept_.insert(v);
        continue;
      }
      position_[op.get()] = ops_.size();
      ops_.push_back(op.get());
    }
    collectUsers();
    planHoisting();
    if (options_.fuse) {
      planConvolutions();
      planMatmuls();
      planElementwiseGroups();
    }
    emitSteps();
    planLiveness();
    return std::move(plan_);
  }

 private:
  // users_[v]: the top-level ops that read v (directly or inside their regions), in order.
  void collectUsers() {
    std::vector<const Value*> uses;
    for (const Operation* op : ops_) {
      uses.assign(op->operands().begin(), op->operands().end());
      collectNestedUses(*op, uses);
      for (const Value* v : uses) {
        auto& list = users_[v];
        if (list.empty() || list.back() != op) list.push_back(op);
      }
    }
  }
  const std::vector<const Operation*>& usersOf(const Value* v) {
    static const std::vector<const Operation*> none;
    auto it = users_.find(v);
    return it == users_.end() ? none : it->second;
  }

  // Lazy ops: cheap to compute per run, or read in place by their users, and costly to keep
  // materialized: an expanding broadcast, a splat constant, a transpose that dot_general folds.
  bool lazy(const Operation& op) {
    if (op.numResults() != 1) return false;
    if (op.code() == OpCode::BroadcastInDim)
      return elements(op.result(0)->type()) > elements(op.operand(0)->type());
    if (op.code() == OpCode::Constant) return splatF32Constant(op).has_value() && elements(op.result(0)->type()) > 1;
    if (op.code() == OpCode::Transpose) {
      const auto& users = usersOf(op.result(0));
      return !users.empty() && std::all_of(users.begin(), users.end(), [](const Operation* u) {
        return u->code() == OpCode::DotGeneral;
      });
    }
    return false;
  }

  void planHoisting() {
    std::unordered_set<const Value*> carried;
    for (const CarriedResult& c : options_.carriedResults) carried.insert(body_.argument(c.argument));
    for (size_t i : options_.boundArguments)
      if (i < body_.numArguments() && !carried.count(body_.argument(i))) static_.insert(body_.argument(i));
    std::vector<bool> isStatic(ops_.size(), false);
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Operation& op = *ops_[i];
      bool ok = op.numRegions() == 0 && !hasEffects(op.code()) && op.numResults() > 0;
      for (const Value* v : op.operands()) ok = ok && static_.count(v);
      for (const auto& r : op.results()) ok = ok && r->type().isTensor() && r->type().hasStaticShape();
      isStatic[i] = ok;
      if (ok)
        for (const auto& r : op.results()) static_.insert(r.get());
    }
    // A static lazy op is hoisted only where a hoisted op or the caller reads it; otherwise it
    // stays per-run work (done in place by its readers, or cheap), deciding from the last op up.
    for (size_t i = ops_.size(); i-- > 0;) {
      const Operation& op = *ops_[i];
      if (!isStatic[i]) continue;
      bool hoist = !lazy(op);
      for (const auto& r : op.results()) {
        if (kept_.count(r.get())) hoist = true;
        for (const Operation* u : usersOf(r.get())) hoist = hoist || hoisted_.count(u);
      }
      if (hoist) hoisted_.insert(&op);
    }
  }
  bool hoisted(const Value* v) const {
    const Operation* d = v->definingOp();
    return d ? hoisted_.count(d) > 0 : static_.count(v) > 0;
  }

  // ---- fused convolutions (conv_fused.h) ----
  void planConvolutions() {
    for (const Operation* op : ops_) {
      if (op->code() != OpCode::Convolution || hoisted_.count(op) || claimed_.count(op)) continue;
      std::optional<FusedConvMatch> match = matchFusedConv(
          *op, [&](const Value* v) -> const std::vector<const Operation*>& { return usersOf(v); },
                                                           [&](const Value* v) { return hoisted(v); },
                                                           [&](const Value* v) { return kept_.count(v) > 0; },
                                                           [&](const Operation* o) { return claimed_.count(o) > 0; });
      if (!match) continue;
      auto conv = std::make_shared<FusedConv>(std::move(match->conv));
      conv->winograd = options_.winograd && conv->offersWinograd();
      plan_.stats.winogradConvs += conv->winograd ? 1 : 0;
      int index = static_cast<int>(plan_.fusedConvs.size());
      plan_.fusedConvs.push_back(conv);
      for (const Operation* o : match->ops) {
        claimed_.insert(o);
        convOf_[o] = index;
      }
      for (const Operation* o : match->absorbed) claimed_.insert(o);
      convLast_[index] = match->ops.back();
      plan_.stats.fusedConvOps += static_cast<int>(match->ops.size());
    }
    // Results read only by other fused convolutions stay in oneDNN's blocked layout.
    for (const auto& producer : plan_.fusedConvs) {
      const Value* r = producer->result;
      const auto& users = usersOf(r);
      bool blocked = !kept_.count(r) && !users.empty();
      for (const Operation* u : users) {
        auto it = convOf_.find(u);
        const FusedConv* reader = it == convOf_.end() ? nullptr : plan_.fusedConvs[static_cast<size_t>(it->second)].get();
        blocked = blocked && reader && reader != producer.get() && (reader->input == r || reader->residual == r);
      }
      if (!blocked) continue;
      producer->blockedOutput = true;
      ++plan_.stats.blockedValues;
      for (const Operation* u : users) {
        FusedConv& reader = *plan_.fusedConvs[static_cast<size_t>(convOf_.at(u))];
        if (reader.input == r) reader.inputProducer = producer.get();
        if (reader.residual == r) reader.residualProducer = producer.get();
      }
    }
  }

  // ---- fused matrix products (matmul_fused.h) ----
  void planMatmuls() {
    for (const Operation* op : ops_) {
      if (op->code() != OpCode::DotGeneral || hoisted_.count(op) || claimed_.count(op)) continue;
      std::optional<FusedMatmulMatch> match = matchFusedMatmul(
          *op, [&](const Value* v) -> const std::vector<const Operation*>& { return usersOf(v); },
          [&](const Value* v) { return hoisted(v); }, [&](const Value* v) { return kept_.count(v) > 0; },
          [&](const Operation* o) { return claimed_.count(o) > 0; });
      if (!match) continue;
      int index = static_cast<int>(plan_.fusedMatmuls.size());
      plan_.fusedMatmuls.push_back(std::make_shared<FusedMatmul>(std::move(match->matmul)));
      for (const Operation* o : match->ops) {
        claimed_.insert(o);
        matmulOf_[o] = index;
      }
      for (const Operation* o : match->absorbed) claimed_.insert(o);
      matmulLast_[index] = match->ops.back();
    }
  }

  // ---- fused elementwise groups ----
  struct Group {
    std::vector<const Operation*> ops;
    bool open = true;
  };

  bool candidate(const Operation& op) {
    if (hoisted_.count(&op) || claimed_.count(&op) || !fusibleElementwise(op.code()) || op.numResults() != 1 ||
        op.numRegions() != 0 || !isF32Tensor(op.result(0)->type()))
      return false;
    // A reshape joins only where it saves a pass: a view of a value that is read elsewhere too
    // costs nothing on its own, and would cost a copy inside a group.
    if (op.code() == OpCode::Reshape)
      return op.numOperands() == 1 && isF32Tensor(op.operand(0)->type()) && !kept_.count(op.operand(0)) &&
             usersOf(op.operand(0)).size() == 1;
    const auto& shape = op.result(0)->type().shape();
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Type& t = op.operand(i)->type();
      bool pred = op.code() == OpCode::Select && i == 0;
      if (!t.isTensor() || !t.hasStaticShape() || t.shape() != shape ||
          t.elementType() != (pred ? ElementType::kI1 : ElementType::kF32))
        return false;
    }
    return true;
  }

  void planElementwiseGroups() {
    for (const Operation* op : ops_) {
      int joined = -1;
      if (candidate(*op)) {
        // Join the open groups that compute an operand (merging them: none has a reader
        // outside it yet, so they can all run at this op).
        const int64_t n = elements(op->result(0)->type());
        for (const Value* v : op->operands()) {
          auto it = groupOf_.find(v->definingOp());
          if (it == groupOf_.end() || it->second == joined) continue;
          Group& g = groups_[static_cast<size_t>(it->second)];
          if (!g.open || elements(g.ops.front()->result(0)->type()) != n) continue;
          if (joined < 0) {
            joined = it->second;
            continue;
          }
          Group& into = groups_[static_cast<size_t>(joined)];
          for (const Operation* o : g.ops) groupOf_[o] = joined;
          into.ops.insert(into.ops.end(), g.ops.begin(), g.ops.end());
          std::sort(into.ops.begin(), into.ops.end(),
                    [&](const Operation* a, const Operation* b) { return position_.at(a) < position_.at(b); });
          g.ops.clear();
          g.open = false;
        }
        // A reshape joins the group of its operand; it starts none (alone it costs nothing).
        if (joined < 0 && op->code() != OpCode::Reshape) {
          joined = static_cast<int>(groups_.size());
          groups_.push_back({});
        }
        if (joined >= 0) {
          groups_[static_cast<size_t>(joined)].ops.push_back(op);
          groupOf_[op] = joined;
        }
      }
      // A group whose value another op reads (as a leaf of another group, or materialized)
      // takes no later op: it runs at its last op, which must come before that reader.
      std::vector<const Value*> uses(op->operands().begin(), op->operands().end());
      collectNestedUses(*op, uses);
      for (const Value* v : uses) {
        auto it = groupOf_.find(v->definingOp());
        if (it != groupOf_.end() && it->second != joined) groups_[static_cast<size_t>(it->second)].open = false;
      }
    }
  }

  // The leaf (or scalar) that operand `v` of a group member reads.
  FusedRef leafFor(FusedElementwise& g, const Value* v, std::unordered_map<const Value*, int>& leafIndex,
                   bool pred) {
    const Operation* def = v->definingOp();
    if (!pred && def)
      if (std::optional<float> s = splatF32Constant(*def)) {
        readsVirtually_.insert(v);
        return {FusedRef::Kind::kScalar, 0, *s};
      }
    const Value* source = v;
    std::vector<int64_t> strides;
    const auto& shape = v->type().shape();
    if (def && def->code() == OpCode::BroadcastInDim) {
      // Read the broadcast's operand through broadcast strides.
      source = def->operand(0);
      const Attribute* dimsAttr = def->attr("broadcast_dimensions");
      std::vector<int64_t> dims = dimsAttr ? dimsAttr->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
      const auto& srcShape = source->type().shape();
      std::vector<int64_t> srcStrides = rowMajorStrides(srcShape);
      strides.assign(shape.size(), 0);
      for (size_t j = 0; j < dims.size() && j < srcShape.size(); ++j)
        if (srcShape[j] != 1) strides[static_cast<size_t>(dims[j])] = srcStrides[j];
    } else {
      strides = rowMajorStrides(shape);
    }
    auto it = leafIndex.find(v);
    if (it != leafIndex.end()) return {FusedRef::Kind::kLeaf, it->second, 0};
    FusedLeaf leaf;
    leaf.value = source;
    leaf.type = source->type().elementType();
    leaf.dense = strides == rowMajorStrides(shape);
    leaf.shape = shape;
    leaf.strides = std::move(strides);
    int index = static_cast<int>(g.leaves.size());
    g.leaves.push_back(std::move(leaf));
    leafIndex[v] = index;
    if (source != v) readsVirtually_.insert(v);
    return {FusedRef::Kind::kLeaf, index, 0};
  }

  // A broadcast or splat read in place by a group still needs its own step if anything else
  // reads it.
  bool needsStep(const Operation& op) {
    if (!readsVirtually_.count(op.result(0))) return true;
    if (kept_.count(op.result(0))) return true;
    for (const Operation* u : usersOf(op.result(0)))
      if (!groupOf_.count(u)) return true;
    return false;
  }

  void emitSteps() {
    // Build each group's description first (it decides which broadcasts are read in place).
    std::vector<int> fusedIndex(groups_.size(), -1);
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& group = groups_[gi];
      if (group.ops.empty()) continue;  // merged into another
      FusedElementwise g;
      g.elements = elements(group.ops.front()->result(0)->type());
      g.ops = group.ops;
      std::unordered_map<const Value*, int> nodeIndex, leafIndex;
      for (const Operation* op : group.ops) {
        FusedNode node;
        node.code = op->code();
        node.result = op->result(0);
        for (size_t i = 0; i < op->numOperands(); ++i) {
          const Value* v = op->operand(i);
          auto n = nodeIndex.find(v);
          if (n != nodeIndex.end())
            node.operands.push_back({FusedRef::Kind::kNode, n->second, 0});
          else
            node.operands.push_back(leafFor(g, v, leafIndex, op->code() == OpCode::Select && i == 0));
        }
        nodeIndex[op->result(0)] = static_cast<int>(g.nodes.size());
        g.nodes.push_back(std::move(node));
      }
      for (FusedNode& node : g.nodes) {
        node.output = kept_.count(node.result) > 0;
        for (const Operation* u : usersOf(node.result)) {
          auto it = groupOf_.find(u);
          node.output = node.output || it == groupOf_.end() || it->second != static_cast<int>(gi);
        }
      }
      fusedIndex[gi] = static_cast<int>(plan_.fusedElementwise.size());
      plan_.stats.fusedOps += static_cast<int>(g.ops.size());
      plan_.fusedElementwise.push_back(std::move(g));
    }
    for (const Operation* op : ops_) {
      if (hoisted_.count(op)) {
        Step s;
        s.op = op;
        for (const auto& r : op->results()) s.outputs.push_back(r.get());
        plan_.prologue.push_back(std::move(s));
        continue;
      }
      if (auto it = convOf_.find(op); it != convOf_.end()) {
        if (convLast_.at(it->second) != op) continue;
        Step s;
        s.kind = Step::Kind::kFusedConv;
        s.op = op;
        s.fused = it->second;
        s.outputs.push_back(op->result(0));
        plan_.steps.push_back(std::move(s));
        ++plan_.stats.fusedConvs;
        continue;
      }
      if (auto it = matmulOf_.find(op); it != matmulOf_.end()) {
        if (matmulLast_.at(it->second) != op) continue;
        Step s;
        s.kind = Step::Kind::kFusedMatmul;
        s.op = op;
        s.fused = it->second;
        s.outputs.push_back(op->result(0));
        plan_.steps.push_back(std::move(s));
        ++plan_.stats.fusedMatmuls;
        continue;
      }
      if (auto it = groupOf_.find(op); it != groupOf_.end()) {
        if (groups_[static_cast<size_t>(it->second)].ops.back() != op) continue;
        Step s;
        s.kind = Step::Kind::kFusedElementwise;
        s.op = op;
        s.fused = fusedIndex[static_cast<size_t>(it->second)];
        for (const FusedNode& n : plan_.fusedElementwise[static_cast<size_t>(s.fused)].nodes)
          if (n.output) s.outputs.push_back(n.result);
        plan_.steps.push_back(std::move(s));
        ++plan_.stats.fusedGroups;
        continue;
      }
      if (claimed_.count(op)) continue;  // absorbed by a fused convolution
      if ((op->code() == OpCode::BroadcastInDim || op->code() == OpCode::Constant) && op->numResults() == 1 &&
          !needsStep(*op))
        continue;
      Step s;
      s.op = op;
      for (const auto& r : op->results()) s.outputs.push_back(r.get());
      plan_.steps.push_back(std::move(s));
    }
    plan_.stats.steps = static_cast<int>(plan_.steps.size());
    plan_.stats.hoistedSteps = static_cast<int>(plan_.prologue.size());
  }

  // The values a per-run step reads.
  std::vector<const Value*> reads(const Step& s) {
    std::vector<const Value*> r;
    switch (s.kind) {
      case Step::Kind::kOp:
        r.assign(s.op->operands().begin(), s.op->operands().end());
        collectNestedUses(*s.op, r);
        break;
      case Step::Kind::kFusedElementwise:
        for (const FusedLeaf& l : plan_.fusedElementwise[static_cast<size_t>(s.fused)].leaves) r.push_back(l.value);
        break;
      case Step::Kind::kFusedConv: r = plan_.fusedConvs[static_cast<size_t>(s.fused)]->perRunInputs(); break;
      case Step::Kind::kFusedMatmul: r.push_back(plan_.fusedMatmuls[static_cast<size_t>(s.fused)]->lhs); break;
    }
    return r;
  }

  // Frees each per-run value after the last step that reads it, so memory stays at the live set
  // and the allocator hands the next step recently used (cache-warm) blocks.
  void planLiveness() {
    std::unordered_map<const Value*, size_t> last;
    std::unordered_set<const Value*> args;
    for (size_t i = 0; i < body_.numArguments(); ++i) args.insert(body_.argument(i));
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      for (const Value* v : plan_.steps[i].outputs) last[v] = i;
    }
    for (size_t i = 0; i < plan_.steps.size(); ++i)
      for (const Value* v : reads(plan_.steps[i]))
        if (auto it = last.find(v); it != last.end()) it->second = std::max(it->second, i);
    for (const auto& [v, i] : last)
      if (!kept_.count(v) && !args.count(v)) plan_.steps[i].dead.push_back(v);
  }

  const Operation& entry_;
  const CompileOptions& options_;
  const Block& body_;
  CpuPlan plan_;
  std::vector<const Operation*> ops_;
  std::unordered_map<const Operation*, size_t> position_;
  std::unordered_map<const Value*, std::vector<const Operation*>> users_;
  std::unordered_set<const Value*> kept_;    // returned or tapped: materialized, never freed
  std::unordered_set<const Value*> static_;  // depends only on bound arguments and constants
  std::unordered_set<const Operation*> hoisted_;
  std::unordered_set<const Operation*> claimed_;  // ops inside fused convolutions
  std::unordered_map<const Operation*, int> convOf_;
  std::unordered_map<int, const Operation*> convLast_;
  std::unordered_map<const Operation*, int> matmulOf_;
  std::unordered_map<int, const Operation*> matmulLast_;
  std::vector<Group> groups_;
  std::unordered_map<const Operation*, int> groupOf_;
  std::unordered_set<const Value*> readsVirtually_;  // broadcasts and splats read in place by a group
};

}  // namespace

Expected<CpuPlan> planCpu(const Module& module, const Operation& entry, const CompileOptions& options,
                          const std::vector<const Value*>& taps) {
  return Planner(entry, options, taps).run();
}

std::string CpuPlan::describe() const {
  std::string out;
  auto line = [&](const char* phase, const Step& s) {
    out += phase;
    switch (s.kind) {
      case Step::Kind::kOp: out += s.op->name(); break;
      case Step::Kind::kFusedElementwise: {
        const FusedElementwise& g = fusedElementwise[static_cast<size_t>(s.fused)];
        out += "fused_elementwise[";
        for (size_t i = 0; i < g.ops.size(); ++i) out += (i ? "," : "") + g.ops[i]->name();
        out += "]";
        break;
      }
      case Step::Kind::kFusedConv: out += fusedConvs[static_cast<size_t>(s.fused)]->describe(); break;
      case Step::Kind::kFusedMatmul: out += fusedMatmuls[static_cast<size_t>(s.fused)]->describe(); break;
    }
    out += " at " + s.op->location().toString() + "\n";
  };
  for (const Step& s : prologue) line("prologue: ", s);
  for (const Step& s : steps) line("run: ", s);
  return out;
}

}  // namespace wf::cpu
