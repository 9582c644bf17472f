// Per-op type rules (shape_inference.h): the "Semantics" and "Constraints" sections of the
// StableHLO spec, plus the func dialect's signature rules. The rules are strict only where the
// spec is unambiguous for every producer WarpForge reads; dynamic dims (`?`) match any size.
#include "ir/shape_inference.h"

#include <algorithm>
#include <set>

#include "ir/attr_reader.h"
#include "ir/printer.h"
#include "ir/window.h"

namespace wf {

bool dimsCompatible(int64_t a, int64_t b) { return a == b || a == kDynamic || b == kDynamic; }

bool shapesCompatible(const Type& a, const Type& b) {
  if (!a.isTensor() || !b.isTensor() || a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i)
    if (!dimsCompatible(a.dim(i), b.dim(i))) return false;
  return true;
}

bool elementTypesCompatible(const Type& a, const Type& b) {
  if (a.elementType() == ElementType::kQuantized || b.elementType() == ElementType::kQuantized) return true;
  return a.elementType() == b.elementType();
}

bool typesCompatible(const Type& a, const Type& b) {
  if (a.kind() == Type::Kind::kOpaque || b.kind() == Type::Kind::kOpaque) return true;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Type::Kind::kTensor:
      return shapesCompatible(a, b) && elementTypesCompatible(a, b);
    case Type::Kind::kTuple: {
      if (a.tupleElements().size() != b.tupleElements().size()) return false;
      for (size_t i = 0; i < a.tupleElements().size(); ++i)
        if (!typesCompatible(a.tupleElements()[i], b.tupleElements()[i])) return false;
      return true;
    }
    default:
      return true;
  }
}

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == kDynamic ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

std::string typeListString(const std::vector<Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += types[i].toString();
  }
  return s + ")";
}

namespace {

// The operand count of an op ops.def marks X_ELEMENTWISE (operands and result of one type), else 0.
int sameTypeElementwiseOperands(OpCode code) {
  switch (code) {
#define X(enumerator, name)
#define X_ELEMENTWISE(enumerator, name, operands) \
  case OpCode::enumerator:                        \
    return operands;
#include "ir/ops.def"
#undef X
    default:
      return 0;
  }
}

using Dims = std::vector<int64_t>;

bool isUnique(const Dims& v) { return std::set<int64_t>(v.begin(), v.end()).size() == v.size(); }
bool isSorted(const Dims& v) { return std::is_sorted(v.begin(), v.end()); }
bool allInRange(const Dims& v, int64_t lo, int64_t hi) {
  return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= lo && d < hi; });
}
bool contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
const std::string listString(const Dims& v) { return shapeString(v); }

// A tensor of `shape` with the element type (and quantized spelling) of `element`.
Type tensorLike(const Type& element, Dims shape) {
  Type t = Type::tensor(std::move(shape), element.isTensor() ? element.elementType() : ElementType::kF32);
  if (element.isTensor() && element.elementType() == ElementType::kQuantized)
    t.setQuantizedSpelling(element.quantizedSpelling());
  return t;
}

class Rule {
 public:
  Rule(const Operation& op, const Module* module) : op_(op), module_(module), attrs_(op) {}
  Expected<InferredTypes> run();

 private:
  Status fail(std::string_view constraint, const std::string& message) const {
    return constraintError(op_, constraint, message);
  }
  const Type& in(size_t i) const { return op_.operand(i)->type(); }
  // The declared type of result i: the answer where operands do not determine it.
  const Type& declared(size_t i) const { return op_.result(i)->type(); }
  std::vector<Type> operandTypes(size_t from = 0, size_t count = SIZE_MAX) const {
    std::vector<Type> t;
    for (size_t i = from; i < op_.numOperands() && i - from < count; ++i) t.push_back(in(i));
    return t;
  }
  std::vector<Type> declaredTypes() const {
    std::vector<Type> t;
    for (const auto& r : op_.results()) t.push_back(r->type());
    return t;
  }
  // Result i is a tensor of `shape`, with the element type of `element`.
  void result(size_t i, const Type& element, Dims shape) { setResult(i, tensorLike(element, std::move(shape))); }
  void setResult(size_t i, Type t) {
    if (out_.types.size() <= i) out_.types.resize(i + 1);
    out_.types[i] = std::move(t);
  }
  void rules(std::string_view shape, std::string_view element) {
    out_.shapeRule = shape;
    out_.elementRule = element;
  }

  // Operand / result counts; -1 means any.
  Status counts(int operands, int results) const {
    if (operands >= 0 && op_.numOperands() != static_cast<size_t>(operands))
      return fail("operands", "expects " + std::to_string(operands) + " operands, has " + std::to_string(op_.numOperands()));
    if (results >= 0 && op_.numResults() != static_cast<size_t>(results))
      return fail("results", "expects " + std::to_string(results) + " results, has " + std::to_string(op_.numResults()));
    return Status::ok();
  }
  // Every operand and result is a tensor.
  Status allTensors() const {
    for (size_t i = 0; i < op_.numOperands(); ++i)
      if (!in(i).isTensor()) return fail("types", "operand #" + std::to_string(i) + " must be a tensor, got " + in(i).toString());
    for (size_t i = 0; i < op_.numResults(); ++i)
      if (!declared(i).isTensor())
        return fail("types", "result #" + std::to_string(i) + " must be a tensor, got " + declared(i).toString());
    return Status::ok();
  }
  Status sameElement(std::string_view constraint, const Type& a, const Type& b, const std::string& what) const {
    if (!elementTypesCompatible(a, b))
      return fail(constraint, what + ": element types of " + a.toString() + " and " + b.toString() + " differ");
    return Status::ok();
  }
  Status sameShape(std::string_view constraint, const Type& a, const Type& b, const std::string& what) const {
    if (!shapesCompatible(a, b)) return fail(constraint, what + ": shapes of " + a.toString() + " and " + b.toString() + " differ");
    return Status::ok();
  }
  Status sameType(std::string_view constraint, const Type& a, const Type& b, const std::string& what) const {
    if (!typesCompatible(a, b)) return fail(constraint, what + ": types " + a.toString() + " and " + b.toString() + " differ");
    return Status::ok();
  }

  // A region's entry block argument types and the operand types of its terminator.
  struct Signature {
    std::vector<Type> inputs;
    std::vector<Type> outputs;
  };
  Status regionSignature(size_t index, std::string_view constraint, Signature& sig) const {
    if (index >= op_.numRegions() || op_.region(index).empty())
      return fail(constraint, "expects region #" + std::to_string(index));
    const Block& block = op_.region(index).front();
    for (const auto& a : block.arguments()) sig.inputs.push_back(a->type());
    const Operation* term = block.terminator();
    if (!term || (term->code() != OpCode::Return && term->code() != OpCode::FuncReturn))
      return fail(constraint, "region #" + std::to_string(index) + " does not end in a return");
    for (const Value* v : term->operands()) sig.outputs.push_back(v->type());
    return Status::ok();
  }
  Status typesMatch(std::string_view constraint, const std::vector<Type>& actual, const std::vector<Type>& expected,
                    const std::string& what) const {
    bool ok = actual.size() == expected.size();
    for (size_t i = 0; ok && i < actual.size(); ++i) ok = typesCompatible(actual[i], expected[i]);
    if (!ok) return fail(constraint, what + " " + typeListString(actual) + " do not match " + typeListString(expected));
    return Status::ok();
  }
  // Region of a reduction (reduce, reduce_window, scatter, select_and_scatter's scatter):
  // (tensor<E0>..., tensor<E0>...) -> (tensor<E0>...), every value rank 0.
  Status reductionBody(size_t region, std::string_view constraint, size_t n, Signature& sig) const {
    WF_RETURN_IF_ERROR(regionSignature(region, constraint, sig));
    if (sig.inputs.size() != 2 * n || sig.outputs.size() != n)
      return fail(constraint, "body has type " + typeListString(sig.inputs) + " -> " + typeListString(sig.outputs) +
                                  ", expected " + std::to_string(2 * n) + " arguments and " + std::to_string(n) + " results");
    for (const auto* list : {&sig.inputs, &sig.outputs})
      for (const Type& t : *list)
        if (!t.isTensor() || t.rank() != 0)
          return fail(constraint, "body arguments and results must be rank-0 tensors, got " + t.toString());
    return Status::ok();
  }

  Status elementwise(size_t numOperands, std::string_view shapeRule);
  Status unaryShapeOnly(std::optional<ElementType> resultElement);
  Status inferAbsLike();
  Status inferComplex();
  Status inferClamp();
  Status inferSelect();
  Status inferCompare();
  Status inferBitcastConvert();
  Status inferConstant();
  Status inferIota();
  Status inferBroadcastInDim();
  Status inferBroadcast();
  Status inferReshape();
  Status inferTranspose();
  Status inferSlice();
  Status inferConcatenate();
  Status inferPad();
  Status inferReverse();
  Status inferDotGeneral();
  Status inferDot();
  Status inferConvolution();
  Status inferReduce();
  Status inferReduceWindow();
  Status inferSelectAndScatter();
  Status inferSort();
  Status inferGather();
  Status inferScatter();
  Status inferDynamicSlice();
  Status inferDynamicUpdateSlice();
  Status inferGetTupleElement();
  Status inferWhile();
  Status inferIf();
  Status inferCase();
  Status inferMap();
  Status inferFunc();
  Status inferFuncReturn();
  Status inferCall();
  Status inferComposite();
  Status inferChloBroadcast();
  Status inferBatchNorm();
  Status inferFft();
  Status inferTopK();
  Status inferCollective();

  const Operation& op_;
  const Module* module_;
  AttrReader attrs_;
  InferredTypes out_;
};

// ---------------------------------------------------------------------------------------------
// Elementwise.

// `numOperands` operands of one type (-1: any number, the shape of the first); the result has
// the first operand's shape and the declared element type where it may differ (the elementwise
// ops whose element type follows the operand are checked by C1 of their own).
Status Rule::elementwise(size_t numOperands, std::string_view shapeRule) {
  WF_RETURN_IF_ERROR(counts(static_cast<int>(numOperands), 1));
  WF_RETURN_IF_ERROR(allTensors());
  for (size_t i = 1; i < numOperands; ++i) WF_RETURN_IF_ERROR(sameType("C1", in(0), in(i), "lhs and rhs"));
  rules(shapeRule, "C1");
  result(0, in(0), in(0).shape());
  return Status::ok();
}

Status Rule::unaryShapeOnly(std::optional<ElementType> resultElement) {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  rules("C1", "C2");
  setResult(0, Type::tensor(in(0).shape(), resultElement.value_or(declared(0).elementType())));
  if (!resultElement) result(0, declared(0), in(0).shape());  // convert: any element type
  return Status::ok();
}

// abs, real, imag: complex operands give their part type, others keep theirs.
Status Rule::inferAbsLike() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  ElementType e = in(0).elementType();
  rules("C1", "C2");
  if (e == ElementType::kQuantized) {
    result(0, declared(0), in(0).shape());
  } else {
    setResult(0, Type::tensor(in(0).shape(), isComplex(e) ? complexPartType(e) : e));
  }
  return Status::ok();
}

Status Rule::inferComplex() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameType("C1", in(0), in(1), "lhs and rhs"));
  ElementType r = declared(0).elementType();
  if (!isComplex(r) || complexPartType(r) != in(0).elementType())
    return fail("C3", "result " + declared(0).toString() + " must be complex of " + in(0).toString() + "'s element type");
  rules("C2", "C3");
  result(0, declared(0), in(0).shape());
  return Status::ok();
}

Status Rule::inferClamp() {
  WF_RETURN_IF_ERROR(counts(3, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &min = in(0), &operand = in(1), &max = in(2);
  if (min.rank() != 0 && !shapesCompatible(min, operand))
    return fail("C1", "min " + min.toString() + " must be rank 0 or have the shape of operand " + operand.toString());
  if (max.rank() != 0 && !shapesCompatible(max, operand))
    return fail("C2", "max " + max.toString() + " must be rank 0 or have the shape of operand " + operand.toString());
  WF_RETURN_IF_ERROR(sameElement("C3", min, operand, "min and operand"));
  WF_RETURN_IF_ERROR(sameElement("C3", max, operand, "max and operand"));
  rules("C4", "C4");
  result(0, operand, operand.shape());
  return Status::ok();
}

Status Rule::inferSelect() {
  WF_RETURN_IF_ERROR(counts(3, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &pred = in(0), &onTrue = in(1), &onFalse = in(2);
  if (pred.elementType() != ElementType::kI1) return fail("types", "pred " + pred.toString() + " must have element type i1");
  if (pred.rank() != 0 && !shapesCompatible(pred, onTrue))
    return fail("C1", "pred " + pred.toString() + " must be rank 0 or have the shape of on_true " + onTrue.toString());
  WF_RETURN_IF_ERROR(sameType("C2", onTrue, onFalse, "on_true and on_false"));
  rules("C2", "C2");
  result(0, onTrue, onTrue.shape());
  return Status::ok();
}

Status Rule::inferCompare() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameElement("C1", in(0), in(1), "lhs and rhs"));
  WF_RETURN_IF_ERROR(sameShape("C2", in(0), in(1), "lhs and rhs"));
  if (!op_.attr("comparison_direction")) return fail("attributes", "missing attribute 'comparison_direction'");
  rules("C2", "types");
  setResult(0, Type::tensor(in(0).shape(), ElementType::kI1));
  return Status::ok();
}

// Same widths keep the shape; a narrower result adds a last dimension of width ratio, a wider
// one drops the last dimension. The element type is the declared one.
Status Rule::inferBitcastConvert() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  if (!in(0).isTensor() || !declared(0).isTensor()) {
    setResult(0, declared(0));
    return Status::ok();
  }
  int inBits = bitWidth(in(0).elementType()), outBits = bitWidth(declared(0).elementType());
  Dims s = in(0).shape();
  if (inBits > outBits && outBits > 0) s.push_back(inBits / outBits);
  if (inBits < outBits && !s.empty()) s.pop_back();
  rules("C1", "C1");
  result(0, declared(0), s);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Constants and shapes.

Status Rule::inferConstant() {
  WF_RETURN_IF_ERROR(counts(0, 1));
  const Attribute* value = op_.attr("value");
  if (!value) return fail("attributes", "missing attribute 'value'");
  rules("C1", "C1");
  if (value->kind() != Attribute::Kind::kDenseElements || !value->typeValue().isTensor()) {
    setResult(0, declared(0));  // e.g. an opaque spelling
    return Status::ok();
  }
  Type t = value->typeValue();
  if (declared(0).isTensor() && declared(0).elementType() == ElementType::kQuantized) t = tensorLike(declared(0), t.shape());
  setResult(0, t);
  return Status::ok();
}

Status Rule::inferIota() {
  WF_RETURN_IF_ERROR(counts(0, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_ASSIGN_OR_RETURN(int64_t dim, attrs_.integer("iota_dimension"));
  if (dim < 0 || dim >= declared(0).rank())
    return fail("C1", "iota_dimension " + std::to_string(dim) + " is out of range for result " + declared(0).toString());
  setResult(0, declared(0));
  return Status::ok();
}

// The result's shape is the declared one; its dynamic dims mapped from an operand dim take it.
Status Rule::inferBroadcastInDim() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &operand = in(0), &hint = declared(0);
  WF_ASSIGN_OR_RETURN(Dims dims, attrs_.ints("broadcast_dimensions"));
  if (static_cast<int64_t>(dims.size()) != operand.rank())
    return fail("C2", "broadcast_dimensions " + listString(dims) + " must have one entry per dimension of operand " +
                          operand.toString());
  if (!allInRange(dims, 0, hint.rank()))
    return fail("C3", "broadcast_dimensions " + listString(dims) + " out of range for result " + hint.toString());
  if (!isUnique(dims)) return fail("C4", "broadcast_dimensions " + listString(dims) + " are not unique");
  Dims s = hint.shape();
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t size = operand.dim(static_cast<int64_t>(d));
    if (size != 1 && !dimsCompatible(size, hint.dim(dims[d])))
      return fail("C5", "operand dimension " + std::to_string(d) + " of " + operand.toString() +
                            " is neither 1 nor equal to result dimension " + std::to_string(dims[d]) + " of " +
                            hint.toString());
    if (s[static_cast<size_t>(dims[d])] == kDynamic) s[static_cast<size_t>(dims[d])] = size;
  }
  rules("C5", "C1");
  result(0, operand, s);
  return Status::ok();
}

Status Rule::inferBroadcast() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_ASSIGN_OR_RETURN(Dims expected, attrs_.ints("broadcast_sizes"));
  expected.insert(expected.end(), in(0).shape().begin(), in(0).shape().end());
  result(0, in(0), expected);
  return Status::ok();
}

// The declared shape, with one dynamic dim computed from the element count where the others
// are known.
Status Rule::inferReshape() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type& hint = declared(0);
  Dims s = hint.shape();
  int64_t total = in(0).numElements(), known = 1, unknown = -1, unknowns = 0;
  for (int64_t i = 0; i < hint.rank(); ++i) {
    if (hint.dim(i) == kDynamic) {
      unknown = i;
      ++unknowns;
    } else {
      known *= hint.dim(i);
    }
  }
  if (unknowns == 1 && total >= 0 && known > 0 && total % known == 0) s[static_cast<size_t>(unknown)] = total / known;
  Type t = tensorLike(in(0), s);
  int64_t count = t.numElements();
  if (total >= 0 && count >= 0 && total != count)
    return fail("C2", "operand " + in(0).toString() + " has " + std::to_string(total) + " elements but result " +
                          hint.toString() + " has " + std::to_string(count));
  rules("C2", "C1");
  setResult(0, t);
  return Status::ok();
}

Status Rule::inferTranspose() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_ASSIGN_OR_RETURN(Dims perm, attrs_.ints("permutation"));
  if (static_cast<int64_t>(perm.size()) != in(0).rank() || !isUnique(perm) || !allInRange(perm, 0, in(0).rank()))
    return fail("C2", "permutation " + listString(perm) + " is not a permutation of the dimensions of " + in(0).toString());
  Dims expected;
  for (int64_t p : perm) expected.push_back(in(0).dim(p));
  rules("C3", "C1");
  result(0, in(0), expected);
  return Status::ok();
}

Status Rule::inferSlice() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_ASSIGN_OR_RETURN(Dims start, attrs_.ints("start_indices"));
  WF_ASSIGN_OR_RETURN(Dims limit, attrs_.ints("limit_indices"));
  WF_ASSIGN_OR_RETURN(Dims strides, attrs_.ints("strides", Dims(start.size(), 1)));
  const Type& operand = in(0);
  size_t rank = static_cast<size_t>(operand.rank());
  if (start.size() != rank || limit.size() != rank || strides.size() != rank)
    return fail("C2", "start_indices " + listString(start) + ", limit_indices " + listString(limit) + " and strides " +
                          listString(strides) + " must each have " + std::to_string(rank) + " entries");
  Dims expected;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = operand.dim(static_cast<int64_t>(d));
    if (start[d] < 0 || start[d] > limit[d] || (size != kDynamic && limit[d] > size))
      return fail("C3", "dimension " + std::to_string(d) + ": need 0 <= start (" + std::to_string(start[d]) +
                            ") <= limit (" + std::to_string(limit[d]) + ") <= size of " + operand.toString());
    if (strides[d] <= 0) return fail("C4", "strides " + listString(strides) + " must be positive");
    expected.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  rules("C5", "C1");
  result(0, operand, expected);
  return Status::ok();
}

Status Rule::inferConcatenate() {
  WF_RETURN_IF_ERROR(counts(-1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  if (op_.numOperands() == 0) return fail("C3", "expects at least one input");
  WF_ASSIGN_OR_RETURN(int64_t dim, attrs_.integer("dimension"));
  const Type& first = in(0);
  if (dim < 0 || dim >= first.rank())
    return fail("C4", "dimension " + std::to_string(dim) + " is out of range for " + first.toString());
  int64_t total = 0;
  for (size_t i = 0; i < op_.numOperands(); ++i) {
    const Type& t = in(i);
    WF_RETURN_IF_ERROR(sameElement("C1", first, t, "inputs"));
    if (t.rank() != first.rank()) return fail("C2", "inputs " + first.toString() + " and " + t.toString() + " differ in rank");
    for (int64_t d = 0; d < t.rank(); ++d)
      if (d != dim && !dimsCompatible(t.dim(d), first.dim(d)))
        return fail("C2", "inputs " + first.toString() + " and " + t.toString() + " differ in dimension " + std::to_string(d));
    total = (total == kDynamic || t.dim(dim) == kDynamic) ? kDynamic : total + t.dim(dim);
  }
  Dims expected = first.shape();
  expected[static_cast<size_t>(dim)] = total;
  rules("C6", "C5");
  result(0, first, expected);
  return Status::ok();
}

Status Rule::inferPad() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type& operand = in(0);
  WF_RETURN_IF_ERROR(sameElement("C1", operand, in(1), "operand and padding_value"));
  if (in(1).rank() != 0) return fail("types", "padding_value " + in(1).toString() + " must be rank 0");
  WF_ASSIGN_OR_RETURN(Dims low, attrs_.ints("edge_padding_low"));
  WF_ASSIGN_OR_RETURN(Dims high, attrs_.ints("edge_padding_high"));
  WF_ASSIGN_OR_RETURN(Dims interior, attrs_.ints("interior_padding", Dims(low.size(), 0)));
  size_t rank = static_cast<size_t>(operand.rank());
  if (low.size() != rank || high.size() != rank || interior.size() != rank)
    return fail("C2", "edge_padding_low " + listString(low) + ", edge_padding_high " + listString(high) +
                          " and interior_padding " + listString(interior) + " must each have " + std::to_string(rank) + " entries");
  Dims expected;
  for (size_t d = 0; d < rank; ++d) {
    if (interior[d] < 0) return fail("C3", "interior_padding " + listString(interior) + " must be non-negative");
    int64_t size = operand.dim(static_cast<int64_t>(d));
    expected.push_back(size == kDynamic ? kDynamic : size + low[d] + high[d] + std::max<int64_t>(size - 1, 0) * interior[d]);
  }
  rules("C4", "C1");
  result(0, operand, expected);
  return Status::ok();
}

Status Rule::inferReverse() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_ASSIGN_OR_RETURN(Dims dims, attrs_.ints("dimensions"));
  if (!isUnique(dims)) return fail("C2", "dimensions " + listString(dims) + " are not unique");
  if (!allInRange(dims, 0, in(0).rank()))
    return fail("C3", "dimensions " + listString(dims) + " out of range for " + in(0).toString());
  setResult(0, in(0));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Contractions.

Status Rule::inferDotGeneral() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Attribute* dn = op_.attr("dot_dimension_numbers");
  if (!dn) return fail("attributes", "missing attribute 'dot_dimension_numbers'");
  const Type &lhs = in(0), &rhs = in(1);
  Dims lb = AttrReader::fieldInts(*dn, "lhs_batching_dimensions"), rb = AttrReader::fieldInts(*dn, "rhs_batching_dimensions");
  Dims lc = AttrReader::fieldInts(*dn, "lhs_contracting_dimensions"), rc = AttrReader::fieldInts(*dn, "rhs_contracting_dimensions");
  if (lb.size() != rb.size())
    return fail("C1", "lhs_batching_dimensions " + listString(lb) + " and rhs_batching_dimensions " + listString(rb) + " differ in size");
  if (lc.size() != rc.size())
    return fail("C2", "lhs_contracting_dimensions " + listString(lc) + " and rhs_contracting_dimensions " + listString(rc) + " differ in size");
  Dims lAll = lb, rAll = rb;
  lAll.insert(lAll.end(), lc.begin(), lc.end());
  rAll.insert(rAll.end(), rc.begin(), rc.end());
  if (!isUnique(lAll)) return fail("C3", "lhs batching and contracting dimensions " + listString(lAll) + " are not unique");
  if (!isUnique(rAll)) return fail("C4", "rhs batching and contracting dimensions " + listString(rAll) + " are not unique");
  if (!allInRange(lb, 0, lhs.rank())) return fail("C5", "lhs_batching_dimensions " + listString(lb) + " out of range for " + lhs.toString());
  if (!allInRange(lc, 0, lhs.rank())) return fail("C6", "lhs_contracting_dimensions " + listString(lc) + " out of range for " + lhs.toString());
  if (!allInRange(rb, 0, rhs.rank())) return fail("C7", "rhs_batching_dimensions " + listString(rb) + " out of range for " + rhs.toString());
  if (!allInRange(rc, 0, rhs.rank())) return fail("C8", "rhs_contracting_dimensions " + listString(rc) + " out of range for " + rhs.toString());
  for (size_t i = 0; i < lb.size(); ++i)
    if (!dimsCompatible(lhs.dim(lb[i]), rhs.dim(rb[i])))
      return fail("C9", "batching dimension sizes differ between " + lhs.toString() + " and " + rhs.toString());
  for (size_t i = 0; i < lc.size(); ++i)
    if (!dimsCompatible(lhs.dim(lc[i]), rhs.dim(rc[i])))
      return fail("C10", "contracting dimension sizes differ between " + lhs.toString() + " and " + rhs.toString());
  if (const Attribute* pc = op_.attr("precision_config"))
    if (pc->kind() == Attribute::Kind::kArray && !pc->elements().empty() && pc->elements().size() != 2)
      return fail("C11", "precision_config must have 2 entries, has " + std::to_string(pc->elements().size()));
  Dims expected;
  for (int64_t d : lb) expected.push_back(lhs.dim(d));
  for (int64_t d = 0; d < lhs.rank(); ++d)
    if (!contains(lAll, d)) expected.push_back(lhs.dim(d));
  for (int64_t d = 0; d < rhs.rank(); ++d)
    if (!contains(rAll, d)) expected.push_back(rhs.dim(d));
  rules("C12", "C12");
  result(0, declared(0), expected);  // the element type may widen (preferred element type)
  return Status::ok();
}

Status Rule::inferDot() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &lhs = in(0), &rhs = in(1);
  if (lhs.rank() < 1 || lhs.rank() > 2 || rhs.rank() < 1 || rhs.rank() > 2)
    return fail("C1", "operands " + lhs.toString() + " and " + rhs.toString() + " must be rank 1 or 2");
  if (!dimsCompatible(lhs.dim(lhs.rank() - 1), rhs.dim(0)))
    return fail("C2", "contracting dimensions of " + lhs.toString() + " and " + rhs.toString() + " differ");
  Dims expected;
  if (lhs.rank() == 2) expected.push_back(lhs.dim(0));
  if (rhs.rank() == 2) expected.push_back(rhs.dim(1));
  rules("C3", "C3");
  result(0, declared(0), expected);
  return Status::ok();
}

Status Rule::inferConvolution() {
  bool dynamicPadding = op_.code() == OpCode::DynamicConv;
  WF_RETURN_IF_ERROR(counts(dynamicPadding ? 3 : 2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &lhs = in(0), &rhs = in(1);
  int64_t n = lhs.rank();
  if (rhs.rank() != n) return fail("C1", "lhs " + lhs.toString() + " and rhs " + rhs.toString() + " differ in rank");
  if (n < 2) return fail("C1", "lhs " + lhs.toString() + " must have rank >= 2");
  size_t spatial = static_cast<size_t>(n - 2);
  Dims ones(spatial, 1);
  WF_ASSIGN_OR_RETURN(Dims strides, attrs_.ints("window_strides", ones));
  WF_ASSIGN_OR_RETURN(Dims lhsDil, attrs_.ints("lhs_dilation", ones));
  WF_ASSIGN_OR_RETURN(Dims rhsDil, attrs_.ints("rhs_dilation", ones));
  if (strides.size() != spatial) return fail("C2", "window_strides " + listString(strides) + " must have " + std::to_string(spatial) + " entries");
  if (!allInRange(strides, 1, INT64_MAX)) return fail("C3", "window_strides " + listString(strides) + " must be positive");
  Dims padding(2 * spatial, 0);
  if (!dynamicPadding) {
    WF_ASSIGN_OR_RETURN(padding, attrs_.ints("padding", padding));
    if (padding.size() != 2 * spatial)
      return fail("C4", "padding " + listString(padding) + " must have shape [" + std::to_string(spatial) + ", 2]");
  }
  if (lhsDil.size() != spatial) return fail("C5", "lhs_dilation " + listString(lhsDil) + " must have " + std::to_string(spatial) + " entries");
  if (!allInRange(lhsDil, 1, INT64_MAX)) return fail("C6", "lhs_dilation " + listString(lhsDil) + " must be positive");
  if (rhsDil.size() != spatial) return fail("C7", "rhs_dilation " + listString(rhsDil) + " must have " + std::to_string(spatial) + " entries");
  if (!allInRange(rhsDil, 1, INT64_MAX)) return fail("C8", "rhs_dilation " + listString(rhsDil) + " must be positive");
  if (const Attribute* rev = op_.attr("window_reversal"))
    if (auto r = rev->asIntList(); r && r->size() != spatial)
      return fail("C9", "window_reversal must have " + std::to_string(spatial) + " entries");

  WF_ASSIGN_OR_RETURN(int64_t fgc, attrs_.integer("feature_group_count", 1));
  WF_ASSIGN_OR_RETURN(int64_t bgc, attrs_.integer("batch_group_count", 1));
  if (fgc <= 0) return fail("C21", "feature_group_count " + std::to_string(fgc) + " must be positive");
  if (bgc <= 0) return fail("C22", "batch_group_count " + std::to_string(bgc) + " must be positive");
  if (fgc != 1 && bgc != 1) return fail("C23", "feature_group_count and batch_group_count cannot both exceed 1");

  const Attribute* dn = op_.attr("dimension_numbers");
  if (!dn || dn->kind() != Attribute::Kind::kDialectStruct) {
    setResult(0, declared(0));  // compact spelling kept opaque
    return Status::ok();
  }
  auto ib = AttrReader::fieldInt(*dn, "input_batch_dimension"), ifd = AttrReader::fieldInt(*dn, "input_feature_dimension");
  auto kif = AttrReader::fieldInt(*dn, "kernel_input_feature_dimension");
  auto kof = AttrReader::fieldInt(*dn, "kernel_output_feature_dimension");
  auto ob = AttrReader::fieldInt(*dn, "output_batch_dimension"), of = AttrReader::fieldInt(*dn, "output_feature_dimension");
  Dims is = AttrReader::fieldInts(*dn, "input_spatial_dimensions"), ks = AttrReader::fieldInts(*dn, "kernel_spatial_dimensions");
  Dims os = AttrReader::fieldInts(*dn, "output_spatial_dimensions");
  if (!ib || !ifd || !kif || !kof || !ob || !of)
    return fail("attributes", "dimension_numbers " + printAttribute(*dn) + " lacks a batch or feature dimension");
  if (is.size() != spatial) return fail("C12", "input_spatial_dimensions " + listString(is) + " must have " + std::to_string(spatial) + " entries");
  Dims inputDims = {*ib};
  inputDims.insert(inputDims.end(), is.begin(), is.end());
  inputDims.push_back(*ifd);
  if (!isUnique(inputDims) || !allInRange(inputDims, 0, n))
    return fail("C13", "input dimensions " + listString(inputDims) + " must be a permutation of the dimensions of " + lhs.toString());
  if (ks.size() != spatial) return fail("C17", "kernel_spatial_dimensions " + listString(ks) + " must have " + std::to_string(spatial) + " entries");
  Dims kernelDims = ks;
  kernelDims.push_back(*kif);
  kernelDims.push_back(*kof);
  if (!isUnique(kernelDims) || !allInRange(kernelDims, 0, n))
    return fail("C18", "kernel dimensions " + listString(kernelDims) + " must be a permutation of the dimensions of " + rhs.toString());
  if (os.size() != spatial) return fail("C19", "output_spatial_dimensions " + listString(os) + " must have " + std::to_string(spatial) + " entries");
  Dims outputDims = {*ob};
  outputDims.insert(outputDims.end(), os.begin(), os.end());
  outputDims.push_back(*of);
  if (!isUnique(outputDims) || !allInRange(outputDims, 0, n))
    return fail("C20", "output dimensions " + listString(outputDims) + " must be a permutation of the dimensions of the result");

  int64_t batch = lhs.dim(*ib), feature = lhs.dim(*ifd);
  int64_t kIn = rhs.dim(*kif), kOut = rhs.dim(*kof);
  if (batch != kDynamic && batch % bgc != 0)
    return fail("C10", "input batch dimension " + std::to_string(batch) + " of " + lhs.toString() + " is not divisible by batch_group_count " + std::to_string(bgc));
  if (feature != kDynamic && feature % fgc != 0)
    return fail("C11", "input feature dimension " + std::to_string(feature) + " of " + lhs.toString() + " is not divisible by feature_group_count " + std::to_string(fgc));
  if (feature != kDynamic && kIn != kDynamic && kIn != feature / fgc)
    return fail("C14", "kernel input feature dimension of " + rhs.toString() + " must be " + std::to_string(feature / fgc));
  if (kOut != kDynamic && (kOut % bgc != 0 || kOut % fgc != 0))
    return fail("C15", "kernel output feature dimension of " + rhs.toString() + " must be divisible by the group counts");

  Dims expected(static_cast<size_t>(n), kDynamic);
  expected[static_cast<size_t>(*ob)] = batch == kDynamic ? kDynamic : batch / bgc;
  expected[static_cast<size_t>(*of)] = kOut;
  for (size_t i = 0; i < spatial; ++i)
    if (!dynamicPadding)
      expected[static_cast<size_t>(os[i])] = windowOutputSize(lhs.dim(is[i]), rhs.dim(ks[i]), strides[i], padding[2 * i],
                                                              padding[2 * i + 1], lhsDil[i], rhsDil[i]);
  rules("C25", "C25");
  result(0, declared(0), expected);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Reductions and sorting.

Status Rule::inferReduce() {
  size_t n = op_.numResults();
  if (n == 0 || op_.numOperands() != 2 * n)
    return fail("C3", "expects N inputs, N init_values and N results with N > 0; has " + std::to_string(op_.numOperands()) +
                          " operands and " + std::to_string(n) + " results");
  WF_RETURN_IF_ERROR(allTensors());
  for (size_t i = 1; i < n; ++i) WF_RETURN_IF_ERROR(sameShape("C1", in(0), in(i), "inputs"));
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(sameElement("C2", in(i), in(n + i), "input and init_value"));
    if (in(n + i).rank() != 0) return fail("C2", "init_value " + in(n + i).toString() + " must be rank 0");
  }
  WF_ASSIGN_OR_RETURN(Dims dims, attrs_.ints("dimensions"));
  if (!allInRange(dims, 0, in(0).rank())) return fail("C4", "dimensions " + listString(dims) + " out of range for " + in(0).toString());
  if (!isUnique(dims)) return fail("C5", "dimensions " + listString(dims) + " are not unique");
  Signature body;
  WF_RETURN_IF_ERROR(reductionBody(0, "C6", n, body));
  Dims expected;
  for (int64_t d = 0; d < in(0).rank(); ++d)
    if (!contains(dims, d)) expected.push_back(in(0).dim(d));
  rules("C7", "C8");
  for (size_t i = 0; i < n; ++i) result(i, body.outputs[i], expected);
  return Status::ok();
}

Status Rule::inferReduceWindow() {
  size_t n = op_.numResults();
  if (n == 0 || op_.numOperands() != 2 * n) return fail("C1", "expects N inputs, N init_values and N results with N > 0");
  WF_RETURN_IF_ERROR(allTensors());
  const Type& input = in(0);
  for (size_t i = 1; i < n; ++i) WF_RETURN_IF_ERROR(sameShape("C2", input, in(i), "inputs"));
  for (size_t i = 0; i < n; ++i) WF_RETURN_IF_ERROR(sameElement("C3", in(i), in(n + i), "input and init_value"));
  WF_ASSIGN_OR_RETURN(Window window, readWindow(op_, input.rank()));
  Signature body;
  WF_RETURN_IF_ERROR(reductionBody(0, "C13", n, body));
  rules("C15", "C16");
  for (size_t i = 0; i < n; ++i) result(i, body.outputs[i], window.outputShape(input.shape()));
  return Status::ok();
}

Status Rule::inferSelectAndScatter() {
  WF_RETURN_IF_ERROR(counts(3, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &operand = in(0), &source = in(1), &init = in(2);
  WF_RETURN_IF_ERROR(sameElement("C1", operand, source, "operand and source"));
  WF_RETURN_IF_ERROR(sameElement("C3", operand, init, "operand and init_value"));
  WF_RETURN_IF_ERROR(readWindow(op_, operand.rank()).status());
  Signature select, scatter;
  WF_RETURN_IF_ERROR(regionSignature(0, "C9", select));
  if (select.inputs.size() != 2 || select.outputs.size() != 1 || !select.outputs[0].isTensor() ||
      select.outputs[0].elementType() != ElementType::kI1)
    return fail("C9", "select has type " + typeListString(select.inputs) + " -> " + typeListString(select.outputs) +
                          ", expected (tensor<E>, tensor<E>) -> tensor<i1>");
  WF_RETURN_IF_ERROR(reductionBody(1, "C10", 1, scatter));
  rules("C11", "C12");
  result(0, scatter.outputs[0], operand.shape());
  return Status::ok();
}

Status Rule::inferSort() {
  size_t n = op_.numOperands();
  if (n == 0) return fail("C1", "expects at least one input");
  WF_RETURN_IF_ERROR(counts(static_cast<int>(n), static_cast<int>(n)));
  WF_RETURN_IF_ERROR(allTensors());
  for (size_t i = 0; i < n; ++i) WF_RETURN_IF_ERROR(sameShape("C3", in(0), in(i), "inputs"));
  int64_t rank = in(0).rank();
  WF_ASSIGN_OR_RETURN(int64_t dim, attrs_.integer("dimension", -1));
  if (dim < -rank || dim >= rank) return fail("C4", "dimension " + std::to_string(dim) + " out of range for " + in(0).toString());
  Signature cmp;
  WF_RETURN_IF_ERROR(regionSignature(0, "C5", cmp));
  bool ok = cmp.inputs.size() == 2 * n && cmp.outputs.size() == 1 && cmp.outputs[0].isTensor() &&
            cmp.outputs[0].rank() == 0 && cmp.outputs[0].elementType() == ElementType::kI1;
  for (size_t i = 0; ok && i < cmp.inputs.size(); ++i)
    ok = cmp.inputs[i].isTensor() && cmp.inputs[i].rank() == 0 && elementTypesCompatible(cmp.inputs[i], in(i / 2));
  if (!ok)
    return fail("C5", "comparator has type " + typeListString(cmp.inputs) + " -> " + typeListString(cmp.outputs) +
                          ", expected 2 rank-0 arguments per input and one tensor<i1> result");
  rules("C2", "C2");
  for (size_t i = 0; i < n; ++i) setResult(i, in(i));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Indexing.

Status Rule::inferGather() {
  const bool dynamicSizes = op_.code() == OpCode::DynamicGather;
  WF_RETURN_IF_ERROR(counts(dynamicSizes ? 3 : 2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_ASSIGN_OR_RETURN(const Attribute* dn, attrs_.dialectStruct("dimension_numbers"));
  const Type &operand = in(0), &indices = in(1);
  Dims offset = AttrReader::fieldInts(*dn, "offset_dims"), collapsed = AttrReader::fieldInts(*dn, "collapsed_slice_dims");
  Dims operandBatch = AttrReader::fieldInts(*dn, "operand_batching_dims");
  Dims indicesBatch = AttrReader::fieldInts(*dn, "start_indices_batching_dims");
  Dims startMap = AttrReader::fieldInts(*dn, "start_index_map");
  int64_t ivd = AttrReader::fieldInt(*dn, "index_vector_dim").value_or(0);  // absent: MLIR default 0
  int64_t rank = operand.rank();
  if (rank != static_cast<int64_t>(offset.size() + collapsed.size() + operandBatch.size()))
    return fail("C1", "rank of operand " + operand.toString() +
                          " must equal size(offset_dims) + size(collapsed_slice_dims) + size(operand_batching_dims)");
  if (ivd < 0 || ivd > indices.rank())
    return fail("C2", "index_vector_dim " + std::to_string(ivd) + " out of range for " + indices.toString());
  int64_t indexSize = ivd < indices.rank() ? indices.dim(ivd) : 1;
  if (!dimsCompatible(static_cast<int64_t>(startMap.size()), indexSize))
    return fail("C3", "start_index_map " + listString(startMap) + " must have " + std::to_string(indexSize) + " entries");
  if (!isUnique(offset) || !isSorted(offset)) return fail("C4", "offset_dims " + listString(offset) + " must be sorted and unique");
  int64_t resultRank = indices.rank() - (ivd < indices.rank() ? 1 : 0) + static_cast<int64_t>(offset.size());
  if (!allInRange(offset, 0, resultRank))
    return fail("C5", "offset_dims " + listString(offset) + " out of range for result " + declared(0).toString());
  Dims collapsedAndBatch = collapsed;
  collapsedAndBatch.insert(collapsedAndBatch.end(), operandBatch.begin(), operandBatch.end());
  if (!isUnique(collapsedAndBatch)) return fail("C6", "collapsed_slice_dims and operand_batching_dims overlap");
  if (!isSorted(collapsed)) return fail("C7", "collapsed_slice_dims " + listString(collapsed) + " must be sorted");
  if (!allInRange(collapsed, 0, rank)) return fail("C8", "collapsed_slice_dims " + listString(collapsed) + " out of range for " + operand.toString());
  if (!allInRange(operandBatch, 0, rank)) return fail("C11", "operand_batching_dims " + listString(operandBatch) + " out of range");
  if (!isUnique(indicesBatch) || !allInRange(indicesBatch, 0, indices.rank()))
    return fail("C14", "start_indices_batching_dims " + listString(indicesBatch) + " invalid for " + indices.toString());
  if (contains(indicesBatch, ivd)) return fail("C15", "index_vector_dim is among start_indices_batching_dims");
  if (operandBatch.size() != indicesBatch.size()) return fail("C16", "operand_batching_dims and start_indices_batching_dims differ in size");
  Dims mapAndBatch = startMap;
  mapAndBatch.insert(mapAndBatch.end(), operandBatch.begin(), operandBatch.end());
  if (!isUnique(mapAndBatch)) return fail("C18", "start_index_map and operand_batching_dims overlap");
  if (!allInRange(startMap, 0, rank)) return fail("C19", "start_index_map " + listString(startMap) + " out of range for " + operand.toString());
  rules("C22", "C23");
  if (dynamicSizes) {  // slice sizes come from an operand
    result(0, operand, declared(0).isTensor() ? declared(0).shape() : Dims{});
    return Status::ok();
  }

  WF_ASSIGN_OR_RETURN(Dims sizes, attrs_.ints("slice_sizes"));
  if (static_cast<int64_t>(sizes.size()) != rank)
    return fail("C20", "slice_sizes " + listString(sizes) + " must have " + std::to_string(rank) + " entries");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = sizes[static_cast<size_t>(d)];
    if (s < 0 || (operand.dim(d) != kDynamic && s > operand.dim(d)))
      return fail("C21", "slice_sizes " + listString(sizes) + " exceed operand " + operand.toString());
    if (contains(collapsed, d) && s > 1) return fail("C9", "collapsed slice dimension " + std::to_string(d) + " has slice size " + std::to_string(s));
    if (contains(operandBatch, d) && s > 1) return fail("C12", "operand batching dimension " + std::to_string(d) + " has slice size " + std::to_string(s));
  }
  Dims batchSizes, offsetSizes;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (d != ivd) batchSizes.push_back(indices.dim(d));
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(collapsed, d) && !contains(operandBatch, d)) offsetSizes.push_back(sizes[static_cast<size_t>(d)]);
  Dims expected;
  size_t b = 0, o = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(batchSizes.size() + offsetSizes.size()); ++d) {
    if (contains(offset, d)) {
      if (o < offsetSizes.size()) expected.push_back(offsetSizes[o++]);
    } else if (b < batchSizes.size()) {
      expected.push_back(batchSizes[b++]);
    }
  }
  result(0, operand, expected);
  return Status::ok();
}

Status Rule::inferScatter() {
  size_t total = op_.numOperands();
  if (total < 3 || total % 2 == 0) return fail("C5", "expects N inputs, scatter_indices and N updates with N > 0");
  size_t n = (total - 1) / 2;
  WF_RETURN_IF_ERROR(counts(static_cast<int>(total), static_cast<int>(n)));
  WF_RETURN_IF_ERROR(allTensors());
  WF_ASSIGN_OR_RETURN(const Attribute* dn, attrs_.dialectStruct("scatter_dimension_numbers"));
  const Type &input = in(0), &indices = in(n), &update = in(n + 1);
  Dims window = AttrReader::fieldInts(*dn, "update_window_dims"), inserted = AttrReader::fieldInts(*dn, "inserted_window_dims");
  Dims inputBatch = AttrReader::fieldInts(*dn, "input_batching_dims");
  Dims indicesBatch = AttrReader::fieldInts(*dn, "scatter_indices_batching_dims");
  Dims toOperand = AttrReader::fieldInts(*dn, "scatter_dims_to_operand_dims");
  int64_t ivd = AttrReader::fieldInt(*dn, "index_vector_dim").value_or(0);  // absent: MLIR default 0
  int64_t rank = input.rank();
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(sameShape("C1", input, in(i), "inputs"));
    WF_RETURN_IF_ERROR(sameShape("C3", update, in(n + 1 + i), "updates"));
    WF_RETURN_IF_ERROR(sameElement("C6", in(i), in(n + 1 + i), "input and update"));
  }
  if (rank != static_cast<int64_t>(window.size() + inserted.size() + inputBatch.size()))
    return fail("C2", "rank of input " + input.toString() +
                          " must equal size(update_window_dims) + size(inserted_window_dims) + size(input_batching_dims)");
  if (!isUnique(window) || !isSorted(window)) return fail("C7", "update_window_dims " + listString(window) + " must be sorted and unique");
  if (!allInRange(window, 0, update.rank())) return fail("C8", "update_window_dims " + listString(window) + " out of range for " + update.toString());
  Dims insertedAndBatch = inserted;
  insertedAndBatch.insert(insertedAndBatch.end(), inputBatch.begin(), inputBatch.end());
  if (!isUnique(insertedAndBatch)) return fail("C9", "inserted_window_dims and input_batching_dims overlap");
  if (!isSorted(inserted)) return fail("C10", "inserted_window_dims " + listString(inserted) + " must be sorted");
  if (!allInRange(inserted, 0, rank)) return fail("C11", "inserted_window_dims " + listString(inserted) + " out of range for " + input.toString());
  if (!allInRange(inputBatch, 0, rank)) return fail("C13", "input_batching_dims " + listString(inputBatch) + " out of range");
  if (!isUnique(indicesBatch) || !allInRange(indicesBatch, 0, indices.rank()))
    return fail("C15", "scatter_indices_batching_dims " + listString(indicesBatch) + " invalid for " + indices.toString());
  if (contains(indicesBatch, ivd)) return fail("C16", "index_vector_dim is among scatter_indices_batching_dims");
  if (inputBatch.size() != indicesBatch.size()) return fail("C17", "input_batching_dims and scatter_indices_batching_dims differ in size");
  int64_t indexSize = ivd < indices.rank() ? indices.dim(ivd) : 1;
  if (!dimsCompatible(static_cast<int64_t>(toOperand.size()), indexSize))
    return fail("C19", "scatter_dims_to_operand_dims " + listString(toOperand) + " must have " + std::to_string(indexSize) + " entries");
  Dims mapAndBatch = toOperand;
  mapAndBatch.insert(mapAndBatch.end(), inputBatch.begin(), inputBatch.end());
  if (!isUnique(mapAndBatch)) return fail("C20", "scatter_dims_to_operand_dims and input_batching_dims overlap");
  if (!allInRange(toOperand, 0, rank)) return fail("C21", "scatter_dims_to_operand_dims " + listString(toOperand) + " out of range");
  if (ivd < 0 || ivd > indices.rank()) return fail("C22", "index_vector_dim " + std::to_string(ivd) + " out of range for " + indices.toString());
  // C4: the update's scatter dims are the indices' dims (without index_vector_dim).
  Dims scatterSizes;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (d != ivd) scatterSizes.push_back(indices.dim(d));
  if (update.rank() != static_cast<int64_t>(scatterSizes.size() + window.size()))
    return fail("C4", "updates " + update.toString() + " must have rank " + std::to_string(scatterSizes.size() + window.size()));
  size_t s = 0;
  for (int64_t d = 0; d < update.rank(); ++d) {
    if (contains(window, d)) continue;
    if (!dimsCompatible(update.dim(d), scatterSizes[s++]))
      return fail("C4", "updates " + update.toString() + " do not match scatter_indices " + indices.toString());
  }
  Signature body;
  WF_RETURN_IF_ERROR(reductionBody(0, "C23", n, body));
  rules("C24", "C25");
  for (size_t i = 0; i < n; ++i) result(i, body.outputs[i], in(i).shape());
  return Status::ok();
}

Status Rule::inferDynamicSlice() {
  WF_RETURN_IF_ERROR(allTensors());
  if (op_.numOperands() < 1 || op_.numResults() != 1) WF_RETURN_IF_ERROR(counts(-1, 1));
  if (op_.numOperands() < 1) return fail("operands", "expects an operand and start indices");
  const Type& operand = in(0);
  WF_ASSIGN_OR_RETURN(Dims sizes, attrs_.ints("slice_sizes"));
  size_t rank = static_cast<size_t>(operand.rank());
  if (op_.numOperands() - 1 != rank || sizes.size() != rank)
    return fail("C2", "expects " + std::to_string(rank) + " start indices and slice_sizes entries for " + operand.toString());
  for (size_t i = 2; i < op_.numOperands(); ++i) WF_RETURN_IF_ERROR(sameType("C3", in(1), in(i), "start indices"));
  for (size_t d = 0; d < rank; ++d)
    if (sizes[d] < 0 || (operand.dim(static_cast<int64_t>(d)) != kDynamic && sizes[d] > operand.dim(static_cast<int64_t>(d))))
      return fail("C4", "slice_sizes " + listString(sizes) + " exceed operand " + operand.toString());
  rules("C5", "C1");
  result(0, operand, sizes);
  return Status::ok();
}

Status Rule::inferDynamicUpdateSlice() {
  WF_RETURN_IF_ERROR(allTensors());
  if (op_.numOperands() < 2 || op_.numResults() != 1) return fail("operands", "expects operand, update and start indices");
  const Type &operand = in(0), &update = in(1);
  WF_RETURN_IF_ERROR(sameElement("C2", update, operand, "update and operand"));
  if (update.rank() != operand.rank()) return fail("C3", "update " + update.toString() + " and operand " + operand.toString() + " differ in rank");
  if (op_.numOperands() - 2 != static_cast<size_t>(operand.rank()))
    return fail("C4", "expects " + std::to_string(operand.rank()) + " start indices");
  for (size_t i = 3; i < op_.numOperands(); ++i) WF_RETURN_IF_ERROR(sameType("C5", in(2), in(i), "start indices"));
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (update.dim(d) != kDynamic && operand.dim(d) != kDynamic && update.dim(d) > operand.dim(d))
      return fail("C6", "update " + update.toString() + " is larger than operand " + operand.toString());
  setResult(0, operand);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Tuples and control flow.

Status Rule::inferGetTupleElement() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  if (!in(0).isTuple()) return fail("types", "operand " + in(0).toString() + " must be a tuple");
  WF_ASSIGN_OR_RETURN(int64_t index, attrs_.integer("index"));
  const auto& elements = in(0).tupleElements();
  if (index < 0 || index >= static_cast<int64_t>(elements.size()))
    return fail("C1", "index " + std::to_string(index) + " out of range for " + in(0).toString());
  rules("C2", "C2");
  setResult(0, elements[static_cast<size_t>(index)]);
  return Status::ok();
}

Status Rule::inferWhile() {
  std::vector<Type> operands = operandTypes();
  Signature cond, body;
  WF_RETURN_IF_ERROR(regionSignature(0, "C1", cond));
  WF_RETURN_IF_ERROR(typesMatch("C1", cond.inputs, operands, "cond argument types"));
  if (cond.outputs.size() != 1 || !cond.outputs[0].isTensor() || cond.outputs[0].rank() != 0 ||
      cond.outputs[0].elementType() != ElementType::kI1)
    return fail("C1", "cond must return one tensor<i1>, returns " + typeListString(cond.outputs));
  WF_RETURN_IF_ERROR(regionSignature(1, "C2", body));
  WF_RETURN_IF_ERROR(typesMatch("C2", body.inputs, operands, "body argument types"));
  // Where both are static (shapes refined), name the value whose shape the body changes.
  for (size_t i = 0; i < body.outputs.size() && i < operands.size(); ++i)
    if (body.outputs[i].isTensor() && operands[i].isTensor() && operands[i].hasStaticShape() &&
        body.outputs[i].hasStaticShape() && body.outputs[i] != operands[i])
      return fail("C2", "loop-carried value #" + std::to_string(i) + " enters the loop as " + operands[i].toString() +
                            " but the body returns " + body.outputs[i].toString() + ": its shape changes between iterations");
  WF_RETURN_IF_ERROR(typesMatch("C2", body.outputs, operands, "body result types"));
  rules("C3", "C3");
  out_.types = operands;
  return Status::ok();
}

Status Rule::inferIf() {
  WF_RETURN_IF_ERROR(counts(1, -1));
  const Type& pred = in(0);
  if (!pred.isTensor() || pred.rank() != 0 || pred.elementType() != ElementType::kI1)
    return fail("types", "pred " + pred.toString() + " must be tensor<i1>");
  Signature t, f;
  WF_RETURN_IF_ERROR(regionSignature(0, "C1", t));
  WF_RETURN_IF_ERROR(regionSignature(1, "C1", f));
  if (!t.inputs.empty() || !f.inputs.empty()) return fail("C1", "branches must not take arguments");
  WF_RETURN_IF_ERROR(typesMatch("C2", f.outputs, t.outputs, "false_branch result types"));
  rules("C3", "C3");
  out_.types = t.outputs;
  return Status::ok();
}

Status Rule::inferCase() {
  WF_RETURN_IF_ERROR(counts(1, -1));
  const Type& index = in(0);
  if (!index.isTensor() || index.rank() != 0 || !isInteger(index.elementType()))
    return fail("types", "index " + index.toString() + " must be a rank-0 integer tensor");
  if (op_.numRegions() == 0) return fail("C1", "expects at least one branch");
  Signature first;
  WF_RETURN_IF_ERROR(regionSignature(0, "C2", first));
  for (size_t i = 0; i < op_.numRegions(); ++i) {
    Signature branch;
    WF_RETURN_IF_ERROR(regionSignature(i, "C2", branch));
    if (!branch.inputs.empty()) return fail("C2", "branch #" + std::to_string(i) + " must not take arguments");
    WF_RETURN_IF_ERROR(typesMatch("C3", branch.outputs, first.outputs, "branch #" + std::to_string(i) + " result types"));
  }
  rules("C4", "C4");
  out_.types = first.outputs;
  return Status::ok();
}

Status Rule::inferMap() {
  WF_RETURN_IF_ERROR(counts(-1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  size_t n = op_.numOperands();
  if (n == 0) return fail("C2", "expects at least one input");
  for (size_t i = 1; i < n; ++i) WF_RETURN_IF_ERROR(sameShape("C1", in(0), in(i), "input and result"));
  Dims range;
  for (int64_t d = 0; d < in(0).rank(); ++d) range.push_back(d);
  WF_ASSIGN_OR_RETURN(Dims dims, attrs_.ints("dimensions", range));
  if (dims != range) return fail("C3", "dimensions " + listString(dims) + " must be " + listString(range));
  Signature body;
  WF_RETURN_IF_ERROR(regionSignature(0, "C4", body));
  bool ok = body.inputs.size() == n && body.outputs.size() == 1;
  for (size_t i = 0; ok && i < n; ++i)
    ok = body.inputs[i].isTensor() && body.inputs[i].rank() == 0 && elementTypesCompatible(body.inputs[i], in(i));
  if (ok) ok = body.outputs[0].isTensor();
  if (!ok)
    return fail("C4", "computation has type " + typeListString(body.inputs) + " -> " + typeListString(body.outputs) +
                          ", expected one rank-0 argument per input and the result's element type");
  rules("C1", "C4");
  result(0, body.outputs[0], in(0).shape());
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// func dialect.

Status Rule::inferFunc() {
  const Attribute* name = op_.attr("sym_name");
  if (!name || name->kind() != Attribute::Kind::kString) return fail("func", "missing attribute 'sym_name'");
  const Attribute* type = op_.attr("function_type");
  if (!type || !type->isFunctionType()) return fail("func", "missing attribute 'function_type'");
  if (op_.numRegions() == 0 || op_.region(0).empty()) return Status::ok();  // a declaration
  const FunctionType& fn = type->functionTypeValue();
  const Block& entry = op_.region(0).front();
  std::vector<Type> args;
  for (const auto& a : entry.arguments()) args.push_back(a->type());
  WF_RETURN_IF_ERROR(typesMatch("func", args, fn.inputs, "entry block argument types"));
  const Operation* term = entry.terminator();
  if (!term || term->code() != OpCode::FuncReturn) return fail("func", "body of @" + name->stringValue() + " must end in func.return");
  return Status::ok();
}

Status Rule::inferFuncReturn() {
  WF_RETURN_IF_ERROR(counts(-1, 0));
  const Operation* parent = op_.parentOp();
  if (!parent || parent->code() != OpCode::FuncFunc) return Status::ok();
  FunctionType fn = FuncOp(parent).functionType();
  return typesMatch("func", operandTypes(), fn.results, "returned types");
}

Status Rule::inferCall() {
  const Attribute* callee = op_.attr("callee");
  if (!callee || callee->kind() != Attribute::Kind::kSymbolRef) return fail("call", "missing attribute 'callee'");
  out_.types = declaredTypes();
  if (!module_) return Status::ok();
  const Operation* fn = module_->lookupFunction(callee->stringValue());
  if (!fn) return fail("call", "callee @" + callee->stringValue() + " is not a function of this module");
  FunctionType type = FuncOp(fn).functionType();
  WF_RETURN_IF_ERROR(typesMatch("call", operandTypes(), type.inputs, "operand types"));
  rules("call", "call");
  out_.types = type.results;
  return Status::ok();
}

Status Rule::inferComposite() {
  const Attribute* decomposition = op_.attr("decomposition");
  if (!decomposition || decomposition->kind() != Attribute::Kind::kSymbolRef)
    return fail("attributes", "missing attribute 'decomposition'");
  out_.types = declaredTypes();
  if (!module_) return Status::ok();
  const Operation* fn = module_->lookupFunction(decomposition->stringValue());
  if (!fn) return fail("C1", "decomposition @" + decomposition->stringValue() + " is not a function of this module");
  FunctionType type = FuncOp(fn).functionType();
  WF_RETURN_IF_ERROR(typesMatch("C2", operandTypes(), type.inputs, "operand types"));
  rules("C2", "C2");
  out_.types = type.results;
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Ops whose rules only compute shapes: the result element types are the declared ones.

// chlo.broadcast_*: numpy-style broadcasting of the operand shapes, aligned on the right.
Status Rule::inferChloBroadcast() {
  out_.types = declaredTypes();
  if (op_.numResults() != 1 || op_.attr("broadcast_dimensions")) return Status::ok();
  for (size_t i = 0; i < op_.numOperands(); ++i)
    if (!in(i).isTensor()) return Status::ok();
  int64_t rank = 0;
  for (const Value* v : op_.operands()) rank = std::max(rank, v->type().rank());
  Dims s(static_cast<size_t>(rank), 1);
  for (const Value* v : op_.operands()) {
    const Type& t = v->type();
    for (int64_t i = 0; i < t.rank(); ++i) {
      int64_t& d = s[static_cast<size_t>(rank - t.rank() + i)];
      int64_t x = t.dim(i);
      if (x == 1) continue;
      if (d != 1 && d != x) return fail("", "operand shapes do not broadcast: " + shapeString(s) + " and " + t.toString());
      d = x;
    }
  }
  result(0, declared(0), s);
  return Status::ok();
}

Status Rule::inferBatchNorm() {
  out_.types = declaredTypes();
  auto feature = attrs_.integer("feature_index");
  if (op_.numResults() != 3 || op_.numOperands() == 0 || !in(0).isTensor() || !feature || *feature < 0 ||
      *feature >= in(0).rank())
    return Status::ok();
  Dims f = {in(0).dim(*feature)};
  result(0, declared(0), in(0).shape());
  result(1, declared(1), f);
  result(2, declared(2), f);
  return Status::ok();
}

Status Rule::inferFft() {
  out_.types = declaredTypes();
  const Attribute* kind = op_.attr("fft_type");
  auto length = attrs_.ints("fft_length");
  if (op_.numResults() != 1 || op_.numOperands() != 1 || !kind || !in(0).isTensor() || !length || length->empty() ||
      static_cast<int64_t>(length->size()) > in(0).rank())
    return Status::ok();
  Dims s = in(0).shape();
  if (kind->stringValue() == "RFFT") s.back() = length->back() / 2 + 1;
  if (kind->stringValue() == "IRFFT") s.back() = length->back();
  result(0, declared(0), s);
  return Status::ok();
}

Status Rule::inferTopK() {
  out_.types = declaredTypes();
  auto k = attrs_.integer("k");
  if (op_.numResults() != 2 || op_.numOperands() != 1 || !k || !in(0).isTensor() || in(0).rank() == 0)
    return Status::ok();
  Dims s = in(0).shape();
  s.back() = *k;
  result(0, declared(0), s);
  result(1, declared(1), s);
  return Status::ok();
}

// all_gather, reduce_scatter, all_to_all among replicas: the group size is the second dimension
// of replica_groups (tensor<G x N>); all_reduce, collective_permute, collective_broadcast keep
// their operands' shapes.
Status Rule::inferCollective() {
  out_.types = declaredTypes();
  size_t n = op_.numResults();
  if (op_.numOperands() != n) return Status::ok();
  for (size_t i = 0; i < n; ++i)
    if (!in(i).isTensor() || !declared(i).isTensor()) return Status::ok();
  OpCode code = op_.code();
  if (code == OpCode::AllReduce || code == OpCode::CollectivePermute || code == OpCode::CollectiveBroadcast) {
    for (size_t i = 0; i < n; ++i) result(i, declared(i), in(i).shape());
    return Status::ok();
  }
  // With a channel_handle the groups may span partitions too (cross_replica_and_partition,
  // flattened ids), and their size depends on the process grid: the declared types stand.
  const Attribute* groups = op_.attr("replica_groups");
  if (!groups || groups->kind() != Attribute::Kind::kDenseElements || groups->typeValue().rank() != 2 ||
      op_.attr("channel_handle"))
    return Status::ok();
  int64_t groupSize = groups->typeValue().dim(1);
  std::vector<Type> types;
  for (size_t i = 0; i < n; ++i) {
    Dims s = in(i).shape();
    auto at = [&](const char* name) -> int64_t* {
      auto d = attrs_.integer(name);
      return d && *d >= 0 && *d < static_cast<int64_t>(s.size()) ? &s[static_cast<size_t>(*d)] : nullptr;
    };
    if (code == OpCode::AllGather) {
      int64_t* d = at("all_gather_dim");
      if (!d || groupSize <= 0) return Status::ok();
      *d *= groupSize;
    } else if (code == OpCode::ReduceScatter) {
      int64_t* d = at("scatter_dimension");
      if (!d || groupSize <= 0 || *d % groupSize != 0) return Status::ok();
      *d /= groupSize;
    } else {
      auto count = attrs_.integer("split_count");
      int64_t *split = at("split_dimension"), *concat = at("concat_dimension");
      if (!count || *count <= 0 || !split || !concat || *split % *count != 0) return Status::ok();
      *split /= *count;
      *concat *= *count;
    }
    types.push_back(tensorLike(declared(i), s));
  }
  out_.types = std::move(types);
  return Status::ok();
}

Expected<InferredTypes> Rule::run() {
  Status status = Status::ok();
  if (int operands = sameTypeElementwiseOperands(op_.code()); operands > 0) {
    WF_RETURN_IF_ERROR(elementwise(operands, "C1"));
    return std::move(out_);
  }
  switch (op_.code()) {
    case OpCode::Cholesky: status = elementwise(1, "C1"); break;
    case OpCode::Abs: case OpCode::Real: case OpCode::Imag: status = inferAbsLike(); break;
    case OpCode::IsFinite: case OpCode::ChloIsInf: case OpCode::ChloIsNegInf: case OpCode::ChloIsPosInf:
      status = unaryShapeOnly(ElementType::kI1);
      break;
    case OpCode::Convert: status = unaryShapeOnly(std::nullopt); break;
    case OpCode::BitcastConvert: status = inferBitcastConvert(); break;
    case OpCode::Complex: status = inferComplex(); break;
    case OpCode::Clamp: status = inferClamp(); break;
    case OpCode::Select: status = inferSelect(); break;
    case OpCode::Compare: status = inferCompare(); break;
    case OpCode::Constant: status = inferConstant(); break;
    case OpCode::Iota: status = inferIota(); break;
    case OpCode::BroadcastInDim: status = inferBroadcastInDim(); break;
    case OpCode::Broadcast: status = inferBroadcast(); break;
    case OpCode::Reshape: status = inferReshape(); break;
    case OpCode::Transpose: status = inferTranspose(); break;
    case OpCode::Slice: status = inferSlice(); break;
    case OpCode::Concatenate: status = inferConcatenate(); break;
    case OpCode::Pad: status = inferPad(); break;
    case OpCode::Reverse: status = inferReverse(); break;
    case OpCode::DotGeneral: status = inferDotGeneral(); break;
    case OpCode::Dot: status = inferDot(); break;
    case OpCode::Convolution: case OpCode::DynamicConv: status = inferConvolution(); break;
    case OpCode::Reduce: status = inferReduce(); break;
    case OpCode::ReduceWindow: status = inferReduceWindow(); break;
    case OpCode::SelectAndScatter: status = inferSelectAndScatter(); break;
    case OpCode::Sort: status = inferSort(); break;
    case OpCode::Gather: case OpCode::DynamicGather: status = inferGather(); break;
    case OpCode::Scatter: status = inferScatter(); break;
    case OpCode::DynamicSlice: status = inferDynamicSlice(); break;
    case OpCode::DynamicUpdateSlice: status = inferDynamicUpdateSlice(); break;
    case OpCode::GetTupleElement: status = inferGetTupleElement(); break;
    case OpCode::Tuple:
      status = counts(-1, 1);
      out_.types = {Type::tuple(operandTypes())};
      break;
    case OpCode::While: status = inferWhile(); break;
    case OpCode::If: status = inferIf(); break;
    case OpCode::Case: status = inferCase(); break;
    case OpCode::Map: status = inferMap(); break;
    case OpCode::OptimizationBarrier: out_.types = operandTypes(); break;
    case OpCode::AfterAll:
      status = counts(-1, 1);
      if (status.isOk() && !declared(0).isToken())
        status = fail("types", "result " + declared(0).toString() + " must be a token");
      out_.types = {Type::token()};
      break;
    case OpCode::GetDimensionSize:
      out_.types = declaredTypes();
      if (op_.numResults() == 1) result(0, declared(0), {});
      break;
    case OpCode::BatchNormInference: case OpCode::UniformQuantize: case OpCode::UniformDequantize:
    case OpCode::ChloConstantLike:
      // The first operand's shape; the element type is the declared one.
      out_.types = declaredTypes();
      if (op_.numResults() == 1 && op_.numOperands() > 0 && in(0).isTensor()) result(0, declared(0), in(0).shape());
      break;
    case OpCode::TriangularSolve:
      out_.types = declaredTypes();
      if (op_.numResults() == 1 && op_.numOperands() == 2) result(0, declared(0), in(1).shape());
      break;
    case OpCode::ChloBroadcastAdd: case OpCode::ChloBroadcastSubtract: case OpCode::ChloBroadcastMultiply:
    case OpCode::ChloBroadcastDivide: case OpCode::ChloBroadcastMaximum: case OpCode::ChloBroadcastMinimum:
    case OpCode::ChloBroadcastCompare: case OpCode::ChloBroadcastAnd: case OpCode::ChloBroadcastOr:
    case OpCode::ChloBroadcastXor: case OpCode::ChloBroadcastPower: case OpCode::ChloBroadcastRemainder:
    case OpCode::ChloBroadcastAtan2: case OpCode::ChloBroadcastSelect:
      status = inferChloBroadcast();
      break;
    case OpCode::BatchNormTraining: case OpCode::BatchNormGrad: status = inferBatchNorm(); break;
    case OpCode::Fft: status = inferFft(); break;
    case OpCode::ChloTopK: status = inferTopK(); break;
    case OpCode::AllReduce: case OpCode::CollectivePermute: case OpCode::CollectiveBroadcast:
    case OpCode::AllGather: case OpCode::ReduceScatter: case OpCode::AllToAll:
      status = inferCollective();
      break;
    case OpCode::FuncFunc: status = inferFunc(); break;
    case OpCode::FuncReturn: status = inferFuncReturn(); break;
    case OpCode::FuncCall: status = inferCall(); break;
    case OpCode::Composite: status = inferComposite(); break;
    case OpCode::Return: status = counts(-1, 0); break;
    default:
      // Custom calls, dynamic-shape ops, RNG, linear algebra, the check and interpreter
      // dialects: their declared types.
      out_.types = declaredTypes();
      break;
  }
  if (!status.isOk()) return status;
  return std::move(out_);
}

}  // namespace

Expected<InferredTypes> inferResultTypes(const Operation& op, const Module* module) { return Rule(op, module).run(); }

}  // namespace wf
