#include "ir/builder.h"

#include <cmath>
#include <numeric>
#include <optional>

#include "ir/shape_inference.h"

namespace wf {

Attribute i64DenseArray(std::vector<int64_t> values) { return Attribute::denseArray(ElementType::kSI64, std::move(values)); }

Attribute i64ArrayAttr(const std::vector<int64_t>& values) {
  std::vector<Attribute> elements;
  elements.reserve(values.size());
  for (int64_t v : values) elements.push_back(Attribute::integer(v));
  return Attribute::array(std::move(elements));
}

Attribute i64Matrix(const std::vector<int64_t>& values, int64_t rows, int64_t cols) {
  Literal lit = Literal::zeros(Type::tensor({rows, cols}, ElementType::kSI64));
  for (size_t i = 0; i < values.size(); ++i) lit.setInt(static_cast<int64_t>(i), values[i]);
  return Attribute::denseElements(std::move(lit));
}

Operation* OpBuilder::create(std::string_view name, std::vector<Value*> operands, std::vector<NamedAttribute> attrs,
                             std::vector<Type> hints, size_t numResults,
                             const std::function<void(Operation*)>& buildRegions) {
  auto owned = std::make_unique<Operation>(std::string(name), loc_);
  for (Value* v : operands) {
    if (!v) {
      // A null operand only follows an earlier failure; keep the op well formed.
      fail(internalError("'" + std::string(name) + "' at " + loc_.toString() + ": built with a missing operand"));
      continue;
    }
    owned->addOperand(v);
  }
  for (auto& [key, value] : attrs) owned->setAttr(key, std::move(value));
  for (size_t i = 0; i < numResults; ++i) {
    Type hint = i < hints.size()                 ? hints[i]
                : owned->numOperands() > 0 ? owned->operand(0)->type()
                                           : Type::scalar(ElementType::kF32);
    owned->addResult(std::move(hint));
  }
  if (buildRegions) buildRegions(owned.get());
  Operation* op = block_->append(std::move(owned));
  if (!ok()) return op;  // after a failure the types would only repeat it
  auto inferred = inferResultTypes(*op, module_);
  if (!inferred) {
    fail(inferred.status());
    return op;
  }
  for (size_t i = 0; i < op->numResults() && i < inferred->types.size(); ++i) op->result(i)->setType(inferred->types[i]);
  return op;
}

Value* OpBuilder::create1(std::string_view name, std::vector<Value*> operands, std::vector<NamedAttribute> attrs,
                          std::optional<Type> hint) {
  std::vector<Type> hints;
  if (hint) hints.push_back(std::move(*hint));
  return create(name, std::move(operands), std::move(attrs), std::move(hints), 1)->result(0);
}

Value* OpBuilder::compare(Value* a, Value* b, std::string_view direction) {
  std::vector<NamedAttribute> attrs = {
      {"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", std::string(direction))}};
  std::optional<Type> hint;
  if (a && a->type().isTensor()) {
    if (isFloat(a->type().elementType()))
      attrs.emplace_back("compare_type", Attribute::enumValue("stablehlo", "comparison_type", "FLOAT"));
    hint = a->type().withElementType(ElementType::kI1);
  }
  return create1("stablehlo.compare", {a, b}, std::move(attrs), hint);
}

Value* OpBuilder::convert(Value* x, ElementType element) {
  if (x && x->type().isTensor() && x->type().elementType() == element) return x;
  std::optional<Type> hint;
  if (x) hint = x->type().withElementType(element);
  return create1("stablehlo.convert", {x}, {}, hint);
}

Value* OpBuilder::constant(Literal value) {
  Type t = value.type();
  return create1("stablehlo.constant", {}, {{"value", Attribute::denseElements(std::move(value))}}, t);
}

Value* OpBuilder::scalar(ElementType element, double v) {
  Literal lit = Literal::zeros(Type::scalar(element));
  if (isComplex(element)) lit.setComplex(0, {v, 0.0});
  else if (isFloat(element)) lit.setDouble(0, v);
  else lit.setInt(0, static_cast<int64_t>(v));
  return constant(std::move(lit));
}

Value* OpBuilder::splat(const Type& type, double v) {
  auto key = std::make_pair(type.toString(), v);
  if (auto it = splats_.find(key); it != splats_.end() && !std::signbit(v) == !std::signbit(it->first.second))
    return it->second;
  Value* s = scalar(type.elementType(), v);
  if (type.rank() > 0) s = broadcastInDim(s, type, {});
  if (ok()) splats_[key] = s;
  return s;
}

Value* OpBuilder::iota(const Type& type, int64_t dimension) {
  return create1("stablehlo.iota", {}, {{"iota_dimension", Attribute::integer(dimension)}}, type);
}

Value* OpBuilder::broadcastInDim(Value* x, const Type& resultType, const std::vector<int64_t>& dims) {
  if (x && x->type() == resultType) {
    bool identity = static_cast<int64_t>(dims.size()) == resultType.rank();
    for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == static_cast<int64_t>(i);
    if (identity) return x;
  }
  Type hint = resultType;
  if (x) hint = resultType.withElementType(x->type().elementType());
  return create1("stablehlo.broadcast_in_dim", {x}, {{"broadcast_dimensions", i64DenseArray(dims)}}, hint);
}

Value* OpBuilder::reshape(Value* x, const std::vector<int64_t>& shape) {
  if (x && x->type().shape() == shape) return x;
  std::optional<Type> hint;
  if (x) hint = x->type().withShape(shape);
  return create1("stablehlo.reshape", {x}, {}, hint);
}

Value* OpBuilder::transpose(Value* x, const std::vector<int64_t>& permutation) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) identity = identity && permutation[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return create1("stablehlo.transpose", {x}, {{"permutation", i64DenseArray(permutation)}});
}

Value* OpBuilder::slice(Value* x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                        const std::vector<int64_t>& strides) {
  return create1("stablehlo.slice", {x},
                 {{"start_indices", i64DenseArray(start)},
                  {"limit_indices", i64DenseArray(limit)},
                  {"strides", i64DenseArray(strides)}});
}

Value* OpBuilder::pad(Value* x, Value* padValue, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                      const std::vector<int64_t>& interior) {
  bool noop = true;
  for (size_t i = 0; i < low.size(); ++i) noop = noop && low[i] == 0 && high[i] == 0 && interior[i] == 0;
  if (noop) return x;
  return create1("stablehlo.pad", {x, padValue},
                 {{"edge_padding_low", i64DenseArray(low)},
                  {"edge_padding_high", i64DenseArray(high)},
                  {"interior_padding", i64DenseArray(interior)}});
}

Value* OpBuilder::reverse(Value* x, const std::vector<int64_t>& dims) {
  // Reversing a dim of one element changes nothing (a 1x1 convolution kernel's window): such
  // dims are left out, and no op is made when none is left.
  std::vector<int64_t> moved;
  const Type& t = x->type();
  for (int64_t d : dims)
    if (!(t.isTensor() && d >= 0 && d < t.rank() && t.dim(d) == 1)) moved.push_back(d);
  if (moved.empty()) return x;
  return create1("stablehlo.reverse", {x}, {{"dimensions", i64DenseArray(moved)}});
}

Value* OpBuilder::concatenate(const std::vector<Value*>& xs, int64_t dimension) {
  return create1("stablehlo.concatenate", xs, {{"dimension", Attribute::integer(dimension)}});
}

Value* OpBuilder::dynamicSlice(Value* x, const std::vector<Value*>& starts, const std::vector<int64_t>& sizes) {
  std::vector<Value*> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return create1("stablehlo.dynamic_slice", operands, {{"slice_sizes", i64DenseArray(sizes)}});
}

Value* OpBuilder::dynamicUpdateSlice(Value* x, Value* update, const std::vector<Value*>& starts) {
  std::vector<Value*> operands = {x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return create1("stablehlo.dynamic_update_slice", operands);
}

void OpBuilder::addBinaryBody(Operation* op, std::string_view name, ElementType element, const Location& loc) {
  Block* body = op->addRegion()->addBlock();
  Type scalarType = Type::scalar(element);
  Value* a = body->addArgument(scalarType);
  Value* b = body->addArgument(scalarType);
  auto combine = std::make_unique<Operation>(std::string(name), loc);
  combine->addOperand(a);
  combine->addOperand(b);
  Value* r = combine->addResult(scalarType);
  body->append(std::move(combine));
  auto ret = std::make_unique<Operation>("stablehlo.return", loc);
  ret->addOperand(r);
  body->append(std::move(ret));
}

Value* OpBuilder::reduce(Value* x, Value* init, const std::vector<int64_t>& dims, std::string_view body) {
  if (dims.empty() || !x) return x;
  ElementType element = x->type().elementType();
  Location loc = loc_;
  return create("stablehlo.reduce", {x, init}, {{"dimensions", i64DenseArray(dims)}}, {}, 1,
                [&](Operation* op) { addBinaryBody(op, body, element, loc); })
      ->result(0);
}

ElementType OpBuilder::accumulationType(ElementType e) {
  return isFloat(e) && bitWidth(e) < 32 ? ElementType::kF32 : e;
}

Value* OpBuilder::reduceSum(Value* x, const std::vector<int64_t>& dims) {
  if (dims.empty() || !x) return x;
  ElementType e = x->type().elementType(), acc = accumulationType(e);
  Value* sum = reduce(convert(x, acc), scalar(acc, 0.0), dims, "stablehlo.add");
  return convert(sum, e);
}

Value* OpBuilder::sumToScalarIfNeeded(Value* x, const Type& target) {
  if (!x || x->type().shape() == target.shape()) return x;
  std::vector<int64_t> all(static_cast<size_t>(x->type().rank()));
  std::iota(all.begin(), all.end(), 0);
  return reduceSum(x, all);
}

Value* OpBuilder::dotGeneral(Value* lhs, Value* rhs, const std::vector<int64_t>& lhsBatch,
                             const std::vector<int64_t>& rhsBatch, const std::vector<int64_t>& lhsContract,
                             const std::vector<int64_t>& rhsContract, const Attribute* precision,
                             std::optional<ElementType> resultElement) {
  // Empty fields are left out, as MLIR prints them.
  std::vector<NamedAttribute> fields;
  if (!lhsBatch.empty()) fields.emplace_back("lhs_batching_dimensions", i64ArrayAttr(lhsBatch));
  if (!rhsBatch.empty()) fields.emplace_back("rhs_batching_dimensions", i64ArrayAttr(rhsBatch));
  if (!lhsContract.empty()) fields.emplace_back("lhs_contracting_dimensions", i64ArrayAttr(lhsContract));
  if (!rhsContract.empty()) fields.emplace_back("rhs_contracting_dimensions", i64ArrayAttr(rhsContract));
  std::vector<NamedAttribute> attrs = {{"dot_dimension_numbers", Attribute::dialectStruct("stablehlo.dot", std::move(fields))}};
  if (precision && !precision->isNone()) attrs.emplace_back("precision_config", *precision);
  std::optional<Type> hint;
  if (lhs) hint = lhs->type().withElementType(resultElement.value_or(lhs->type().elementType()));
  return create1("stablehlo.dot_general", {lhs, rhs}, std::move(attrs), hint);
}

namespace {

void cloneRegionInto(const Region& from, Region& to, std::unordered_map<const Value*, Value*>& mapping) {
  for (const auto& block : from.blocks()) {
    Block* nb = to.addBlock();
    nb->label = block->label;
    for (const auto& arg : block->arguments()) {
      Value* na = nb->addArgument(arg->type());
      na->setNameHint(arg->nameHint());
      mapping[arg.get()] = na;
    }
    for (const auto& op : block->operations()) nb->append(cloneOperation(*op, mapping));
  }
}

}  // namespace

std::unique_ptr<Operation> cloneOperation(const Operation& op, std::unordered_map<const Value*, Value*>& mapping) {
  auto copy = std::make_unique<Operation>(op.name(), op.location());
  for (Value* v : op.operands()) {
    auto it = mapping.find(v);
    copy->addOperand(it == mapping.end() ? v : it->second);
  }
  for (const auto& [key, value] : op.attributes().entries()) copy->setAttr(key, value);
  for (const auto& region : op.regions()) cloneRegionInto(*region, *copy->addRegion(), mapping);
  for (const auto& r : op.results()) {
    Value* nr = copy->addResult(r->type());
    nr->setNameHint(r->nameHint());
    mapping[r.get()] = nr;
  }
  return copy;
}

void replaceUses(Operation& op, const std::unordered_map<const Value*, Value*>& replacement) {
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (auto it = replacement.find(op.operand(i)); it != replacement.end()) op.setOperand(i, it->second);
  for (const auto& region : op.regions())
    for (const auto& inner : region->blocks()) replaceUses(*inner, replacement);
}

void replaceUses(Block& block, const std::unordered_map<const Value*, Value*>& replacement) {
  for (auto& op : block.mutableOperations()) replaceUses(*op, replacement);
}

namespace {
void addReaders(const Block& block, Readers& readers, const Operation* owner) {
  for (const auto& op : block.operations()) {
    const Operation* reader = owner ? owner : op.get();
    for (const Value* v : op->operands()) readers[v].push_back(reader);
    for (const auto& region : op->regions())
      for (const auto& inner : region->blocks()) addReaders(*inner, readers, reader);
  }
}
}  // namespace

Readers readersIn(const Block& block) {
  Readers readers;
  addReaders(block, readers, nullptr);
  return readers;
}

const std::vector<const Operation*>& readersOf(const Readers& readers, const Value* v) {
  static const std::vector<const Operation*> none;
  auto it = readers.find(v);
  return it == readers.end() ? none : it->second;
}

const Operation* onlyReader(const Readers& readers, const Value* v) {
  const std::vector<const Operation*>& r = readersOf(readers, v);
  if (r.empty()) return nullptr;
  for (const Operation* op : r)
    if (op != r.front()) return nullptr;
  return r.front();
}

Expected<Block*> functionBody(Operation& function, std::string_view pass) {
  if (function.code() != OpCode::FuncFunc || function.numRegions() == 0 || function.region(0).empty())
    return invalidArgument(std::string(pass) + ": not a function with a body");
  return &function.region(0).front();
}

Operation* broadcastScalarConstant(const Value* v) {
  Operation* b = definedBy(v, OpCode::BroadcastInDim);
  const Operation* c = b ? definedBy(b->operand(0), OpCode::Constant) : nullptr;
  return c && c->result(0)->type().isTensor() && c->result(0)->type().numElements() == 1 ? b : nullptr;
}

std::optional<double> splatConstant(const Value* v) {
  if (const Operation* b = broadcastScalarConstant(v)) v = b->operand(0);
  const Operation* c = definedBy(v, OpCode::Constant);
  const Attribute* value = c ? c->attr("value") : nullptr;
  if (!value) return std::nullopt;
  if (const Literal* splat = value->splatValue()) return splat->getDouble(0);
  const Literal* literal = value->literal();
  if (literal && literal->type().numElements() == 1) return literal->getDouble(0);
  return std::nullopt;
}

}  // namespace wf
