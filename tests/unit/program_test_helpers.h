// Parsing and running programs written as MLIR text in tests (the autodiff and attention tests).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf::programtest {

// Parses `text` (errors name `fileName`) and verifies the module.
inline Expected<Module> parseAndVerify(const std::string& text, const std::string& fileName = "test.mlir") {
  ParseOptions options;
  options.fileName = fileName;
  auto m = parseModule(text, options);
  if (!m) return m.status();
  WF_RETURN_IF_ERROR(verifyModule(*m));
  return std::move(*m);
}

// Runs @name of `m` on copies of `args` in the interpreter.
inline Expected<std::vector<Literal>> run(const Module& m, const std::string& name, const std::vector<Literal>& args) {
  EvalContext ctx;
  ctx.module = &m;
  const Operation* f = m.lookupFunction(name);
  if (!f) return notFound("no function @" + name);
  std::vector<Literal> copies;
  for (const Literal& a : args) copies.push_back(a.clone());
  return Interpreter::callFunction(*f, std::move(copies), ctx);
}

// @main of `m`, or null.
inline const Operation* mainOf(const Module& m) { return m.lookupFunction("main"); }

// Random arguments for @main of `m`: floats and integers uniform in [-3, 3] (integers truncated),
// booleans from `booleanAt` (the element's index) when given, else alternating.
inline std::vector<Literal> randomArguments(const Module& m, uint32_t seed,
                                            const std::function<bool(int64_t)>& booleanAt = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<Literal> args;
  const Operation* f = m.lookupFunction("main");
  if (!f) return args;
  for (const auto& arg : FuncOp(f).body().arguments()) {
    Literal l = Literal::zeros(arg->type());
    const bool boolean = arg->type().elementType() == ElementType::kI1;
    for (int64_t i = 0; i < l.numElements(); ++i)
      l.setDouble(i, boolean ? (booleanAt ? booleanAt(i) : i % 2 == 0) : u(rng));
    args.push_back(std::move(l));
  }
  return args;
}

// Whether @main of `rewritten` computes what @main of `original` does, bit for bit, on `args`:
// an empty string, or what differs.
inline std::string sameResults(const Module& original, const Module& rewritten, const std::vector<Literal>& args) {
  auto want = run(original, "main", args);
  auto got = run(rewritten, "main", args);
  if (!want) return "original: " + want.status().toString();
  if (!got) return "rewritten: " + got.status().toString();
  if (want->size() != got->size()) return "result counts differ";
  for (size_t r = 0; r < want->size(); ++r) {
    if ((*want)[r].type() != (*got)[r].type()) return "result " + std::to_string(r) + ": types differ";
    for (int64_t i = 0; i < (*want)[r].numElements(); ++i)
      if ((*want)[r].getBits(i) != (*got)[r].getBits(i))
        return "result " + std::to_string(r) + " element " + std::to_string(i) + ": " +
               std::to_string((*want)[r].getDouble(i)) + " before, " + std::to_string((*got)[r].getDouble(i)) + " after";
  }
  return "";
}

// Attention over q, k, v [B, H, S, D] (bf16) as torch.export writes it under bf16 autocast: the
// scores widened to f32 and scaled by 0.5, a boolean mask %mask of `maskType` ([B or 1, 1, S, S])
// broadcast to the scores and applied by select with -inf, the softmax (row max subtracted), the
// probabilities narrowed back, times v. `maskOps` are body lines defining %mask; with
// `maskArgument`, %mask is @main's last argument instead.
inline std::string selectMaskedAttention(int64_t b, int64_t h, int64_t s, int64_t d, const std::string& maskType,
                                         const std::string& maskOps, bool maskArgument = false) {
  auto t = [](std::vector<int64_t> shape, const char* et) {
    std::string r = "tensor<";
    for (int64_t n : shape) r += std::to_string(n) + "x";
    return r + et + ">";
  };
  const std::string qT = t({b, h, s, d}, "bf16"), sT = t({b, h, s, s}, "bf16"), sF = t({b, h, s, s}, "f32"),
                    sI = t({b, h, s, s}, "i1"), rowF = t({b, h, s}, "f32");
  std::string p = "func.func @main(%q: " + qT + ", %k: " + qT + ", %v: " + qT +
                  (maskArgument ? ", %mask: " + maskType : std::string()) + ") -> " + qT + " {\n";
  p += maskOps;
  p += "  %s0 = \"stablehlo.dot_general\"(%q, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = "
       "[0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} "
       ": (" + qT + ", " + qT + ") -> " + sT + "\n";
  p += "  %s = stablehlo.convert %s0 : (" + sT + ") -> " + sF + "\n";
  p += "  %c = stablehlo.constant dense<0.5> : " + sF + "\n";
  p += "  %ss = stablehlo.multiply %s, %c : " + sF + "\n";
  p += "  %mb = stablehlo.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (" + maskType + ") -> " + sI + "\n";
  p += "  %ninf = stablehlo.constant dense<0xFF800000> : " + sF + "\n";
  p += "  %x = stablehlo.select %mb, %ss, %ninf : " + sI + ", " + sF + "\n";
  p += "  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>\n";
  p += "  %m = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [3] : (" + sF +
       ", tensor<f32>) -> " + rowF + "\n";
  p += "  %mxb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (" + rowF + ") -> " + sF + "\n";
  p += "  %sh = stablehlo.subtract %x, %mxb : " + sF + "\n";
  p += "  %e = stablehlo.exponential %sh : " + sF + "\n";
  p += "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n";
  p += "  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : (" + sF +
       ", tensor<f32>) -> " + rowF + "\n";
  p += "  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (" + rowF + ") -> " + sF + "\n";
  p += "  %p0 = stablehlo.divide %e, %sb : " + sF + "\n";
  p += "  %pn = stablehlo.convert %p0 : (" + sF + ") -> " + sT + "\n";
  p += "  %o = \"stablehlo.dot_general\"(%pn, %v) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = "
       "[0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} "
       ": (" + sT + ", " + qT + ") -> " + qT + "\n";
  p += "  return %o : " + qT + "\n}\n";
  return p;
}

}  // namespace wf::programtest
