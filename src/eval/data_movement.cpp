// CPU kernels that move elements without computing on them: broadcast, reshape, transpose,
// slice, concatenate, pad, reverse, iota and their dynamic forms.
//
// Every kernel here treats elements as opaque storageBytes()-sized byte strings, so all element
// types (i1, sub-byte ints, f8, bf16, complex, ...) share one code path. The actual moving is
// done by copyBox (shape_util.h): memcpy of contiguous runs, tiled transposes, pattern fills.
#include <algorithm>
#include <cstring>

#include "eval/dot_conv_util.h"
#include "eval/elementwise_ops.h"
#include "eval/interpreter.h"
#include "eval/shape_util.h"

namespace wf {

namespace {

using cpu::copyBox;
using cpu::intAttr;
using cpu::intListAttr;
using cpu::intValues;
using cpu::makeTensor;
using cpu::makeTensorToOverwrite;
using cpu::shapeString;

using Results = Expected<std::vector<Literal>>;

Results single(Literal l) { return std::vector<Literal>{std::move(l)}; }

Status expectOperands(const Operation& op, std::span<const Literal> operands, size_t n) {
  if (operands.size() != n)
    return invalidArgument(op.describe() + ": expects " + std::to_string(n) + " operands, got " +
                           std::to_string(operands.size()));
  for (const Literal& l : operands)
    if (!l.type().isTensor()) return invalidArgument(op.describe() + ": operands must be tensors");
  return Status::ok();
}

// The static shape an op declares for result #i, or an error if it is not static.
Expected<std::vector<int64_t>> staticResultShape(const Operation& op, size_t i = 0) {
  const Type& t = op.result(i)->type();
  if (!t.isTensor() || !t.hasStaticShape())
    return unimplemented(op.describe() + ": result type " + t.toString() + " must have a static shape");
  return t.shape();
}

// A shape given as the values of a 1-d integer tensor operand (dynamic_* ops).
Expected<std::vector<int64_t>> shapeOperand(const Operation& op, const Literal& l, const char* what) {
  if (l.shape().size() != 1)
    return invalidArgument(op.describe() + ": " + what + " must be a 1-d tensor, got " + l.type().toString());
  std::vector<int64_t> v = intValues(l);
  for (int64_t d : v)
    if (d < 0) return invalidArgument(op.describe() + ": " + what + " " + shapeString(v) + " has a negative size");
  return v;
}

// ----- broadcast ---------------------------------------------------------------------------

Results broadcastInDimTo(const Operation& op, const Literal& operand, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& resultShape) {
  const int64_t rank = operand.type().rank();
  if (static_cast<int64_t>(dims.size()) != rank)
    return invalidArgument(op.describe() + ": broadcast_dimensions " + shapeString(dims) + " must have " +
                           std::to_string(rank) + " entries");
  const std::vector<int64_t> inStrides = rowMajorStrides(operand.shape());
  std::vector<int64_t> srcStrides(resultShape.size(), 0);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = dims[static_cast<size_t>(i)];
    const int64_t n = operand.shape()[static_cast<size_t>(i)];
    if (d < 0 || d >= static_cast<int64_t>(resultShape.size()))
      return invalidArgument(op.describe() + ": broadcast dimension " + std::to_string(d) + " out of range");
    if (n != 1 && n != resultShape[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": operand dim " + std::to_string(i) + " of size " + std::to_string(n) +
                             " cannot broadcast to size " + std::to_string(resultShape[static_cast<size_t>(d)]));
    // Size-1 operand dims repeat: stride 0.
    if (n != 1) srcStrides[static_cast<size_t>(d)] = inStrides[static_cast<size_t>(i)];
  }
  WF_ASSIGN_OR_RETURN(Literal result, makeTensorToOverwrite(op, resultShape, operand.elementType()));
  copyBox(result.data(), rowMajorStrides(resultShape), operand.data(), srcStrides, resultShape,
          storageBytes(operand.elementType()));
  return single(std::move(result));
}

Results broadcastInDim(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  WF_ASSIGN_OR_RETURN(auto dims, intListAttr(op, "broadcast_dimensions"));
  WF_ASSIGN_OR_RETURN(auto shape, staticResultShape(op));
  // Only elementwise arithmetic reads the result, through broadcast strides (elementwise.cpp):
  // hand it the operand's storage instead of a materialized copy.
  if (ew::broadcastFoldsIntoElementwise(op, ctx) && operands[0].type().isTensor() &&
      operands[0].shape() == op.operand(0)->type().shape())
    return single(operands[0].reshaped(shape));
  return broadcastInDimTo(op, operands[0], dims, shape);
}

Results dynamicBroadcastInDim(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 2));
  WF_ASSIGN_OR_RETURN(auto dims, intListAttr(op, "broadcast_dimensions"));
  WF_ASSIGN_OR_RETURN(auto shape, shapeOperand(op, operands[1], "output_dimensions"));
  return broadcastInDimTo(op, operands[0], dims, shape);
}

Results broadcast(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  WF_ASSIGN_OR_RETURN(auto sizes, intListAttr(op, "broadcast_sizes"));
  // The operand's dims become the trailing dims of the result.
  std::vector<int64_t> shape = sizes;
  shape.insert(shape.end(), operands[0].shape().begin(), operands[0].shape().end());
  std::vector<int64_t> dims;
  for (size_t i = 0; i < operands[0].shape().size(); ++i) dims.push_back(static_cast<int64_t>(sizes.size() + i));
  return broadcastInDimTo(op, operands[0], dims, shape);
}

// ----- reshape -----------------------------------------------------------------------------

Results reshapeTo(const Operation& op, const Literal& operand, const std::vector<int64_t>& shape) {
  if (cpu::product(shape) != operand.numElements())
    return invalidArgument(op.describe() + ": cannot reshape " + operand.type().toString() + " to " +
                           shapeString(shape));
  // Row-major storage is unchanged: share it (Literals are immutable values once produced).
  return single(operand.reshaped(shape));
}

Results reshape(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  WF_ASSIGN_OR_RETURN(auto shape, staticResultShape(op));
  return reshapeTo(op, operands[0], shape);
}

Results dynamicReshape(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 2));
  WF_ASSIGN_OR_RETURN(auto shape, shapeOperand(op, operands[1], "output_shape"));
  return reshapeTo(op, operands[0], shape);
}

// ----- transpose, reverse ------------------------------------------------------------------

Results transpose(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  const Literal& operand = operands[0];
  WF_ASSIGN_OR_RETURN(auto perm, intListAttr(op, "permutation"));
  if (!cpu::isPermutation(perm, operand.type().rank()))
    return invalidArgument(op.describe() + ": permutation " + shapeString(perm) + " is not a permutation of rank " +
                           std::to_string(operand.type().rank()));
  const std::vector<int64_t> inStrides = rowMajorStrides(operand.shape());
  std::vector<int64_t> shape, srcStrides;
  for (int64_t p : perm) {
    shape.push_back(operand.shape()[static_cast<size_t>(p)]);
    srcStrides.push_back(inStrides[static_cast<size_t>(p)]);
  }
  // Only dot_generals read the result, and they read it in the operand's layout (dot.cpp):
  // hand them the operand's storage instead of a permuted copy.
  if (operand.type().isTensor() && dotconv::transposeFoldsIntoDots(op, ctx)) return single(operand.reshaped(shape));
  WF_ASSIGN_OR_RETURN(Literal result, makeTensorToOverwrite(op, shape, operand.elementType()));
  copyBox(result.data(), rowMajorStrides(shape), operand.data(), srcStrides, shape, storageBytes(operand.elementType()));
  return single(std::move(result));
}

Results reverse(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  const Literal& operand = operands[0];
  WF_ASSIGN_OR_RETURN(auto dims, intListAttr(op, "dimensions"));
  const std::vector<int64_t>& shape = operand.shape();
  std::vector<int64_t> srcStrides = rowMajorStrides(shape);
  int64_t srcOrigin = 0;
  std::vector<bool> seen(shape.size(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(shape.size()) || seen[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": invalid dimensions " + shapeString(dims));
    seen[static_cast<size_t>(d)] = true;
    const auto u = static_cast<size_t>(d);
    // Read the dim backwards: start at its last index, step -stride.
    if (shape[u] > 0) srcOrigin += (shape[u] - 1) * srcStrides[u];
    srcStrides[u] = -srcStrides[u];
  }
  WF_ASSIGN_OR_RETURN(Literal result, makeTensorToOverwrite(op, shape, operand.elementType()));
  const int e = storageBytes(operand.elementType());
  if (result.numElements() > 0)
    copyBox(result.data(), rowMajorStrides(shape), operand.data() + srcOrigin * e, srcStrides, shape, e);
  return single(std::move(result));
}

// ----- slice -------------------------------------------------------------------------------

Results sliceImpl(const Operation& op, const Literal& operand, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& limit, const std::vector<int64_t>& strides) {
  const std::vector<int64_t>& in = operand.shape();
  const size_t rank = in.size();
  if (start.size() != rank || limit.size() != rank || strides.size() != rank)
    return invalidArgument(op.describe() + ": start/limit/strides must have " + std::to_string(rank) + " entries");
  const std::vector<int64_t> inStrides = rowMajorStrides(in);
  std::vector<int64_t> shape(rank), srcStrides(rank);
  int64_t origin = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > in[d] || strides[d] <= 0)
      return invalidArgument(op.describe() + ": invalid slice of dim " + std::to_string(d) + " (size " +
                             std::to_string(in[d]) + "): start " + std::to_string(start[d]) + ", limit " +
                             std::to_string(limit[d]) + ", stride " + std::to_string(strides[d]));
    shape[d] = (limit[d] - start[d] + strides[d] - 1) / strides[d];
    srcStrides[d] = inStrides[d] * strides[d];
    origin += start[d] * inStrides[d];
  }
  WF_ASSIGN_OR_RETURN(Literal result, makeTensorToOverwrite(op, shape, operand.elementType()));
  const int e = storageBytes(operand.elementType());
  if (result.numElements() > 0)
    copyBox(result.data(), rowMajorStrides(shape), operand.data() + origin * e, srcStrides, shape, e);
  return single(std::move(result));
}

Results slice(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  WF_ASSIGN_OR_RETURN(auto start, intListAttr(op, "start_indices"));
  WF_ASSIGN_OR_RETURN(auto limit, intListAttr(op, "limit_indices"));
  WF_ASSIGN_OR_RETURN(auto strides, cpu::intListAttrOr(op, "strides", std::vector<int64_t>(start.size(), 1)));
  return sliceImpl(op, operands[0], start, limit, strides);
}

Results realDynamicSlice(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 4));
  return sliceImpl(op, operands[0], intValues(operands[1]), intValues(operands[2]), intValues(operands[3]));
}

// ----- concatenate -------------------------------------------------------------------------

Results concatenate(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.empty()) return invalidArgument(op.describe() + ": needs at least one operand");
  WF_ASSIGN_OR_RETURN(int64_t dim, intAttr(op, "dimension"));
  const Literal& first = operands[0];
  const int64_t rank = first.type().rank();
  if (dim < 0 || dim >= rank)
    return invalidArgument(op.describe() + ": dimension " + std::to_string(dim) + " out of range for rank " +
                           std::to_string(rank));
  std::vector<int64_t> shape = first.shape();
  shape[static_cast<size_t>(dim)] = 0;
  for (const Literal& l : operands) {
    bool ok = l.type().isTensor() && l.elementType() == first.elementType() && l.type().rank() == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == dim || l.shape()[static_cast<size_t>(d)] == shape[static_cast<size_t>(d)];
    if (!ok)
      return invalidArgument(op.describe() + ": operand " + l.type().toString() + " does not match " +
                             first.type().toString() + " outside dimension " + std::to_string(dim));
    shape[static_cast<size_t>(dim)] += l.shape()[static_cast<size_t>(dim)];
  }
  WF_ASSIGN_OR_RETURN(Literal result, makeTensorToOverwrite(op, shape, first.elementType()));
  const int e = storageBytes(first.elementType());
  const std::vector<int64_t> outStrides = rowMajorStrides(shape);
  int64_t offset = 0;  // along `dim`
  for (const Literal& l : operands) {
    if (l.numElements() > 0)
      copyBox(result.data() + offset * outStrides[static_cast<size_t>(dim)] * e, outStrides, l.data(),
              rowMajorStrides(l.shape()), l.shape(), e);
    offset += l.shape()[static_cast<size_t>(dim)];
  }
  return single(std::move(result));
}

// ----- pad ---------------------------------------------------------------------------------

Results padImpl(const Operation& op, const Literal& operand, const Literal& padValue, const std::vector<int64_t>& low,
                const std::vector<int64_t>& high, const std::vector<int64_t>& interior) {
  const std::vector<int64_t>& in = operand.shape();
  const size_t rank = in.size();
  if (low.size() != rank || high.size() != rank || interior.size() != rank)
    return invalidArgument(op.describe() + ": padding lists must have " + std::to_string(rank) + " entries");
  if (padValue.numElements() != 1 || padValue.elementType() != operand.elementType())
    return invalidArgument(op.describe() + ": padding value must be a scalar of the operand's element type");
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (interior[d] < 0) return invalidArgument(op.describe() + ": negative interior padding");
    const int64_t dilated = in[d] == 0 ? 0 : in[d] + (in[d] - 1) * interior[d];
    shape[d] = low[d] + dilated + high[d];
    if (shape[d] < 0)
      return invalidArgument(op.describe() + ": padding makes dim " + std::to_string(d) + " negative");
  }
  WF_ASSIGN_OR_RETURN(Literal result, makeTensorToOverwrite(op, shape, operand.elementType()));
  const int e = storageBytes(operand.elementType());
  fillElements(result.data(), result.numElements(), padValue.data(), e);

  // operand[i] lands at low + i * (interior + 1); copy the operand indices that land inside.
  const std::vector<int64_t> inStrides = rowMajorStrides(in), outStrides = rowMajorStrides(shape);
  std::vector<int64_t> box(rank), srcStrides(rank), dstStrides(rank);
  int64_t srcOrigin = 0, dstOrigin = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t step = interior[d] + 1;
    // First i with low + i*step >= 0, last i with low + i*step < shape.
    int64_t first = low[d] >= 0 ? 0 : (-low[d] + step - 1) / step;
    int64_t end = shape[d] - low[d] <= 0 ? 0 : (shape[d] - low[d] + step - 1) / step;
    end = std::min(end, in[d]);
    box[d] = std::max<int64_t>(0, end - first);
    srcOrigin += first * inStrides[d];
    dstOrigin += (low[d] + first * step) * outStrides[d];
    srcStrides[d] = inStrides[d];
    dstStrides[d] = outStrides[d] * step;
  }
  if (cpu::product(box) > 0)
    copyBox(result.data() + dstOrigin * e, dstStrides, operand.data() + srcOrigin * e, srcStrides, box, e);
  return single(std::move(result));
}

Results pad(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 2));
  WF_ASSIGN_OR_RETURN(auto low, intListAttr(op, "edge_padding_low"));
  WF_ASSIGN_OR_RETURN(auto high, intListAttr(op, "edge_padding_high"));
  WF_ASSIGN_OR_RETURN(auto interior, cpu::intListAttrOr(op, "interior_padding", std::vector<int64_t>(low.size(), 0)));
  return padImpl(op, operands[0], operands[1], low, high, interior);
}

Results dynamicPad(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 5));
  return padImpl(op, operands[0], operands[1], intValues(operands[2]), intValues(operands[3]),
                 intValues(operands[4]));
}

// ----- iota --------------------------------------------------------------------------------

Results iotaImpl(const Operation& op, const std::vector<int64_t>& shape, ElementType element, int64_t dim) {
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    return invalidArgument(op.describe() + ": iota_dimension " + std::to_string(dim) + " out of range for shape " +
                           shapeString(shape));
  WF_ASSIGN_OR_RETURN(Literal result, makeTensor(op, shape, element));
  if (result.numElements() == 0) return single(std::move(result));
  const int e = storageBytes(element);
  const auto n = shape[static_cast<size_t>(dim)];
  // The n distinct values, converted once, then replicated by a broadcast along the other dims.
  Literal values = Literal::zeros(Type::tensor({n}, element));
  for (int64_t i = 0; i < n; ++i) {
    if (isComplex(element))
      values.setComplex(i, {static_cast<double>(i), 0.0});
    else if (isFloat(element))
      values.setDouble(i, static_cast<double>(i));
    else
      values.setInt(i, i);
  }
  std::vector<int64_t> srcStrides(shape.size(), 0);
  srcStrides[static_cast<size_t>(dim)] = 1;
  copyBox(result.data(), rowMajorStrides(shape), values.data(), srcStrides, shape, e);
  return single(std::move(result));
}

Results iota(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 0));
  WF_ASSIGN_OR_RETURN(int64_t dim, intAttr(op, "iota_dimension"));
  WF_ASSIGN_OR_RETURN(auto shape, staticResultShape(op));
  return iotaImpl(op, shape, op.result(0)->type().elementType(), dim);
}

Results dynamicIota(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  WF_ASSIGN_OR_RETURN(int64_t dim, intAttr(op, "iota_dimension"));
  WF_ASSIGN_OR_RETURN(auto shape, shapeOperand(op, operands[0], "output_shape"));
  return iotaImpl(op, shape, op.result(0)->type().elementType(), dim);
}

// ----- dimension sizes ---------------------------------------------------------------------

Expected<int64_t> dimensionAttr(const Operation& op, const Literal& operand) {
  // The generic form says `dimension`; accept the pretty form's `dim` too.
  Expected<int64_t> dim = op.attr("dimension") || !op.attr("dim") ? intAttr(op, "dimension") : intAttr(op, "dim");
  if (!dim) return dim;
  if (*dim < 0 || *dim >= operand.type().rank())
    return invalidArgument(op.describe() + ": dimension " + std::to_string(*dim) + " out of range for " +
                           operand.type().toString());
  return dim;
}

Results getDimensionSize(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 1));
  WF_ASSIGN_OR_RETURN(int64_t dim, dimensionAttr(op, operands[0]));
  ElementType et = op.result(0)->type().isTensor() ? op.result(0)->type().elementType() : ElementType::kSI32;
  return single(Literal::scalarInt(et, operands[0].shape()[static_cast<size_t>(dim)]));
}

// Sets the runtime size of a (bounded) dynamic dim. Where the declared result dim is dynamic the
// result is the first `size` entries of the operand along it; where it is static the data is
// unchanged (XLA keeps the padded extent).
Results setDimensionSize(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  WF_RETURN_IF_ERROR(expectOperands(op, operands, 2));
  const Literal& operand = operands[0];
  WF_ASSIGN_OR_RETURN(int64_t dim, dimensionAttr(op, operand));
  const Type& declared = op.result(0)->type();
  if (declared.isTensor() && declared.rank() == operand.type().rank() && declared.dim(dim) != kDynamic)
    return single(operand);
  const int64_t size = operands[1].getInt(0);
  const int64_t extent = operand.shape()[static_cast<size_t>(dim)];
  if (size < 0 || size > extent)
    return invalidArgument(op.describe() + ": size " + std::to_string(size) + " exceeds dimension extent " +
                           std::to_string(extent));
  std::vector<int64_t> start(operand.shape().size(), 0), limit = operand.shape(), strides(operand.shape().size(), 1);
  limit[static_cast<size_t>(dim)] = size;
  return sliceImpl(op, operand, start, limit, strides);
}

}  // namespace

void registerDataMovementKernels(KernelRegistry& registry) {
  registry.add(OpCode::Broadcast, broadcast);
  registry.add(OpCode::BroadcastInDim, broadcastInDim);
  registry.add(OpCode::DynamicBroadcastInDim, dynamicBroadcastInDim);
  registry.add(OpCode::Reshape, reshape);
  registry.add(OpCode::DynamicReshape, dynamicReshape);
  registry.add(OpCode::Transpose, transpose);
  registry.add(OpCode::Reverse, reverse);
  registry.add(OpCode::Slice, slice);
  registry.add(OpCode::RealDynamicSlice, realDynamicSlice);
  registry.add(OpCode::Concatenate, concatenate);
  registry.add(OpCode::Pad, pad);
  registry.add(OpCode::DynamicPad, dynamicPad);
  registry.add(OpCode::Iota, iota);
  registry.add(OpCode::DynamicIota, dynamicIota);
  registry.add(OpCode::GetDimensionSize, getDimensionSize);
  registry.add(OpCode::SetDimensionSize, setDimensionSize);
}

}  // namespace wf
