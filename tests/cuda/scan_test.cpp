// chlo.scan on the GPU (region_kernels.cpp) against the CPU interpreter: cumsum, cumprod, an
// affine recurrence with constants in the body, and cummax with argmax (two inputs, two carries)
// along each dim of rank-3 inputs, forward and reverse, on floats and integers. Bodies that are
// not elementwise on the slices stay on the host. The NVRTC tests need no GPU: the generated
// sources (and those of the StableHLO interpreter test's scans) must compile.

#include "on_gpu_util.h"
#include "region_kernel_util.h"

#ifndef WF_SHARED_DIR
#define WF_SHARED_DIR ""
#endif

namespace wf::cudatest {
namespace {

std::vector<int64_t> without(std::vector<int64_t> shape, int64_t dim) {
  shape.erase(shape.begin() + dim);
  return shape;
}

// Body lines in generic form on slices of `slice` shape.
struct ScanBody {
  std::vector<int64_t> slice;
  std::string text;
  int next = 0;
  std::string type(ElementType t) const { return tensorType(slice, t); }
  std::string op(const std::string& name, const std::vector<std::string>& args, const std::vector<ElementType>& argTypes,
                 ElementType result, const std::string& attrs = "") {
    const std::string v = "%v" + std::to_string(next++);
    std::string operands, types;
    for (size_t i = 0; i < args.size(); ++i) {
      operands += (i ? ", " : "") + args[i];
      types += (i ? ", " : "") + type(argTypes[i]);
    }
    text += "    " + v + " = \"stablehlo." + name + "\"(" + operands + ")" + (attrs.empty() ? "" : " {" + attrs + "}") +
            " : (" + types + ") -> " + type(result) + "\n";
    return v;
  }
  std::string binary(const std::string& name, const std::string& a, const std::string& b, ElementType t) {
    return op(name, {a, b}, {t, t}, t);
  }
  std::string compare(const std::string& dir, const std::string& a, const std::string& b, ElementType t) {
    return op("compare", {a, b}, {t, t}, ElementType::kI1, "comparison_direction = #stablehlo<comparison_direction " + dir + ">");
  }
  std::string select(const std::string& p, const std::string& a, const std::string& b, ElementType t) {
    return op("select", {p, a, b}, {ElementType::kI1, t, t}, t);
  }
  // A rank-0 constant broadcast to the slice.
  std::string broadcastConstant(const std::string& value, ElementType t) {
    const std::string c = "%v" + std::to_string(next++);
    text += "    " + c + " = stablehlo.constant dense<" + value + "> : " + tensorType({}, t) + "\n";
    const std::string v = "%v" + std::to_string(next++);
    text += "    " + v + " = \"stablehlo.broadcast_in_dim\"(" + c + ") {broadcast_dimensions = array<i64>} : (" +
            tensorType({}, t) + ") -> " + type(t) + "\n";
    return v;
  }
  // A splat constant of the slice's shape.
  std::string splat(const std::string& value, ElementType t) {
    const std::string v = "%v" + std::to_string(next++);
    text += "    " + v + " = stablehlo.constant dense<" + value + "> : " + type(t) + "\n";
    return v;
  }
};

// A scan over inputs of `shape` along `dim`: `inputs` and `carries` are the element types of the
// inputs and of the inits (carries), `outputs` those of the per-position outputs; `body` writes
// the body from the argument names (%a0.. inputs, then carries) and returns the returned values.
template <typename BodyFn>
std::string scanProgram(const std::vector<int64_t>& shape, int64_t dim, bool reverse, const std::vector<ElementType>& inputs,
                        const std::vector<ElementType>& carries, const std::vector<ElementType>& outputs, BodyFn body) {
  ScanBody b;
  b.slice = without(shape, dim);
  std::vector<std::string> params, argTypes, operands, blockArgs;
  std::vector<std::string> resultTypes, bodyResultTypes;
  size_t p = 0;
  for (ElementType t : inputs) argTypes.push_back(tensorType(shape, t));
  for (ElementType t : carries) argTypes.push_back(b.type(t));
  for (const std::string& at : argTypes) {
    params.push_back("%p" + std::to_string(p) + ": " + at);
    operands.push_back("%p" + std::to_string(p));
    ++p;
  }
  for (size_t i = 0; i < inputs.size() + carries.size(); ++i)
    blockArgs.push_back("%a" + std::to_string(i) + ": " + b.type(i < inputs.size() ? inputs[i] : carries[i - inputs.size()]));
  for (ElementType t : outputs) {
    resultTypes.push_back(tensorType(shape, t));
    bodyResultTypes.push_back(b.type(t));
  }
  for (ElementType t : carries) {
    resultTypes.push_back(b.type(t));
    bodyResultTypes.push_back(b.type(t));
  }
  const std::vector<std::string> returned = body(b);
  auto join = [](const std::vector<std::string>& v, size_t from, size_t to) {
    std::string r;
    for (size_t i = from; i < to; ++i) r += (i > from ? ", " : "") + v[i];
    return r;
  };
  const size_t n = resultTypes.size();
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("%r#" + std::to_string(i));
  return "func.func @main(" + join(params, 0, params.size()) + ") -> (" + join(resultTypes, 0, n) + ") {\n  %r:" +
         std::to_string(n) + " = chlo.scan(" + join(operands, 0, inputs.size()) + ") inits(" +
         join(operands, inputs.size(), operands.size()) + ") dimension=" + std::to_string(dim) +
         (reverse ? " attributes {is_reverse = true}" : "") + " {\n  ^bb0(" + join(blockArgs, 0, blockArgs.size()) + "):\n" +
         b.text + "    stablehlo.return " + join(returned, 0, returned.size()) + " : " +
         join(bodyResultTypes, 0, bodyResultTypes.size()) + "\n  } : (" + join(argTypes, 0, argTypes.size()) + ") -> (" +
         join(resultTypes, 0, n) + ")\n  func.return " + join(names, 0, n) + " : " + join(resultTypes, 0, n) + "\n}\n";
}

// out = carry = carry + x (or * x).
std::string cumulative(const std::string& op, ElementType t, const std::vector<int64_t>& shape, int64_t dim, bool reverse) {
  return scanProgram(shape, dim, reverse, {t}, {t}, {t}, [&](ScanBody& b) {
    const std::string v = b.binary(op, "%a1", "%a0", t);
    return std::vector<std::string>{v, v};
  });
}

// carry = carry * x + 1 (the 1 a broadcast rank-0 constant), out = carry - x + 2 (a splat of the
// slice's shape): not associative, so only the interpreter's order gives its results.
std::string affine(ElementType t, const std::vector<int64_t>& shape, int64_t dim, bool reverse) {
  return scanProgram(shape, dim, reverse, {t}, {t}, {t}, [&](ScanBody& b) {
    const std::string carry = b.binary("add", b.binary("multiply", "%a1", "%a0", t), b.broadcastConstant("1", t), t);
    const std::string out = b.binary("add", b.binary("subtract", carry, "%a0", t), b.splat("2", t), t);
    return std::vector<std::string>{out, carry};
  });
}

// cummax with argmax (the interpreter test's body): inputs value (t) and index (si32), carries
// the running max and its index; ties keep the higher index.
std::string cummax(ElementType t, const std::vector<int64_t>& shape, int64_t dim, bool reverse) {
  const ElementType i = ElementType::kSI32;
  return scanProgram(shape, dim, reverse, {t, i}, {t, i}, {t, i}, [&](ScanBody& b) {
    const std::string val = b.binary("maximum", "%a2", "%a0", t);
    const std::string gt = b.compare("GT", "%a2", "%a0", t);
    const std::string eq = b.compare("EQ", "%a2", "%a0", t);
    const std::string maxIdx = b.binary("maximum", "%a3", "%a1", i);
    const std::string idx = b.select(gt, "%a3", b.select(eq, maxIdx, "%a1", i), i);
    return std::vector<std::string>{val, idx, val, idx};
  });
}

std::vector<ElementType> scanTypes() {
  return {ElementType::kF16, ElementType::kBF16, ElementType::kF32, ElementType::kF64,
          ElementType::kSI32, ElementType::kSI64, ElementType::kUI8};
}

const std::vector<int64_t> kShape = {5, 6, 7};

// Values whose products and affine recurrences stay bounded for floats; integers wrap alike.
Literal input(const Type& type) {
  return isFloat(type.elementType()) ? randomLiteral(type, -1.2, 1.2) : randomLiteral(type, -3, 3);
}

class CudaScan : public testing::TestWithParam<ElementType> {};

TEST_P(CudaScan, CumulativeSumAndProductMatchCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  for (const std::string op : {"add", "multiply"})
    for (int64_t dim : {0, 1, 2})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(op + " dim " + std::to_string(dim) + (reverse ? " reverse" : ""));
        expectOnGpuMatchesCpu(cumulative(op, t, kShape, dim, reverse),
                              {input(Type::tensor(kShape, t)), input(Type::tensor(without(kShape, dim), t))}, Tolerance{});
      }
}

TEST_P(CudaScan, AffineWithConstantsMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  for (int64_t dim : {0, 1, 2})
    for (bool reverse : {false, true}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + (reverse ? " reverse" : ""));
      expectOnGpuMatchesCpu(affine(t, kShape, dim, reverse),
                            {input(Type::tensor(kShape, t)), input(Type::tensor(without(kShape, dim), t))}, Tolerance{});
    }
}

TEST_P(CudaScan, CummaxWithArgmaxMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  const ElementType i = ElementType::kSI32;
  for (int64_t dim : {0, 1, 2})
    for (bool reverse : {false, true}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + (reverse ? " reverse" : ""));
      const std::vector<int64_t> slice = without(kShape, dim);
      // Few distinct values, so that ties happen.
      expectOnGpuMatchesCpu(cummax(t, kShape, dim, reverse),
                            {randomLiteral(Type::tensor(kShape, t), 0, 3), randomLiteral(Type::tensor(kShape, i), 0, 9),
                             randomLiteral(Type::tensor(slice, t), 0, 3), randomLiteral(Type::tensor(slice, i), 0, 9)},
                            Tolerance{});
    }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaScan, testing::ValuesIn(scanTypes()), [](const auto& info) { return typeName(info.param); });

// Rank 1 (one line, the slices rank 0), a long scan dim, and an empty scan dim (the carries are
// the inits).
TEST(CudaScan, OtherShapesMatchCpu) {
  WF_REQUIRE_GPU();
  const ElementType t = ElementType::kF32;
  for (const auto& [shape, dim] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
           {{1000}, 0}, {{3, 2000}, 1}, {{3, 0, 2}, 1}, {{4, 1, 5}, 1}, {{0, 4}, 1}}) {
    SCOPED_TRACE(tensorType(shape, t) + " dim " + std::to_string(dim));
    expectOnGpuMatchesCpu(cumulative("add", t, shape, dim, true),
                          {input(Type::tensor(shape, t)), input(Type::tensor(without(shape, dim), t))}, Tolerance{});
  }
}

// A body that is not elementwise on the slices (a reshape round trip): no generated kernel, so the
// scan fails compile naming the op, or runs on the host with the fallback allowed.
std::string reshapeBodyScan() {
  const ElementType t = ElementType::kF32;
  return scanProgram(kShape, 0, false, {t}, {t}, {t}, [&](ScanBody& b) {
    const std::string flat = "%v" + std::to_string(b.next++);
    b.text += "    " + flat + " = \"stablehlo.reshape\"(%a0) : (" + b.type(t) + ") -> " + tensorType({42}, t) + "\n";
    const std::string back = "%v" + std::to_string(b.next++);
    b.text += "    " + back + " = \"stablehlo.reshape\"(" + flat + ") : (" + tensorType({42}, t) + ") -> " + b.type(t) + "\n";
    const std::string v = b.binary("add", "%a1", back, t);
    return std::vector<std::string>{v, v};
  });
}

TEST(CudaScan, BodyThatIsNotElementwiseRunsOnTheHost) {
  WF_REQUIRE_GPU();
  const std::string text = reshapeBodyScan();
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented) << exe.status().toString();
  EXPECT_NE(exe.status().message().find("stablehlo.reshape"), std::string::npos) << exe.status().message();
  CompileOptions options;
  options.allowCpuFallback = true;
  const ElementType t = ElementType::kF32;
  expectMatchesCpu(text, {input(Type::tensor(kShape, t)), input(Type::tensor(without(kShape, 0), t))}, Tolerance{}, options);
}

// --- generated sources through NVRTC (no GPU needed) --------------------------------------------

const Operation* scanOf(const Module& m) {
  for (const auto& op : FuncOp(mainOf(m)).body().operations())
    if (op->code() == OpCode::ChloScan) return op.get();
  return nullptr;
}

void expectCompiles(const std::string& text) { expectRegionKernelCompiles(text, {OpCode::ChloScan}); }

TEST(ScanKernelSource, EveryGeneratedKernelCompiles) {
  for (ElementType t : scanTypes()) {
    SCOPED_TRACE(typeName(t));
    expectCompiles(cumulative("add", t, kShape, 1, false));
    expectCompiles(cumulative("multiply", t, {9}, 0, true));
    expectCompiles(affine(t, kShape, 2, true));
    expectCompiles(cummax(t, kShape, 0, false));
  }
}

// One line per slice element: the kernel's n is the slice's size, not the input's.
TEST(ScanKernelSource, OneThreadPerLine) {
  Module m = parse(cummax(ElementType::kF32, kShape, 1, true));
  ASSERT_TRUE(mainOf(m));
  Expected<cuda::RegionKernelSource> source = cuda::generateRegionKernel(*scanOf(m));
  ASSERT_TRUE(source) << source.status().toString();
  EXPECT_EQ(source->n, 5 * 7);
}

TEST(ScanKernelSource, BodyThatIsNotElementwiseIsUnimplemented) {
  Module m = parse(reshapeBodyScan());
  ASSERT_TRUE(mainOf(m));
  Expected<cuda::RegionKernelSource> source = cuda::generateRegionKernel(*scanOf(m));
  ASSERT_FALSE(source);
  EXPECT_EQ(source.status().code(), StatusCode::kUnimplemented) << source.status().toString();
  EXPECT_NE(source.status().message().find("stablehlo.reshape"), std::string::npos) << source.status().message();
}

}  // namespace
}  // namespace wf::cudatest
