// OpBuilder: creates ops at the end of a block with their result types taken from the op's one
// type rule (ir/shape_inference.h), so every op a transform emits is typed exactly as the
// verifier would type it. Where the operands do not determine a result (reshape, iota, convert,
// broadcast_in_dim) the caller gives the type.
//
// Errors are sticky: the first op whose type rule fails records its Status (naming the op and
// the location the builder stamps on it) and later calls keep returning usable values, so a
// sequence of helper calls needs one check at its end: `if (!b.ok()) return b.status();`.
// Built ops carry the canonical attributes of docs/ir-attributes.md, so they print and parse back.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

class OpBuilder {
 public:
  explicit OpBuilder(Block* block, Location loc = {}, const Module* module = nullptr)
      : block_(block), loc_(std::move(loc)), module_(module) {}

  Block* block() const { return block_; }
  void setBlock(Block* block) {
    block_ = block;
    splats_.clear();
  }
  const Location& location() const { return loc_; }
  void setLocation(Location loc) { loc_ = std::move(loc); }

  bool ok() const { return status_.isOk(); }
  const Status& status() const { return status_; }
  // Records `s` unless an earlier failure is already recorded.
  void fail(Status s) {
    if (status_.isOk() && !s.isOk()) status_ = std::move(s);
  }

  // Appends op `name`. `hints` are declared result types where the type rule reads them (a
  // dot_general's element type, a reshape's shape); absent hints default to the first operand's
  // type. `buildRegions` adds the op's regions before its type rule runs (reduce bodies).
  Operation* create(std::string_view name, std::vector<Value*> operands, std::vector<NamedAttribute> attrs = {},
                    std::vector<Type> hints = {}, size_t numResults = 1,
                    const std::function<void(Operation*)>& buildRegions = {});
  // One-result shorthand of create().
  Value* create1(std::string_view name, std::vector<Value*> operands, std::vector<NamedAttribute> attrs = {},
                 std::optional<Type> hint = std::nullopt);

  // Elementwise.
  Value* unary(std::string_view name, Value* x) { return create1(name, {x}); }
  Value* binary(std::string_view name, Value* a, Value* b) { return create1(name, {a, b}); }
  Value* add(Value* a, Value* b) { return binary("stablehlo.add", a, b); }
  Value* sub(Value* a, Value* b) { return binary("stablehlo.subtract", a, b); }
  Value* mul(Value* a, Value* b) { return binary("stablehlo.multiply", a, b); }
  Value* div(Value* a, Value* b) { return binary("stablehlo.divide", a, b); }
  Value* max(Value* a, Value* b) { return binary("stablehlo.maximum", a, b); }
  Value* min(Value* a, Value* b) { return binary("stablehlo.minimum", a, b); }
  Value* neg(Value* x) { return unary("stablehlo.negate", x); }
  // `direction`: EQ, NE, LT, LE, GT, GE. The result is i1 of the operands' shape.
  Value* compare(Value* a, Value* b, std::string_view direction);
  Value* select(Value* pred, Value* onTrue, Value* onFalse) {
    return create1("stablehlo.select", {pred, onTrue, onFalse}, {}, onTrue ? std::optional<Type>(onTrue->type()) : std::nullopt);
  }
  Value* convert(Value* x, ElementType element);

  // Constants. splat() is a scalar constant broadcast to `type` (compact for any size); a splat
  // of a type and value this builder already made in its block is reused.
  Value* constant(Literal value);
  Value* scalar(ElementType element, double v);
  Value* splat(const Type& type, double v);
  Value* zeros(const Type& type) { return splat(type, 0.0); }
  Value* ones(const Type& type) { return splat(type, 1.0); }
  // An iota of `type` along `dimension`.
  Value* iota(const Type& type, int64_t dimension);

  // Data movement.
  Value* broadcastInDim(Value* x, const Type& resultType, const std::vector<int64_t>& dims);
  Value* reshape(Value* x, const std::vector<int64_t>& shape);
  Value* transpose(Value* x, const std::vector<int64_t>& permutation);
  Value* slice(Value* x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
               const std::vector<int64_t>& strides);
  Value* pad(Value* x, Value* padValue, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
             const std::vector<int64_t>& interior);
  Value* reverse(Value* x, const std::vector<int64_t>& dims);
  Value* concatenate(const std::vector<Value*>& xs, int64_t dimension);
  Value* dynamicSlice(Value* x, const std::vector<Value*>& starts, const std::vector<int64_t>& sizes);
  Value* dynamicUpdateSlice(Value* x, Value* update, const std::vector<Value*>& starts);

  // Reductions. `body` names a binary elementwise op (stablehlo.add, maximum, ...) whose region
  // the reduce gets; `init` is a rank-0 value.
  Value* reduce(Value* x, Value* init, const std::vector<int64_t>& dims, std::string_view body);
  // Sum over `dims` (the result drops them), starting from zero. Narrow floats (bf16, f16, f8)
  // are summed in f32 and rounded once, as XLA and PyTorch accumulate them: a long sum in bf16
  // stops growing once the sum is 256 times larger than the terms.
  Value* reduceSum(Value* x, const std::vector<int64_t>& dims);
  // Sum of `x` down to `shape` for a scalar or same-shape target: a no-op where shapes agree.
  Value* sumToScalarIfNeeded(Value* x, const Type& target);

  // The type narrow floats accumulate in (f32 for bf16, f16 and f8; the type itself otherwise).
  static ElementType accumulationType(ElementType e);

  // dot_general with the given dimension numbers; `precision` is copied when given.
  Value* dotGeneral(Value* lhs, Value* rhs, const std::vector<int64_t>& lhsBatch, const std::vector<int64_t>& rhsBatch,
                    const std::vector<int64_t>& lhsContract, const std::vector<int64_t>& rhsContract,
                    const Attribute* precision = nullptr, std::optional<ElementType> resultElement = std::nullopt);

  // Adds a single-block region to `op` holding `name(arg0, arg1)` on rank-0 `element` tensors
  // and a stablehlo.return: the body of a reduction.
  static void addBinaryBody(Operation* op, std::string_view name, ElementType element, const Location& loc);

 private:
  Block* block_;
  Location loc_;
  const Module* module_;
  Status status_;
  std::map<std::pair<std::string, double>, Value*> splats_;  // (type, value) -> splat in block_
};

// Integer-list attributes in the canonical spellings.
Attribute i64DenseArray(std::vector<int64_t> values);   // array<i64: ...>
Attribute i64ArrayAttr(const std::vector<int64_t>& values);  // [a, b] of i64 integers (struct fields)
Attribute i64Matrix(const std::vector<int64_t>& values, int64_t rows, int64_t cols);  // dense<...> : tensor<RxCxi64>

// Deep copy of `op` (operands, results, attributes, regions). Operands found in `mapping` are
// replaced; every value the copy defines (results, block arguments inside its regions) is added
// to `mapping` as original -> copy.
std::unique_ptr<Operation> cloneOperation(const Operation& op, std::unordered_map<const Value*, Value*>& mapping);

// Makes `op` (its operands, and every op nested in its regions), or every op under `block`, read
// replacement[v] where it read v.
void replaceUses(Operation& op, const std::unordered_map<const Value*, Value*>& replacement);
void replaceUses(Block& block, const std::unordered_map<const Value*, Value*>& replacement);

// The ops of `block` that read each value, a read inside a nested region counted as a read by the
// op of `block` that holds it (so that a pattern whose value a loop body reads is seen as read).
using Readers = std::unordered_map<const Value*, std::vector<const Operation*>>;
Readers readersIn(const Block& block);
// The ops of `readers` reading `v` (empty where none does).
const std::vector<const Operation*>& readersOf(const Readers& readers, const Value* v);
// The one op reading `v` (perhaps more than once), or nullptr where none or several do.
const Operation* onlyReader(const Readers& readers, const Value* v);

// The body of `function`, or an error naming `pass` where it is not a func.func with one (the
// argument check that opens each function pass).
Expected<Block*> functionBody(Operation& function, std::string_view pass);
// A one-element constant broadcast to a shape (as JAX writes a splat): the broadcast, else nullptr.
Operation* broadcastScalarConstant(const Value* v);
// The scalar every element of a constant holds, where it is a splat (or has one element), also
// through a broadcast of a one-element constant.
std::optional<double> splatConstant(const Value* v);

}  // namespace wf
