// CPU kernels that move elements addressed by runtime indices: gather, dynamic_gather, scatter,
// dynamic_slice, dynamic_update_slice, torch_index_select.
//
// Elements are moved as opaque storageBytes()-sized byte strings. Gather copies one window per
// batch point through a precomputed StridedBox (contiguous windows become single memcpys).
// Scatter does the same per update window, combining with the op's update region: plain
// assignment and addition have fast paths, any other body runs through Interpreter::runRegion.
// Index operands may be of any integer type.
#include <algorithm>
#include <complex>
#include <cstring>

#include "eval/interpreter.h"
#include "eval/shape_util.h"
#include "ir/float_types.h"
#include "support/thread_pool.h"

namespace wf {

namespace {

using cpu::intValues;
using cpu::makeTensor;
using cpu::shapeString;
using cpu::StridedBox;

using Results = Expected<std::vector<Literal>>;

Results single(Literal l) { return std::vector<Literal>{std::move(l)}; }

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Status checkDims(const Operation& op, const char* what, const std::vector<int64_t>& dims, int64_t rank) {
  for (int64_t d : dims)
    if (d < 0 || d >= rank)
      return invalidArgument(op.describe() + ": " + what + " " + shapeString(dims) + " out of range for rank " +
                             std::to_string(rank));
  return Status::ok();
}

// ----- gather ------------------------------------------------------------------------------

struct GatherDims {
  std::vector<int64_t> offsetDims, collapsedSliceDims, operandBatchingDims, startIndicesBatchingDims, startIndexMap;
  int64_t indexVectorDim = 0;
};

Expected<int64_t> structInt(const Operation& op, const Attribute& s, std::string_view field) {
  const Attribute* f = s.field(field);
  if (!f) return int64_t{0};
  auto v = f->asInt();
  if (!v) return invalidArgument(op.describe() + ": field '" + std::string(field) + "' is not an integer");
  return *v;
}

Expected<GatherDims> gatherDims(const Operation& op) {
  const Attribute* a = op.attr("dimension_numbers");
  if (!a) return invalidArgument(op.describe() + ": missing attribute 'dimension_numbers'");
  GatherDims g;
  WF_ASSIGN_OR_RETURN(g.offsetDims, cpu::structIntList(op, *a, "offset_dims"));
  WF_ASSIGN_OR_RETURN(g.collapsedSliceDims, cpu::structIntList(op, *a, "collapsed_slice_dims"));
  WF_ASSIGN_OR_RETURN(g.operandBatchingDims, cpu::structIntList(op, *a, "operand_batching_dims"));
  WF_ASSIGN_OR_RETURN(g.startIndicesBatchingDims, cpu::structIntList(op, *a, "start_indices_batching_dims"));
  WF_ASSIGN_OR_RETURN(g.startIndexMap, cpu::structIntList(op, *a, "start_index_map"));
  WF_ASSIGN_OR_RETURN(g.indexVectorDim, structInt(op, *a, "index_vector_dim"));
  return g;
}

// How the batch dims of an index tensor (all dims but index_vector_dim) address it.
struct IndexTensor {
  std::vector<int64_t> values;      // as int64
  std::vector<int64_t> batchShape;  // dims other than index_vector_dim, in order
  std::vector<int64_t> batchStrides;
  int64_t vectorStride = 0;  // stride of index_vector_dim (0 when it is implicit)
  int64_t vectorSize = 1;
};

Expected<IndexTensor> indexTensor(const Operation& op, const Literal& indices, int64_t ivd) {
  if (!isInteger(indices.elementType()) && indices.elementType() != ElementType::kIndex)
    return invalidArgument(op.describe() + ": indices must be integers, got " + indices.type().toString());
  const int64_t rank = indices.type().rank();
  if (ivd < 0 || ivd > rank)
    return invalidArgument(op.describe() + ": index_vector_dim " + std::to_string(ivd) + " out of range");
  IndexTensor t;
  t.values = intValues(indices);
  const std::vector<int64_t> strides = rowMajorStrides(indices.shape());
  for (int64_t d = 0; d < rank; ++d) {
    if (d == ivd) {
      t.vectorStride = strides[static_cast<size_t>(d)];
      t.vectorSize = indices.shape()[static_cast<size_t>(d)];
    } else {
      t.batchShape.push_back(indices.shape()[static_cast<size_t>(d)]);
      t.batchStrides.push_back(strides[static_cast<size_t>(d)]);
    }
  }
  return t;
}

// Batching dims name index-tensor dims; the batch multi-index skips index_vector_dim.
std::vector<int64_t> batchPositions(const std::vector<int64_t>& indexDims, int64_t ivd) {
  std::vector<int64_t> out;
  for (int64_t d : indexDims) out.push_back(d < ivd ? d : d - 1);
  return out;
}

Results gatherImpl(const Operation& op, const Literal& operand, const Literal& indices,
                   const std::vector<int64_t>& sliceSizes) {
  WF_ASSIGN_OR_RETURN(GatherDims g, gatherDims(op));
  const int64_t rank = operand.type().rank();
  const std::vector<int64_t>& in = operand.shape();
  if (static_cast<int64_t>(sliceSizes.size()) != rank)
    return invalidArgument(op.describe() + ": slice_sizes " + shapeString(sliceSizes) + " must have " +
                           std::to_string(rank) + " entries");
  for (int64_t d = 0; d < rank; ++d)
    if (sliceSizes[static_cast<size_t>(d)] < 0 || sliceSizes[static_cast<size_t>(d)] > in[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": slice_sizes " + shapeString(sliceSizes) + " exceed operand " +
                             operand.type().toString());
  WF_RETURN_IF_ERROR(checkDims(op, "collapsed_slice_dims", g.collapsedSliceDims, rank));
  WF_RETURN_IF_ERROR(checkDims(op, "operand_batching_dims", g.operandBatchingDims, rank));
  WF_RETURN_IF_ERROR(checkDims(op, "start_index_map", g.startIndexMap, rank));
  WF_ASSIGN_OR_RETURN(IndexTensor idx, indexTensor(op, indices, g.indexVectorDim));
  WF_RETURN_IF_ERROR(checkDims(op, "start_indices_batching_dims", g.startIndicesBatchingDims, indices.type().rank()));
  if (static_cast<int64_t>(g.startIndexMap.size()) != idx.vectorSize)
    return invalidArgument(op.describe() + ": start_index_map " + shapeString(g.startIndexMap) +
                           " does not match the index vector size " + std::to_string(idx.vectorSize));
  if (g.operandBatchingDims.size() != g.startIndicesBatchingDims.size())
    return invalidArgument(op.describe() + ": operand_batching_dims and start_indices_batching_dims differ in size");

  // Window dims of the operand (neither collapsed nor batching) map in order onto offset_dims.
  std::vector<int64_t> windowDims;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(g.collapsedSliceDims, d) && !contains(g.operandBatchingDims, d)) windowDims.push_back(d);
  if (windowDims.size() != g.offsetDims.size())
    return invalidArgument(op.describe() + ": offset_dims " + shapeString(g.offsetDims) + " do not match the " +
                           std::to_string(windowDims.size()) + " window dims");
  const int64_t resultRank = static_cast<int64_t>(idx.batchShape.size() + windowDims.size());
  WF_RETURN_IF_ERROR(checkDims(op, "offset_dims", g.offsetDims, resultRank));
  std::vector<int64_t> resultShape(static_cast<size_t>(resultRank), -1), resultBatchDims;
  for (size_t k = 0; k < g.offsetDims.size(); ++k)
    resultShape[static_cast<size_t>(g.offsetDims[k])] = sliceSizes[static_cast<size_t>(windowDims[k])];
  for (int64_t d = 0, k = 0; d < resultRank; ++d) {
    if (contains(g.offsetDims, d)) continue;
    resultShape[static_cast<size_t>(d)] = idx.batchShape[static_cast<size_t>(k++)];
    resultBatchDims.push_back(d);
  }
  if (resultBatchDims.size() != idx.batchShape.size())
    return invalidArgument(op.describe() + ": offset_dims " + shapeString(g.offsetDims) + " are not unique");

  WF_ASSIGN_OR_RETURN(Literal result, makeTensor(op, resultShape, operand.elementType()));
  if (result.numElements() == 0) return single(std::move(result));
  const int e = storageBytes(operand.elementType());
  const std::vector<int64_t> inStrides = rowMajorStrides(in), outStrides = rowMajorStrides(resultShape);

  std::vector<int64_t> windowShape, dstStrides, srcStrides;
  for (size_t k = 0; k < windowDims.size(); ++k) {
    windowShape.push_back(sliceSizes[static_cast<size_t>(windowDims[k])]);
    dstStrides.push_back(outStrides[static_cast<size_t>(g.offsetDims[k])]);
    srcStrides.push_back(inStrides[static_cast<size_t>(windowDims[k])]);
  }
  const StridedBox window = StridedBox::make(windowShape, dstStrides, srcStrides);
  const std::vector<int64_t> batchPos = batchPositions(g.startIndicesBatchingDims, g.indexVectorDim);
  const int64_t numPoints = cpu::product(idx.batchShape);
  const int64_t batchRank = static_cast<int64_t>(idx.batchShape.size());

  auto work = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> bi(static_cast<size_t>(batchRank));
    for (int64_t p = begin; p < end; ++p) {
      int64_t rem = p, idxOff = 0, dstOff = 0;
      for (int64_t k = batchRank - 1; k >= 0; --k) {
        const auto u = static_cast<size_t>(k);
        bi[u] = rem % idx.batchShape[u];
        rem /= idx.batchShape[u];
        idxOff += bi[u] * idx.batchStrides[u];
        dstOff += bi[u] * outStrides[static_cast<size_t>(resultBatchDims[u])];
      }
      int64_t srcOff = 0;
      for (size_t s = 0; s < g.startIndexMap.size(); ++s) {
        const auto d = static_cast<size_t>(g.startIndexMap[s]);
        const int64_t v = idx.values[static_cast<size_t>(idxOff + static_cast<int64_t>(s) * idx.vectorStride)];
        srcOff += std::clamp<int64_t>(v, 0, in[d] - sliceSizes[d]) * inStrides[d];
      }
      for (size_t i = 0; i < g.operandBatchingDims.size(); ++i)
        srcOff += bi[static_cast<size_t>(batchPos[i])] * inStrides[static_cast<size_t>(g.operandBatchingDims[i])];
      cpu::copyBox(result.data() + dstOff * e, operand.data() + srcOff * e, window, e, false);
    }
  };
  const int64_t bytesPerPoint = std::max<int64_t>(1, window.numElements * e);
  parallelFor(numPoints, std::max<int64_t>(1, (int64_t{256} << 10) / bytesPerPoint), work);
  return single(std::move(result));
}

Results gather(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 2) return invalidArgument(op.describe() + ": expects 2 operands");
  WF_ASSIGN_OR_RETURN(auto sliceSizes, cpu::intListAttr(op, "slice_sizes"));
  return gatherImpl(op, operands[0], operands[1], sliceSizes);
}

Results dynamicGather(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 3) return invalidArgument(op.describe() + ": expects 3 operands");
  return gatherImpl(op, operands[0], operands[1], intValues(operands[2]));
}

// ----- scatter -----------------------------------------------------------------------------

enum class Combine { kAssign, kAdd, kRegion };

// Recognises `return %update...` and `return add(%current, %update)` bodies.
Combine classifyBody(const Region& region, size_t numInputs) {
  if (region.empty()) return Combine::kRegion;
  const Block& b = region.front();
  if (b.numArguments() != 2 * numInputs) return Combine::kRegion;
  const auto& ops = b.operations();
  const Operation* ret = b.terminator();
  if (!ret || (ret->code() != OpCode::Return && ret->code() != OpCode::FuncReturn) ||
      ret->numOperands() != numInputs)
    return Combine::kRegion;
  if (ops.size() == 1) {
    for (size_t i = 0; i < numInputs; ++i)
      if (ret->operand(i) != b.argument(numInputs + i)) return Combine::kRegion;
    return Combine::kAssign;
  }
  if (ops.size() == 2 && numInputs == 1 && ops[0]->code() == OpCode::Add && ops[0]->numOperands() == 2 &&
      ret->operand(0) == ops[0]->result(0)) {
    const Value* x = ops[0]->operand(0);
    const Value* y = ops[0]->operand(1);
    if ((x == b.argument(0) && y == b.argument(1)) || (x == b.argument(1) && y == b.argument(0))) return Combine::kAdd;
  }
  return Combine::kRegion;
}

// result[a + i*aStep] += update[b + i*bStep] over the rows of a box, for one storage type.
template <typename T, typename Acc = T>
void addRows(std::byte* result, const std::byte* update, const StridedBox& box) {
  T* r = reinterpret_cast<T*>(result);
  const T* u = reinterpret_cast<const T*>(update);
  const int64_t as = box.aInner(), bs = box.bInner();
  cpu::forEachRow(box, [&](int64_t a, int64_t b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      T& x = r[a + i * as];
      x = static_cast<T>(static_cast<Acc>(x) + static_cast<Acc>(u[b + i * bs]));
    }
  });
}

template <float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void addRowsHalf(std::byte* result, const std::byte* update, const StridedBox& box) {
  auto* r = reinterpret_cast<uint16_t*>(result);
  const auto* u = reinterpret_cast<const uint16_t*>(update);
  const int64_t as = box.aInner(), bs = box.bInner();
  // A float sum of two 16-bit floats rounded once more is correctly rounded (24 >= 2*11 + 2).
  cpu::forEachRow(box, [&](int64_t a, int64_t b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) r[a + i * as] = FromF(ToF(r[a + i * as]) + ToF(u[b + i * bs]));
  });
}

// The fast `add` for element types whose storage arithmetic is the element arithmetic; returns
// false for the rest (sub-byte ints, i1, f8), which go through the region.
bool addBox(ElementType t, std::byte* result, const std::byte* update, const StridedBox& box) {
  switch (t) {
    // Signed adds wrap: compute in the unsigned type of the same width.
    case ElementType::kSI8: addRows<int8_t, uint8_t>(result, update, box); return true;
    case ElementType::kSI16: addRows<int16_t, uint16_t>(result, update, box); return true;
    case ElementType::kSI32: addRows<int32_t, uint32_t>(result, update, box); return true;
    case ElementType::kSI64: addRows<int64_t, uint64_t>(result, update, box); return true;
    case ElementType::kIndex: addRows<int64_t, uint64_t>(result, update, box); return true;
    case ElementType::kUI8: addRows<uint8_t, uint32_t>(result, update, box); return true;
    case ElementType::kUI16: addRows<uint16_t, uint32_t>(result, update, box); return true;
    case ElementType::kUI32: addRows<uint32_t>(result, update, box); return true;
    case ElementType::kUI64: addRows<uint64_t>(result, update, box); return true;
    case ElementType::kF32: addRows<float>(result, update, box); return true;
    case ElementType::kF64: addRows<double>(result, update, box); return true;
    case ElementType::kComplexF32: addRows<std::complex<float>>(result, update, box); return true;
    case ElementType::kComplexF64: addRows<std::complex<double>>(result, update, box); return true;
    case ElementType::kBF16: addRowsHalf<bf16ToFloat, floatToBf16>(result, update, box); return true;
    case ElementType::kF16: addRowsHalf<f16ToFloat, floatToF16>(result, update, box); return true;
    default: return false;
  }
}

struct ScatterDims {
  std::vector<int64_t> updateWindowDims, insertedWindowDims, inputBatchingDims, scatterIndicesBatchingDims,
      scatterDimsToOperandDims;
  int64_t indexVectorDim = 0;
};

Expected<ScatterDims> scatterDims(const Operation& op) {
  const Attribute* a = op.attr("scatter_dimension_numbers");
  if (!a) return invalidArgument(op.describe() + ": missing attribute 'scatter_dimension_numbers'");
  ScatterDims s;
  WF_ASSIGN_OR_RETURN(s.updateWindowDims, cpu::structIntList(op, *a, "update_window_dims"));
  WF_ASSIGN_OR_RETURN(s.insertedWindowDims, cpu::structIntList(op, *a, "inserted_window_dims"));
  WF_ASSIGN_OR_RETURN(s.inputBatchingDims, cpu::structIntList(op, *a, "input_batching_dims"));
  WF_ASSIGN_OR_RETURN(s.scatterIndicesBatchingDims, cpu::structIntList(op, *a, "scatter_indices_batching_dims"));
  WF_ASSIGN_OR_RETURN(s.scatterDimsToOperandDims, cpu::structIntList(op, *a, "scatter_dims_to_operand_dims"));
  WF_ASSIGN_OR_RETURN(s.indexVectorDim, structInt(op, *a, "index_vector_dim"));
  return s;
}

Results scatter(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (operands.size() < 3 || operands.size() % 2 == 0)
    return invalidArgument(op.describe() + ": expects N inputs, indices and N updates");
  if (op.numRegions() != 1) return invalidArgument(op.describe() + ": expects one update region");
  const size_t n = (operands.size() - 1) / 2;
  std::span<const Literal> inputs = operands.subspan(0, n), updates = operands.subspan(n + 1, n);
  const Literal& indices = operands[n];
  WF_ASSIGN_OR_RETURN(ScatterDims s, scatterDims(op));
  const Literal& input0 = inputs[0];
  const Literal& update0 = updates[0];
  const int64_t rank = input0.type().rank();
  const std::vector<int64_t>& in = input0.shape();
  for (size_t i = 0; i < n; ++i)
    if (inputs[i].shape() != in || updates[i].shape() != update0.shape())
      return invalidArgument(op.describe() + ": all inputs (and all updates) must have the same shape");
  WF_RETURN_IF_ERROR(checkDims(op, "inserted_window_dims", s.insertedWindowDims, rank));
  WF_RETURN_IF_ERROR(checkDims(op, "input_batching_dims", s.inputBatchingDims, rank));
  WF_RETURN_IF_ERROR(checkDims(op, "scatter_dims_to_operand_dims", s.scatterDimsToOperandDims, rank));
  WF_RETURN_IF_ERROR(checkDims(op, "update_window_dims", s.updateWindowDims, update0.type().rank()));
  WF_ASSIGN_OR_RETURN(IndexTensor idx, indexTensor(op, indices, s.indexVectorDim));
  WF_RETURN_IF_ERROR(
      checkDims(op, "scatter_indices_batching_dims", s.scatterIndicesBatchingDims, indices.type().rank()));
  if (static_cast<int64_t>(s.scatterDimsToOperandDims.size()) != idx.vectorSize)
    return invalidArgument(op.describe() + ": scatter_dims_to_operand_dims " + shapeString(s.scatterDimsToOperandDims) +
                           " does not match the index vector size " + std::to_string(idx.vectorSize));
  if (s.inputBatchingDims.size() != s.scatterIndicesBatchingDims.size())
    return invalidArgument(op.describe() + ": input_batching_dims and scatter_indices_batching_dims differ in size");

  // Window dims of the input (neither inserted nor batching) map in order onto update_window_dims;
  // the remaining update dims are the scatter dims, matching the index tensor's batch dims.
  std::vector<int64_t> windowDims, updateScatterDims;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(s.insertedWindowDims, d) && !contains(s.inputBatchingDims, d)) windowDims.push_back(d);
  for (int64_t d = 0; d < update0.type().rank(); ++d)
    if (!contains(s.updateWindowDims, d)) updateScatterDims.push_back(d);
  if (windowDims.size() != s.updateWindowDims.size() || updateScatterDims.size() != idx.batchShape.size())
    return invalidArgument(op.describe() + ": updates " + update0.type().toString() +
                           " do not match the scatter dimension numbers");
  const std::vector<int64_t>& upd = update0.shape();
  for (size_t k = 0; k < updateScatterDims.size(); ++k)
    if (upd[static_cast<size_t>(updateScatterDims[k])] != idx.batchShape[k])
      return invalidArgument(op.describe() + ": updates " + update0.type().toString() +
                             " do not match the scatter indices " + indices.type().toString());
  std::vector<int64_t> windowShape;
  for (size_t k = 0; k < windowDims.size(); ++k) {
    const int64_t w = upd[static_cast<size_t>(s.updateWindowDims[k])];
    if (w > in[static_cast<size_t>(windowDims[k])])
      return invalidArgument(op.describe() + ": update window " + update0.type().toString() + " exceeds input " +
                             input0.type().toString());
    windowShape.push_back(w);
  }

  std::vector<Literal> results;
  for (size_t i = 0; i < n; ++i) results.push_back(inputs[i].clone());
  const Combine mode = classifyBody(op.region(0), n);
  const std::vector<int64_t> inStrides = rowMajorStrides(in), updStrides = rowMajorStrides(upd);
  std::vector<int64_t> aStrides, bStrides;
  for (size_t k = 0; k < windowDims.size(); ++k) {
    aStrides.push_back(inStrides[static_cast<size_t>(windowDims[k])]);
    bStrides.push_back(updStrides[static_cast<size_t>(s.updateWindowDims[k])]);
  }
  const StridedBox fullWindow = StridedBox::make(windowShape, aStrides, bStrides);
  const std::vector<int64_t> batchPos = batchPositions(s.scatterIndicesBatchingDims, s.indexVectorDim);

  std::vector<int64_t> start(static_cast<size_t>(rank));
  std::vector<int64_t> lo(windowDims.size()), clipped(windowDims.size());
  Status status;
  cpu::forEachIndex(idx.batchShape, [&](const std::vector<int64_t>& bi) {
    if (!status.isOk()) return;
    int64_t idxOff = 0, updOff = 0;
    for (size_t k = 0; k < bi.size(); ++k) {
      idxOff += bi[k] * idx.batchStrides[k];
      updOff += bi[k] * updStrides[static_cast<size_t>(updateScatterDims[k])];
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t j = 0; j < s.scatterDimsToOperandDims.size(); ++j)
      start[static_cast<size_t>(s.scatterDimsToOperandDims[j])] +=
          idx.values[static_cast<size_t>(idxOff + static_cast<int64_t>(j) * idx.vectorStride)];
    for (size_t i = 0; i < s.inputBatchingDims.size(); ++i)
      start[static_cast<size_t>(s.inputBatchingDims[i])] += bi[static_cast<size_t>(batchPos[i])];
    // Updates that land outside the input are skipped element by element; the part of the
    // window that lands inside is a box.
    int64_t resOff = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const auto u = static_cast<size_t>(d);
      if (!contains(windowDims, d) && (start[u] < 0 || start[u] >= in[u])) return;
      resOff += start[u] * inStrides[u];
    }
    bool whole = true;
    for (size_t k = 0; k < windowDims.size(); ++k) {
      const int64_t st = start[static_cast<size_t>(windowDims[k])], dim = in[static_cast<size_t>(windowDims[k])];
      lo[k] = std::max<int64_t>(0, -st);
      const int64_t hi = std::min(windowShape[k], dim - st);
      if (lo[k] >= hi) return;
      clipped[k] = hi - lo[k];
      whole = whole && lo[k] == 0 && hi == windowShape[k];
      resOff += lo[k] * aStrides[k];
      updOff += lo[k] * bStrides[k];
    }
    const StridedBox box = whole ? fullWindow : StridedBox::make(clipped, aStrides, bStrides);
    const int e = storageBytes(input0.elementType());
    if (mode == Combine::kAssign) {
      for (size_t i = 0; i < n; ++i) {
        const int ei = storageBytes(results[i].elementType());
        cpu::copyBox(results[i].data() + resOff * ei, updates[i].data() + updOff * ei, box, ei, false);
      }
      return;
    }
    if (mode == Combine::kAdd && updates[0].elementType() == input0.elementType() &&
        addBox(input0.elementType(), results[0].data() + resOff * e, updates[0].data() + updOff * e, box))
      return;
    // General body: one region call per element, arguments (current values..., updates...).
    std::vector<Literal> args(2 * n);
    cpu::forEachRow(box, [&](int64_t a, int64_t b, int64_t count) {
      for (int64_t j = 0; j < count && status.isOk(); ++j) {
        const int64_t ra = resOff + a + j * box.aInner(), ub = updOff + b + j * box.bInner();
        for (size_t i = 0; i < n; ++i) {
          const int ei = storageBytes(results[i].elementType()), eu = storageBytes(updates[i].elementType());
          args[i] = Literal::zeros(Type::scalar(results[i].elementType()));
          std::memcpy(args[i].data(), results[i].data() + ra * ei, static_cast<size_t>(ei));
          args[n + i] = Literal::zeros(Type::scalar(updates[i].elementType()));
          std::memcpy(args[n + i].data(), updates[i].data() + ub * eu, static_cast<size_t>(eu));
        }
        Expected<std::vector<Literal>> out = Interpreter::runRegion(op.region(0), args, ctx);
        if (!out) {
          status = out.status();
          return;
        }
        if (out->size() != n) {
          status = invalidArgument(op.describe() + ": update region returned " + std::to_string(out->size()) +
                                   " values, expected " + std::to_string(n));
          return;
        }
        for (size_t i = 0; i < n; ++i) {
          const Literal& v = (*out)[i];
          if (v.numElements() != 1 || v.elementType() != results[i].elementType()) {
            status = invalidArgument(op.describe() + ": update region returned " + v.type().toString() +
                                     " for an input of " + results[i].type().toString());
            return;
          }
          const int ei = storageBytes(results[i].elementType());
          std::memcpy(results[i].data() + ra * ei, v.data(), static_cast<size_t>(ei));
        }
      }
    });
  });
  if (!status.isOk()) return status;
  return results;
}

// ----- dynamic_slice, dynamic_update_slice -------------------------------------------------

// Start indices given as scalar operands, each clamped so a box of `sizes` fits in `shape`.
Expected<std::vector<int64_t>> clampedStarts(const Operation& op, std::span<const Literal> starts,
                                             const std::vector<int64_t>& shape, const std::vector<int64_t>& sizes) {
  if (starts.size() != shape.size())
    return invalidArgument(op.describe() + ": expects " + std::to_string(shape.size()) + " start indices, got " +
                           std::to_string(starts.size()));
  std::vector<int64_t> out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (starts[d].numElements() != 1) return invalidArgument(op.describe() + ": start indices must be scalars");
    if (sizes[d] < 0 || sizes[d] > shape[d])
      return invalidArgument(op.describe() + ": size " + std::to_string(sizes[d]) + " exceeds dim " +
                             std::to_string(d) + " of size " + std::to_string(shape[d]));
    out[d] = std::clamp<int64_t>(starts[d].getInt(0), 0, shape[d] - sizes[d]);
  }
  return out;
}

Results dynamicSlice(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.empty()) return invalidArgument(op.describe() + ": expects an operand");
  const Literal& operand = operands[0];
  WF_ASSIGN_OR_RETURN(auto sizes, cpu::intListAttr(op, "slice_sizes"));
  if (sizes.size() != operand.shape().size())
    return invalidArgument(op.describe() + ": slice_sizes " + shapeString(sizes) + " do not match " +
                           operand.type().toString());
  WF_ASSIGN_OR_RETURN(auto starts, clampedStarts(op, operands.subspan(1), operand.shape(), sizes));
  const std::vector<int64_t> inStrides = rowMajorStrides(operand.shape());
  int64_t origin = 0;
  for (size_t d = 0; d < starts.size(); ++d) origin += starts[d] * inStrides[d];
  WF_ASSIGN_OR_RETURN(Literal result, makeTensor(op, sizes, operand.elementType()));
  const int e = storageBytes(operand.elementType());
  if (result.numElements() > 0)
    cpu::copyBox(result.data(), rowMajorStrides(sizes), operand.data() + origin * e, inStrides, sizes, e);
  return single(std::move(result));
}

Results dynamicUpdateSlice(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() < 2) return invalidArgument(op.describe() + ": expects an operand and an update");
  const Literal& operand = operands[0];
  const Literal& update = operands[1];
  if (update.elementType() != operand.elementType() || update.shape().size() != operand.shape().size())
    return invalidArgument(op.describe() + ": update " + update.type().toString() + " does not match operand " +
                           operand.type().toString());
  WF_ASSIGN_OR_RETURN(auto starts, clampedStarts(op, operands.subspan(2), operand.shape(), update.shape()));
  Literal result = operand.clone();
  const std::vector<int64_t> outStrides = rowMajorStrides(operand.shape());
  int64_t origin = 0;
  for (size_t d = 0; d < starts.size(); ++d) origin += starts[d] * outStrides[d];
  const int e = storageBytes(operand.elementType());
  if (update.numElements() > 0)
    cpu::copyBox(result.data() + origin * e, outStrides, update.data(), rowMajorStrides(update.shape()), update.shape(),
                 e);
  return single(std::move(result));
}

// ----- torch_index_select ------------------------------------------------------------------

// result[p..., q..., r...] = operand[p..., index[p[:batch_dims]..., q...], r...] where p spans
// operand dims [0, dim), q the index dims after batch_dims, r the operand dims after `dim`.
Results torchIndexSelect(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 2) return invalidArgument(op.describe() + ": expects 2 operands");
  const Literal& operand = operands[0];
  const Literal& index = operands[1];
  WF_ASSIGN_OR_RETURN(int64_t dim, cpu::intAttr(op, "dim"));
  int64_t batchDims = 0;
  if (op.attr("batch_dims")) {
    WF_ASSIGN_OR_RETURN(batchDims, cpu::intAttr(op, "batch_dims"));
  }
  const std::vector<int64_t>& in = operand.shape();
  const std::vector<int64_t>& ix = index.shape();
  const auto rank = static_cast<int64_t>(in.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank || batchDims < 0 || batchDims > dim || batchDims > static_cast<int64_t>(ix.size()))
    return invalidArgument(op.describe() + ": invalid dim " + std::to_string(dim) + " / batch_dims " +
                           std::to_string(batchDims));
  for (int64_t d = 0; d < batchDims; ++d)
    if (in[static_cast<size_t>(d)] != ix[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": batch dims of " + operand.type().toString() + " and " +
                             index.type().toString() + " differ");
  std::vector<int64_t> shape(in.begin(), in.begin() + dim);
  shape.insert(shape.end(), ix.begin() + batchDims, ix.end());
  shape.insert(shape.end(), in.begin() + dim + 1, in.end());
  WF_ASSIGN_OR_RETURN(Literal result, makeTensor(op, shape, operand.elementType()));
  if (result.numElements() == 0) return single(std::move(result));

  const int64_t outer = cpu::product(std::vector<int64_t>(in.begin(), in.begin() + dim));
  const int64_t perBatch = cpu::product(std::vector<int64_t>(in.begin() + batchDims, in.begin() + dim));
  const int64_t q = cpu::product(std::vector<int64_t>(ix.begin() + batchDims, ix.end()));
  const int64_t inner = cpu::product(std::vector<int64_t>(in.begin() + dim + 1, in.end()));
  const int64_t extent = in[static_cast<size_t>(dim)];
  const std::vector<int64_t> values = intValues(index);
  const auto rowBytes = static_cast<size_t>(inner * storageBytes(operand.elementType()));
  for (int64_t p = 0; p < outer; ++p) {
    const int64_t batch = perBatch == 0 ? 0 : p / perBatch;
    for (int64_t j = 0; j < q; ++j) {
      int64_t i = values[static_cast<size_t>(batch * q + j)];
      if (i < 0 || i >= extent)
        return outOfRange(op.describe() + ": index " + std::to_string(i) + " out of range for dimension of size " +
                          std::to_string(extent));
      std::memcpy(result.data() + static_cast<size_t>(p * q + j) * rowBytes,
                  operand.data() + static_cast<size_t>(p * extent + i) * rowBytes, rowBytes);
    }
  }
  return single(std::move(result));
}

}  // namespace

void registerIndexingKernels(KernelRegistry& registry) {
  registry.add(OpCode::Gather, gather);
  registry.add(OpCode::DynamicGather, dynamicGather);
  registry.add(OpCode::Scatter, scatter);
  registry.add(OpCode::DynamicSlice, dynamicSlice);
  registry.add(OpCode::DynamicUpdateSlice, dynamicUpdateSlice);
  registry.add(OpCode::TorchIndexSelect, torchIndexSelect);
}

}  // namespace wf
