// The VJP rules of the autodiff pass, one table keyed by OpCode, filled by one file per op
// family (rules_elementwise.cpp, rules_data_movement.cpp, rules_dot_conv.cpp, rules_reduce.cpp,
// rules_indexing.cpp, rules_control_flow.cpp, rules_sort.cpp, rules_norm.cpp); rules_softmax.cpp holds the rule of
// the softmax pattern, which divide's rule tries first.
//
// A rule runs once per op on the differentiated path, after every use of the op's results was
// handled (the reverse walk), with the builder at the end of the function being built. It reads
// the cotangents of the op's results (nullptr where a result's cotangent is a symbolic zero) and
// adds a cotangent for each operand that needs one; the pass sums what several uses contribute.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"
#include "support/status.h"

namespace wf::autodiff {

// True for the values that carry cotangents: float tensors (complex is not differentiated).
bool isDifferentiableType(const Type& t);

// Values of a nested region used inside `op` but defined outside it (a branch capturing a
// value of the enclosing function), in first-use order.
std::vector<Value*> capturedValues(const Operation& op);

// The state of one reverse walk: which values are active and their cotangents so far.
class Differentiator {
 public:
  explicit Differentiator(const Module* module) : module_(module) {}

  const Module* module() const { return module_; }
  void markActive(const Value* v);
  bool isActive(const Value* v) const { return active_.count(v) != 0; }
  // Forward activity: an op's float results are active when an operand or a captured value is.
  void propagateActivity(const Block& block);

  // nullptr: a symbolic zero.
  Value* cotangent(const Value* v) const;
  // Adds `ct` to the cotangent of `v` (ignored unless `v` is active).
  void accumulate(OpBuilder& b, const Value* v, Value* ct);

  // A top-level while loop replaced, before the reverse walk, by a loop that also stacks each
  // iteration's input state (storeLoopStates); `original` is the loop as written.
  struct StoredLoop {
    std::unique_ptr<Operation> original;
    int64_t trips = 0;
  };
  void addStoredLoop(const Operation* stacking, std::unique_ptr<Operation> original, int64_t trips) {
    storedLoops_[stacking] = StoredLoop{std::move(original), trips};
  }
  const StoredLoop* storedLoop(const Operation* op) const {
    auto it = storedLoops_.find(op);
    return it == storedLoops_.end() ? nullptr : &it->second;
  }

  // Functions a rule adds (the decompositions of the composites it emits), handed to the module
  // with the gradient function; lookupFunction() finds them and the module's.
  Operation* addFunction(std::unique_ptr<Operation> fn) {
    newFunctions_.push_back(std::move(fn));
    return newFunctions_.back().get();
  }
  const Operation* lookupFunction(std::string_view name) const;
  std::vector<std::unique_ptr<Operation>> takeNewFunctions() { return std::move(newFunctions_); }

  // Runs every op of `block` but its terminator through its rule, last op first.
  Status reverse(const Block& block, OpBuilder& b);
  // The same for the ops `forward` (in program order).
  Status reverse(const std::vector<const Operation*>& forward, OpBuilder& b);

 private:
  const Module* module_;
  std::unordered_set<const Value*> active_;
  std::unordered_map<const Value*, Value*> cotangents_;
  std::unordered_map<const Operation*, StoredLoop> storedLoops_;
  std::vector<std::unique_ptr<Operation>> newFunctions_;
};

class VjpContext {
 public:
  VjpContext(Differentiator& d, OpBuilder& b, const Operation& op) : b(b), op(op), d_(d) {}

  OpBuilder& b;
  const Operation& op;

  Value* operand(size_t i) const { return op.operand(i); }
  Value* result(size_t i = 0) const { return op.result(i); }
  const Type& operandType(size_t i) const { return op.operand(i)->type(); }
  // Cotangent of result i; nullptr when it is zero.
  Value* cotangent(size_t i = 0) const { return d_.cotangent(op.result(i)); }
  Value* cotangentOrZeros(size_t i = 0) {
    Value* ct = cotangent(i);
    return ct ? ct : b.zeros(op.result(i)->type());
  }
  // Operand i needs a cotangent.
  bool active(size_t i) const { return d_.isActive(op.operand(i)); }
  bool isActive(const Value* v) const { return d_.isActive(v); }
  void accumulate(size_t i, Value* ct) { d_.accumulate(b, op.operand(i), ct); }
  void accumulateValue(const Value* v, Value* ct) { d_.accumulate(b, v, ct); }
  Differentiator& differentiator() { return d_; }

  // An unimplemented-error naming the op and its location: "'stablehlo.x' at f:3:5: autodiff: <why>".
  Status unsupported(const std::string& why) const;

 private:
  Differentiator& d_;
};

using VjpRule = std::function<Status(VjpContext&)>;

class RuleTable {
 public:
  void add(OpCode code, VjpRule rule) { rules_[static_cast<size_t>(code)] = std::move(rule); }
  const VjpRule* find(OpCode code) const {
    if (code == OpCode::kUnknown) return nullptr;
    const VjpRule& r = rules_[static_cast<size_t>(code)];
    return r ? &r : nullptr;
  }

 private:
  std::array<VjpRule, kNumOpCodes> rules_{};
};

const RuleTable& ruleTable();

// The op of a reduction body `^bb(%a, %b): %r = op(%a, %b); return %r` in region `region` of
// `op` (reduce, reduce_window, ...), or kUnknown (rules_reduce.cpp).
OpCode bodyKind(const Operation& op, size_t region = 0);
// The dims of a rank-`rank` tensor not in `reduced`, ascending (rules_reduce.cpp).
std::vector<int64_t> keptDims(int64_t rank, const std::vector<int64_t>& reduced);

// The VJP of a softmax written out, y = e / broadcast(sum(e)) with e = exp(x - broadcast(m)),
// when `c.op` (a divide) is its last op: the cotangent of x from y alone, as PyTorch's softmax
// backward computes it, instead of the rules of its five ops (which would keep e, the sum and the
// max's mask alive for the backward pass). Returns false, having emitted nothing, when the divide
// is not such a softmax (rules_softmax.cpp).
bool softmaxVjp(VjpContext& c);

void registerElementwiseRules(RuleTable& table);
void registerDataMovementRules(RuleTable& table);
void registerDotConvRules(RuleTable& table);
void registerReduceRules(RuleTable& table);
void registerIndexingRules(RuleTable& table);
void registerControlFlowRules(RuleTable& table);
void registerSortRules(RuleTable& table);
void registerCompositeRules(RuleTable& table);  // rules_attention.cpp
void registerNormRules(RuleTable& table);       // rules_norm.cpp

// A "warpforge.attention" composite (ir/composites.h), which autodiff differentiates as one op.
bool isAttentionComposite(const Operation& op);

// Replaces each active while loop of `body` that has a compile-time trip count by one that also
// stacks every iteration's input state, so that its VJP reads the stored states instead of
// running the loop a second time; uses in later ops and in `alsoUsers` (ops held outside the
// block) move to the new loop's results.
Status storeLoopStates(Block& body, Differentiator& d, std::span<Operation* const> alsoUsers, const Module* module);
// The loop `w` carrying also a [trips, ...] stack of each loop-carried value, filled with the
// state each iteration starts from, and an iteration counter (results: w's, stacks, counter).
Operation* buildStackingWhile(OpBuilder& b, const Operation& w, int64_t trips);

// Recomputes in the backward pass the forward values of `body` (ops before `firstBackwardOp` are
// the forward pass) that are short chains of cheap ops (elementwise, convert, broadcast, reshape,
// transpose) from values the forward pass keeps anyway or that cost less to keep, so that the
// forward pass keeps less for the backward pass (remat.cpp).
Status rematerializeCheapValues(Block& body, size_t firstBackwardOp);

// Emits into the empty block `dst` a recomputation of the ops of `src` (a branch or loop body
// whose terminator returns its results) followed by their VJP. `src`'s block arguments stand for
// `argValues` (values visible in `dst`; the differentiable ones are active). `resultCotangents`
// (nullptr for zero) seed the terminator's operands. `wrt` lists `src`'s block arguments and
// values of the enclosing scope that `src` uses; their cotangents (zeros where none) are
// returned, as values of `dst`. `outer` says which enclosing values are active.
Expected<std::vector<Value*>> emitBlockVjp(const Block& src, Block* dst, const std::vector<Value*>& argValues,
                                           const std::vector<Value*>& resultCotangents, const std::vector<Value*>& wrt,
                                           const Differentiator& outer, const Location& loc);

}  // namespace wf::autodiff
