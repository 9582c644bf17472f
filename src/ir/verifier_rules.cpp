// Per-op verifier rules: the "Constraints" sections of the StableHLO spec (C1, C2, ...), plus
// the func dialect's signature rules. The rules are strict only where the spec is unambiguous
// for every producer WarpForge reads; dynamic dims (`?`) match any size, and ops or types whose
// rules are not written here are accepted as they are.
#include <algorithm>
#include <set>

#include "ir/printer.h"
#include "ir/verifier_internal.h"

namespace wf::verify_detail {
namespace {

using Dims = std::vector<int64_t>;

bool isUnique(const Dims& v) { return std::set<int64_t>(v.begin(), v.end()).size() == v.size(); }
bool isSorted(const Dims& v) { return std::is_sorted(v.begin(), v.end()); }
bool allInRange(const Dims& v, int64_t lo, int64_t hi) {
  return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= lo && d < hi; });
}
bool contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
std::string listString(const Dims& v) { return shapeString(v); }

class Rule {
 public:
  Rule(const Operation& op, const Module* module) : op_(op), module_(module) {}
  Status run();

 private:
  Status fail(std::string_view constraint, const std::string& message) const {
    return opError(op_, constraint, message);
  }
  const Type& in(size_t i) const { return op_.operand(i)->type(); }
  const Type& out(size_t i) const { return op_.result(i)->type(); }
  std::vector<Type> operandTypes(size_t from = 0, size_t count = SIZE_MAX) const {
    std::vector<Type> t;
    for (size_t i = from; i < op_.numOperands() && i - from < count; ++i) t.push_back(in(i));
    return t;
  }
  std::vector<Type> resultTypes() const {
    std::vector<Type> t;
    for (const auto& r : op_.results()) t.push_back(r->type());
    return t;
  }

  // Operand / result counts; -1 means any.
  Status counts(int operands, int results) const {
    if (operands >= 0 && op_.numOperands() != static_cast<size_t>(operands))
      return fail("operands", "expects " + std::to_string(operands) + " operands, has " +
                                  std::to_string(op_.numOperands()));
    if (results >= 0 && op_.numResults() != static_cast<size_t>(results))
      return fail("results", "expects " + std::to_string(results) + " results, has " +
                                 std::to_string(op_.numResults()));
    return Status::ok();
  }
  // Every operand and result is a tensor.
  Status allTensors() const {
    for (size_t i = 0; i < op_.numOperands(); ++i)
      if (!in(i).isTensor()) return fail("types", "operand #" + std::to_string(i) + " must be a tensor, got " + in(i).toString());
    for (size_t i = 0; i < op_.numResults(); ++i)
      if (!out(i).isTensor()) return fail("types", "result #" + std::to_string(i) + " must be a tensor, got " + out(i).toString());
    return Status::ok();
  }

  // Integer-list attribute; absent -> `fallback` when given, else an error.
  Status ints(std::string_view name, Dims& value, const Dims* fallback = nullptr) const {
    const Attribute* a = op_.attr(name);
    if (!a) {
      if (fallback) {
        value = *fallback;
        return Status::ok();
      }
      return fail("attributes", "missing attribute '" + std::string(name) + "'");
    }
    auto list = a->asIntList();
    if (!list) return fail("attributes", "attribute '" + std::string(name) + "' is not a list of integers: " + printAttribute(*a));
    value = std::move(*list);
    return Status::ok();
  }
  Status integer(std::string_view name, int64_t& value, std::optional<int64_t> fallback = std::nullopt) const {
    const Attribute* a = op_.attr(name);
    if (!a) {
      if (fallback) {
        value = *fallback;
        return Status::ok();
      }
      return fail("attributes", "missing attribute '" + std::string(name) + "'");
    }
    auto v = a->asInt();
    if (!v) return fail("attributes", "attribute '" + std::string(name) + "' is not an integer: " + printAttribute(*a));
    value = *v;
    return Status::ok();
  }
  // Fields of a dialect struct (dot / gather / scatter / conv dimension numbers); absent = empty.
  static Dims fieldInts(const Attribute& s, std::string_view name) {
    const Attribute* f = s.field(name);
    if (!f) return {};
    return f->asIntList().value_or(Dims{});
  }
  static std::optional<int64_t> fieldInt(const Attribute& s, std::string_view name) {
    const Attribute* f = s.field(name);
    return f ? f->asInt() : std::nullopt;
  }

  Status expectShape(std::string_view constraint, const Type& actual, const Dims& expected, const std::string& what) const {
    Type want = Type::tensor(expected, actual.elementType());
    if (!shapesCompatible(actual, want))
      return fail(constraint, what + " " + actual.toString() + " has shape " + shapeString(actual.shape()) +
                                  ", expected " + shapeString(expected));
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

  Status unarySameType();
  Status unaryShapeOnly(std::optional<ElementType> resultElement);
  Status binarySameType();
  Status verifyAbsLike();
  Status verifyComplex();
  Status verifyClamp();
  Status verifySelect();
  Status verifyCompare();
  Status verifyConstant();
  Status verifyIota();
  Status verifyBroadcastInDim();
  Status verifyBroadcast();
  Status verifyReshape();
  Status verifyTranspose();
  Status verifySlice();
  Status verifyConcatenate();
  Status verifyPad();
  Status verifyReverse();
  Status verifyDotGeneral();
  Status verifyDot();
  Status verifyConvolution();
  Status verifyReduce();
  Status verifyReduceWindow();
  Status verifySelectAndScatter();
  Status verifySort();
  Status verifyGather();
  Status verifyScatter();
  Status verifyDynamicSlice();
  Status verifyDynamicUpdateSlice();
  Status verifyGetTupleElement();
  Status verifyTuple();
  Status verifyWhile();
  Status verifyIf();
  Status verifyCase();
  Status verifyMap();
  Status verifyFunc();
  Status verifyFuncReturn();
  Status verifyCall();
  Status verifyComposite();

  const Operation& op_;
  const Module* module_;
};

// ---------------------------------------------------------------------------------------------
// Elementwise.

Status Rule::unarySameType() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  return sameType("C1", in(0), out(0), "operand and result");
}

Status Rule::unaryShapeOnly(std::optional<ElementType> resultElement) {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameShape("C1", in(0), out(0), "operand and result"));
  if (resultElement && out(0).elementType() != *resultElement)
    return fail("C2", "result " + out(0).toString() + " must have element type " +
                          std::string(elementTypeName(*resultElement)));
  return Status::ok();
}

Status Rule::binarySameType() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameType("C1", in(0), in(1), "lhs and rhs"));
  return sameType("C1", in(0), out(0), "operand and result");
}

// abs, real, imag: complex operands give their part type, others keep theirs.
Status Rule::verifyAbsLike() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameShape("C1", in(0), out(0), "operand and result"));
  ElementType e = in(0).elementType();
  ElementType expected = isComplex(e) ? complexPartType(e) : e;
  if (e != ElementType::kQuantized && out(0).elementType() != expected)
    return fail("C2", "result " + out(0).toString() + " must have element type " +
                          std::string(elementTypeName(expected)) + " for operand " + in(0).toString());
  return Status::ok();
}

Status Rule::verifyComplex() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameType("C1", in(0), in(1), "lhs and rhs"));
  WF_RETURN_IF_ERROR(sameShape("C2", in(0), out(0), "lhs and result"));
  ElementType r = out(0).elementType();
  if (!isComplex(r) || complexPartType(r) != in(0).elementType())
    return fail("C3", "result " + out(0).toString() + " must be complex of " + in(0).toString() + "'s element type");
  return Status::ok();
}

Status Rule::verifyClamp() {
  WF_RETURN_IF_ERROR(counts(3, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &min = in(0), &operand = in(1), &max = in(2);
  if (min.rank() != 0 && !shapesCompatible(min, operand))
    return fail("C1", "min " + min.toString() + " must be rank 0 or have the shape of operand " + operand.toString());
  if (max.rank() != 0 && !shapesCompatible(max, operand))
    return fail("C2", "max " + max.toString() + " must be rank 0 or have the shape of operand " + operand.toString());
  WF_RETURN_IF_ERROR(sameElement("C3", min, operand, "min and operand"));
  WF_RETURN_IF_ERROR(sameElement("C3", max, operand, "max and operand"));
  return sameType("C4", operand, out(0), "operand and result");
}

Status Rule::verifySelect() {
  WF_RETURN_IF_ERROR(counts(3, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &pred = in(0), &onTrue = in(1), &onFalse = in(2);
  if (pred.elementType() != ElementType::kI1) return fail("types", "pred " + pred.toString() + " must have element type i1");
  if (pred.rank() != 0 && !shapesCompatible(pred, onTrue))
    return fail("C1", "pred " + pred.toString() + " must be rank 0 or have the shape of on_true " + onTrue.toString());
  WF_RETURN_IF_ERROR(sameType("C2", onTrue, onFalse, "on_true and on_false"));
  return sameType("C2", onTrue, out(0), "on_true and result");
}

Status Rule::verifyCompare() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameElement("C1", in(0), in(1), "lhs and rhs"));
  WF_RETURN_IF_ERROR(sameShape("C2", in(0), in(1), "lhs and rhs"));
  WF_RETURN_IF_ERROR(sameShape("C2", in(0), out(0), "lhs and result"));
  if (out(0).elementType() != ElementType::kI1)
    return fail("types", "result " + out(0).toString() + " must have element type i1");
  const Attribute* dir = op_.attr("comparison_direction");
  if (!dir) return fail("attributes", "missing attribute 'comparison_direction'");
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Constants and shapes.

Status Rule::verifyConstant() {
  WF_RETURN_IF_ERROR(counts(0, 1));
  const Attribute* value = op_.attr("value");
  if (!value) return fail("attributes", "missing attribute 'value'");
  if (value->kind() != Attribute::Kind::kDenseElements) return Status::ok();  // e.g. an opaque spelling
  if (!typesCompatible(value->typeValue(), out(0)))
    return fail("C1", "value type " + value->typeValue().toString() + " differs from result type " + out(0).toString());
  return Status::ok();
}

Status Rule::verifyIota() {
  WF_RETURN_IF_ERROR(counts(0, 1));
  WF_RETURN_IF_ERROR(allTensors());
  int64_t dim = 0;
  WF_RETURN_IF_ERROR(integer("iota_dimension", dim));
  if (dim < 0 || dim >= out(0).rank())
    return fail("C1", "iota_dimension " + std::to_string(dim) + " is out of range for result " + out(0).toString());
  return Status::ok();
}

Status Rule::verifyBroadcastInDim() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &operand = in(0), &result = out(0);
  WF_RETURN_IF_ERROR(sameElement("C1", operand, result, "operand and result"));
  Dims dims;
  WF_RETURN_IF_ERROR(ints("broadcast_dimensions", dims));
  if (static_cast<int64_t>(dims.size()) != operand.rank())
    return fail("C2", "broadcast_dimensions " + listString(dims) + " must have one entry per dimension of operand " +
                          operand.toString());
  if (!allInRange(dims, 0, result.rank()))
    return fail("C3", "broadcast_dimensions " + listString(dims) + " out of range for result " + result.toString());
  if (!isUnique(dims)) return fail("C4", "broadcast_dimensions " + listString(dims) + " are not unique");
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t size = operand.dim(static_cast<int64_t>(d));
    if (size != 1 && !dimsCompatible(size, result.dim(dims[d])))
      return fail("C5", "operand dimension " + std::to_string(d) + " of " + operand.toString() +
                            " is neither 1 nor equal to result dimension " + std::to_string(dims[d]) + " of " +
                            result.toString());
  }
  return Status::ok();
}

Status Rule::verifyBroadcast() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  Dims sizes;
  WF_RETURN_IF_ERROR(ints("broadcast_sizes", sizes));
  WF_RETURN_IF_ERROR(sameElement("C1", in(0), out(0), "operand and result"));
  Dims expected = sizes;
  expected.insert(expected.end(), in(0).shape().begin(), in(0).shape().end());
  return expectShape("C1", out(0), expected, "result");
}

Status Rule::verifyReshape() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameElement("C1", in(0), out(0), "operand and result"));
  int64_t a = in(0).numElements(), b = out(0).numElements();
  if (a >= 0 && b >= 0 && a != b)
    return fail("C2", "operand " + in(0).toString() + " has " + std::to_string(a) + " elements but result " +
                          out(0).toString() + " has " + std::to_string(b));
  return Status::ok();
}

Status Rule::verifyTranspose() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameElement("C1", in(0), out(0), "operand and result"));
  Dims perm;
  WF_RETURN_IF_ERROR(ints("permutation", perm));
  if (static_cast<int64_t>(perm.size()) != in(0).rank() || !isUnique(perm) || !allInRange(perm, 0, in(0).rank()))
    return fail("C2", "permutation " + listString(perm) + " is not a permutation of the dimensions of " + in(0).toString());
  Dims expected;
  for (int64_t p : perm) expected.push_back(in(0).dim(p));
  return expectShape("C3", out(0), expected, "result");
}

Status Rule::verifySlice() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  WF_RETURN_IF_ERROR(sameElement("C1", in(0), out(0), "operand and result"));
  Dims start, limit, strides;
  WF_RETURN_IF_ERROR(ints("start_indices", start));
  WF_RETURN_IF_ERROR(ints("limit_indices", limit));
  Dims ones(start.size(), 1);
  WF_RETURN_IF_ERROR(ints("strides", strides, &ones));
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
  return expectShape("C5", out(0), expected, "result");
}

Status Rule::verifyConcatenate() {
  WF_RETURN_IF_ERROR(counts(-1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  if (op_.numOperands() == 0) return fail("C3", "expects at least one input");
  int64_t dim = 0;
  WF_RETURN_IF_ERROR(integer("dimension", dim));
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
  WF_RETURN_IF_ERROR(sameElement("C5", first, out(0), "inputs and result"));
  Dims expected = first.shape();
  expected[static_cast<size_t>(dim)] = total;
  return expectShape("C6", out(0), expected, "result");
}

Status Rule::verifyPad() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type& operand = in(0);
  WF_RETURN_IF_ERROR(sameElement("C1", operand, in(1), "operand and padding_value"));
  WF_RETURN_IF_ERROR(sameElement("C1", operand, out(0), "operand and result"));
  if (in(1).rank() != 0) return fail("types", "padding_value " + in(1).toString() + " must be rank 0");
  Dims low, high, interior;
  WF_RETURN_IF_ERROR(ints("edge_padding_low", low));
  WF_RETURN_IF_ERROR(ints("edge_padding_high", high));
  Dims zeros(low.size(), 0);
  WF_RETURN_IF_ERROR(ints("interior_padding", interior, &zeros));
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
  return expectShape("C4", out(0), expected, "result");
}

Status Rule::verifyReverse() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  WF_RETURN_IF_ERROR(sameType("C1", in(0), out(0), "operand and result"));
  Dims dims;
  WF_RETURN_IF_ERROR(ints("dimensions", dims));
  if (!isUnique(dims)) return fail("C2", "dimensions " + listString(dims) + " are not unique");
  if (!allInRange(dims, 0, out(0).rank()))
    return fail("C3", "dimensions " + listString(dims) + " out of range for " + out(0).toString());
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Contractions.

Status Rule::verifyDotGeneral() {
  WF_RETURN_IF_ERROR(counts(2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Attribute* dn = op_.attr("dot_dimension_numbers");
  if (!dn) return fail("attributes", "missing attribute 'dot_dimension_numbers'");
  const Type &lhs = in(0), &rhs = in(1);
  Dims lb = fieldInts(*dn, "lhs_batching_dimensions"), rb = fieldInts(*dn, "rhs_batching_dimensions");
  Dims lc = fieldInts(*dn, "lhs_contracting_dimensions"), rc = fieldInts(*dn, "rhs_contracting_dimensions");
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
  return expectShape("C12", out(0), expected, "result");
}

Status Rule::verifyDot() {
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
  return expectShape("C3", out(0), expected, "result");
}

Status Rule::verifyConvolution() {
  bool dynamicPadding = op_.code() == OpCode::DynamicConv;
  WF_RETURN_IF_ERROR(counts(dynamicPadding ? 3 : 2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &lhs = in(0), &rhs = in(1), &result = out(0);
  int64_t n = lhs.rank();
  if (rhs.rank() != n) return fail("C1", "lhs " + lhs.toString() + " and rhs " + rhs.toString() + " differ in rank");
  if (n < 2) return fail("C1", "lhs " + lhs.toString() + " must have rank >= 2");
  size_t spatial = static_cast<size_t>(n - 2);
  Dims ones(spatial, 1), strides, lhsDil, rhsDil;
  WF_RETURN_IF_ERROR(ints("window_strides", strides, &ones));
  WF_RETURN_IF_ERROR(ints("lhs_dilation", lhsDil, &ones));
  WF_RETURN_IF_ERROR(ints("rhs_dilation", rhsDil, &ones));
  if (strides.size() != spatial) return fail("C2", "window_strides " + listString(strides) + " must have " + std::to_string(spatial) + " entries");
  if (!allInRange(strides, 1, INT64_MAX)) return fail("C3", "window_strides " + listString(strides) + " must be positive");
  Dims padding(2 * spatial, 0);
  if (!dynamicPadding) {
    WF_RETURN_IF_ERROR(ints("padding", padding, &padding));
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

  int64_t fgc = 1, bgc = 1;
  WF_RETURN_IF_ERROR(integer("feature_group_count", fgc, 1));
  WF_RETURN_IF_ERROR(integer("batch_group_count", bgc, 1));
  if (fgc <= 0) return fail("C21", "feature_group_count " + std::to_string(fgc) + " must be positive");
  if (bgc <= 0) return fail("C22", "batch_group_count " + std::to_string(bgc) + " must be positive");
  if (fgc != 1 && bgc != 1) return fail("C23", "feature_group_count and batch_group_count cannot both exceed 1");

  const Attribute* dn = op_.attr("dimension_numbers");
  if (!dn || dn->kind() != Attribute::Kind::kDialectStruct) return Status::ok();  // compact spelling kept opaque
  auto ib = fieldInt(*dn, "input_batch_dimension"), ifd = fieldInt(*dn, "input_feature_dimension");
  auto kif = fieldInt(*dn, "kernel_input_feature_dimension"), kof = fieldInt(*dn, "kernel_output_feature_dimension");
  auto ob = fieldInt(*dn, "output_batch_dimension"), of = fieldInt(*dn, "output_feature_dimension");
  Dims is = fieldInts(*dn, "input_spatial_dimensions"), ks = fieldInts(*dn, "kernel_spatial_dimensions");
  Dims os = fieldInts(*dn, "output_spatial_dimensions");
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
  if (result.rank() != n) return fail("C26", "result " + result.toString() + " must have rank " + std::to_string(n));

  Dims expected(static_cast<size_t>(n), kDynamic);
  expected[static_cast<size_t>(*ob)] = batch == kDynamic ? kDynamic : batch / bgc;
  expected[static_cast<size_t>(*of)] = kOut;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t input = lhs.dim(is[i]), window = rhs.dim(ks[i]);
    if (dynamicPadding || input == kDynamic || window == kDynamic) continue;
    int64_t dilatedInput = input == 0 ? 0 : (input - 1) * lhsDil[i] + 1;
    int64_t padded = padding[2 * i] + dilatedInput + padding[2 * i + 1];
    int64_t dilatedWindow = window == 0 ? 0 : (window - 1) * rhsDil[i] + 1;
    bool empty = padded <= 0 || dilatedWindow > padded;
    expected[static_cast<size_t>(os[i])] = empty ? 0 : (padded - dilatedWindow) / strides[i] + 1;
  }
  return expectShape("C25", result, expected, "result");
}

// ---------------------------------------------------------------------------------------------
// Reductions and sorting.

Status Rule::verifyReduce() {
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
  Dims dims;
  WF_RETURN_IF_ERROR(ints("dimensions", dims));
  if (!allInRange(dims, 0, in(0).rank())) return fail("C4", "dimensions " + listString(dims) + " out of range for " + in(0).toString());
  if (!isUnique(dims)) return fail("C5", "dimensions " + listString(dims) + " are not unique");
  Signature body;
  WF_RETURN_IF_ERROR(reductionBody(0, "C6", n, body));
  Dims expected;
  for (int64_t d = 0; d < in(0).rank(); ++d)
    if (!contains(dims, d)) expected.push_back(in(0).dim(d));
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(expectShape("C7", out(i), expected, "result #" + std::to_string(i)));
    WF_RETURN_IF_ERROR(sameElement("C8", out(i), body.outputs[i], "result and body result"));
  }
  return Status::ok();
}

Status Rule::verifyReduceWindow() {
  size_t n = op_.numResults();
  if (n == 0 || op_.numOperands() != 2 * n)
    return fail("C1", "expects N inputs, N init_values and N results with N > 0");
  WF_RETURN_IF_ERROR(allTensors());
  const Type& input = in(0);
  size_t rank = static_cast<size_t>(input.rank());
  for (size_t i = 1; i < n; ++i) WF_RETURN_IF_ERROR(sameShape("C2", input, in(i), "inputs"));
  for (size_t i = 0; i < n; ++i) WF_RETURN_IF_ERROR(sameElement("C3", in(i), in(n + i), "input and init_value"));
  Dims window, strides, baseDil, windowDil, padding, ones(rank, 1), zeros(2 * rank, 0);
  WF_RETURN_IF_ERROR(ints("window_dimensions", window));
  WF_RETURN_IF_ERROR(ints("window_strides", strides, &ones));
  WF_RETURN_IF_ERROR(ints("base_dilations", baseDil, &ones));
  WF_RETURN_IF_ERROR(ints("window_dilations", windowDil, &ones));
  WF_RETURN_IF_ERROR(ints("padding", padding, &zeros));
  if (window.size() != rank) return fail("C4", "window_dimensions " + listString(window) + " must have " + std::to_string(rank) + " entries");
  if (!allInRange(window, 1, INT64_MAX)) return fail("C5", "window_dimensions " + listString(window) + " must be positive");
  if (strides.size() != rank) return fail("C6", "window_strides " + listString(strides) + " must have " + std::to_string(rank) + " entries");
  if (!allInRange(strides, 1, INT64_MAX)) return fail("C7", "window_strides " + listString(strides) + " must be positive");
  if (baseDil.size() != rank) return fail("C8", "base_dilations must have " + std::to_string(rank) + " entries");
  if (!allInRange(baseDil, 1, INT64_MAX)) return fail("C9", "base_dilations must be positive");
  if (windowDil.size() != rank) return fail("C10", "window_dilations must have " + std::to_string(rank) + " entries");
  if (!allInRange(windowDil, 1, INT64_MAX)) return fail("C11", "window_dilations must be positive");
  if (padding.size() != 2 * rank) return fail("C12", "padding " + listString(padding) + " must have shape [" + std::to_string(rank) + ", 2]");
  Signature body;
  WF_RETURN_IF_ERROR(reductionBody(0, "C13", n, body));
  Dims expected;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = input.dim(static_cast<int64_t>(d));
    if (size == kDynamic) {
      expected.push_back(kDynamic);
      continue;
    }
    int64_t dilated = size == 0 ? 0 : (size - 1) * baseDil[d] + 1;
    int64_t padded = padding[2 * d] + dilated + padding[2 * d + 1];
    int64_t dilatedWindow = (window[d] - 1) * windowDil[d] + 1;
    bool empty = padded <= 0 || dilatedWindow > padded;
    expected.push_back(empty ? 0 : (padded - dilatedWindow) / strides[d] + 1);
  }
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(expectShape("C15", out(i), expected, "result #" + std::to_string(i)));
    WF_RETURN_IF_ERROR(sameElement("C16", out(i), body.outputs[i], "result and body result"));
  }
  return Status::ok();
}

Status Rule::verifySelectAndScatter() {
  WF_RETURN_IF_ERROR(counts(3, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Type &operand = in(0), &source = in(1), &init = in(2);
  WF_RETURN_IF_ERROR(sameElement("C1", operand, source, "operand and source"));
  WF_RETURN_IF_ERROR(sameElement("C3", operand, init, "operand and init_value"));
  size_t rank = static_cast<size_t>(operand.rank());
  Dims window, strides, padding, ones(rank, 1), zeros(2 * rank, 0);
  WF_RETURN_IF_ERROR(ints("window_dimensions", window));
  WF_RETURN_IF_ERROR(ints("window_strides", strides, &ones));
  WF_RETURN_IF_ERROR(ints("padding", padding, &zeros));
  if (window.size() != rank) return fail("C4", "window_dimensions " + listString(window) + " must have " + std::to_string(rank) + " entries");
  if (!allInRange(window, 1, INT64_MAX)) return fail("C5", "window_dimensions " + listString(window) + " must be positive");
  if (strides.size() != rank) return fail("C6", "window_strides " + listString(strides) + " must have " + std::to_string(rank) + " entries");
  if (!allInRange(strides, 1, INT64_MAX)) return fail("C7", "window_strides " + listString(strides) + " must be positive");
  if (padding.size() != 2 * rank) return fail("C8", "padding must have shape [" + std::to_string(rank) + ", 2]");
  Signature select, scatter;
  WF_RETURN_IF_ERROR(regionSignature(0, "C9", select));
  if (select.inputs.size() != 2 || select.outputs.size() != 1 || !select.outputs[0].isTensor() ||
      select.outputs[0].elementType() != ElementType::kI1)
    return fail("C9", "select has type " + typeListString(select.inputs) + " -> " + typeListString(select.outputs) +
                          ", expected (tensor<E>, tensor<E>) -> tensor<i1>");
  WF_RETURN_IF_ERROR(reductionBody(1, "C10", 1, scatter));
  WF_RETURN_IF_ERROR(sameShape("C11", operand, out(0), "operand and result"));
  return sameElement("C12", out(0), scatter.outputs[0], "result and scatter result");
}

Status Rule::verifySort() {
  size_t n = op_.numOperands();
  if (n == 0) return fail("C1", "expects at least one input");
  WF_RETURN_IF_ERROR(counts(static_cast<int>(n), static_cast<int>(n)));
  WF_RETURN_IF_ERROR(allTensors());
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(sameType("C2", in(i), out(i), "input and result"));
    WF_RETURN_IF_ERROR(sameShape("C3", in(0), in(i), "inputs"));
  }
  int64_t dim = 0, rank = in(0).rank();
  WF_RETURN_IF_ERROR(integer("dimension", dim, -1));
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
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Indexing.

Status Rule::verifyGather() {
  WF_RETURN_IF_ERROR(counts(op_.code() == OpCode::DynamicGather ? 3 : 2, 1));
  WF_RETURN_IF_ERROR(allTensors());
  const Attribute* dn = op_.attr("dimension_numbers");
  if (!dn || dn->kind() != Attribute::Kind::kDialectStruct) return fail("attributes", "missing attribute 'dimension_numbers'");
  const Type &operand = in(0), &indices = in(1), &result = out(0);
  Dims offset = fieldInts(*dn, "offset_dims"), collapsed = fieldInts(*dn, "collapsed_slice_dims");
  Dims operandBatch = fieldInts(*dn, "operand_batching_dims"), indicesBatch = fieldInts(*dn, "start_indices_batching_dims");
  Dims startMap = fieldInts(*dn, "start_index_map");
  int64_t ivd = fieldInt(*dn, "index_vector_dim").value_or(0);  // absent: MLIR default 0
  int64_t rank = operand.rank();
  if (rank != static_cast<int64_t>(offset.size() + collapsed.size() + operandBatch.size()))
    return fail("C1", "rank of operand " + operand.toString() + " must equal size(offset_dims) + size(collapsed_slice_dims) + size(operand_batching_dims)");
  if (ivd < 0 || ivd > indices.rank())
    return fail("C2", "index_vector_dim " + std::to_string(ivd) + " out of range for " + indices.toString());
  int64_t indexSize = ivd < indices.rank() ? indices.dim(ivd) : 1;
  if (!dimsCompatible(static_cast<int64_t>(startMap.size()), indexSize))
    return fail("C3", "start_index_map " + listString(startMap) + " must have " + std::to_string(indexSize) + " entries");
  if (!isUnique(offset) || !isSorted(offset)) return fail("C4", "offset_dims " + listString(offset) + " must be sorted and unique");
  if (!allInRange(offset, 0, result.rank())) return fail("C5", "offset_dims " + listString(offset) + " out of range for result " + result.toString());
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
  WF_RETURN_IF_ERROR(sameElement("C23", operand, result, "operand and result"));
  if (op_.code() == OpCode::DynamicGather) return Status::ok();  // slice sizes come from an operand

  Dims sizes;
  WF_RETURN_IF_ERROR(ints("slice_sizes", sizes));
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
  return expectShape("C22", result, expected, "result");
}

Status Rule::verifyScatter() {
  size_t total = op_.numOperands();
  if (total < 3 || total % 2 == 0) return fail("C5", "expects N inputs, scatter_indices and N updates with N > 0");
  size_t n = (total - 1) / 2;
  WF_RETURN_IF_ERROR(counts(static_cast<int>(total), static_cast<int>(n)));
  WF_RETURN_IF_ERROR(allTensors());
  const Attribute* dn = op_.attr("scatter_dimension_numbers");
  if (!dn || dn->kind() != Attribute::Kind::kDialectStruct)
    return fail("attributes", "missing attribute 'scatter_dimension_numbers'");
  const Type &input = in(0), &indices = in(n), &update = in(n + 1);
  Dims window = fieldInts(*dn, "update_window_dims"), inserted = fieldInts(*dn, "inserted_window_dims");
  Dims inputBatch = fieldInts(*dn, "input_batching_dims"), indicesBatch = fieldInts(*dn, "scatter_indices_batching_dims");
  Dims toOperand = fieldInts(*dn, "scatter_dims_to_operand_dims");
  int64_t ivd = fieldInt(*dn, "index_vector_dim").value_or(0);  // absent: MLIR default 0
  int64_t rank = input.rank();
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(sameShape("C1", input, in(i), "inputs"));
    WF_RETURN_IF_ERROR(sameShape("C3", update, in(n + 1 + i), "updates"));
    WF_RETURN_IF_ERROR(sameElement("C6", in(i), in(n + 1 + i), "input and update"));
    WF_RETURN_IF_ERROR(sameShape("C24", in(i), out(i), "input and result"));
  }
  if (rank != static_cast<int64_t>(window.size() + inserted.size() + inputBatch.size()))
    return fail("C2", "rank of input " + input.toString() + " must equal size(update_window_dims) + size(inserted_window_dims) + size(input_batching_dims)");
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
  for (size_t i = 0; i < n; ++i) WF_RETURN_IF_ERROR(sameElement("C25", out(i), body.outputs[i], "result and body result"));
  return Status::ok();
}

Status Rule::verifyDynamicSlice() {
  WF_RETURN_IF_ERROR(allTensors());
  if (op_.numOperands() < 1 || op_.numResults() != 1) return counts(-1, 1);
  const Type& operand = in(0);
  WF_RETURN_IF_ERROR(sameElement("C1", operand, out(0), "operand and result"));
  Dims sizes;
  WF_RETURN_IF_ERROR(ints("slice_sizes", sizes));
  size_t rank = static_cast<size_t>(operand.rank());
  if (op_.numOperands() - 1 != rank || sizes.size() != rank)
    return fail("C2", "expects " + std::to_string(rank) + " start indices and slice_sizes entries for " + operand.toString());
  for (size_t i = 2; i < op_.numOperands(); ++i) WF_RETURN_IF_ERROR(sameType("C3", in(1), in(i), "start indices"));
  for (size_t d = 0; d < rank; ++d)
    if (sizes[d] < 0 || (operand.dim(static_cast<int64_t>(d)) != kDynamic && sizes[d] > operand.dim(static_cast<int64_t>(d))))
      return fail("C4", "slice_sizes " + listString(sizes) + " exceed operand " + operand.toString());
  return expectShape("C5", out(0), sizes, "result");
}

Status Rule::verifyDynamicUpdateSlice() {
  WF_RETURN_IF_ERROR(allTensors());
  if (op_.numOperands() < 2 || op_.numResults() != 1) return fail("operands", "expects operand, update and start indices");
  const Type &operand = in(0), &update = in(1);
  WF_RETURN_IF_ERROR(sameType("C1", operand, out(0), "operand and result"));
  WF_RETURN_IF_ERROR(sameElement("C2", update, operand, "update and operand"));
  if (update.rank() != operand.rank()) return fail("C3", "update " + update.toString() + " and operand " + operand.toString() + " differ in rank");
  if (op_.numOperands() - 2 != static_cast<size_t>(operand.rank()))
    return fail("C4", "expects " + std::to_string(operand.rank()) + " start indices");
  for (size_t i = 3; i < op_.numOperands(); ++i) WF_RETURN_IF_ERROR(sameType("C5", in(2), in(i), "start indices"));
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (update.dim(d) != kDynamic && operand.dim(d) != kDynamic && update.dim(d) > operand.dim(d))
      return fail("C6", "update " + update.toString() + " is larger than operand " + operand.toString());
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Tuples and control flow.

Status Rule::verifyGetTupleElement() {
  WF_RETURN_IF_ERROR(counts(1, 1));
  if (!in(0).isTuple()) return fail("types", "operand " + in(0).toString() + " must be a tuple");
  int64_t index = 0;
  WF_RETURN_IF_ERROR(integer("index", index));
  const auto& elements = in(0).tupleElements();
  if (index < 0 || index >= static_cast<int64_t>(elements.size()))
    return fail("C1", "index " + std::to_string(index) + " out of range for " + in(0).toString());
  return sameType("C2", out(0), elements[static_cast<size_t>(index)], "result and tuple element");
}

Status Rule::verifyTuple() {
  WF_RETURN_IF_ERROR(counts(-1, 1));
  Type expected = Type::tuple(operandTypes());
  if (!typesCompatible(out(0), expected))
    return fail("C1", "result " + out(0).toString() + " must be " + expected.toString());
  return Status::ok();
}

Status Rule::verifyWhile() {
  std::vector<Type> operands = operandTypes();
  Signature cond, body;
  WF_RETURN_IF_ERROR(regionSignature(0, "C1", cond));
  WF_RETURN_IF_ERROR(typesMatch("C1", cond.inputs, operands, "cond argument types"));
  if (cond.outputs.size() != 1 || !cond.outputs[0].isTensor() || cond.outputs[0].rank() != 0 ||
      cond.outputs[0].elementType() != ElementType::kI1)
    return fail("C1", "cond must return one tensor<i1>, returns " + typeListString(cond.outputs));
  WF_RETURN_IF_ERROR(regionSignature(1, "C2", body));
  WF_RETURN_IF_ERROR(typesMatch("C2", body.inputs, operands, "body argument types"));
  WF_RETURN_IF_ERROR(typesMatch("C2", body.outputs, operands, "body result types"));
  return typesMatch("C3", resultTypes(), operands, "result types");
}

Status Rule::verifyIf() {
  WF_RETURN_IF_ERROR(counts(1, -1));
  const Type& pred = in(0);
  if (!pred.isTensor() || pred.rank() != 0 || pred.elementType() != ElementType::kI1)
    return fail("types", "pred " + pred.toString() + " must be tensor<i1>");
  Signature t, f;
  WF_RETURN_IF_ERROR(regionSignature(0, "C1", t));
  WF_RETURN_IF_ERROR(regionSignature(1, "C1", f));
  if (!t.inputs.empty() || !f.inputs.empty()) return fail("C1", "branches must not take arguments");
  WF_RETURN_IF_ERROR(typesMatch("C2", f.outputs, t.outputs, "false_branch result types"));
  return typesMatch("C3", resultTypes(), t.outputs, "result types");
}

Status Rule::verifyCase() {
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
  return typesMatch("C4", resultTypes(), first.outputs, "result types");
}

Status Rule::verifyMap() {
  WF_RETURN_IF_ERROR(counts(-1, 1));
  WF_RETURN_IF_ERROR(allTensors());
  size_t n = op_.numOperands();
  if (n == 0) return fail("C2", "expects at least one input");
  for (size_t i = 0; i < n; ++i) WF_RETURN_IF_ERROR(sameShape("C1", in(i), out(0), "input and result"));
  Dims dims, range;
  for (int64_t d = 0; d < in(0).rank(); ++d) range.push_back(d);
  WF_RETURN_IF_ERROR(ints("dimensions", dims, &range));
  if (dims != range) return fail("C3", "dimensions " + listString(dims) + " must be " + listString(range));
  Signature body;
  WF_RETURN_IF_ERROR(regionSignature(0, "C4", body));
  bool ok = body.inputs.size() == n && body.outputs.size() == 1;
  for (size_t i = 0; ok && i < n; ++i)
    ok = body.inputs[i].isTensor() && body.inputs[i].rank() == 0 && elementTypesCompatible(body.inputs[i], in(i));
  if (ok) ok = body.outputs[0].isTensor() && elementTypesCompatible(body.outputs[0], out(0));
  if (!ok)
    return fail("C4", "computation has type " + typeListString(body.inputs) + " -> " + typeListString(body.outputs) +
                          ", expected one rank-0 argument per input and the result's element type");
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// func dialect.

Status Rule::verifyFunc() {
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

Status Rule::verifyFuncReturn() {
  WF_RETURN_IF_ERROR(counts(-1, 0));
  const Operation* parent = op_.parentOp();
  if (!parent || parent->code() != OpCode::FuncFunc) return Status::ok();
  FunctionType fn = FuncOp(parent).functionType();
  return typesMatch("func", operandTypes(), fn.results, "returned types");
}

Status Rule::verifyCall() {
  const Attribute* callee = op_.attr("callee");
  if (!callee || callee->kind() != Attribute::Kind::kSymbolRef) return fail("call", "missing attribute 'callee'");
  if (!module_) return Status::ok();
  const Operation* fn = module_->lookupFunction(callee->stringValue());
  if (!fn) return fail("call", "callee @" + callee->stringValue() + " is not a function of this module");
  FunctionType type = FuncOp(fn).functionType();
  WF_RETURN_IF_ERROR(typesMatch("call", operandTypes(), type.inputs, "operand types"));
  return typesMatch("call", resultTypes(), type.results, "result types");
}

Status Rule::verifyComposite() {
  const Attribute* decomposition = op_.attr("decomposition");
  if (!decomposition || decomposition->kind() != Attribute::Kind::kSymbolRef)
    return fail("attributes", "missing attribute 'decomposition'");
  if (!module_) return Status::ok();
  const Operation* fn = module_->lookupFunction(decomposition->stringValue());
  if (!fn) return fail("C1", "decomposition @" + decomposition->stringValue() + " is not a function of this module");
  FunctionType type = FuncOp(fn).functionType();
  WF_RETURN_IF_ERROR(typesMatch("C2", operandTypes(), type.inputs, "operand types"));
  return typesMatch("C2", resultTypes(), type.results, "result types");
}

Status Rule::run() {
  switch (op_.code()) {
    // Elementwise ops whose result type is the operand type.
    case OpCode::Cbrt: case OpCode::Ceil: case OpCode::Cosine: case OpCode::CountLeadingZeros:
    case OpCode::Exponential: case OpCode::ExponentialMinusOne: case OpCode::Floor: case OpCode::Log:
    case OpCode::LogPlusOne: case OpCode::Logistic: case OpCode::Negate: case OpCode::Not:
    case OpCode::Popcnt: case OpCode::RoundNearestAfz: case OpCode::RoundNearestEven: case OpCode::Rsqrt:
    case OpCode::Sign: case OpCode::Sine: case OpCode::Sqrt: case OpCode::Tan: case OpCode::Tanh:
    case OpCode::ReducePrecision: case OpCode::Cholesky:
    case OpCode::ChloAcos: case OpCode::ChloAcosh: case OpCode::ChloAsin: case OpCode::ChloAsinh:
    case OpCode::ChloAtan: case OpCode::ChloAtanh: case OpCode::ChloBesselI1e: case OpCode::ChloConj:
    case OpCode::ChloCosh: case OpCode::ChloDigamma: case OpCode::ChloErf: case OpCode::ChloErfInv:
    case OpCode::ChloErfc: case OpCode::ChloLgamma: case OpCode::ChloSinh: case OpCode::ChloSquare:
    case OpCode::ChloTan:
      return unarySameType();
    case OpCode::Abs: case OpCode::Real: case OpCode::Imag:
      return verifyAbsLike();
    case OpCode::IsFinite: case OpCode::ChloIsInf: case OpCode::ChloIsNegInf: case OpCode::ChloIsPosInf:
      return unaryShapeOnly(ElementType::kI1);
    case OpCode::Convert:
      return unaryShapeOnly(std::nullopt);
    case OpCode::BitcastConvert:
      WF_RETURN_IF_ERROR(counts(1, 1));
      if (in(0).isTensor() && out(0).isTensor() && bitWidth(in(0).elementType()) == bitWidth(out(0).elementType()))
        return sameShape("C1", in(0), out(0), "operand and result");
      return Status::ok();
    case OpCode::Add: case OpCode::Subtract: case OpCode::Multiply: case OpCode::Divide:
    case OpCode::Remainder: case OpCode::Power: case OpCode::Maximum: case OpCode::Minimum:
    case OpCode::And: case OpCode::Or: case OpCode::Xor: case OpCode::Atan2: case OpCode::ShiftLeft:
    case OpCode::ShiftRightArithmetic: case OpCode::ShiftRightLogical:
    case OpCode::ChloMulhi: case OpCode::ChloNextAfter: case OpCode::ChloPolygamma: case OpCode::ChloZeta:
      return binarySameType();
    case OpCode::Complex: return verifyComplex();
    case OpCode::Clamp: return verifyClamp();
    case OpCode::Select: return verifySelect();
    case OpCode::Compare: return verifyCompare();
    case OpCode::Constant: return verifyConstant();
    case OpCode::Iota: return verifyIota();
    case OpCode::BroadcastInDim: return verifyBroadcastInDim();
    case OpCode::Broadcast: return verifyBroadcast();
    case OpCode::Reshape: return verifyReshape();
    case OpCode::Transpose: return verifyTranspose();
    case OpCode::Slice: return verifySlice();
    case OpCode::Concatenate: return verifyConcatenate();
    case OpCode::Pad: return verifyPad();
    case OpCode::Reverse: return verifyReverse();
    case OpCode::DotGeneral: return verifyDotGeneral();
    case OpCode::Dot: return verifyDot();
    case OpCode::Convolution: case OpCode::DynamicConv: return verifyConvolution();
    case OpCode::Reduce: return verifyReduce();
    case OpCode::ReduceWindow: return verifyReduceWindow();
    case OpCode::SelectAndScatter: return verifySelectAndScatter();
    case OpCode::Sort: return verifySort();
    case OpCode::Gather: case OpCode::DynamicGather: return verifyGather();
    case OpCode::Scatter: return verifyScatter();
    case OpCode::DynamicSlice: return verifyDynamicSlice();
    case OpCode::DynamicUpdateSlice: return verifyDynamicUpdateSlice();
    case OpCode::GetTupleElement: return verifyGetTupleElement();
    case OpCode::Tuple: return verifyTuple();
    case OpCode::While: return verifyWhile();
    case OpCode::If: return verifyIf();
    case OpCode::Case: return verifyCase();
    case OpCode::Map: return verifyMap();
    case OpCode::OptimizationBarrier:
      return typesMatch("C1", resultTypes(), operandTypes(), "result types");
    case OpCode::AfterAll:
      WF_RETURN_IF_ERROR(counts(-1, 1));
      if (!out(0).isToken()) return fail("types", "result " + out(0).toString() + " must be a token");
      return Status::ok();
    case OpCode::FuncFunc: return verifyFunc();
    case OpCode::FuncReturn: return verifyFuncReturn();
    case OpCode::FuncCall: return verifyCall();
    case OpCode::Composite: return verifyComposite();
    case OpCode::Return: return counts(-1, 0);
    default:
      // Collectives, custom calls, dynamic-shape ops, RNG, FFT, linear algebra, the check and
      // interpreter dialects: only the generic checks (SSA) apply for now.
      return Status::ok();
  }
}

}  // namespace

Status verifyOpRule(const Operation& op, const Module* module) { return Rule(op, module).run(); }

}  // namespace wf::verify_detail
