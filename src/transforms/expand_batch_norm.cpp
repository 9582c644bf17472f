// Batch-norm expansion (expand_batch_norm.h).
#include "transforms/expand_batch_norm.h"

#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/batch_norm.h"
#include "ir/builder.h"

namespace wf {
namespace {

bool isBatchNorm(OpCode c) {
  return c == OpCode::BatchNormTraining || c == OpCode::BatchNormGrad || c == OpCode::BatchNormInference;
}

Status checkBlock(const Block& block) {
  for (const auto& op : block.operations()) {
    if (isBatchNorm(op->code())) WF_RETURN_IF_ERROR(readBatchNorm(*op).status());
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks()) WF_RETURN_IF_ERROR(checkBlock(*b));
  }
  return Status::ok();
}

// Writes one batch-norm op out at the end of the builder's block; returns its results' values.
class Expander {
 public:
  Expander(OpBuilder& b, const Operation& op, const BatchNormLayout& l) : b_(b), op_(op), l_(l) {
    element_ = op.operand(0)->type().elementType();
    compute_ = OpBuilder::accumulationType(element_);
    wide_ = Type::tensor(op.operand(0)->type().shape(), compute_);
  }

  std::vector<Value*> expand() {
    switch (op_.code()) {
      case OpCode::BatchNormTraining: return training();
      case OpCode::BatchNormGrad: return grad();
      default: return inference();
    }
  }

 private:
  Value* in(size_t i) {
    Value* v = op_.operand(i);
    return v->type().elementType() == compute_ ? v : b_.convert(v, compute_);
  }
  Value* out(Value* v) { return element_ == compute_ ? v : b_.convert(v, element_); }
  Value* along(Value* featureVector) { return b_.broadcastInDim(featureVector, wide_, {l_.feature}); }
  Value* perFeature(double v) {
    return b_.splat(Type::tensor({op_.operand(0)->type().dim(l_.feature)}, compute_), v);
  }
  Value* sum(Value* v) { return b_.reduceSum(v, l_.others); }
  Value* rstd(Value* var) { return b_.unary("stablehlo.rsqrt", b_.add(var, perFeature(l_.epsilon))); }

  std::vector<Value*> training() {
    const double n = static_cast<double>(l_.perFeature);
    Value* x = in(0);
    Value* mean = b_.div(sum(x), perFeature(n));
    Value* centred = b_.sub(x, along(mean));
    Value* var = b_.div(sum(b_.mul(centred, centred)), perFeature(n));
    Value* y = b_.add(b_.mul(centred, along(b_.mul(rstd(var), in(1)))), along(in(2)));
    return {out(y), out(mean), out(var)};
  }

  std::vector<Value*> grad() {
    const double n = static_cast<double>(l_.perFeature);
    Value* x = in(0);
    Value* dy = in(4);
    Value* r = rstd(in(3));
    // x's normalized value, written once per reader: each fused group then computes it from x
    // as it reads x, where one shared value would be stored in a pass of its own and read back.
    auto normalized = [&] { return b_.mul(b_.sub(x, along(in(2))), along(r)); };
    Value* doffset = sum(dy);
    Value* dscale = sum(b_.mul(dy, normalized()));
    Value* correction = b_.add(along(b_.div(doffset, perFeature(n))),
                               b_.mul(normalized(), along(b_.div(dscale, perFeature(n)))));
    Value* dx = b_.mul(along(b_.mul(in(1), r)), b_.sub(dy, correction));
    return {out(dx), out(dscale), out(doffset)};
  }

  std::vector<Value*> inference() {
    Value* x = in(0);
    Value* factor = b_.mul(rstd(in(4)), in(1));
    return {out(b_.add(b_.mul(b_.sub(x, along(in(3))), along(factor)), along(in(2))))};
  }

  OpBuilder& b_;
  const Operation& op_;
  const BatchNormLayout& l_;
  ElementType element_, compute_;
  Type wide_;
};

using Mapping = std::unordered_map<const Value*, Value*>;

void remapOperands(Operation& op, const Mapping& mapping);

// `dropped` keeps the replaced ops alive until the whole walk is done: `mapping` is keyed by their
// results' addresses, which a new op must not reuse meanwhile.
Status expandBlock(Block& block, Mapping& mapping, std::vector<std::unique_ptr<Operation>>& dropped, int& expanded) {
  std::vector<std::unique_ptr<Operation>> ops = std::move(block.mutableOperations());
  block.mutableOperations().clear();
  for (auto& op : ops) {
    remapOperands(*op, mapping);
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks()) WF_RETURN_IF_ERROR(expandBlock(*b, mapping, dropped, expanded));
    if (!isBatchNorm(op->code())) {
      block.append(std::move(op));
      continue;
    }
    WF_ASSIGN_OR_RETURN(BatchNormLayout l, readBatchNorm(*op));
    OpBuilder b(&block, op->location());
    std::vector<Value*> results = Expander(b, *op, l).expand();
    if (!b.ok()) return b.status().withContext("batch-norm expansion");
    for (size_t i = 0; i < results.size() && i < op->numResults(); ++i) {
      if (results[i]->type() != op->result(i)->type())
        return internalError(op->describe() + ": batch-norm expansion typed result " + std::to_string(i) + " " +
                             results[i]->type().toString() + ", the op " + op->result(i)->type().toString());
      mapping[op->result(i)] = results[i];
    }
    ++expanded;
    dropped.push_back(std::move(op));  // its uses are remapped as the walk reaches them
  }
  return Status::ok();
}

void remapOperands(Operation& op, const Mapping& mapping) {
  for (size_t i = 0; i < op.numOperands(); ++i) {
    auto it = mapping.find(op.operand(i));
    if (it != mapping.end()) op.setOperand(i, it->second);
  }
}

}  // namespace

bool holdsBatchNorm(const Block& block) {
  for (const auto& op : block.operations()) {
    if (isBatchNorm(op->code())) return true;
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks())
        if (holdsBatchNorm(*b)) return true;
  }
  return false;
}

Expected<int> expandBatchNorm(Operation& function) {
  WF_ASSIGN_OR_RETURN(Block* bodyPtr, functionBody(function, "expandBatchNorm"));
  Block& body = *bodyPtr;
  if (!holdsBatchNorm(body)) return 0;
  WF_RETURN_IF_ERROR(checkBlock(body));  // every op expandable before anything changes
  Mapping mapping;
  std::vector<std::unique_ptr<Operation>> dropped;
  int expanded = 0;
  WF_RETURN_IF_ERROR(expandBlock(body, mapping, dropped, expanded));
  return expanded;
}

}  // namespace wf
