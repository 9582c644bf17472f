// Shape refinement (see refine_shapes.h and docs/transforms.md).
//
// One walk over the entry function builds the refined copy op by op: operands are mapped to
// their refined values, regions are refined recursively (a while's block arguments take its
// operand types), callees are inlined, and each op's result types are inferred from the
// refined operands and attributes by the IR's shape inference (ir/shape_inference.h), then
// merged with the declared types (a static declared dimension must
// agree). Small integer values computable at compile time are evaluated with the CPU
// backend's reference kernels, which is how shape operands become attributes.
#include "transforms/refine_shapes.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "eval/interpreter.h"
#include "ir/literal.h"
#include "ir/attr_reader.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "support/phase_timer.h"
#include "transforms/dead_ops.h"

namespace wf {
namespace {

using Dims = std::vector<int64_t>;

bool isStaticType(const Type& t) {
  if (t.isTensor()) return t.hasStaticShape();
  if (t.isTuple()) {
    for (const Type& e : t.tupleElements())
      if (!isStaticType(e)) return false;
  }
  return true;
}

// A tensor type with `shape` and the element type (and quantized spelling) of `declared`.
Type tensorLike(const Type& declared, Dims shape) {
  Type t = Type::tensor(std::move(shape), declared.isTensor() ? declared.elementType() : ElementType::kF32);
  if (declared.isTensor() && declared.elementType() == ElementType::kQuantized)
    t.setQuantizedSpelling(declared.quantizedSpelling());
  return t;
}

Status opError(const Operation& op, const std::string& message) {
  return invalidArgument(op.describe() + ": " + message);
}

// Ops evaluated at compile time when all their operands are known: the ones shape
// computations are made of.
bool isFoldable(OpCode code) {
  switch (code) {
    case OpCode::Add: case OpCode::Subtract: case OpCode::Multiply: case OpCode::Divide:
    case OpCode::Remainder: case OpCode::Maximum: case OpCode::Minimum: case OpCode::Negate:
    case OpCode::Abs: case OpCode::Sign: case OpCode::And: case OpCode::Or: case OpCode::Xor:
    case OpCode::Not: case OpCode::ShiftLeft: case OpCode::ShiftRightArithmetic:
    case OpCode::ShiftRightLogical: case OpCode::Compare: case OpCode::Select: case OpCode::Clamp:
    case OpCode::Convert: case OpCode::Reshape: case OpCode::BroadcastInDim: case OpCode::Broadcast:
    case OpCode::Concatenate: case OpCode::Slice: case OpCode::Transpose: case OpCode::Iota:
    case OpCode::Reverse: case OpCode::Pad: case OpCode::GetDimensionSize:
      return true;
    default:
      return false;
  }
}

bool isIntegerLike(ElementType e) { return isInteger(e) || isBoolean(e) || e == ElementType::kIndex; }

class Refiner {
 public:
  Refiner(const Module& source, const RefineShapesOptions& options) : source_(source), options_(options) {}

  Expected<std::unique_ptr<Module>> run(std::string_view entry, std::span<const Type> argumentTypes);

 private:
  // Refines the ops of `src` into `dst`. A func.return at the top of a function body is not
  // copied: its refined operands go to `returned`.
  Status refineBlock(const Block& src, Block& dst, std::vector<Value*>* returned, int depth);
  Status refineOp(const Operation& op, Block& dst, int depth);
  Status inlineCall(const Operation& call, const Operation& callee, Block& dst, int depth);
  // A composite kept whole (RefineShapesOptions::keepComposite): its decomposition refined into
  // a function of its own (refinedDecomposition), the composite calling that.
  Status keepComposite(const Operation& op, const Operation& decomposition, Block& dst, int depth);
  // `callee` refined to the types of `arguments`, as a function of the result module (refined
  // on first use).
  Expected<const Operation*> refinedDecomposition(const Operation& call, const Operation& callee,
                                                  const std::vector<Value*>& arguments, int depth);
  Status checkShapeAssertion(const Operation& op, const std::vector<Value*>& operands);

  Expected<Value*> mapped(const Operation& user, const Value* v) const {
    auto it = map_.find(v);
    if (it == map_.end()) return internalError(user.describe() + ": operand defined outside the refined code");
    return it->second;
  }
  const Literal* constant(const Value* v) const {
    auto it = constants_.find(v);
    return it == constants_.end() ? nullptr : &it->second;
  }

  // Rewrites an op whose result shape comes from an operand into its static form; nullptr
  // when `op` is not such an op.
  Expected<std::unique_ptr<Operation>> rewriteDynamic(const Operation& op, const std::vector<Value*>& operands);
  // Result types inferred from the refined operands, attributes and regions of `op` (whose
  // results still carry the declared types); dims it cannot infer are kDynamic.
  Expected<std::vector<Type>> infer(const Operation& op) const;
  Expected<Type> merge(const Operation& op, size_t index, const Type& declared, const Type& inferred,
                       bool requireStatic = true) const;
  // Evaluates `op` when its operands are known and its result is a small integer tensor.
  void tryFold(const Operation& op);

  const Module& source_;
  RefineShapesOptions options_;
  std::unordered_map<const Value*, Value*> map_;         // source value -> refined value
  std::unordered_map<const Value*, Literal> constants_;  // refined value -> its compile-time value
  std::vector<std::string> callStack_;
  // Kept composites' decompositions, refined (added to the module after the entry), by source
  // function and argument types; and every function name the result module holds.
  std::vector<std::unique_ptr<Operation>> decompositions_;
  std::map<std::string, const Operation*> refined_;
  std::set<std::string> usedNames_;
};

Expected<Type> Refiner::merge(const Operation& op, size_t index, const Type& declared, const Type& inferred,
                              bool requireStatic) const {
  if (declared.isTuple() && inferred.isTuple()) {
    if (declared.tupleElements().size() != inferred.tupleElements().size())
      return opError(op, "result #" + std::to_string(index) + " is declared " + declared.toString() + " but is " +
                             inferred.toString());
    std::vector<Type> elems;
    for (size_t i = 0; i < declared.tupleElements().size(); ++i) {
      WF_ASSIGN_OR_RETURN(Type e, merge(op, index, declared.tupleElements()[i], inferred.tupleElements()[i], requireStatic));
      elems.push_back(std::move(e));
    }
    return Type::tuple(std::move(elems));
  }
  if (!declared.isTensor() || !inferred.isTensor()) return declared.kind() == Type::Kind::kOpaque ? inferred : declared;
  if (declared.rank() != inferred.rank())
    return opError(op, "result #" + std::to_string(index) + " is declared " + declared.toString() + " but has rank " +
                           std::to_string(inferred.rank()) + " (" + inferred.toString() + ")");
  Dims shape = inferred.shape();
  for (int64_t d = 0; d < declared.rank(); ++d) {
    int64_t want = declared.dim(d), got = inferred.dim(d);
    if (want != kDynamic && got != kDynamic && want != got)
      return opError(op, "result #" + std::to_string(index) + " is declared " + declared.toString() +
                             " but the refined operands give shape " + shapeString(inferred.shape()));
    if (got == kDynamic) shape[static_cast<size_t>(d)] = want;
  }
  Type out = tensorLike(declared, shape);
  if (requireStatic && !out.hasStaticShape())
    return unimplemented(op.describe() + ": cannot infer a static type for result #" + std::to_string(index) +
                         " (declared " + declared.toString() + ", inferred " + inferred.toString() + ")");
  return out;
}

Expected<std::vector<Type>> Refiner::infer(const Operation& op) const {
  WF_ASSIGN_OR_RETURN(InferredTypes inferred, inferResultTypes(op));
  return std::move(inferred.types);
}

Expected<std::unique_ptr<Operation>> Refiner::rewriteDynamic(const Operation& op, const std::vector<Value*>& operands) {
  auto make = [&](std::string name, std::vector<Value*> newOperands, std::set<std::string> dropAttrs) {
    auto out = std::make_unique<Operation>(std::move(name), op.location());
    for (Value* v : newOperands) out->addOperand(v);
    for (const auto& [k, v] : op.attributes().entries())
      if (!dropAttrs.count(k)) out->setAttr(k, v);
    return out;
  };
  auto i64s = [](const Dims& d) { return Attribute::denseArray(ElementType::kSI64, d); };
  if (op.numResults() != 1) return std::unique_ptr<Operation>();
  const Type& declared = op.result(0)->type();
  auto check = [&](const Dims& values, size_t count, std::string_view what, bool sizes = false) -> Status {
    if (values.size() != count)
      return opError(op, "the " + std::string(what) + " operand has " + std::to_string(values.size()) +
                             " elements, expected " + std::to_string(count));
    if (sizes)
      for (int64_t v : values)
        if (v < 0) return opError(op, "the " + std::string(what) + " operand is " + shapeString(values) + ": a negative size");
    return Status::ok();
  };
  // The shape operands are looked up in the refined values.
  auto shapeOf = [&](size_t index, std::string_view what) -> Expected<Dims> {
    const Value* v = operands[index];
    const Literal* lit = constant(v);
    if (!lit) {
      const Value* orig = op.operand(index);
      std::string name = orig->nameHint().empty() ? "" : " (" + orig->nameHint() + ")";
      return unimplemented(op.describe() + ": the " + std::string(what) + " operand #" + std::to_string(index) + name +
                           " cannot be computed at compile time: it depends on values known only at run time");
    }
    Dims out;
    for (int64_t i = 0; i < lit->numElements(); ++i) out.push_back(lit->getInt(i));
    return out;
  };

  switch (op.code()) {
    case OpCode::DynamicBroadcastInDim: {
      if (operands.size() != 2) return opError(op, "expects operand and output_dimensions");
      WF_ASSIGN_OR_RETURN(Dims shape, shapeOf(1, "output_dimensions"));
      WF_RETURN_IF_ERROR(check(shape, static_cast<size_t>(declared.rank()), "output_dimensions", true));
      auto out = make("stablehlo.broadcast_in_dim", {operands[0]},
                      {"known_expanding_dimensions", "known_nonexpanding_dimensions"});
      out->addResult(tensorLike(declared, shape));
      return out;
    }
    case OpCode::DynamicReshape: {
      if (operands.size() != 2) return opError(op, "expects operand and output_shape");
      WF_ASSIGN_OR_RETURN(Dims shape, shapeOf(1, "output_shape"));
      WF_RETURN_IF_ERROR(check(shape, static_cast<size_t>(declared.rank()), "output_shape", true));
      auto out = make("stablehlo.reshape", {operands[0]}, {});
      out->addResult(tensorLike(declared, shape));
      return out;
    }
    case OpCode::DynamicIota: {
      if (operands.size() != 1) return opError(op, "expects output_shape");
      WF_ASSIGN_OR_RETURN(Dims shape, shapeOf(0, "output_shape"));
      WF_RETURN_IF_ERROR(check(shape, static_cast<size_t>(declared.rank()), "output_shape", true));
      auto out = make("stablehlo.iota", {}, {});
      out->addResult(tensorLike(declared, shape));
      return out;
    }
    case OpCode::DynamicPad: {
      if (operands.size() != 5) return opError(op, "expects operand, padding_value, edge_padding_low, edge_padding_high, interior_padding");
      size_t rank = static_cast<size_t>(operands[0]->type().rank());
      WF_ASSIGN_OR_RETURN(Dims low, shapeOf(2, "edge_padding_low"));
      WF_ASSIGN_OR_RETURN(Dims high, shapeOf(3, "edge_padding_high"));
      WF_ASSIGN_OR_RETURN(Dims interior, shapeOf(4, "interior_padding"));
      WF_RETURN_IF_ERROR(check(low, rank, "edge_padding_low"));
      WF_RETURN_IF_ERROR(check(high, rank, "edge_padding_high"));
      WF_RETURN_IF_ERROR(check(interior, rank, "interior_padding"));
      auto out = make("stablehlo.pad", {operands[0], operands[1]}, {});
      out->setAttr("edge_padding_low", i64s(low));
      out->setAttr("edge_padding_high", i64s(high));
      out->setAttr("interior_padding", i64s(interior));
      out->addResult(declared);
      return out;
    }
    case OpCode::RealDynamicSlice: {
      if (operands.size() != 4) return opError(op, "expects operand, start_indices, limit_indices, strides");
      const Type& operand = operands[0]->type();
      size_t rank = static_cast<size_t>(operand.rank());
      WF_ASSIGN_OR_RETURN(Dims start, shapeOf(1, "start_indices"));
      WF_ASSIGN_OR_RETURN(Dims limit, shapeOf(2, "limit_indices"));
      WF_ASSIGN_OR_RETURN(Dims strides, shapeOf(3, "strides"));
      WF_RETURN_IF_ERROR(check(start, rank, "start_indices"));
      WF_RETURN_IF_ERROR(check(limit, rank, "limit_indices"));
      WF_RETURN_IF_ERROR(check(strides, rank, "strides"));
      for (size_t d = 0; d < rank; ++d)
        if (start[d] < 0 || start[d] > limit[d] || limit[d] > operand.dim(static_cast<int64_t>(d)) || strides[d] <= 0)
          return opError(op, "slice [" + std::to_string(start[d]) + ":" + std::to_string(limit[d]) + ":" +
                                 std::to_string(strides[d]) + "] of dimension " + std::to_string(d) + " is out of range for " +
                                 operand.toString());
      auto out = make("stablehlo.slice", {operands[0]}, {});
      out->setAttr("start_indices", i64s(start));
      out->setAttr("limit_indices", i64s(limit));
      out->setAttr("strides", i64s(strides));
      out->addResult(declared);
      return out;
    }
    case OpCode::DynamicGather: {
      if (operands.size() != 3) return opError(op, "expects operand, start_indices, slice_sizes");
      WF_ASSIGN_OR_RETURN(Dims sizes, shapeOf(2, "slice_sizes"));
      WF_RETURN_IF_ERROR(check(sizes, static_cast<size_t>(operands[0]->type().rank()), "slice_sizes", true));
      auto out = make("stablehlo.gather", {operands[0], operands[1]}, {});
      out->setAttr("slice_sizes", i64s(sizes));
      out->addResult(declared);
      return out;
    }
    case OpCode::DynamicConv: {
      if (operands.size() != 3) return opError(op, "expects lhs, rhs, padding");
      WF_ASSIGN_OR_RETURN(Dims padding, shapeOf(2, "padding"));
      int64_t spatial = std::max<int64_t>(operands[0]->type().rank() - 2, 0);
      WF_RETURN_IF_ERROR(check(padding, static_cast<size_t>(2 * spatial), "padding"));
      Literal pad = Literal::zeros(Type::tensor({spatial, 2}, ElementType::kSI64));
      for (size_t i = 0; i < padding.size(); ++i) pad.setInt(static_cast<int64_t>(i), padding[i]);
      auto out = make("stablehlo.convolution", {operands[0], operands[1]}, {});
      out->setAttr("padding", Attribute::denseElements(pad));
      out->addResult(declared);
      return out;
    }
    case OpCode::Rng: {
      if (operands.size() != 3) return opError(op, "expects a, b, shape");
      WF_ASSIGN_OR_RETURN(Dims shape, shapeOf(2, "shape"));
      WF_RETURN_IF_ERROR(check(shape, static_cast<size_t>(declared.rank()), "shape", true));
      auto out = make("stablehlo.rng", operands, {});
      out->addResult(tensorLike(declared, shape));
      return out;
    }
    default:
      return std::unique_ptr<Operation>();
  }
}

void Refiner::tryFold(const Operation& op) {
  if (!options_.foldConstants || op.numResults() != 1) return;
  const Type& type = op.result(0)->type();
  if (!type.isTensor() || !type.hasStaticShape() || !isIntegerLike(type.elementType()) ||
      type.numElements() > options_.maxFoldElements)
    return;
  if (op.code() == OpCode::Constant) {
    const Attribute* v = op.attr("value");
    if (v && v->kind() == Attribute::Kind::kDenseElements && v->literal() && v->literal()->type() == type)
      constants_.emplace(op.result(0), *v->literal());
    return;
  }
  if (op.code() == OpCode::GetDimensionSize) {
    auto dim = AttrReader(op).integer("dimension");
    const Type& operand = op.operand(0)->type();
    if (!dim || !operand.isTensor() || *dim < 0 || *dim >= operand.rank() || type.rank() != 0) return;
    constants_.emplace(op.result(0), Literal::scalarInt(type.elementType(), operand.dim(*dim)));
    return;
  }
  if (!isFoldable(op.code())) return;
  std::vector<Literal> operands;
  for (const Value* v : op.operands()) {
    const Literal* lit = constant(v);
    if (!lit) return;
    operands.push_back(*lit);
  }
  const Kernel* kernel = KernelRegistry::instance().find(op.code());
  if (!kernel || !*kernel) return;
  EvalContext ctx;
  auto result = (*kernel)(op, operands, ctx);
  if (!result || result->size() != 1 || (*result)[0].type() != type) return;
  constants_.emplace(op.result(0), (*result)[0]);
}

Status Refiner::inlineCall(const Operation& call, const Operation& callee, Block& dst, int depth) {
  std::string name(FuncOp(&callee).symName());
  if (std::find(callStack_.begin(), callStack_.end(), name) != callStack_.end())
    return unimplemented(call.describe() + ": recursive call of @" + name + " cannot be inlined");
  if (depth >= options_.maxInlineDepth)
    return unimplemented(call.describe() + ": calls nest deeper than " + std::to_string(options_.maxInlineDepth));
  if (callee.numRegions() == 0 || callee.region(0).empty())
    return opError(call, "callee @" + name + " has no body");
  const Block& body = callee.region(0).front();
  if (body.numArguments() != call.numOperands())
    return opError(call, "passes " + std::to_string(call.numOperands()) + " operands to @" + name + ", which takes " +
                             std::to_string(body.numArguments()));
  for (size_t i = 0; i < call.numOperands(); ++i) {
    WF_ASSIGN_OR_RETURN(Value* v, mapped(call, call.operand(i)));
    const Type& declared = body.argument(i)->type();
    if (v->type().isTensor() && declared.isTensor() &&
        (v->type().rank() != declared.rank() || v->type().elementType() != declared.elementType()))
      return opError(call, "operand #" + std::to_string(i) + " of type " + v->type().toString() +
                               " does not fit argument #" + std::to_string(i) + " of @" + name + " (" + declared.toString() + ")");
    map_[body.argument(i)] = v;
  }
  callStack_.push_back(name);
  std::vector<Value*> returned;
  Status status = refineBlock(body, dst, &returned, depth + 1);
  callStack_.pop_back();
  WF_RETURN_IF_ERROR(status.isOk() ? status : status.withContext("in @" + name + " inlined at " + call.location().toString()));
  if (returned.size() != call.numResults())
    return opError(call, "expects " + std::to_string(call.numResults()) + " results, @" + name + " returns " +
                             std::to_string(returned.size()));
  for (size_t i = 0; i < returned.size(); ++i) {
    WF_RETURN_IF_ERROR(merge(call, i, call.result(i)->type(), returned[i]->type()).status());
    map_[call.result(i)] = returned[i];
  }
  return Status::ok();
}

Expected<const Operation*> Refiner::refinedDecomposition(const Operation& call, const Operation& callee,
                                                         const std::vector<Value*>& arguments, int depth) {
  const std::string name(FuncOp(&callee).symName());
  std::string key = name + "(";
  for (const Value* v : arguments) key += v->type().toString() + ",";
  if (auto it = refined_.find(key); it != refined_.end()) return it->second;
  if (std::find(callStack_.begin(), callStack_.end(), name) != callStack_.end())
    return unimplemented(call.describe() + ": recursive call of @" + name + " cannot be inlined");
  if (depth >= options_.maxInlineDepth)
    return unimplemented(call.describe() + ": calls nest deeper than " + std::to_string(options_.maxInlineDepth));
  if (callee.numRegions() == 0 || callee.region(0).empty()) return opError(call, "callee @" + name + " has no body");
  const Block& body = callee.region(0).front();
  if (body.numArguments() != arguments.size())
    return opError(call, "passes " + std::to_string(arguments.size()) + " operands to @" + name + ", which takes " +
                             std::to_string(body.numArguments()));
  // The first signature keeps the function's name; others get a suffix no function has.
  std::string refinedName = name;
  for (int n = 1; usedNames_.count(refinedName); ++n) refinedName = name + "_" + std::to_string(n);
  usedNames_.insert(refinedName);

  auto fn = std::make_unique<Operation>(callee.name(), callee.location());
  for (const auto& [k, v] : callee.attributes().entries()) fn->setAttr(k, v);
  fn->setAttr("sym_name", Attribute::string(refinedName));
  Block* newBody = fn->addRegion()->addBlock();
  newBody->label = body.label;
  FunctionType type;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Type& declared = body.argument(i)->type();
    const Type& given = arguments[i]->type();
    if (given.isTensor() && declared.isTensor() &&
        (given.rank() != declared.rank() || given.elementType() != declared.elementType()))
      return opError(call, "operand #" + std::to_string(i) + " of type " + given.toString() +
                               " does not fit argument #" + std::to_string(i) + " of @" + name + " (" +
                               declared.toString() + ")");
    Value* arg = newBody->addArgument(given);
    arg->setNameHint(body.argument(i)->nameHint());
    map_[body.argument(i)] = arg;
    type.inputs.push_back(given);
  }
  callStack_.push_back(name);
  std::vector<Value*> returned;
  Status status = refineBlock(body, *newBody, &returned, depth + 1);
  callStack_.pop_back();
  WF_RETURN_IF_ERROR(status.isOk() ? status : status.withContext("in @" + name + " refined for " + call.location().toString()));
  const Operation* ret = body.terminator();
  if (!ret || ret->code() != OpCode::FuncReturn) return opError(call, "the body of @" + name + " does not end in func.return");
  auto newRet = std::make_unique<Operation>(ret->name(), ret->location());
  for (Value* v : returned) {
    newRet->addOperand(v);
    type.results.push_back(v->type());
  }
  newBody->append(std::move(newRet));
  fn->setAttr("function_type", Attribute::functionType(type));
  if (options_.removeDeadOps) removeDeadOps(*newBody);
  refined_[key] = fn.get();
  decompositions_.push_back(std::move(fn));
  return decompositions_.back().get();
}

Status Refiner::keepComposite(const Operation& op, const Operation& decomposition, Block& dst, int depth) {
  std::vector<Value*> operands;
  for (const Value* v : op.operands()) {
    WF_ASSIGN_OR_RETURN(Value* m, mapped(op, v));
    operands.push_back(m);
  }
  WF_ASSIGN_OR_RETURN(const Operation* fn, refinedDecomposition(op, decomposition, operands, depth));
  const FunctionType type = FuncOp(fn).functionType();
  if (type.results.size() != op.numResults())
    return opError(op, "expects " + std::to_string(op.numResults()) + " results, its decomposition returns " +
                           std::to_string(type.results.size()));
  auto kept = std::make_unique<Operation>(op.name(), op.location());
  for (Value* v : operands) kept->addOperand(v);
  for (const auto& [k, v] : op.attributes().entries()) kept->setAttr(k, v);
  kept->setAttr("decomposition", Attribute::symbolRef(std::string(FuncOp(fn).symName())));
  for (size_t i = 0; i < op.numResults(); ++i) {
    WF_ASSIGN_OR_RETURN(Type t, merge(op, i, op.result(i)->type(), type.results[i]));
    kept->addResult(std::move(t))->setNameHint(op.result(i)->nameHint());
  }
  Operation* added = dst.append(std::move(kept));
  for (size_t i = 0; i < op.numResults(); ++i) map_[op.result(i)] = added->result(i);
  return Status::ok();
}

Status Refiner::refineOp(const Operation& op, Block& dst, int depth) {
  if (op.code() == OpCode::FuncCall || op.code() == OpCode::Composite) {
    const char* key = op.code() == OpCode::FuncCall ? "callee" : "decomposition";
    const Attribute* callee = op.attr(key);
    if (!callee || callee->kind() != Attribute::Kind::kSymbolRef) return opError(op, std::string("missing attribute '") + key + "'");
    const Operation* fn = source_.lookupFunction(callee->stringValue());
    if (!fn) return opError(op, "@" + callee->stringValue() + " is not a function of this module");
    if (op.code() == OpCode::Composite && options_.keepComposite) {
      const Attribute* name = op.attr("name");
      if (name && name->kind() == Attribute::Kind::kString && options_.keepComposite(name->stringValue()))
        return keepComposite(op, *fn, dst, depth);
    }
    return inlineCall(op, *fn, dst, depth);
  }

  std::vector<Value*> operands;
  for (const Value* v : op.operands()) {
    WF_ASSIGN_OR_RETURN(Value* m, mapped(op, v));
    operands.push_back(m);
  }
  if (op.code() == OpCode::CustomCall) {
    const Attribute* target = op.attr("call_target_name");
    if (target && target->stringValue() == "shape_assertion") return checkShapeAssertion(op, operands);
  }
  for (size_t i = 0; i < operands.size(); ++i)
    if (!isStaticType(operands[i]->type()))
      return internalError(op.describe() + ": operand #" + std::to_string(i) + " is still " + operands[i]->type().toString());

  WF_ASSIGN_OR_RETURN(std::unique_ptr<Operation> refined, rewriteDynamic(op, operands));
  if (!refined) {
    refined = std::make_unique<Operation>(op.name(), op.location());
    for (Value* v : operands) refined->addOperand(v);
    for (const auto& [k, v] : op.attributes().entries()) refined->setAttr(k, v);
    for (const auto& r : op.results()) refined->addResult(r->type());
  }
  // Regions: a while's block arguments take its operand types; other regions keep theirs
  // (reduction bodies and comparators take rank-0 tensors).
  for (const auto& region : op.regions()) {
    Region* newRegion = refined->addRegion();
    for (const auto& block : region->blocks()) {
      Block* newBlock = newRegion->addBlock();
      newBlock->label = block->label;
      for (size_t i = 0; i < block->numArguments(); ++i) {
        const Value* arg = block->argument(i);
        Type type = arg->type();
        if (op.code() == OpCode::While && i < operands.size()) type = operands[i]->type();
        if (!isStaticType(type))
          return unimplemented(op.describe() + ": cannot infer a static type for region argument #" + std::to_string(i) +
                               " (" + type.toString() + ")");
        Value* newArg = newBlock->addArgument(type);
        newArg->setNameHint(arg->nameHint());
        map_[arg] = newArg;
      }
      WF_RETURN_IF_ERROR(refineBlock(*block, *newBlock, nullptr, depth));
    }
  }
  auto inferredOr = infer(*refined);
  if (!inferredOr) {
    Status status = std::move(inferredOr).takeStatus();
    if (refined->name() != op.name()) return status.withContext(op.describe() + ", refined to " + refined->name());
    return status;
  }
  std::vector<Type> inferred = std::move(*inferredOr);
  if (inferred.size() != refined->numResults())
    return internalError(op.describe() + ": inferred " + std::to_string(inferred.size()) + " result types for " +
                         std::to_string(refined->numResults()) + " results");
  for (size_t i = 0; i < refined->numResults(); ++i) {
    // Rewritten dynamic ops carry the folded shape; check it against the original declaration too.
    WF_RETURN_IF_ERROR(merge(op, i, op.result(i)->type(), refined->result(i)->type(), false).status());
    WF_ASSIGN_OR_RETURN(Type type, merge(op, i, refined->result(i)->type(), inferred[i]));
    refined->result(i)->setType(std::move(type));
    refined->result(i)->setNameHint(op.result(i)->nameHint());
  }
  tryFold(*refined);
  // A folded shape computation becomes a constant.
  const bool replace = options_.replaceFoldedOps || refined->code() == OpCode::GetDimensionSize;
  if (replace && refined->code() != OpCode::Constant && refined->numResults() == 1 && constant(refined->result(0))) {
    auto c = std::make_unique<Operation>("stablehlo.constant", op.location());
    Literal value = *constant(refined->result(0));
    c->setAttr("value", Attribute::denseElements(value));
    Value* r = c->addResult(value.type());
    r->setNameHint(op.result(0)->nameHint());
    constants_.erase(refined->result(0));
    constants_.emplace(r, value);
    refined = std::move(c);
  }
  Operation* added = dst.append(std::move(refined));
  for (size_t i = 0; i < op.numResults(); ++i) map_[op.result(i)] = added->result(i);
  return Status::ok();
}

// JAX's shape assertions (custom_call @shape_assertion(pred, error_message_inputs...)) hold
// or fail once the shapes are static: a true one is dropped, a false one is an error with the
// assertion's message, its {0}, {1}, ... placeholders filled with the inputs.
Status Refiner::checkShapeAssertion(const Operation& op, const std::vector<Value*>& operands) {
  const Literal* pred = operands.empty() ? nullptr : constant(operands[0]);
  if (!pred || pred->numElements() != 1)
    return unimplemented(op.describe() + ": the shape assertion's predicate cannot be computed at compile time");
  if (pred->getInt(0) != 0) return Status::ok();
  const Attribute* message = op.attr("error_message");
  std::string text = message ? message->stringValue() : "shape assertion failed";
  for (size_t i = 1; i < operands.size(); ++i) {
    const Literal* input = constant(operands[i]);
    if (!input || input->numElements() != 1) continue;
    std::string key = "{" + std::to_string(i - 1) + "}", value = std::to_string(input->getInt(0));
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  }
  return invalidArgument(op.describe() + ": shape assertion failed: " + text);
}

Status Refiner::refineBlock(const Block& src, Block& dst, std::vector<Value*>* returned, int depth) {
  for (const auto& op : src.operations()) {
    if (returned && op->code() == OpCode::FuncReturn) {
      for (const Value* v : op->operands()) {
        WF_ASSIGN_OR_RETURN(Value* m, mapped(*op, v));
        returned->push_back(m);
      }
      continue;
    }
    WF_RETURN_IF_ERROR(refineOp(*op, dst, depth));
  }
  return Status::ok();
}

Expected<std::unique_ptr<Module>> Refiner::run(std::string_view entry, std::span<const Type> argumentTypes) {
  const Operation* fn = source_.lookupFunction(entry);
  if (!fn) return notFound("refine shapes: no function @" + std::string(entry) + " in the module");
  if (fn->numRegions() == 0 || fn->region(0).empty())
    return invalidArgument("refine shapes: function @" + std::string(entry) + " has no body");
  const Block& body = fn->region(0).front();
  FunctionType type = FuncOp(fn).functionType();
  if (argumentTypes.size() != body.numArguments())
    return invalidArgument(fn->describe() + ": @" + std::string(entry) + " takes " +
                           std::to_string(body.numArguments()) + " arguments, " + std::to_string(argumentTypes.size()) +
                           " types were given");

  auto module = std::make_unique<Module>();
  module->name = source_.name;
  module->attributes = source_.attributes;
  module->sourceFile = source_.sourceFile;
  module->resources = source_.resources;

  auto newFn = std::make_unique<Operation>(fn->name(), fn->location());
  for (const auto& [k, v] : fn->attributes().entries()) newFn->setAttr(k, v);
  Block* newBody = newFn->addRegion()->addBlock();
  newBody->label = body.label;
  FunctionType newType;
  for (size_t i = 0; i < argumentTypes.size(); ++i) {
    const Type& given = argumentTypes[i];
    const Value* arg = body.argument(i);
    const Type& declared = arg->type();
    std::string which = "argument #" + std::to_string(i) + (arg->nameHint().empty() ? "" : " (" + arg->nameHint() + ")");
    if (!isStaticType(given))
      return invalidArgument(fn->describe() + ": " + which + ": the given type " + given.toString() + " is not static");
    if (given.kind() != declared.kind())
      return invalidArgument(fn->describe() + ": " + which + " is declared " + declared.toString() + ", got " + given.toString());
    if (declared.isTensor()) {
      if (given.rank() != declared.rank())
        return invalidArgument(fn->describe() + ": " + which + " is declared " + declared.toString() + " (rank " +
                               std::to_string(declared.rank()) + "), got " + given.toString() + " (rank " +
                               std::to_string(given.rank()) + ")");
      if (given.elementType() != declared.elementType())
        return invalidArgument(fn->describe() + ": " + which + " is declared " + declared.toString() +
                               ", got element type " + std::string(elementTypeName(given.elementType())) + " (" +
                               given.toString() + ")");
      for (int64_t d = 0; d < declared.rank(); ++d)
        if (declared.dim(d) != kDynamic && declared.dim(d) != given.dim(d))
          return invalidArgument(fn->describe() + ": " + which + " is declared " + declared.toString() + ", got " +
                                 given.toString() + ": static dimension " + std::to_string(d) + " differs");
    } else if (given != declared) {
      return invalidArgument(fn->describe() + ": " + which + " is declared " + declared.toString() + ", got " + given.toString());
    }
    Type argType = declared.isTensor() ? tensorLike(declared, given.shape()) : given;
    Value* newArg = newBody->addArgument(argType);
    newArg->setNameHint(arg->nameHint());
    map_[arg] = newArg;
    newType.inputs.push_back(argType);
  }

  callStack_.push_back(std::string(entry));
  usedNames_.insert(std::string(entry));
  std::vector<Value*> returned;
  WF_RETURN_IF_ERROR(refineBlock(body, *newBody, &returned, 0));
  const Operation* ret = body.terminator();
  if (!ret || ret->code() != OpCode::FuncReturn)
    return invalidArgument(fn->describe() + ": body of @" + std::string(entry) + " does not end in func.return");
  auto newRet = std::make_unique<Operation>(ret->name(), ret->location());
  for (size_t i = 0; i < returned.size(); ++i) {
    newRet->addOperand(returned[i]);
    if (i < type.results.size()) WF_RETURN_IF_ERROR(merge(*ret, i, type.results[i], returned[i]->type()).status());
    newType.results.push_back(returned[i]->type());
  }
  newBody->append(std::move(newRet));
  newFn->setAttr("function_type", Attribute::functionType(newType));

  if (options_.removeDeadOps) removeDeadOps(*newBody);
  module->append(std::move(newFn));
  for (auto& fn : decompositions_) module->append(std::move(fn));
  Status verified = verifyModule(*module);
  if (!verified.isOk()) return verified.withContext("the refined module does not verify");
  return module;
}

bool staticBlock(const Block& block, std::string* where);

bool staticOp(const Operation& op, std::string* where) {
  auto fail = [&](const std::string& what) {
    if (where) *where = op.describe() + ": " + what;
    return false;
  };
  for (size_t i = 0; i < op.numResults(); ++i)
    if (!isStaticType(op.result(i)->type())) return fail("result #" + std::to_string(i) + " is " + op.result(i)->type().toString());
  if (op.code() == OpCode::FuncFunc) {
    FunctionType t = FuncOp(&op).functionType();
    for (const Type& x : t.inputs)
      if (!isStaticType(x)) return fail("signature has " + x.toString());
    for (const Type& x : t.results)
      if (!isStaticType(x)) return fail("signature has " + x.toString());
  }
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks()) {
      for (size_t i = 0; i < block->numArguments(); ++i)
        if (!isStaticType(block->argument(i)->type()))
          return fail("block argument #" + std::to_string(i) + " is " + block->argument(i)->type().toString());
      if (!staticBlock(*block, where)) return false;
    }
  return true;
}

bool staticBlock(const Block& block, std::string* where) {
  for (const auto& op : block.operations())
    if (!staticOp(*op, where)) return false;
  return true;
}

// "tensor<4x?xf32>" -> Type; false when `text` is not a ranked tensor type.
std::optional<Type> parseTensorType(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (text.size() < 8 || text.substr(0, 7) != "tensor<" || text.back() != '>') return std::nullopt;
  std::string_view inner = text.substr(7, text.size() - 8);
  Dims shape;
  // Dimensions are "<int>x" or "?x" prefixes; the rest is the element type.
  while (true) {
    size_t i = 0;
    if (!inner.empty() && inner[0] == '?') {
      i = 1;
    } else {
      while (i < inner.size() && std::isdigit(static_cast<unsigned char>(inner[i]))) ++i;
    }
    if (i == 0 || i >= inner.size() || inner[i] != 'x') break;
    shape.push_back(inner[0] == '?' ? kDynamic : std::stoll(std::string(inner.substr(0, i))));
    inner.remove_prefix(i + 1);
  }
  ElementType element;
  if (!parseElementTypeName(trim(inner), &element)) return std::nullopt;
  return Type::tensor(std::move(shape), element);
}

bool isShapeOperandOp(OpCode code) {
  switch (code) {
    case OpCode::DynamicIota: case OpCode::DynamicBroadcastInDim: case OpCode::DynamicReshape:
    case OpCode::DynamicPad: case OpCode::DynamicGather: case OpCode::DynamicConv:
    case OpCode::RealDynamicSlice: case OpCode::GetDimensionSize:
      return true;
    default:
      return false;
  }
}

// Walks `block` and the functions its calls reach (each once).
bool blockNeedsRefinement(const Module& module, const Block& block, std::unordered_set<const Operation*>& seen) {
  for (const auto& op : block.operations()) {
    if (isShapeOperandOp(op->code()) || !staticOp(*op, nullptr)) return true;
    if (op->code() == OpCode::FuncCall || op->code() == OpCode::Composite) {
      const Attribute* callee = op->attr(op->code() == OpCode::FuncCall ? "callee" : "decomposition");
      const Operation* fn = callee && callee->kind() == Attribute::Kind::kSymbolRef
                                ? module.lookupFunction(callee->stringValue())
                                : nullptr;
      if (fn && seen.insert(fn).second && fn->numRegions() > 0 && !fn->region(0).empty() &&
          (!staticOp(*fn, nullptr) || blockNeedsRefinement(module, fn->region(0).front(), seen)))
        return true;
    }
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks())
        if (blockNeedsRefinement(module, *b, seen)) return true;
  }
  return false;
}

}  // namespace

bool needsShapeRefinement(const Module& module, std::string_view entry) {
  const Operation* fn = module.lookupFunction(entry);
  if (!fn || fn->numRegions() == 0 || fn->region(0).empty()) return false;
  if (!staticOp(*fn, nullptr)) return true;
  std::unordered_set<const Operation*> seen{fn};
  return blockNeedsRefinement(module, fn->region(0).front(), seen);
}

Expected<std::unique_ptr<Module>> refineShapes(const Module& module, std::string_view entry,
                                               std::span<const Type> argumentTypes, const RefineShapesOptions& options) {
  PhaseTimer phase("shape refinement");
  Refiner refiner(module, options);
  return refiner.run(entry, argumentTypes);
}

bool hasOnlyStaticTypes(const Module& module, std::string* where) {
  for (const auto& op : module.operations())
    if (!staticOp(*op, where)) return false;
  return true;
}

Expected<std::vector<Type>> parseTypeList(std::string_view text) {
  std::vector<Type> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c != ',' || depth != 0) continue;
    std::string_view item = text.substr(start, i - start);
    auto type = parseTensorType(item);
    if (!type) return invalidArgument("not a tensor type: '" + std::string(item) + "' (expected e.g. tensor<4x128xi64>)");
    out.push_back(std::move(*type));
    start = i + 1;
  }
  return out;
}

}  // namespace wf
