// Rematerialization of cheap forward values in the backward pass (rules.h: rematerializeCheapValues).
//
// The backward ops read forward values, which the forward pass must then keep until the backward
// pass is done: for a transformer, per layer, GELU's x/2, x/sqrt(2) and 1 + erf(x/sqrt(2)) (three
// tensors of the MLP's width where x alone would do), LayerNorm's x - mean beside its normalized
// x, the bf16 copies of the weights autocast makes. Each of those is a short chain of elementwise
// or data-movement ops from values that are kept anyway (saved for another backward op, a
// function argument, a small row statistic), or several share one input that costs less to keep
// than they do. Such a value is recomputed at its first backward use, as PyTorch's min-cut
// partitioner does for torch.compile: the chain's ops are copied there (the GPU fuses the copies
// into the backward kernels), and the backward ops read the copy.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/rules.h"
#include "ir/builder.h"

namespace wf::autodiff {
namespace {

bool isCheap(OpCode code) {
  switch (code) {
#define X(enumerator, name)
#define X_ELEMENTWISE(enumerator, name, operands) case OpCode::enumerator:
#include "ir/ops.def"
#undef X_ELEMENTWISE
#undef X
    case OpCode::Convert: case OpCode::Compare: case OpCode::Select: case OpCode::BroadcastInDim:
    case OpCode::Reshape: case OpCode::Transpose: case OpCode::Constant: case OpCode::Iota:
      return true;
    default:
      return false;
  }
}

int64_t bytesOf(const Value* v) {
  const Type& t = v->type();
  if (!t.isTensor() || !t.hasStaticShape()) return 0;
  return t.numElements() * std::max<int64_t>(1, storageBytes(t.elementType()));
}

int64_t elementsOf(const Value* v) {
  const Type& t = v->type();
  return t.isTensor() && t.hasStaticShape() ? t.numElements() : 0;
}

// How `v` would be recomputed: the ops from the values it stops at (leaves) to `v`.
struct Recompute {
  std::vector<const Operation*> ops;  // in forward order
  std::set<const Value*> leaves;
};

class Remat {
 public:
  Remat(Block& body, size_t firstBackward) : body_(body), firstBackward_(firstBackward) {
    const auto& ops = body.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      position_[ops[i].get()] = i;
      collectUses(*ops[i], ops[i].get());
    }
  }

  Status run() {
    const auto& ops = body_.operations();
    // Forward values that backward ops read: what the forward pass keeps for the backward pass.
    std::vector<const Value*> candidates;
    for (size_t i = 0; i < firstBackward_ && i < ops.size(); ++i)
      for (const auto& r : ops[i]->results())
        if (readByBackward(r.get())) {
          saved_.insert(r.get());
          if (isCheap(ops[i]->code()) && ops[i]->code() != OpCode::Constant && bytesOf(r.get()) > 0)
            candidates.push_back(r.get());
        }
    std::unordered_set<const Value*> accepted;
    for (int round = 0; round < 8; ++round) {
      std::set<const Value*> now;
      std::vector<std::pair<std::set<const Value*>, std::vector<const Value*>>> byLeaves;  // first-seen order
      std::vector<const Value*> planned;
      std::unordered_map<const Value*, Recompute> plans;
      for (const Value* v : candidates) {
        if (accepted.count(v)) continue;
        Recompute r;
        if (!plan(v, r)) continue;
        planned.push_back(v);
        plans[v] = std::move(r);
      }
      auto acceptable = [&](const Value* v, const Recompute& r) {
        if (leavesOfAccepted_.count(v)) return false;  // an accepted plan reads it: it stays kept
        for (const Value* leaf : r.leaves)
          if (now.count(leaf)) return false;  // its plan went through a value recomputed this round
        return true;
      };
      auto accept = [&](const Value* v, const Recompute& r) {
        now.insert(v);
        accepted.insert(v);
        order_.push_back(v);
        saved_.erase(v);
        for (const Value* leaf : r.leaves) {
          saved_.insert(leaf);
          leavesOfAccepted_.insert(leaf);
        }
        plans_[v] = r;
      };
      // Values that share leaves not kept yet, first: worth it when together they outweigh those
      // leaves. Then the values whose leaves are kept anyway (a plan through a value recomputed
      // this round waits for the next round, when it is planned through that value's chain).
      for (const Value* v : planned) {
        const Recompute& r = plans[v];
        if (newCost(r) == 0) continue;
        auto group = std::find_if(byLeaves.begin(), byLeaves.end(), [&](const auto& g) { return g.first == r.leaves; });
        if (group == byLeaves.end()) byLeaves.push_back({r.leaves, {v}});
        else group->second.push_back(v);
      }
      for (auto& [leaves, values] : byLeaves) {
        int64_t benefit = 0;
        for (const Value* v : values)
          if (acceptable(v, plans[v])) benefit += bytesOf(v);
        if (benefit <= newCost(plans[values.front()])) continue;
        for (const Value* v : values)
          if (acceptable(v, plans[v])) accept(v, plans[v]);
      }
      for (const Value* v : planned)
        if (!accepted.count(v) && newCost(plans[v]) == 0 && acceptable(v, plans[v])) accept(v, plans[v]);
      if (now.empty()) break;
    }
    return rewrite();
  }

 private:
  void collectUses(const Operation& op, const Operation* top) {
    for (const Value* v : op.operands()) users_[v].push_back(top);
    for (const auto& region : op.regions())
      for (const auto& b : region->blocks())
        for (const auto& inner : b->operations()) collectUses(*inner, top);
  }

  bool isBackward(const Operation* op) const {
    auto it = position_.find(op);
    return it != position_.end() && it->second >= firstBackward_;
  }

  bool readByBackward(const Value* v) const {
    auto it = users_.find(v);
    if (it == users_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](const Operation* u) { return isBackward(u); });
  }

  // Bytes of the leaves the forward pass does not keep yet.
  int64_t newCost(const Recompute& r) const {
    int64_t cost = 0;
    for (const Value* leaf : r.leaves)
      if (!leaf->isBlockArgument() && !saved_.count(leaf)) cost += bytesOf(leaf);
    return cost;
  }

  // Walks back from `v` through cheap ops to kept values, arguments and small values.
  bool plan(const Value* v, Recompute& r) const {
    std::vector<const Value*> stack = {v};
    std::set<const Operation*> seen;
    const int64_t size = elementsOf(v);
    while (!stack.empty()) {
      const Value* w = stack.back();
      stack.pop_back();
      const Operation* def = w->definingOp();
      if (w != v) {
        if (def && def->code() == OpCode::Constant && def->parentBlock() == &body_) {  // copied with the chain
          if (seen.insert(def).second) r.ops.push_back(def);
          continue;
        }
        if (w->isBlockArgument() || saved_.count(w) || !def || !isCheap(def->code()) || elementsOf(w) * 16 <= size) {
          r.leaves.insert(w);
          continue;
        }
      }
      if (!def || def->numRegions() > 0 || def->parentBlock() != &body_) return false;
      if (!seen.insert(def).second) continue;
      r.ops.push_back(def);
      if (r.ops.size() > 16) return false;  // not a short chain
      for (const Value* operand : def->operands()) stack.push_back(operand);
    }
    std::sort(r.ops.begin(), r.ops.end(),
              [&](const Operation* a, const Operation* b) { return position_.at(a) < position_.at(b); });
    return true;
  }

  Status rewrite() {
    if (order_.empty()) return Status::ok();
    // Copies of each accepted value's chain, placed before its first backward user.
    std::map<size_t, std::vector<std::unique_ptr<Operation>>> inserts;
    std::unordered_map<const Value*, Value*> replacement;
    for (const Value* v : order_) {
      size_t first = SIZE_MAX;
      for (const Operation* u : users_.at(v))
        if (isBackward(u)) first = std::min(first, position_.at(u));
      std::unordered_map<const Value*, Value*> mapping;
      for (const Operation* op : plans_.at(v).ops) inserts[first].push_back(cloneOperation(*op, mapping));
      replacement[v] = mapping.at(v);
    }
    auto& ops = body_.mutableOperations();
    for (size_t i = firstBackward_; i < ops.size(); ++i) replaceUses(*ops[i], replacement);
    std::vector<std::unique_ptr<Operation>> rebuilt;
    rebuilt.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      if (auto it = inserts.find(i); it != inserts.end())
        for (auto& op : it->second) {
          op->setParentBlock(&body_);
          rebuilt.push_back(std::move(op));
        }
      rebuilt.push_back(std::move(ops[i]));
    }
    ops = std::move(rebuilt);
    return Status::ok();
  }

  Block& body_;
  size_t firstBackward_;
  std::unordered_map<const Operation*, size_t> position_;
  std::unordered_map<const Value*, std::vector<const Operation*>> users_;
  std::unordered_set<const Value*> saved_;
  std::unordered_set<const Value*> leavesOfAccepted_;
  std::unordered_map<const Value*, Recompute> plans_;
  std::vector<const Value*> order_;  // accepted values, in the order they were accepted
};

}  // namespace

Status rematerializeCheapValues(Block& body, size_t firstBackwardOp) { return Remat(body, firstBackwardOp).run(); }

}  // namespace wf::autodiff
