// Helpers for the GPU tests: parse a StableHLO program, run it on the CPU interpreter and on the
// CUDA backend with the same fresh random inputs, and compare. Without a GPU, WF_REQUIRE_GPU()
// skips the test (reported as skipped, never as passed).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/device.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf::cudatest {

#define WF_REQUIRE_GPU()                                                              \
  do {                                                                                \
    if (::wf::cuda::deviceCount() == 0) GTEST_SKIP() << ::wf::cuda::noDeviceReason(); \
  } while (0)

#ifndef WF_SHARED_DIR
#define WF_SHARED_DIR ""
#endif

// The StableHLO interpreter tests: $WF_INTERPRET_DIR (the GPU machine gets a copy), else
// ../shared/stablehlo/interpret.
inline std::string interpretDir() {
  if (const char* env = std::getenv("WF_INTERPRET_DIR")) return env;
  return std::string(WF_SHARED_DIR) + "/stablehlo/interpret";
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 gen(std::random_device{}());
  return gen;
}

// The element types the CUDA kernels compute on.
inline const std::vector<ElementType>& gpuTypes() {
  static const std::vector<ElementType> types = {
      ElementType::kI1,   ElementType::kSI8,  ElementType::kSI16, ElementType::kSI32, ElementType::kSI64,
      ElementType::kUI8,  ElementType::kUI16, ElementType::kUI32, ElementType::kUI64, ElementType::kF16,
      ElementType::kBF16, ElementType::kF32,  ElementType::kF64};
  return types;
}
inline std::vector<ElementType> floatTypes() {
  return {ElementType::kF16, ElementType::kBF16, ElementType::kF32, ElementType::kF64};
}
inline std::vector<ElementType> intTypes() {
  return {ElementType::kSI8, ElementType::kSI16, ElementType::kSI32, ElementType::kSI64,
          ElementType::kUI8, ElementType::kUI16, ElementType::kUI32, ElementType::kUI64};
}

// Float operand and result types of the matrix-product tests, with the relative L2 error each
// allows against the CPU (which sums in another order). f32: small sums can cancel; the dot tests
// check the f32 precision itself.
struct DotTypeCase {
  ElementType in, out;
  double relL2;
};
inline const std::vector<DotTypeCase>& floatDotTypes() {
  static const std::vector<DotTypeCase> all = {
      {ElementType::kF32, ElementType::kF32, 1e-5},  {ElementType::kF64, ElementType::kF64, 1e-13},
      {ElementType::kF16, ElementType::kF16, 2e-3},  {ElementType::kBF16, ElementType::kBF16, 1e-2},
      {ElementType::kF16, ElementType::kF32, 2e-3},  {ElementType::kBF16, ElementType::kF32, 1e-2},
  };
  return all;
}

inline std::string typeName(ElementType t) { return std::string(elementTypeName(t)); }

// "tensor<3x5xf32>"
inline std::string tensorType(const std::vector<int64_t>& shape, ElementType t) {
  return Type::tensor(shape, t).toString();
}

// Random values: floats uniform in [lo, hi]; integers uniform in [lo, hi] clamped to the type's
// range (the full range when lo > hi); i1 fair coin.
inline Literal randomLiteral(const Type& type, double lo = -4, double hi = 4) {
  Literal l = Literal::zeros(type);
  auto& g = rng();
  const ElementType t = type.elementType();
  for (int64_t i = 0; i < l.numElements(); ++i) {
    if (t == ElementType::kI1) {
      l.setInt(i, static_cast<int64_t>(g() & 1));
    } else if (isFloat(t)) {
      l.setDouble(i, std::uniform_real_distribution<double>(lo, hi)(g));
    } else if (lo > hi) {
      l.setBits(i, g());
    } else {
      double a = lo, b = hi;
      if (isUnsignedInteger(t)) a = std::max(a, 0.0);
      l.setInt(i, std::uniform_int_distribution<int64_t>(static_cast<int64_t>(a), static_cast<int64_t>(b))(g));
    }
  }
  return l;
}

inline Module parse(const std::string& text) {
  ParseOptions options;
  options.fileName = "cuda_test.mlir";
  Expected<Module> m = parseModule(text, options);
  EXPECT_TRUE(m) << m.status().toString() << "\n" << text;
  if (!m) return Module();
  Status v = verifyModule(*m);
  EXPECT_TRUE(v.isOk()) << v.toString() << "\n" << text;
  return std::move(*m);
}

inline const Operation* mainOf(const Module& m) { return m.lookupFunction("main"); }
inline const Block& mainBody(const Module& m) { return FuncOp(mainOf(m)).body(); }

inline std::vector<Literal> cloneAll(const std::vector<Literal>& v) {
  std::vector<Literal> out;
  for (const Literal& l : v) out.push_back(l.clone());
  return out;
}

inline Expected<std::vector<Literal>> runCpu(const Module& m, std::vector<Literal> args) {
  if (!mainOf(m)) return invalidArgument("no @main");
  EvalContext ctx;
  ctx.module = &m;
  return Interpreter::callFunction(*mainOf(m), std::move(args), ctx);
}

inline Backend& cudaBackend() {
  static std::unique_ptr<Backend> backend = [] {
    auto b = cuda::createCudaBackend(DeviceSpec{"cuda", 0});
    EXPECT_TRUE(b) << b.status().toString();
    return b ? std::move(*b) : nullptr;
  }();
  return *backend;
}

inline Expected<RunResult> runCuda(const Module& m, std::span<const Literal> args, CompileOptions options = {}) {
  if (!mainOf(m)) return invalidArgument("no @main");
  WF_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, cudaBackend().compile(m, *mainOf(m), options));
  return exe->run(args);
}

struct Tolerance {
  double rtol = 0;  // per element for elementwise programs
  double atol = 0;
  double relL2 = -1;  // if >= 0: compare floats by ||a - b|| / ||b|| instead
};

// The default tolerance for results of type t: exact for integers, a few ulps for floats
// (device math functions differ from the host's by an ulp or two).
inline Tolerance defaultTolerance(ElementType t) {
  switch (t) {
    case ElementType::kBF16: return {1.6e-2, 1e-6};
    case ElementType::kF16: return {2e-3, 1e-6};
    case ElementType::kF32: return {2e-6, 1e-30};
    case ElementType::kF64: return {1e-14, 1e-300};
    default: return {0, 0};
  }
}

// Compares a CUDA result with the CPU reference; returns "" if they agree.
inline std::string compareLiterals(const Literal& got, const Literal& want, Tolerance tol) {
  if (got.type() != want.type()) return "type " + got.type().toString() + " vs " + want.type().toString();
  const ElementType t = want.elementType();
  if (!isFloat(t)) {
    for (int64_t i = 0; i < want.numElements(); ++i)
      if (got.getBits(i) != want.getBits(i))
        return "element " + std::to_string(i) + ": got " + std::to_string(got.getInt(i)) + ", want " +
               std::to_string(want.getInt(i));
    return "";
  }
  if (tol.relL2 >= 0) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < want.numElements(); ++i) {
      const double a = got.getDouble(i), b = want.getDouble(i);
      if (std::isnan(a) != std::isnan(b)) return "NaN mismatch at " + std::to_string(i);
      if (std::isnan(b)) continue;
      num += (a - b) * (a - b);
      den += b * b;
    }
    const double err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    if (err > tol.relL2) return "relative L2 error " + std::to_string(err) + " over " + std::to_string(tol.relL2);
    return "";
  }
  for (int64_t i = 0; i < want.numElements(); ++i) {
    const double a = got.getDouble(i), b = want.getDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::isinf(b) && a == b) continue;
    if (!(std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b))) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %lld: got %.17g, want %.17g", static_cast<long long>(i), a, b);
      return buf;
    }
  }
  return "";
}

// Runs `text`'s @main on both backends with `args` and expects equal results.
inline void expectMatchesCpu(const std::string& text, const std::vector<Literal>& args, Tolerance tol,
                             CompileOptions options = {}) {
  Module m = parse(text);
  if (!mainOf(m)) return;
  std::vector<Literal> copies;
  for (const Literal& a : args) copies.push_back(a.clone());
  Expected<std::vector<Literal>> want = runCpu(m, std::move(copies));
  ASSERT_TRUE(want) << want.status().toString() << "\n" << text;
  Expected<RunResult> got = runCuda(m, args, options);
  ASSERT_TRUE(got) << got.status().toString() << "\n" << text;
  ASSERT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    std::string diff = compareLiterals(got->outputs[i], (*want)[i], tol);
    EXPECT_EQ(diff, "") << "result #" << i << " of\n" << text;
  }
}

inline void expectMatchesCpu(const std::string& text, const std::vector<Literal>& args) {
  Module m = parse(text);
  if (!mainOf(m)) return;
  const Type rt = FuncOp(mainOf(m)).functionType().results.at(0);
  expectMatchesCpu(text, args, defaultTolerance(rt.elementType()));
}

// A one-op program in generic form: %r = "op"(%a0, ...) {attrs} : (types) -> result.
inline std::string oneOp(const std::string& opName, const std::vector<Type>& args, const Type& result,
                         const std::string& attrs = "") {
  std::string params, operands, types;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) {
      params += ", ";
      operands += ", ";
      types += ", ";
    }
    params += "%a" + std::to_string(i) + ": " + args[i].toString();
    operands += "%a" + std::to_string(i);
    types += args[i].toString();
  }
  const std::string rt = result.toString();
  return "func.func @main(" + params + ") -> " + rt + " {\n  %r = \"" + opName + "\"(" + operands + ")" +
         (attrs.empty() ? "" : " {" + attrs + "}") + " : (" + types + ") -> " + rt + "\n  func.return %r : " + rt +
         "\n}\n";
}

}  // namespace wf::cudatest
