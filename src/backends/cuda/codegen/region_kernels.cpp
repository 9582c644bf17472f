// Kernels generated around a region body: stablehlo.map, chlo.scan with an elementwise body, and
// stablehlo.reduce / reduce_window with any body over any number of operands (reduce.cu hands
// over what its fast kernels do not take). The body becomes a device function (fusion.h's generateRegionFunction, the fused
// kernels' per-op code), the kernel around it is written here with the shapes as constants, and
// NVRTC compiles both (nvrtc.h, cached by source).
//
// One thread per result element. A reduction folds its elements in the CPU interpreter's order,
// row-major over the reduced dims (or over the window), starting from the init values:
//   acc... = body(acc..., element...)
// so every body, associative or not, gives what the interpreter gives: integers exactly, narrow
// floats rounded after every body op. The spec leaves the order to the implementation; this one
// is deterministic. A few large reductions are slow this way (one thread walks each); the one-op
// bodies of sums and pooling keep reduce.cu's parallel kernels.
#include "backends/cuda/codegen/region_kernels.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/codegen/nvrtc.h"

namespace wf::cuda {
namespace {

// Kernel parameters one launch passes (inputs and results).
constexpr size_t kMaxParams = 64;

using Results = Expected<std::unique_ptr<OpKernel>>;

// The body as a device function `wf_body`, with `numArgs` arguments and `numResults` results;
// with `elementwiseShape`, of one element of a body acting elementwise on tensors of that shape.
Expected<RegionFunction> bodyFunction(const Operation& op, size_t numArgs, size_t numResults,
                                      const std::vector<int64_t>* elementwiseShape = nullptr) {
  if (op.numRegions() != 1 || op.region(0).empty()) return invalidArgument(op.describe() + ": expects one body region");
  Expected<RegionFunction> f = generateRegionFunction(op.region(0), "wf_body", elementwiseShape);
  if (!f) {
    if (f.status().code() == StatusCode::kUnimplemented) return unsupportedOnCuda(op, "body: " + f.status().message());
    return f.status();
  }
  if (f->argTypes.size() != numArgs || f->resultTypes.size() != numResults)
    return invalidArgument(op.describe() + ": the body must take " + std::to_string(numArgs) + " arguments and return " +
                           std::to_string(numResults) + " values");
  return f;
}

// The element type of a tensor operand or result the kernels store, or Unimplemented.
Expected<ElementType> storedType(const Operation& op, const Value* v) {
  const ElementType t = v->type().elementType();
  if (!storageTypeName(t)) return unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(t)));
  return t;
}

// The signature of kernel `name`: `in0..` the operands, `out0..` the results.
Expected<std::string> signature(const Operation& op, const std::string& name) {
  if (op.numOperands() + op.numResults() > kMaxParams)
    return unsupportedOnCuda(op, "too many operands for a generated kernel");
  std::ostringstream s;
  s << "extern \"C\" __global__ void __launch_bounds__(256) " << name << "(";
  for (size_t i = 0; i < op.numOperands(); ++i) {
    WF_ASSIGN_OR_RETURN(ElementType t, storedType(op, op.operand(i)));
    s << "const " << storageTypeName(t) << "* __restrict__ in" << i << ", ";
  }
  for (size_t i = 0; i < op.numResults(); ++i) {
    WF_ASSIGN_OR_RETURN(ElementType t, storedType(op, op.result(i)));
    s << storageTypeName(t) << "* __restrict__ out" << i << (i + 1 < op.numResults() ? ", " : ") {\n");
  }
  return s.str();
}

// Operand `i` at offset `off`, as a value of the body's argument type `to` (the spec lets a body
// take a promoted type of the input's).
std::string operandAs(const Operation& op, size_t i, const std::string& off, ElementType to) {
  const ElementType from = op.operand(i)->type().elementType();
  return convertExpr(from, to, loadExpr(from, "in" + std::to_string(i) + "[" + off + "]"));
}

// Statements adding to `offset` the input offset of element `linear` of a row-major walk over
// `dims`, whose input strides are `strides`.
std::string offsetCode(const std::string& offset, const std::string& linear, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& strides, const std::string& indent) {
  std::string code = indent + "{\n" + indent + "  long long q = " + linear + ";\n";
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 1) continue;
    code += indent + "  " + offset + " += (q % " + std::to_string(dims[d]) + ") * " + std::to_string(strides[d]) +
            "; q /= " + std::to_string(dims[d]) + ";\n";
  }
  return code + indent + "}\n";
}

// The grid-stride loop over `n` result elements, index `var`.
std::string resultLoop(const std::string& var, int64_t n) {
  return "  for (long long " + var + " = (long long)blockIdx.x * 256 + threadIdx.x; " + var + " < " +
         std::to_string(n) + "LL; " + var + " += (long long)gridDim.x * 256) {\n";
}

RegionKernelSource finish(std::string name, const RegionFunction& body, const std::string& kernel, int64_t n) {
  RegionKernelSource out;
  out.name = std::move(name);
  out.code = body.code + "\n" + kernel;
  out.n = n;
  out.threads = 256;
  out.blocks = std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 65535 * 8));
  return out;
}

// map: result element i is body(operands... at i).
Expected<RegionKernelSource> generateMap(const Operation& op) {
  const size_t n = op.numOperands();
  if (n == 0 || op.numResults() != 1) return invalidArgument(op.describe() + ": expects inputs and one result");
  WF_ASSIGN_OR_RETURN(RegionFunction body, bodyFunction(op, n, 1));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  for (size_t k = 0; k < n; ++k) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> s, staticShape(op, op.operand(k)->type()));
    if (s != shape) return invalidArgument(op.describe() + ": inputs and result have different shapes");
  }
  // The spec requires the dimensions [0, rank) in order (map is elementwise).
  std::vector<int64_t> all(shape.size());
  std::iota(all.begin(), all.end(), int64_t{0});
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, cpu::intListAttrOr(op, "dimensions", all));
  if (dims != all) return invalidArgument(op.describe() + ": 'dimensions' must be [0, rank) in order");
  const ElementType rt = op.result(0)->type().elementType();
  if (body.resultTypes[0] != rt) return invalidArgument(op.describe() + ": the body returns another type than the result's");

  const int64_t count = numElementsOf(shape);
  WF_ASSIGN_OR_RETURN(std::string src, signature(op, "wf_map"));
  src += resultLoop("i", count);
  src += "    " + std::string(computeTypeName(rt)) + " r0;\n    wf_body(";
  for (size_t k = 0; k < n; ++k) src += operandAs(op, k, "i", body.argTypes[k]) + ", ";
  src += "&r0);\n    out0[i] = " + storeExpr(rt, "r0") + ";\n  }\n}\n";
  return finish("wf_map", body, src, count);
}

// The declarations of the accumulators acc0.. from the init values in<numInputs>.. (the body's
// first arguments), and the checks that each result has the accumulator's type.
Expected<std::string> declareAccumulators(const Operation& op, const RegionFunction& body, size_t numInputs) {
  std::string code;
  for (size_t k = 0; k < numInputs; ++k) {
    const ElementType acc = body.argTypes[k];
    if (op.result(k)->type().elementType() != acc || body.resultTypes[k] != acc)
      return invalidArgument(op.describe() + ": result #" + std::to_string(k) + " has another type than the body's accumulator");
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> initShape, staticShape(op, op.operand(numInputs + k)->type()));
    if (numElementsOf(initShape) != 1) return invalidArgument(op.describe() + ": init value #" + std::to_string(k) + " is not a scalar");
    code += "    " + std::string(computeTypeName(acc)) + " acc" + std::to_string(k) + " = " +
            operandAs(op, numInputs + k, "0", acc) + ";\n";
  }
  return code;
}

// The body call acc... = body(acc..., element...), with element k given by `element(k)`.
template <typename ElementFn>
std::string foldStep(size_t numInputs, const std::string& indent, ElementFn element) {
  std::string call = indent + "wf_body(";
  for (size_t k = 0; k < numInputs; ++k) call += "acc" + std::to_string(k) + ", ";
  for (size_t k = 0; k < numInputs; ++k) call += element(k) + ", ";
  for (size_t k = 0; k < numInputs; ++k) call += "&acc" + std::to_string(k) + (k + 1 < numInputs ? ", " : ");\n");
  return call;
}

std::string storeAccumulators(const RegionFunction& body, size_t numInputs, const std::string& index) {
  std::string code;
  for (size_t k = 0; k < numInputs; ++k)
    code += "    out" + std::to_string(k) + "[" + index + "] = " + storeExpr(body.argTypes[k], "acc" + std::to_string(k)) + ";\n";
  return code;
}

// The operands' and results' shapes: n inputs of one shape and n results of another.
Status checkVariadicShapes(const Operation& op, size_t numInputs, const std::vector<int64_t>& inShape,
                           const std::vector<int64_t>& outShape) {
  for (size_t k = 0; k < numInputs; ++k) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> s, staticShape(op, op.operand(k)->type()));
    if (s != inShape) return invalidArgument(op.describe() + ": inputs have different shapes");
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> r, staticShape(op, op.result(k)->type()));
    if (r != outShape) return invalidArgument(op.describe() + ": results have different shapes");
  }
  return Status::ok();
}

// reduce: result element j folds the input elements whose kept coordinates are j's.
Expected<RegionKernelSource> generateReduce(const Operation& op) {
  const size_t n = op.numOperands() / 2;
  if (n == 0 || op.numOperands() != 2 * n || op.numResults() != n)
    return invalidArgument(op.describe() + ": expects N inputs, N init values and N results");
  WF_ASSIGN_OR_RETURN(RegionFunction body, bodyFunction(op, 2 * n, n));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_RETURN_IF_ERROR(checkVariadicShapes(op, n, inShape, outShape));
  WF_ASSIGN_OR_RETURN(ReduceGeometry g, planReduceGeometry(op, inShape));
  if (g.numOut != numElementsOf(outShape)) return invalidArgument(op.describe() + ": result shape does not match the reduction");
  std::vector<int64_t> keptDims, keptStrides, redDims, redStrides;
  for (size_t d = 0; d < inShape.size(); ++d) {
    (g.reduced[d] ? redDims : keptDims).push_back(inShape[d]);
    (g.reduced[d] ? redStrides : keptStrides).push_back(g.inStrides[d]);
  }

  WF_ASSIGN_OR_RETURN(std::string src, signature(op, "wf_reduce"));
  src += resultLoop("j", g.numOut);
  src += "    long long base = 0;\n" + offsetCode("base", "j", keptDims, keptStrides, "    ");
  WF_ASSIGN_OR_RETURN(std::string accs, declareAccumulators(op, body, n));
  src += accs;
  src += "    for (long long r = 0; r < " + std::to_string(g.numRed) + "LL; ++r) {\n";
  src += "      long long off = base;\n" + offsetCode("off", "r", redDims, redStrides, "      ");
  src += foldStep(n, "      ", [&](size_t k) { return operandAs(op, k, "off", body.argTypes[n + k]); });
  src += "    }\n" + storeAccumulators(body, n, "j") + "  }\n}\n";
  return finish("wf_reduce", body, src, g.numOut);
}

// reduce_window: result element j folds its window, row-major, over the input dilated by
// base_dilations and padded; holes and padding read the init values.
Expected<RegionKernelSource> generateReduceWindow(const Operation& op) {
  const size_t n = op.numOperands() / 2;
  if (n == 0 || op.numOperands() != 2 * n || op.numResults() != n)
    return invalidArgument(op.describe() + ": expects N inputs, N init values and N results");
  WF_ASSIGN_OR_RETURN(RegionFunction body, bodyFunction(op, 2 * n, n));
  WF_ASSIGN_OR_RETURN(WindowPlan p, planWindow(op));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_RETURN_IF_ERROR(checkVariadicShapes(op, n, inShape, outShape));

  WF_ASSIGN_OR_RETURN(std::string src, signature(op, "wf_reduce_window"));
  src += resultLoop("j", p.n);
  // The result coordinates o<d>.
  int64_t stride = 1;
  for (int d = p.rank; d-- > 0;) {
    src += "    const long long o" + std::to_string(d) + " = (j / " + std::to_string(stride) + "LL) % " +
           std::to_string(p.outDims[d]) + "LL;\n";
    stride *= p.outDims[d];
  }
  WF_ASSIGN_OR_RETURN(std::string accs, declareAccumulators(op, body, n));
  src += accs;
  // The value padding and holes hold, as the body's element argument.
  for (size_t k = 0; k < n; ++k)
    src += "    const " + std::string(computeTypeName(body.argTypes[n + k])) + " pad" + std::to_string(k) + " = " +
           operandAs(op, n + k, "0", body.argTypes[n + k]) + ";\n";
  // One loop per dim, outermost first: row-major order over the window.
  std::string indent = "    ", inside = "true", offset = "0";
  for (int d = 0; d < p.rank; ++d) {
    const std::string w = "w" + std::to_string(d), x = "x" + std::to_string(d), v = "v" + std::to_string(d);
    const std::string bd = std::to_string(p.baseDilation[d]) + "LL";
    src += indent + "for (long long " + w + " = 0; " + w + " < " + std::to_string(p.window[d]) + "LL; ++" + w + ") {\n";
    indent += "  ";
    src += indent + "const long long " + x + " = o" + std::to_string(d) + " * " + std::to_string(p.strides[d]) + "LL + " +
           w + " * " + std::to_string(p.dilation[d]) + "LL - " + std::to_string(p.padLo[d]) + "LL;\n";
    src += indent + "const bool " + v + " = " + x + " >= 0 && " +
           (p.baseDilation[d] == 1 ? x : x + " % " + bd + " == 0 && " + x + " / " + bd) + " < " +
           std::to_string(p.inDims[d]) + "LL;\n";
    inside += " && " + v;
    offset += " + (" + x + (p.baseDilation[d] == 1 ? "" : " / " + bd) + ") * " + std::to_string(p.inStrides[d]) + "LL";
  }
  src += indent + "const bool inside = " + inside + ";\n";
  src += indent + "const long long off = " + offset + ";\n";
  src += foldStep(n, indent, [&](size_t k) {
    return "(inside ? " + operandAs(op, k, "off", body.argTypes[n + k]) + " : pad" + std::to_string(k) + ")";
  });
  for (int d = p.rank; d-- > 0;) {
    indent.resize(indent.size() - 2);
    src += indent + "}\n";
  }
  src += storeAccumulators(body, n, "j") + "  }\n}\n";
  return finish("wf_reduce_window", body, src, p.n);
}

// How many of a scan's operands are inputs (the rest are inits): operandSegmentSizes if the
// producer printed it, otherwise the leading operands of the first one's rank (an init has the
// rank of a slice, one less). The caller checks the body's types against this split, which is
// then the one the interpreter picks too.
size_t scanInputCount(const Operation& op) {
  if (const Attribute* seg = op.attr("operandSegmentSizes"))
    if (auto sizes = seg->asIntList(); sizes && !sizes->empty()) return static_cast<size_t>((*sizes)[0]);
  size_t n = 0;
  while (n < op.numOperands() && op.operand(n)->type().rank() == op.operand(0)->type().rank()) ++n;
  return n;
}

// chlo.scan: one thread per line (an index of every dim but the scan dim) walks the scan dim in
// the interpreter's order, from the end with is_reverse, with the carries in registers:
//   outputs..., carries... = body(inputs... at t, carries...)
// writing the outputs at t and, after the last step, the final carries (the last results). The
// body acts on slices (an input without the scan dim, carries of that shape); when it is
// elementwise, element i of its results reads only element i of its arguments, so a line runs
// the body as a scalar function of its own elements, in the interpreter's order of ops. A scan
// with few lines (a 1-D cumsum) runs on few threads: correct, not fast.
Expected<RegionKernelSource> generateScan(const Operation& op) {
  WF_ASSIGN_OR_RETURN(int64_t dim, cpu::intAttr(op, "dimension"));
  const bool reverse = cpu::boolAttr(op, "is_reverse", false);
  if (op.numOperands() == 0) return invalidArgument(op.describe() + ": needs at least one input");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.operand(0)->type()));
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    return invalidArgument(op.describe() + ": dimension " + std::to_string(dim) + " out of range");
  std::vector<int64_t> slice = shape;
  slice.erase(slice.begin() + dim);
  const size_t numInputs = scanInputCount(op);
  const size_t numInits = op.numOperands() - numInputs;
  if (numInputs == 0 || numInits > op.numResults())
    return unsupportedOnCuda(op, "cannot tell the scan's inputs from its inits");
  const size_t numOutputs = op.numResults() - numInits;
  WF_ASSIGN_OR_RETURN(RegionFunction body, bodyFunction(op, op.numOperands(), op.numResults(), &slice));

  // Every input and output has the inputs' shape; every init, carry and body value the slice's
  // (a carry of another shape, shared by the lines, cannot live in one thread's registers).
  const Block& block = op.region(0).front();
  auto expectShape = [&](const Type& type, const std::vector<int64_t>& want, const std::string& what) -> Status {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> s, staticShape(op, type));
    if (s != want) return unsupportedOnCuda(op, what + " of shape " + cpu::shapeString(s) + ", not " + cpu::shapeString(want));
    return Status::ok();
  };
  for (size_t k = 0; k < op.numOperands(); ++k) {
    WF_RETURN_IF_ERROR(expectShape(op.operand(k)->type(), k < numInputs ? shape : slice, "operand #" + std::to_string(k)));
    WF_RETURN_IF_ERROR(expectShape(block.argument(k)->type(), slice, "body argument #" + std::to_string(k)));
    if (body.argTypes[k] != op.operand(k)->type().elementType())
      return invalidArgument(op.describe() + ": body argument #" + std::to_string(k) + " has another type than its operand");
  }
  for (size_t k = 0; k < op.numResults(); ++k) {
    WF_RETURN_IF_ERROR(expectShape(op.result(k)->type(), k < numOutputs ? shape : slice, "result #" + std::to_string(k)));
    WF_RETURN_IF_ERROR(expectShape(block.terminator()->operand(k)->type(), slice, "body result #" + std::to_string(k)));
    const ElementType t = op.result(k)->type().elementType();
    if (body.resultTypes[k] != t || (k >= numOutputs && body.argTypes[numInputs + k - numOutputs] != t))
      return invalidArgument(op.describe() + ": result #" + std::to_string(k) + " has another type than the body's");
  }

  // Row-major, the inputs are [outer, length, inner] and the slices [outer, inner]: line j is
  // slice element j, and its element at step t is at input offset base + t * inner.
  const int64_t length = shape[static_cast<size_t>(dim)];
  const int64_t inner = numElementsOf(std::vector<int64_t>(shape.begin() + dim + 1, shape.end()));
  const int64_t lines = numElementsOf(slice);
  const std::string innerLL = std::to_string(inner) + "LL";
  WF_ASSIGN_OR_RETURN(std::string src, signature(op, "wf_scan"));
  src += resultLoop("j", lines);
  src += "    const long long base = (j / " + innerLL + ") * " + std::to_string(length * inner) + "LL + j % " + innerLL + ";\n";
  for (size_t k = 0; k < numInits; ++k) {
    const ElementType t = body.argTypes[numInputs + k];
    src += "    " + std::string(computeTypeName(t)) + " c" + std::to_string(k) + " = " + operandAs(op, numInputs + k, "j", t) + ";\n";
  }
  src += "    for (long long s = 0; s < " + std::to_string(length) + "LL; ++s) {\n";
  src += "      const long long off = base + " + (reverse ? "(" + std::to_string(length - 1) + "LL - s)" : std::string("s")) +
         " * " + innerLL + ";\n";
  for (size_t k = 0; k < numOutputs; ++k)
    src += "      " + std::string(computeTypeName(body.resultTypes[k])) + " y" + std::to_string(k) + ";\n";
  // The carries go in by value and come back through their addresses.
  std::vector<std::string> args;
  for (size_t k = 0; k < numInputs; ++k) args.push_back(operandAs(op, k, "off", body.argTypes[k]));
  for (size_t k = 0; k < numInits; ++k) args.push_back("c" + std::to_string(k));
  for (size_t k = 0; k < numOutputs; ++k) args.push_back("&y" + std::to_string(k));
  for (size_t k = 0; k < numInits; ++k) args.push_back("&c" + std::to_string(k));
  src += "      wf_body(";
  for (size_t a = 0; a < args.size(); ++a) src += (a ? ", " : "") + args[a];
  src += ");\n";
  for (size_t k = 0; k < numOutputs; ++k)
    src += "      out" + std::to_string(k) + "[off] = " + storeExpr(body.resultTypes[k], "y" + std::to_string(k)) + ";\n";
  src += "    }\n";
  for (size_t k = 0; k < numInits; ++k)
    src += "    out" + std::to_string(numOutputs + k) + "[j] = " +
           storeExpr(body.resultTypes[numOutputs + k], "c" + std::to_string(k)) + ";\n";
  src += "  }\n}\n";
  return finish("wf_scan", body, src, lines);
}

// A compiled generated kernel: its parameters are the operands' addresses, then the results'.
class GeneratedKernel final : public OpKernel {
 public:
  GeneratedKernel(cudaKernel_t kernel, const RegionKernelSource& source)
      : kernel_(kernel), n_(source.n), threads_(source.threads), blocks_(source.blocks) {}
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (n_ == 0) return Status::ok();
    if (in.size() + out.size() > kMaxParams) return internalError("generated kernel with too many parameters");
    // Fixed arrays: a launch must not allocate.
    void* pointers[kMaxParams];
    void* args[kMaxParams];
    size_t count = 0;
    for (void* p : in) pointers[count++] = p;
    for (void* p : out) pointers[count++] = p;
    for (size_t i = 0; i < count; ++i) args[i] = &pointers[i];
    WF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks_)),
                                   dim3(static_cast<unsigned>(threads_)), args, 0, ctx.stream));
    return Status::ok();
  }

 private:
  cudaKernel_t kernel_;
  int64_t n_;
  int threads_;
  int64_t blocks_;
};

}  // namespace

Expected<RegionKernelSource> generateRegionKernel(const Operation& op) {
  switch (op.code()) {
    case OpCode::Map: return generateMap(op);
    case OpCode::Reduce: return generateReduce(op);
    case OpCode::ReduceWindow: return generateReduceWindow(op);
    case OpCode::ChloScan: return generateScan(op);
    default: return unsupportedOnCuda(op, "no generated kernel for this op");
  }
}

Expected<std::unique_ptr<OpKernel>> lowerRegionKernel(const Operation& op, LowerContext& ctx) {
  WF_ASSIGN_OR_RETURN(RegionKernelSource source, generateRegionKernel(op));
  WF_ASSIGN_OR_RETURN(std::vector<cudaKernel_t> kernels,
                      compileRuntimeKernels(ctx.device, fusedKernelPrelude(), {{source.name, source.code}}, ctx.options));
  return std::unique_ptr<OpKernel>(std::make_unique<GeneratedKernel>(kernels.at(0), source));
}

void registerRegionLowerings(CudaKernelRegistry& registry) {
  registry.add(OpCode::Map, lowerRegionKernel);
  registry.add(OpCode::ChloScan, lowerRegionKernel);
}

}  // namespace wf::cuda
