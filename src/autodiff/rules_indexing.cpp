// VJP rules of gather and scatter (JAX's _gather_transpose_rule and the scatter-add / scatter
// transpose rules): a gather's cotangent is scattered back with an add, a scatter-add's update
// cotangent is gathered from the same places. Start indices are integers and get none.
#include <algorithm>

#include "autodiff/rules.h"
#include "ir/attr_reader.h"

namespace wf::autodiff {
namespace {

using Dims = std::vector<int64_t>;

struct IndexDims {
  Dims window;        // gather offset_dims / scatter update_window_dims
  Dims collapsed;     // collapsed_slice_dims / inserted_window_dims
  Dims operandBatch;  // operand_batching_dims / input_batching_dims
  Dims indicesBatch;  // start_indices_batching_dims / scatter_indices_batching_dims
  Dims indexMap;      // start_index_map / scatter_dims_to_operand_dims
  int64_t indexVectorDim = 0;
};

Attribute gatherDims(const IndexDims& d) {
  std::vector<NamedAttribute> f;
  if (!d.window.empty()) f.emplace_back("offset_dims", i64ArrayAttr(d.window));
  if (!d.collapsed.empty()) f.emplace_back("collapsed_slice_dims", i64ArrayAttr(d.collapsed));
  if (!d.operandBatch.empty()) f.emplace_back("operand_batching_dims", i64ArrayAttr(d.operandBatch));
  if (!d.indicesBatch.empty()) f.emplace_back("start_indices_batching_dims", i64ArrayAttr(d.indicesBatch));
  if (!d.indexMap.empty()) f.emplace_back("start_index_map", i64ArrayAttr(d.indexMap));
  f.emplace_back("index_vector_dim", Attribute::integer(d.indexVectorDim));
  return Attribute::dialectStruct("stablehlo.gather", std::move(f));
}

Attribute scatterDims(const IndexDims& d) {
  std::vector<NamedAttribute> f;
  if (!d.window.empty()) f.emplace_back("update_window_dims", i64ArrayAttr(d.window));
  if (!d.collapsed.empty()) f.emplace_back("inserted_window_dims", i64ArrayAttr(d.collapsed));
  if (!d.operandBatch.empty()) f.emplace_back("input_batching_dims", i64ArrayAttr(d.operandBatch));
  if (!d.indicesBatch.empty()) f.emplace_back("scatter_indices_batching_dims", i64ArrayAttr(d.indicesBatch));
  if (!d.indexMap.empty()) f.emplace_back("scatter_dims_to_operand_dims", i64ArrayAttr(d.indexMap));
  f.emplace_back("index_vector_dim", Attribute::integer(d.indexVectorDim));
  return Attribute::dialectStruct("stablehlo.scatter", std::move(f));
}

// A scatter of `updates` into `operand`; `assign` picks the overwriting body, else add.
Value* scatter(OpBuilder& b, Value* operand, Value* indices, Value* updates, const IndexDims& d, bool assign) {
  ElementType e = operand->type().elementType();
  Location loc = b.location();
  return b
      .create("stablehlo.scatter", {operand, indices, updates},
              {{"scatter_dimension_numbers", scatterDims(d)},
               {"indices_are_sorted", Attribute::boolean(false)},
               {"unique_indices", Attribute::boolean(false)}},
              {}, 1,
              [&](Operation* op) {
                if (!assign) {
                  OpBuilder::addBinaryBody(op, "stablehlo.add", e, loc);
                  return;
                }
                Block* body = op->addRegion()->addBlock();
                body->addArgument(Type::scalar(e));
                Value* incoming = body->addArgument(Type::scalar(e));
                OpBuilder(body, loc).create("stablehlo.return", {incoming}, {}, {}, 0);
              })
      ->result(0);
}

Value* gather(OpBuilder& b, Value* operand, Value* indices, const IndexDims& d, const Dims& sliceSizes) {
  return b.create1("stablehlo.gather", {operand, indices},
                   {{"dimension_numbers", gatherDims(d)},
                    {"slice_sizes", i64DenseArray(sliceSizes)},
                    {"indices_are_sorted", Attribute::boolean(false)}});
}

// gather clamps each start index so that its slice fits in the operand; scatter instead skips
// windows that do not fit. Clamping the indices the same way first makes the scatter land
// exactly where the gather read.
Value* clampIndices(OpBuilder& b, Value* indices, const Type& operand, const IndexDims& d, const Dims& sliceSizes) {
  const Type& it = indices->type();
  ElementType e = it.elementType();
  Dims limits;
  for (int64_t od : d.indexMap) limits.push_back(operand.dim(od) - sliceSizes[static_cast<size_t>(od)]);
  Literal lit = Literal::zeros(Type::tensor({static_cast<int64_t>(limits.size())}, e));
  for (size_t i = 0; i < limits.size(); ++i) lit.setInt(static_cast<int64_t>(i), limits[i]);
  Value* hi;
  if (d.indexVectorDim < it.rank()) {
    hi = b.broadcastInDim(b.constant(std::move(lit)), it, {d.indexVectorDim});
  } else {
    hi = b.splat(it, static_cast<double>(limits.empty() ? 0 : limits[0]));
  }
  return b.min(b.max(indices, b.zeros(it)), hi);
}

Status gatherRule(VjpContext& c) {
  if (!c.active(0)) return Status::ok();
  OpBuilder& b = c.b;
  AttrReader attrs(c.op);
  WF_ASSIGN_OR_RETURN(const Attribute* dn, attrs.dialectStruct("dimension_numbers"));
  WF_ASSIGN_OR_RETURN(Dims sliceSizes, attrs.ints("slice_sizes"));
  IndexDims d{AttrReader::fieldInts(*dn, "offset_dims"),
              AttrReader::fieldInts(*dn, "collapsed_slice_dims"),
              AttrReader::fieldInts(*dn, "operand_batching_dims"),
              AttrReader::fieldInts(*dn, "start_indices_batching_dims"),
              AttrReader::fieldInts(*dn, "start_index_map"),
              AttrReader::fieldInt(*dn, "index_vector_dim").value_or(0)};
  const Type& operand = c.operandType(0);
  Value* indices = clampIndices(b, c.operand(1), operand, d, sliceSizes);
  // Narrow floats are summed in f32 (an embedding row gathered many times sums many terms).
  ElementType acc = OpBuilder::accumulationType(operand.elementType());
  Value* sum = scatter(b, b.zeros(operand.withElementType(acc)), indices, b.convert(c.cotangent(), acc), d,
                       /*assign=*/false);
  c.accumulate(0, b.convert(sum, operand.elementType()));
  return Status::ok();
}

// The body of a one-input scatter: add (`%r = add(%a, %b)`) or assignment (`return %b`).
enum class ScatterKind { kAdd, kAssign, kOther };

ScatterKind scatterKind(const Operation& op) {
  if (op.numRegions() != 1 || op.region(0).empty()) return ScatterKind::kOther;
  const Block& body = op.region(0).front();
  if (body.numArguments() != 2) return ScatterKind::kOther;
  const auto& ops = body.operations();
  if (ops.size() == 1 && ops.back()->numOperands() == 1 && ops.back()->operand(0) == body.argument(1))
    return ScatterKind::kAssign;
  if (ops.size() == 2 && ops.front()->code() == OpCode::Add && ops.back()->numOperands() == 1 &&
      ops.back()->operand(0) == ops.front()->result(0))
    return ScatterKind::kAdd;
  return ScatterKind::kOther;
}

Status scatterRule(VjpContext& c) {
  OpBuilder& b = c.b;
  if (c.op.numOperands() != 3) return c.unsupported("scatter of several inputs has no VJP rule");
  ScatterKind kind = scatterKind(c.op);
  if (kind == ScatterKind::kOther)
    return c.unsupported("scatter with a body other than add or assignment has no VJP rule");
  WF_ASSIGN_OR_RETURN(const Attribute* dn, AttrReader(c.op).dialectStruct("scatter_dimension_numbers"));
  IndexDims d{AttrReader::fieldInts(*dn, "update_window_dims"),
              AttrReader::fieldInts(*dn, "inserted_window_dims"),
              AttrReader::fieldInts(*dn, "input_batching_dims"),
              AttrReader::fieldInts(*dn, "scatter_indices_batching_dims"),
              AttrReader::fieldInts(*dn, "scatter_dims_to_operand_dims"),
              AttrReader::fieldInt(*dn, "index_vector_dim").value_or(0)};
  Value* ct = c.cotangent();
  Value* indices = c.operand(1);
  const Type& updates = c.operandType(2);
  if (c.active(0)) {
    // Add: the operand passes through. Assignment: the overwritten elements lose their cotangent.
    c.accumulate(0, kind == ScatterKind::kAdd ? ct : scatter(b, ct, indices, b.zeros(updates), d, /*assign=*/true));
  }
  if (c.active(2)) {
    Dims sliceSizes;
    size_t pos = 0;
    for (int64_t i = 0; i < ct->type().rank(); ++i) {
      bool inserted = std::find(d.collapsed.begin(), d.collapsed.end(), i) != d.collapsed.end() ||
                      std::find(d.operandBatch.begin(), d.operandBatch.end(), i) != d.operandBatch.end();
      if (inserted) {
        sliceSizes.push_back(1);
      } else {
        sliceSizes.push_back(updates.dim(d.window[pos]));
        ++pos;
      }
    }
    c.accumulate(2, gather(b, ct, indices, d, sliceSizes));
  }
  return Status::ok();
}

}  // namespace

void registerIndexingRules(RuleTable& t) {
  t.add(OpCode::Gather, gatherRule);
  t.add(OpCode::Scatter, scatterRule);
}

}  // namespace wf::autodiff
