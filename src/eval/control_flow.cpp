// Control flow of the host evaluator: while, if, case, func.call, composite,
// optimization_barrier, chlo.scan and interpreter.run_parallel. Regions run through
// Interpreter::runRegion, so their bodies may use values defined around the op.
#include <cstring>
#include <optional>

#include "eval/collectives.h"
#include "eval/interpreter.h"

namespace wf {
namespace {

using Results = Expected<std::vector<Literal>>;

// The i1 scalar that a while condition returns.
Expected<bool> predicateOf(const Operation& op, const std::vector<Literal>& values, const char* what) {
  if (values.size() != 1 || !values[0].type().isTensor() || values[0].elementType() != ElementType::kI1 ||
      values[0].numElements() != 1)
    return invalidArgument(op.describe() + ": " + what + " must produce one tensor<i1>");
  return values[0].getInt(0) != 0;
}

Results whileKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (op.numRegions() != 2) return invalidArgument(op.describe() + ": expects cond and body regions");
  std::vector<Literal> values(operands.begin(), operands.end());
  while (true) {
    WF_ASSIGN_OR_RETURN(std::vector<Literal> cond, Interpreter::runRegion(op.region(0), values, ctx));
    WF_ASSIGN_OR_RETURN(bool keepGoing, predicateOf(op, cond, "the cond region"));
    if (!keepGoing) break;
    WF_ASSIGN_OR_RETURN(std::vector<Literal> next, Interpreter::runRegion(op.region(1), values, ctx));
    if (next.size() != values.size())
      return invalidArgument(op.describe() + ": the body returned " + std::to_string(next.size()) +
                             " values for " + std::to_string(values.size()) + " loop-carried values");
    values = std::move(next);
  }
  return values;
}

Results ifKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (op.numRegions() != 2) return invalidArgument(op.describe() + ": expects true and false branches");
  if (operands.size() != 1 || operands[0].elementType() != ElementType::kI1 || operands[0].numElements() != 1)
    return invalidArgument(op.describe() + ": the predicate must be a tensor<i1>");
  const Region& branch = op.region(operands[0].getInt(0) != 0 ? 0 : 1);
  return Interpreter::runRegion(branch, {}, ctx);
}

Results caseKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (op.numRegions() == 0) return invalidArgument(op.describe() + ": needs at least one branch");
  if (operands.size() != 1 || !isInteger(operands[0].elementType()) || operands[0].numElements() != 1)
    return invalidArgument(op.describe() + ": the index must be an integer scalar");
  const auto numBranches = static_cast<int64_t>(op.numRegions());
  int64_t index = operands[0].getInt(0);
  // An index out of range selects the last branch (the default).
  if (index < 0 || index >= numBranches) index = numBranches - 1;
  return Interpreter::runRegion(op.region(static_cast<size_t>(index)), {}, ctx);
}

Expected<const Operation*> lookupSymbol(const Operation& op, const EvalContext& ctx, std::string_view attrName) {
  const Attribute* a = op.attr(attrName);
  if (!a || a->kind() != Attribute::Kind::kSymbolRef)
    return invalidArgument(op.describe() + ": missing symbol attribute '" + std::string(attrName) + "'");
  if (!ctx.module) return internalError(op.describe() + ": no module to look up @" + a->stringValue());
  const Operation* fn = ctx.module->lookupFunction(a->stringValue());
  if (!fn) return notFound(op.describe() + ": function @" + a->stringValue() + " not found");
  return fn;
}

Results callKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(const Operation* fn, lookupSymbol(op, ctx, "callee"));
  return Interpreter::callFunction(*fn, std::vector<Literal>(operands.begin(), operands.end()), ctx);
}

Results compositeKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(const Operation* fn, lookupSymbol(op, ctx, "decomposition"));
  return Interpreter::callFunction(*fn, std::vector<Literal>(operands.begin(), operands.end()), ctx);
}

Results passThrough(const Operation&, std::span<const Literal> operands, EvalContext&) {
  return std::vector<Literal>(operands.begin(), operands.end());
}

// --- chlo.scan -------------------------------------------------------------------------------

// `l` seen as [outer, dim, inner] with inner in bytes.
struct DimView {
  int64_t outer = 1, size = 0, innerBytes = 0;
};

DimView viewAt(const std::vector<int64_t>& shape, ElementType e, int64_t dim) {
  DimView v;
  for (int64_t i = 0; i < dim; ++i) v.outer *= shape[static_cast<size_t>(i)];
  v.size = shape[static_cast<size_t>(dim)];
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(dim) + 1; i < shape.size(); ++i) inner *= shape[i];
  v.innerBytes = inner * storageBytes(e);
  return v;
}

// Slice `index` of `l` along `dim`, with that dimension removed.
Literal sliceAt(const Literal& l, int64_t dim, int64_t index) {
  std::vector<int64_t> shape = l.shape();
  shape.erase(shape.begin() + dim);
  Literal out = Literal::zeros(Type::tensor(shape, l.elementType()));
  const DimView v = viewAt(l.shape(), l.elementType(), dim);
  for (int64_t o = 0; o < v.outer && v.innerBytes > 0; ++o)
    std::memcpy(out.data() + o * v.innerBytes, l.data() + (o * v.size + index) * v.innerBytes,
                static_cast<size_t>(v.innerBytes));
  return out;
}

// Writes `slice` (shape of `into` without `dim`) at `index` along `dim`.
void writeAt(Literal& into, int64_t dim, int64_t index, const Literal& slice) {
  const DimView v = viewAt(into.shape(), into.elementType(), dim);
  for (int64_t o = 0; o < v.outer && v.innerBytes > 0; ++o)
    std::memcpy(into.data() + (o * v.size + index) * v.innerBytes, slice.data() + o * v.innerBytes,
                static_cast<size_t>(v.innerBytes));
}

// How many of the scan's operands are inputs (the rest are inits): from operandSegmentSizes if
// the producer printed it, otherwise the split under which the body's arguments type-check.
Expected<size_t> scanInputCount(const Operation& op, int64_t dim) {
  if (const Attribute* seg = op.attr("operandSegmentSizes")) {
    if (auto sizes = seg->asIntList(); sizes && !sizes->empty()) return static_cast<size_t>((*sizes)[0]);
  }
  const Block& body = op.region(0).front();
  const size_t numOperands = op.numOperands();
  if (body.numArguments() != numOperands)
    return invalidArgument(op.describe() + ": the body takes " + std::to_string(body.numArguments()) +
                           " arguments for " + std::to_string(numOperands) + " operands");
  for (size_t numInputs = numOperands; numInputs-- > 0;) {
    const size_t numInits = numOperands - numInputs;
    if (numInits > op.numResults()) continue;
    bool fits = true;
    for (size_t i = 0; i < numOperands && fits; ++i) {
      Type expected = op.operand(i)->type();
      if (i < numInputs) {
        if (!expected.isTensor() || dim >= expected.rank()) {
          fits = false;
          break;
        }
        std::vector<int64_t> shape = expected.shape();
        shape.erase(shape.begin() + dim);
        expected = expected.withShape(shape);
      }
      fits = body.argument(i)->type() == expected;
    }
    if (fits) return numInputs;
  }
  return invalidArgument(op.describe() + ": cannot tell the scan's inputs from its inits");
}

Results scanKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (op.numRegions() != 1 || op.region(0).empty()) return invalidArgument(op.describe() + ": needs a body");
  const Attribute* dimAttr = op.attr("dimension");
  std::optional<int64_t> dimOpt = dimAttr ? dimAttr->asInt() : std::nullopt;
  if (!dimOpt) return invalidArgument(op.describe() + ": missing 'dimension'");
  const int64_t dim = *dimOpt;
  const Attribute* reverseAttr = op.attr("is_reverse");
  const bool reverse = reverseAttr && reverseAttr->boolValue();

  WF_ASSIGN_OR_RETURN(size_t numInputs, scanInputCount(op, dim));
  const size_t numInits = operands.size() - numInputs;
  if (op.numResults() < numInits) return invalidArgument(op.describe() + ": fewer results than inits");
  const size_t numOutputs = op.numResults() - numInits;
  if (numInputs == 0) return invalidArgument(op.describe() + ": needs at least one input");
  for (size_t i = 0; i < numInputs; ++i)
    if (dim < 0 || dim >= static_cast<int64_t>(operands[i].shape().size()) ||
        operands[i].shape()[static_cast<size_t>(dim)] != operands[0].shape()[static_cast<size_t>(dim)])
      return invalidArgument(op.describe() + ": inputs must share dimension " + std::to_string(dim));
  const int64_t length = operands[0].shape()[static_cast<size_t>(dim)];

  std::vector<Literal> carries(operands.begin() + static_cast<std::ptrdiff_t>(numInputs), operands.end());
  std::vector<Literal> outputs(numOutputs);
  for (int64_t step = 0; step < length; ++step) {
    const int64_t index = reverse ? length - 1 - step : step;
    std::vector<Literal> args;
    for (size_t i = 0; i < numInputs; ++i) args.push_back(sliceAt(operands[i], dim, index));
    for (const Literal& c : carries) args.push_back(c);
    WF_ASSIGN_OR_RETURN(std::vector<Literal> r, Interpreter::runRegion(op.region(0), args, ctx));
    if (r.size() != numOutputs + numInits)
      return invalidArgument(op.describe() + ": the body returned " + std::to_string(r.size()) + " values, expected " +
                             std::to_string(numOutputs + numInits));
    for (size_t j = 0; j < numOutputs; ++j) {
      if (step == 0) {
        std::vector<int64_t> shape = r[j].shape();
        shape.insert(shape.begin() + dim, length);
        outputs[j] = Literal::zeros(Type::tensor(shape, r[j].elementType()));
      }
      writeAt(outputs[j], dim, index, r[j]);
    }
    carries.assign(r.begin() + static_cast<std::ptrdiff_t>(numOutputs), r.end());
  }
  if (length == 0)
    for (size_t j = 0; j < numOutputs; ++j) outputs[j] = Literal::zeros(op.result(j)->type());
  std::vector<Literal> results = std::move(outputs);
  for (Literal& c : carries) results.push_back(std::move(c));
  return results;
}

// --- interpreter.run_parallel ----------------------------------------------------------------

Expected<const Operation*> functionNamed(const Operation& op, const EvalContext& ctx, const Attribute& ref) {
  if (ref.kind() != Attribute::Kind::kSymbolRef)
    return invalidArgument(op.describe() + ": expected a function symbol, got another attribute");
  const Operation* fn = ctx.module->lookupFunction(ref.stringValue());
  if (!fn) return notFound(op.describe() + ": function @" + ref.stringValue() + " not found");
  return fn;
}

Results runParallelKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (!ctx.module) return internalError(op.describe() + ": no module");
  const Attribute* programs = op.attr("programs");
  if (!programs || programs->kind() != Attribute::Kind::kArray || programs->elements().empty())
    return invalidArgument(op.describe() + ": 'programs' must be a non-empty array of arrays of functions");
  ProcessGrid grid;
  grid.numReplicas = static_cast<int64_t>(programs->elements().size());
  grid.numPartitions = -1;
  for (const Attribute& row : programs->elements()) {
    if (row.kind() != Attribute::Kind::kArray || row.elements().empty())
      return invalidArgument(op.describe() + ": each row of 'programs' must be a non-empty array of functions");
    if (grid.numPartitions >= 0 && static_cast<int64_t>(row.elements().size()) != grid.numPartitions)
      return invalidArgument(op.describe() + ": the rows of 'programs' differ in length");
    grid.numPartitions = static_cast<int64_t>(row.elements().size());
    for (const Attribute& ref : row.elements()) {
      WF_ASSIGN_OR_RETURN(const Operation* fn, functionNamed(op, ctx, ref));
      grid.functions.push_back(fn);
    }
  }
  if (const Attribute* infeed = op.attr("infeed")) {
    if (infeed->kind() != Attribute::Kind::kArray)
      return invalidArgument(op.describe() + ": 'infeed' must be an array of functions");
    for (const Attribute& ref : infeed->elements()) {
      WF_ASSIGN_OR_RETURN(const Operation* fn, functionNamed(op, ctx, ref));
      grid.infeed.push_back(fn);
    }
  }
  // Operands go to the processes in row-major order, as many as each function takes.
  size_t next = 0;
  for (const Operation* fn : grid.functions) {
    const size_t n = FuncOp(fn).body().numArguments();
    if (next + n > operands.size())
      return invalidArgument(op.describe() + ": " + std::to_string(operands.size()) +
                             " operands are too few for the programs' arguments");
    grid.args.emplace_back(operands.begin() + static_cast<std::ptrdiff_t>(next),
                           operands.begin() + static_cast<std::ptrdiff_t>(next + n));
    next += n;
  }
  if (next != operands.size())
    return invalidArgument(op.describe() + ": " + std::to_string(operands.size()) + " operands, but the programs take " +
                           std::to_string(next));
  auto perProcess = ctx.gridRunner ? ctx.gridRunner->run(grid, *ctx.module, ctx.checks, ctx.callDepth + 1)
                                   : runProcessGrid(grid, *ctx.module, ctx.checks, ctx.callDepth + 1);
  if (!perProcess) return perProcess.status();
  std::vector<Literal> results;
  for (std::vector<Literal>& r : *perProcess)
    for (Literal& l : r) results.push_back(std::move(l));
  return results;
}

}  // namespace

void registerControlFlowKernels(KernelRegistry& registry) {
  registry.add(OpCode::While, whileKernel);
  registry.add(OpCode::If, ifKernel);
  registry.add(OpCode::Case, caseKernel);
  registry.add(OpCode::FuncCall, callKernel);
  registry.add(OpCode::Composite, compositeKernel);
  registry.add(OpCode::OptimizationBarrier, passThrough);
  registry.add(OpCode::ChloScan, scanKernel);
  registry.add(OpCode::InterpreterRunParallel, runParallelKernel);
}

}  // namespace wf
