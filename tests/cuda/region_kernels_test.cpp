// Kernels generated around a region body (region_kernels.h) against the CPU interpreter: map
// with one to three operands and multi-op bodies on every element type, variadic reduce and
// reduce_window with bodies reduce.cu's kernels do not take, base dilation on both the fast and
// the generated reduce_window. The NVRTC tests need no GPU: every generated source (and those of
// the StableHLO interpreter tests' map, reduce and reduce_window ops) must compile.
#include <fstream>
#include <sstream>

#include "region_kernel_util.h"

#ifndef WF_SHARED_DIR
#define WF_SHARED_DIR ""
#endif

namespace wf::cudatest {
namespace {

std::string scalar(ElementType t) { return Type::tensor({}, t).toString(); }

std::string ints(const std::vector<int64_t>& v) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r;
}

// Region body lines in generic form, on rank-0 values of one element type.
struct Body {
  explicit Body(ElementType type) : t(type) {}
  ElementType t;
  std::string text;
  int next = 0;
  std::string op(const std::string& name, const std::vector<std::string>& args, ElementType result) {
    const std::string v = "%v" + std::to_string(next++);
    std::string operands, types;
    for (size_t i = 0; i < args.size(); ++i) {
      operands += (i ? ", " : "") + args[i];
      types += (i ? ", " : "") + scalar(name == "select" && i == 0 ? ElementType::kI1 : t);
    }
    text += "    " + v + " = \"stablehlo." + name + "\"(" + operands + ") : (" + types + ") -> " + scalar(result) + "\n";
    return v;
  }
  std::string op(const std::string& name, const std::vector<std::string>& args) { return op(name, args, t); }
  std::string compare(const std::string& dir, const std::string& a, const std::string& b) {
    const std::string v = "%v" + std::to_string(next++);
    text += "    " + v + " = \"stablehlo.compare\"(" + a + ", " + b + ") {comparison_direction = #stablehlo<comparison_direction " +
            dir + ">} : (" + scalar(t) + ", " + scalar(t) + ") -> " + scalar(ElementType::kI1) + "\n";
    return v;
  }
  std::string constant(const std::string& value) {
    const std::string v = "%v" + std::to_string(next++);
    text += "    " + v + " = stablehlo.constant dense<" + value + "> : " + scalar(t) + "\n";
    return v;
  }
  std::string ret(const std::vector<std::string>& values, const std::vector<ElementType>& types) {
    std::string vs, ts;
    for (size_t i = 0; i < values.size(); ++i) {
      vs += (i ? ", " : "") + values[i];
      ts += (i ? ", " : "") + scalar(types[i]);
    }
    return text + "    \"stablehlo.return\"(" + vs + ") : (" + ts + ") -> ()\n";
  }
};

std::string blockHeader(const std::vector<ElementType>& argTypes) {
  std::string h = "  ^bb0(";
  for (size_t i = 0; i < argTypes.size(); ++i) h += (i ? ", " : "") + std::string("%a") + std::to_string(i) + ": " + scalar(argTypes[i]);
  return h + "):\n";
}

// A function @main(%x0.., %i0..) returning the op's results, around `op` (the op's text up to its
// region, the region, then the attributes and types).
std::string program(const std::vector<Type>& args, const std::vector<Type>& results, const std::string& opName,
                    const std::string& region, const std::string& attrs) {
  std::string params, operands, argTypes, resultTypes, names;
  for (size_t i = 0; i < args.size(); ++i) {
    params += (i ? ", " : "") + std::string("%p") + std::to_string(i) + ": " + args[i].toString();
    operands += (i ? ", " : "") + std::string("%p") + std::to_string(i);
    argTypes += (i ? ", " : "") + args[i].toString();
  }
  for (size_t i = 0; i < results.size(); ++i) {
    resultTypes += (i ? ", " : "") + results[i].toString();
    names += (i ? ", " : "") + std::string("%r#") + std::to_string(i);
  }
  return "func.func @main(" + params + ") -> (" + resultTypes + ") {\n  %r:" + std::to_string(results.size()) + " = \"" +
         opName + "\"(" + operands + ") ({\n" + region + "  }) {" + attrs + "} : (" + argTypes + ") -> (" + resultTypes +
         ")\n  func.return " + names + " : " + resultTypes + "\n}\n";
}

// --- map ----------------------------------------------------------------------------------------

// A map of `arity` operands of type t with a multi-op body (integers wrap, floats round after
// every op); `result` is the element type it returns.
std::string mapProgram(ElementType t, int arity, const std::vector<int64_t>& shape, ElementType* result) {
  Body b{t};
  std::string r;
  *result = t;
  const bool isBool = t == ElementType::kI1;
  const std::string one = isBool ? "true" : isFloat(t) ? "1.5" : "3";
  if (arity == 1) {
    // x * x - 3 (bool: !x ^ true), with a constant in the body.
    if (isBool) r = b.op("xor", {b.op("not", {"%a0"}), b.constant(one)});
    else r = b.op("subtract", {b.op("multiply", {"%a0", "%a0"}), b.constant(one)});
  } else if (arity == 2) {
    // x > y ? x - y : y * x (bool: x > y ? x : !y), a compare and a select of results.
    const std::string p = b.compare("GT", "%a0", "%a1");
    if (isBool) r = b.op("select", {p, "%a0", b.op("not", {"%a1"})});
    else r = b.op("select", {p, b.op("subtract", {"%a0", "%a1"}), b.op("multiply", {"%a1", "%a0"})});
  } else {
    // (x + y) * z compared with z (an i1 result; bool: (x & y) | z).
    if (isBool) {
      r = b.op("or", {b.op("and", {"%a0", "%a1"}), "%a2"});
    } else {
      r = b.compare("LT", b.op("multiply", {b.op("add", {"%a0", "%a1"}), "%a2"}), "%a2");
      *result = ElementType::kI1;
    }
  }
  std::vector<ElementType> argTypes(static_cast<size_t>(arity), t);
  std::vector<int64_t> all(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) all[d] = static_cast<int64_t>(d);
  return program(std::vector<Type>(static_cast<size_t>(arity), Type::tensor(shape, t)), {Type::tensor(shape, *result)},
                 "stablehlo.map", blockHeader(argTypes) + b.ret({r}, {*result}),
                 "dimensions = array<i64" + (all.empty() ? "" : ": " + ints(all)) + ">");
}

// Runs `text` on the GPU with the host fallback allowed, compares with the CPU and expects that
// nothing ran on the host.
void expectOnGpu(const std::string& text, const std::vector<Literal>& args, Tolerance tol) {
  CompileOptions options;
  options.allowCpuFallback = true;
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  Expected<RunResult> got = runCuda(m, args, options);
  ASSERT_TRUE(got) << got.status().toString() << "\n" << text;
  EXPECT_TRUE(got->report.hostFallbackOps.empty()) << got->report.hostFallbackOps.front() << "\n" << text;
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  ASSERT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], tol), "") << "result #" << i << " of\n" << text;
}

// Inputs: small values (sums and products of a few stay exact in every type).
Literal smallRandom(const Type& type) { return randomLiteral(type, -3, 3); }

class CudaMapBodies : public testing::TestWithParam<std::tuple<ElementType, int>> {};

TEST_P(CudaMapBodies, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [t, arity] = GetParam();
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{5, 67}, {1000}, {}, {2, 0, 3}}) {
    ElementType result;
    const std::string text = mapProgram(t, arity, shape, &result);
    std::vector<Literal> args;
    for (int k = 0; k < arity; ++k) args.push_back(smallRandom(Type::tensor(shape, t)));
    expectOnGpu(text, args, defaultTolerance(result));
  }
}

INSTANTIATE_TEST_SUITE_P(Arity, CudaMapBodies, testing::Combine(testing::ValuesIn(gpuTypes()), testing::Values(1, 2, 3)),
                         [](const auto& info) {
                           return typeName(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param));
                         });

// --- reduce -------------------------------------------------------------------------------------

std::vector<int64_t> keptShape(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) out.push_back(shape[d]);
  return out;
}

// Two operands folded at once: (sum of x, max of y) (bool: (any x, all y)); the accumulators
// cross (the second result also adds the first accumulator's sign), so it is no argmax and no
// pair of one-op reductions.
std::string pairBody(ElementType t) {
  Body b{t};
  std::vector<std::string> r;
  if (t == ElementType::kI1) {
    r = {b.op("or", {"%a0", "%a2"}), b.op("and", {b.op("xor", {"%a1", "%a3"}), "%a0"})};
  } else {
    r = {b.op("add", {"%a0", "%a2"}), b.op("select", {b.compare("GE", "%a0", "%a2"), b.op("maximum", {"%a1", "%a3"}), "%a3"})};
  }
  return blockHeader({t, t, t, t}) + b.ret(r, {t, t});
}

// acc * x + 1: not associative, so only the interpreter's order gives its result (bool: acc & x | !acc).
std::string affineBody(ElementType t) {
  Body b{t};
  std::string r;
  if (t == ElementType::kI1) r = b.op("or", {b.op("and", {"%a0", "%a1"}), b.op("not", {"%a0"})});
  else r = b.op("add", {b.op("multiply", {"%a0", "%a1"}), b.constant(isFloat(t) ? "1.0" : "1")});
  return blockHeader({t, t}) + b.ret({r}, {t});
}

std::string reduceProgram(const std::string& region, ElementType t, int operands, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& dims) {
  std::vector<Type> args(static_cast<size_t>(operands), Type::tensor(shape, t));
  for (int k = 0; k < operands; ++k) args.push_back(Type::tensor({}, t));
  std::vector<Type> results(static_cast<size_t>(operands), Type::tensor(keptShape(shape, dims), t));
  return program(args, results, "stablehlo.reduce", region, "dimensions = array<i64" + (dims.empty() ? "" : ": " + ints(dims)) + ">");
}

struct ReduceLayout {
  std::vector<int64_t> shape, dims;
};
std::vector<ReduceLayout> reduceLayouts() {
  return {{{7, 40}, {1}}, {{40, 7}, {0}}, {{3, 11, 5}, {0, 2}}, {{4, 6, 10}, {0, 1, 2}},
          {{3, 5}, {}},   {{2, 0, 3}, {1}}, {{0, 4}, {1}},    {{2, 3, 4, 5, 2, 3, 2, 2, 2}, {1, 4, 8}}};
}

// Values for the affine body: |x| < 1 keeps acc * x + 1 bounded for floats.
Literal affineInput(const Type& type) {
  return isFloat(type.elementType()) ? randomLiteral(type, -0.9, 0.9) : randomLiteral(type, 1, 0);
}

class CudaVariadicReduce : public testing::TestWithParam<ElementType> {};

TEST_P(CudaVariadicReduce, PairBodyMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  for (const ReduceLayout& l : reduceLayouts()) {
    const Type in = Type::tensor(l.shape, t), s = Type::tensor({}, t);
    SCOPED_TRACE(in.toString());
    // The same order of adds as the interpreter: floats agree to the last bit.
    expectOnGpu(reduceProgram(pairBody(t), t, 2, l.shape, l.dims), {smallRandom(in), smallRandom(in), smallRandom(s), smallRandom(s)},
                Tolerance{});
  }
}

TEST_P(CudaVariadicReduce, AffineBodyMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  for (const ReduceLayout& l : reduceLayouts()) {
    const Type in = Type::tensor(l.shape, t), s = Type::tensor({}, t);
    SCOPED_TRACE(in.toString());
    expectOnGpu(reduceProgram(affineBody(t), t, 1, l.shape, l.dims), {affineInput(in), affineInput(s)}, Tolerance{});
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaVariadicReduce, testing::ValuesIn(gpuTypes()),
                         [](const auto& info) { return typeName(info.param); });

// Three operands of different types (f32 values, si32 counts, i1 flags): a body mixing them.
TEST(CudaVariadicReduce, OperandsOfDifferentTypes) {
  WF_REQUIRE_GPU();
  const ElementType f = ElementType::kF32, i = ElementType::kSI32, p = ElementType::kI1;
  Body b{f};
  const std::string sum = b.op("add", {"%a0", "%a3"});
  Body bi{i};
  bi.next = b.next;
  const std::string count = bi.op("add", {"%a1", "%a4"});
  Body bp{p};
  bp.next = bi.next;
  const std::string flag = bp.op("xor", {"%a2", "%a5"});
  const std::string region = blockHeader({f, i, p, f, i, p}) + b.text + bi.text + bp.ret({sum, count, flag}, {f, i, p});
  const std::vector<int64_t> shape = {6, 50};
  const std::string text = program({Type::tensor(shape, f), Type::tensor(shape, i), Type::tensor(shape, p),
                                    Type::tensor({}, f), Type::tensor({}, i), Type::tensor({}, p)},
                                   {Type::tensor({6}, f), Type::tensor({6}, i), Type::tensor({6}, p)}, "stablehlo.reduce",
                                   region, "dimensions = array<i64: 1>");
  expectOnGpu(text,
              {randomLiteral(Type::tensor(shape, f)), randomLiteral(Type::tensor(shape, i), 1, 0),
               randomLiteral(Type::tensor(shape, p)), randomLiteral(Type::tensor({}, f)), randomLiteral(Type::tensor({}, i)),
               randomLiteral(Type::tensor({}, p))},
              Tolerance{});
}

// --- reduce_window ------------------------------------------------------------------------------

struct Window {
  std::vector<int64_t> in, window, strides, baseDilation, dilation, padding;
};

std::vector<int64_t> windowOutShape(const Window& w) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < w.in.size(); ++d) {
    const int64_t dilatedIn = w.in[d] == 0 ? 0 : (w.in[d] - 1) * w.baseDilation[d] + 1;
    const int64_t padded = w.padding[2 * d] + dilatedIn + w.padding[2 * d + 1];
    const int64_t dilatedWindow = (w.window[d] - 1) * w.dilation[d] + 1;
    out.push_back(padded < dilatedWindow ? 0 : (padded - dilatedWindow) / w.strides[d] + 1);
  }
  return out;
}

std::string windowProgram(const std::string& region, ElementType t, int operands, const Window& w) {
  std::vector<Type> args(static_cast<size_t>(operands), Type::tensor(w.in, t));
  for (int k = 0; k < operands; ++k) args.push_back(Type::tensor({}, t));
  std::vector<Type> results(static_cast<size_t>(operands), Type::tensor(windowOutShape(w), t));
  std::string pad = "dense<[";
  for (size_t d = 0; d < w.in.size(); ++d)
    pad += (d ? ", [" : "[") + std::to_string(w.padding[2 * d]) + ", " + std::to_string(w.padding[2 * d + 1]) + "]";
  pad += "]> : tensor<" + std::to_string(w.in.size()) + "x2xi64>";
  return program(args, results, "stablehlo.reduce_window", region,
                 "window_dimensions = array<i64: " + ints(w.window) + ">, window_strides = array<i64: " + ints(w.strides) +
                     ">, base_dilations = array<i64: " + ints(w.baseDilation) + ">, window_dilations = array<i64: " +
                     ints(w.dilation) + ">, padding = " + pad);
}

std::vector<Window> windows() {
  return {
      // Base dilation, window dilation, asymmetric padding and strides together.
      {{5, 7}, {2, 3}, {2, 1}, {2, 1}, {1, 2}, {1, 0, 2, 1}},
      // The interpreter test's example: holes and padding only in some windows.
      {{3, 2}, {2, 1}, {4, 1}, {2, 1}, {3, 1}, {2, 1, 0, 0}},
      // A 3x3 pool with stride 2 and padding 1 over NCHW, dilated input (a transposed pool).
      {{2, 3, 6, 5}, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 1}},
      // Negative padding crops; a window larger than the input reads only padding at the edges.
      {{9}, {4}, {3}, {1}, {1}, {-2, 5}},
  };
}

class CudaRegionReduceWindow : public testing::TestWithParam<ElementType> {};

TEST_P(CudaRegionReduceWindow, PairBodyMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  for (const Window& w : windows()) {
    const Type in = Type::tensor(w.in, t), s = Type::tensor({}, t);
    SCOPED_TRACE(in.toString());
    expectOnGpu(windowProgram(pairBody(t), t, 2, w), {smallRandom(in), smallRandom(in), smallRandom(s), smallRandom(s)},
                Tolerance{});
  }
}

TEST_P(CudaRegionReduceWindow, AffineBodyMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  for (const Window& w : windows()) {
    const Type in = Type::tensor(w.in, t), s = Type::tensor({}, t);
    SCOPED_TRACE(in.toString());
    expectOnGpu(windowProgram(affineBody(t), t, 1, w), {affineInput(in), affineInput(s)}, Tolerance{});
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaRegionReduceWindow,
                         testing::Values(ElementType::kI1, ElementType::kSI8, ElementType::kUI16, ElementType::kSI32,
                                         ElementType::kUI64, ElementType::kF16, ElementType::kBF16, ElementType::kF32,
                                         ElementType::kF64),
                         [](const auto& info) { return typeName(info.param); });

// reduce.cu's own kernel with base dilation: a sum and a max (one op, one operand).
class CudaFastReduceWindowBaseDilation : public testing::TestWithParam<std::tuple<ElementType, std::string>> {};

TEST_P(CudaFastReduceWindowBaseDilation, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [t, op] = GetParam();
  Body b{t};
  const std::string region = blockHeader({t, t}) + b.ret({b.op(op, {"%a0", "%a1"})}, {t});
  for (const Window& w : windows()) {
    const Type in = Type::tensor(w.in, t);
    SCOPED_TRACE(in.toString());
    // The fast kernel accumulates narrow floats in f32: a sum may differ by a rounding.
    Tolerance tol = defaultTolerance(t);
    if (op == "add" && (t == ElementType::kBF16 || t == ElementType::kF16)) tol = Tolerance{0, 0, 2e-2};
    expectOnGpu(windowProgram(region, t, 1, w), {smallRandom(in), smallRandom(Type::tensor({}, t))}, tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Bodies, CudaFastReduceWindowBaseDilation,
                         testing::Combine(testing::Values(ElementType::kF32, ElementType::kBF16, ElementType::kSI32,
                                                          ElementType::kUI8, ElementType::kF64),
                                          testing::Values(std::string("add"), std::string("maximum"))),
                         [](const auto& info) {
                           return typeName(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

// --- ops the generated kernels do not take ------------------------------------------------------

// An integer division in a map body: no generated code, so the op fails compile naming the body
// op, or runs on the host with the fallback allowed.
TEST(CudaRegionKernels, BodyOpWithoutCodeIsUnimplemented) {
  WF_REQUIRE_GPU();
  const ElementType t = ElementType::kSI32;
  Body b{t};
  const std::string region = blockHeader({t, t}) + b.ret({b.op("divide", {"%a0", "%a1"})}, {t});
  const std::vector<int64_t> shape = {4, 5};
  const std::string text = program({Type::tensor(shape, t), Type::tensor(shape, t)}, {Type::tensor(shape, t)},
                                   "stablehlo.map", region, "dimensions = array<i64: 0, 1>");
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented) << exe.status().toString();
  EXPECT_NE(exe.status().message().find("stablehlo.divide"), std::string::npos) << exe.status().message();
  CompileOptions options;
  options.allowCpuFallback = true;
  expectMatchesCpu(text, {randomLiteral(Type::tensor(shape, t), -50, 50), randomLiteral(Type::tensor(shape, t), 1, 9)},
                   Tolerance{}, options);
}

// --- generated sources through NVRTC (no GPU needed) --------------------------------------------

void expectCompiles(const std::string& text) {
  expectRegionKernelCompiles(text, {OpCode::Map, OpCode::Reduce, OpCode::ReduceWindow});
}

TEST(RegionKernelSource, EveryGeneratedKernelCompiles) {
  for (ElementType t : gpuTypes()) {
    SCOPED_TRACE(typeName(t));
    ElementType result;
    for (int arity : {1, 2, 3}) expectCompiles(mapProgram(t, arity, {5, 7}, &result));
    expectCompiles(reduceProgram(pairBody(t), t, 2, {3, 11, 5}, {0, 2}));
    expectCompiles(reduceProgram(affineBody(t), t, 1, {3, 5}, {}));
    expectCompiles(windowProgram(pairBody(t), t, 2, windows()[0]));
    expectCompiles(windowProgram(affineBody(t), t, 1, windows()[2]));
  }
}

TEST(RegionKernelSource, TheRegionFunctionHasTheBodysTypes) {
  const ElementType t = ElementType::kBF16;
  Module m = parse(reduceProgram(pairBody(t), t, 2, {4, 3}, {1}));
  ASSERT_TRUE(mainOf(m));
  const Operation& reduce = *FuncOp(mainOf(m)).body().operations().front();
  Expected<cuda::RegionFunction> f = cuda::generateRegionFunction(reduce.region(0), "body");
  ASSERT_TRUE(f) << f.status().toString();
  EXPECT_EQ(f->argTypes, std::vector<ElementType>(4, t));
  EXPECT_EQ(f->resultTypes, std::vector<ElementType>(2, t));
  // Narrow floats compute as float, rounded after the add.
  EXPECT_NE(f->code.find("__device__ __forceinline__ void body(float a0, float a1, float a2, float a3, float* r0, float* r1)"),
            std::string::npos)
      << f->code;
  EXPECT_NE(f->code.find("wf::em::bf16Round(wf::em::Add::apply(a0, a2))"), std::string::npos) << f->code;
}

// The StableHLO interpreter tests' map, reduce, reduce_window and chlo.scan ops: each one whose
// types the generated kernels take compiles.
TEST(RegionKernelSource, InterpreterTestOpsCompile) {
  int compiled = 0;
  for (const char* file : {"map.mlir", "reduce.mlir", "reduce_window.mlir", "chlo/scan.mlir"}) {
    const std::string path = interpretDir() + "/" + file;
    std::ifstream in(path);
    if (!in) GTEST_SKIP() << "no StableHLO interpreter tests at " << path;
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();  // the chunks point into it
    for (const SourceChunk& chunk : splitInputFile(text)) {
      ParseOptions options;
      options.fileName = file;
      options.firstLine = chunk.firstLine;
      Expected<Module> module = parseModule(chunk.text, options);
      if (!module || !verifyModule(*module).isOk()) continue;
      for (FuncOp fn : module->functions())
        for (const auto& op : fn.body().operations()) {
          if (op->code() != OpCode::Map && op->code() != OpCode::Reduce && op->code() != OpCode::ReduceWindow &&
              op->code() != OpCode::ChloScan)
            continue;
          Expected<cuda::RegionKernelSource> source = cuda::generateRegionKernel(*op);
          if (!source) {
            EXPECT_EQ(source.status().code(), StatusCode::kUnimplemented) << source.status().toString();
            continue;
          }
          Expected<std::string> cubin = cuda::compileToCubin(cuda::fusedKernelPrelude() + source->code, "sm_90");
          EXPECT_TRUE(cubin) << op->describe() << ": " << cubin.status().toString() << "\n" << source->code;
          ++compiled;
        }
    }
  }
  EXPECT_GE(compiled, 8);
}

}  // namespace
}  // namespace wf::cudatest
