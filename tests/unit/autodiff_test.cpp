// Reverse-mode autodiff (src/autodiff): every VJP rule is checked against central finite
// differences in float64 on random inputs (never zero), the way jax.test_util.check_grads does.
// Each program returns `op(...) * %w` with a random weight %w as its last argument, so the
// cotangent reaching the op is not uniform and a transposed or misplaced gradient shows. The
// gradient function is printed and parsed back before it runs, so what is checked is the text
// the pass emits.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "eval/interpreter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"
#include "program_test_helpers.h"

namespace wf {
namespace {

Expected<Module> parseAndVerify(const std::string& text) { return programtest::parseAndVerify(text, "test.mlir"); }
using programtest::run;

double sumOf(const Literal& l) {
  double s = 0;
  for (int64_t i = 0; i < l.numElements(); ++i) s += l.getDouble(i);
  return s;
}

struct GradCase {
  std::string name;
  std::string text;
  double lo = 0.5, hi = 1.5;  // |input| range; never zero
  bool randomSign = false;
  double eps = 1e-6;
  double tol = 1e-6;  // |analytic - numeric| <= tol * (1 + |numeric|)
  std::vector<int> wrt = {};  // empty: every float argument
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

std::vector<Literal> randomInputs(const Operation& fn, const GradCase& c, std::mt19937& rng) {
  std::uniform_real_distribution<double> mag(c.lo, c.hi);
  std::bernoulli_distribution coin(0.5);
  std::vector<Literal> args;
  for (const auto& arg : FuncOp(&fn).body().arguments()) {
    Literal l = Literal::zeros(arg->type());
    for (int64_t i = 0; i < l.numElements(); ++i) {
      if (isFloat(arg->type().elementType())) {
        double v = mag(rng);
        l.setDouble(i, c.randomSign && coin(rng) ? -v : v);
      } else {
        l.setInt(i, i % 3);
      }
    }
    args.push_back(l);
  }
  return args;
}

// Differentiates @main of `c.text` and compares every gradient element with a central
// difference of the sum of @main's first result.
void checkGradients(const GradCase& c) {
  auto parsed = parseAndVerify(c.text);
  ASSERT_TRUE(parsed) << parsed.status().toString();
  Module& m = *parsed;
  const Operation* fn = m.lookupFunction("main");
  ASSERT_NE(fn, nullptr);
  std::vector<int> wrt = c.wrt;
  if (wrt.empty())
    for (size_t i = 0; i < FuncOp(fn).body().numArguments(); ++i)
      if (isFloat(FuncOp(fn).body().argument(i)->type().elementType())) wrt.push_back(static_cast<int>(i));

  auto name = addValueAndGradFunction(m, "main", wrt);
  ASSERT_TRUE(name) << name.status().toString();
  ASSERT_EQ(*name, "main_value_and_grad");
  // What runs is the printed text, parsed back.
  std::string printed = printModule(m);
  auto reparsed = parseAndVerify(printed);
  ASSERT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printed;

  std::mt19937 rng(1234);
  std::vector<Literal> args = randomInputs(*reparsed->lookupFunction("main"), c, rng);
  auto plain = run(*reparsed, "main", args);
  ASSERT_TRUE(plain) << plain.status().toString();
  auto grads = run(*reparsed, *name, args);
  ASSERT_TRUE(grads) << grads.status().toString() << "\n" << printed;
  size_t numResults = plain->size();
  ASSERT_EQ(grads->size(), numResults + wrt.size());
  for (size_t r = 0; r < numResults; ++r) EXPECT_TRUE((*grads)[r].bitwiseEqual((*plain)[r])) << "result " << r;

  int checked = 0;
  for (size_t k = 0; k < wrt.size(); ++k) {
    size_t a = static_cast<size_t>(wrt[k]);
    const Literal& g = (*grads)[numResults + k];
    ASSERT_EQ(g.type(), args[a].type()) << "gradient " << k;
    if (!isFloat(args[a].elementType())) {
      for (int64_t i = 0; i < g.numElements(); ++i) EXPECT_EQ(g.getInt(i), 0);
      continue;
    }
    for (int64_t i = 0; i < args[a].numElements(); ++i) {
      double x = args[a].getDouble(i);
      std::vector<Literal> plus = args, minus = args;
      plus[a] = args[a].clone();
      minus[a] = args[a].clone();
      plus[a].setDouble(i, x + c.eps);
      minus[a].setDouble(i, x - c.eps);
      auto fp = run(*reparsed, "main", plus);
      auto fm = run(*reparsed, "main", minus);
      ASSERT_TRUE(fp && fm);
      double numeric = (sumOf((*fp)[0]) - sumOf((*fm)[0])) / (2 * c.eps);
      double analytic = g.getDouble(i);
      EXPECT_NEAR(analytic, numeric, c.tol * (1 + std::abs(numeric)))
          << c.name << ": d/d arg" << a << "[" << i << "]\n"
          << (checked++ == 0 ? printed : "");
    }
  }
}

// op(%x) * %w on a 2x3 tensor.
std::string unaryProgram(const std::string& op, const std::string& attrs = "") {
  return R"(func.func @main(%x: tensor<2x3xf64>, %w: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = ")" + op + R"("(%x) )" + attrs + R"( : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = "stablehlo.multiply"(%0, %w) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %1 : tensor<2x3xf64>
})";
}

std::string binaryProgram(const std::string& op) {
  return R"(func.func @main(%x: tensor<2x3xf64>, %y: tensor<2x3xf64>, %w: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = ")" + op + R"("(%x, %y) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = "stablehlo.multiply"(%0, %w) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %1 : tensor<2x3xf64>
})";
}

// `body` computes %r of type `rtype` from the arguments `args`; the program returns %r * %w.
std::string program(const std::string& args, const std::string& body, const std::string& rtype) {
  return "func.func @main(" + args + ", %w: " + rtype + ") -> " + rtype + " {\n" + body +
         "\n  %out = \"stablehlo.multiply\"(%r, %w) : (" + rtype + ", " + rtype + ") -> " + rtype +
         "\n  return %out : " + rtype + "\n}";
}

const char* kAddBody = R"(({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    "stablehlo.return"(%s) : (tensor<f64>) -> ()
  }))";
const char* kMaxBody = R"(({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = "stablehlo.maximum"(%a, %b) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    "stablehlo.return"(%s) : (tensor<f64>) -> ()
  }))";
const char* kMinBody = R"(({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = "stablehlo.minimum"(%a, %b) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    "stablehlo.return"(%s) : (tensor<f64>) -> ()
  }))";

std::string conv(const std::string& xType, const std::string& kType, const std::string& rType,
                 const std::string& dims, const std::string& window, const std::string& groups = "") {
  std::string g = groups.empty() ? "batch_group_count = 1 : i64, feature_group_count = 1 : i64" : groups;
  return program("%x: " + xType + ", %k: " + kType,
                 "  %r = stablehlo.convolution(%x, %k) dim_numbers = " + dims + ", window = {" + window + "} {" + g +
                     "} : (" + xType + ", " + kType + ") -> " + rType,
                 rType);
}

std::vector<GradCase> elementwiseCases() {
  std::vector<GradCase> cases;
  auto unary = [&](const std::string& name, const std::string& op, double lo = 0.5, double hi = 1.5, bool sign = false) {
    cases.push_back({name, unaryProgram(op), lo, hi, sign});
  };
  unary("negate", "stablehlo.negate", 0.5, 1.5, true);
  unary("exponential", "stablehlo.exponential", 0.5, 1.5, true);
  unary("exponential_minus_one", "stablehlo.exponential_minus_one", 0.5, 1.5, true);
  unary("log", "stablehlo.log");
  unary("log_plus_one", "stablehlo.log_plus_one");
  unary("sqrt", "stablehlo.sqrt");
  unary("rsqrt", "stablehlo.rsqrt");
  unary("cbrt", "stablehlo.cbrt", 0.5, 1.5, true);
  unary("tanh", "stablehlo.tanh", 0.2, 2.0, true);
  unary("logistic", "stablehlo.logistic", 0.2, 2.0, true);
  unary("sine", "stablehlo.sine", 0.2, 2.0, true);
  unary("cosine", "stablehlo.cosine", 0.2, 2.0, true);
  unary("tan", "stablehlo.tan", 0.1, 1.2, true);
  unary("abs", "stablehlo.abs", 0.2, 2.0, true);
  unary("sign", "stablehlo.sign", 0.2, 2.0, true);
  unary("floor", "stablehlo.floor", 0.2, 2.0, true);
  unary("ceil", "stablehlo.ceil", 0.2, 2.0, true);
  unary("round_nearest_afz", "stablehlo.round_nearest_afz", 0.6, 1.4, true);
  unary("round_nearest_even", "stablehlo.round_nearest_even", 0.6, 1.4, true);
  cases.push_back({"reduce_precision",
                   unaryProgram("stablehlo.reduce_precision", "{exponent_bits = 11 : i32, mantissa_bits = 52 : i32}"),
                   0.5, 1.5, true});
  unary("chlo_square", "chlo.square", 0.5, 1.5, true);
  unary("chlo_erf", "chlo.erf", 0.1, 1.5, true);
  unary("chlo_erfc", "chlo.erfc", 0.1, 1.5, true);
  unary("chlo_erf_inv", "chlo.erf_inv", 0.1, 0.8, true);
  unary("chlo_sinh", "chlo.sinh", 0.1, 1.5, true);
  unary("chlo_cosh", "chlo.cosh", 0.1, 1.5, true);
  unary("chlo_tan", "chlo.tan", 0.1, 1.2, true);
  unary("chlo_atan", "chlo.atan", 0.1, 1.5, true);
  unary("chlo_asin", "chlo.asin", 0.1, 0.8, true);
  unary("chlo_acos", "chlo.acos", 0.1, 0.8, true);
  unary("chlo_asinh", "chlo.asinh", 0.1, 1.5, true);
  unary("chlo_acosh", "chlo.acosh", 1.2, 2.5);
  unary("chlo_atanh", "chlo.atanh", 0.1, 0.8, true);
  unary("chlo_lgamma", "chlo.lgamma", 0.5, 3.0);
  unary("chlo_digamma", "chlo.digamma", 0.5, 3.0);
  auto binary = [&](const std::string& name, const std::string& op, double lo = 0.5, double hi = 1.5, bool sign = false) {
    cases.push_back({name, binaryProgram(op), lo, hi, sign});
  };
  binary("add", "stablehlo.add", 0.5, 1.5, true);
  binary("subtract", "stablehlo.subtract", 0.5, 1.5, true);
  binary("multiply", "stablehlo.multiply", 0.5, 1.5, true);
  binary("divide", "stablehlo.divide", 0.5, 1.5, true);
  binary("maximum", "stablehlo.maximum", 0.1, 2.0, true);
  binary("minimum", "stablehlo.minimum", 0.1, 2.0, true);
  binary("power", "stablehlo.power", 0.5, 1.5);
  binary("atan2", "stablehlo.atan2", 0.2, 1.5, true);
  binary("remainder", "stablehlo.remainder", 0.3, 2.0, true);
  return cases;
}

std::vector<GradCase> otherCases() {
  std::vector<GradCase> c;
  // --- select and friends (rules_control_flow.cpp)
  c.push_back({"select", program("%x: tensor<2x3xf64>, %y: tensor<2x3xf64>", R"(
  %p = "stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xi1>
  %r = "stablehlo.select"(%p, %x, %y) : (tensor<2x3xi1>, tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>)",
                                          "tensor<2x3xf64>"),
               0.1, 2.0, true});
  c.push_back({"clamp_tensor_bounds", program("%lo: tensor<2x3xf64>, %x: tensor<2x3xf64>, %hi: tensor<2x3xf64>", R"(
  %hi2 = "stablehlo.add"(%hi, %hi) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %r = "stablehlo.clamp"(%lo, %x, %hi2) : (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>)",
                                                       "tensor<2x3xf64>"),
               0.2, 2.0, false});
  c.push_back({"clamp_scalar_bounds", program("%lo: tensor<f64>, %x: tensor<2x3xf64>, %hi: tensor<f64>", R"(
  %hi2 = "stablehlo.add"(%hi, %lo) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %r = "stablehlo.clamp"(%lo, %x, %hi2) : (tensor<f64>, tensor<2x3xf64>, tensor<f64>) -> tensor<2x3xf64>)",
                                                       "tensor<2x3xf64>"),
               0.2, 2.0, false});
  c.push_back({"optimization_barrier", program("%x: tensor<2x3xf64>, %y: tensor<3xf64>", R"(
  %b:2 = "stablehlo.optimization_barrier"(%x, %y) : (tensor<2x3xf64>, tensor<3xf64>) -> (tensor<2x3xf64>, tensor<3xf64>)
  %yb = "stablehlo.broadcast_in_dim"(%b#1) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf64>) -> tensor<2x3xf64>
  %r = "stablehlo.multiply"(%b#0, %yb) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>)",
                                                        "tensor<2x3xf64>")});
  // --- data movement
  c.push_back({"broadcast_in_dim", program("%x: tensor<3x1xf64>, %y: tensor<2xf64>", R"(
  %a = "stablehlo.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64: 2, 0>} : (tensor<3x1xf64>) -> tensor<4x2x3xf64>
  %b = "stablehlo.broadcast_in_dim"(%y) {broadcast_dimensions = array<i64: 1>} : (tensor<2xf64>) -> tensor<4x2x3xf64>
  %r = "stablehlo.multiply"(%a, %b) : (tensor<4x2x3xf64>, tensor<4x2x3xf64>) -> tensor<4x2x3xf64>)",
                                                    "tensor<4x2x3xf64>")});
  c.push_back({"broadcast", program("%x: tensor<3xf64>", R"(
  %r = "stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 2, 2>} : (tensor<3xf64>) -> tensor<2x2x3xf64>)",
                                    "tensor<2x2x3xf64>")});
  c.push_back({"reshape_transpose", program("%x: tensor<2x6xf64>", R"(
  %a = "stablehlo.reshape"(%x) : (tensor<2x6xf64>) -> tensor<2x3x2xf64>
  %r = "stablehlo.transpose"(%a) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x2xf64>) -> tensor<2x2x3xf64>)",
                                            "tensor<2x2x3xf64>")});
  c.push_back({"slice_strided", program("%x: tensor<5x7xf64>", R"(
  %r = "stablehlo.slice"(%x) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 5, 6>, strides = array<i64: 2, 3>} : (tensor<5x7xf64>) -> tensor<2x2xf64>)",
                                        "tensor<2x2xf64>")});
  c.push_back({"concatenate", program("%x: tensor<2x3xf64>, %y: tensor<2x1xf64>", R"(
  %r = "stablehlo.concatenate"(%x, %y, %x) {dimension = 1 : i64} : (tensor<2x3xf64>, tensor<2x1xf64>, tensor<2x3xf64>) -> tensor<2x7xf64>)",
                                      "tensor<2x7xf64>")});
  c.push_back({"pad", program("%x: tensor<3x4xf64>, %v: tensor<f64>", R"(
  %r = "stablehlo.pad"(%x, %v) {edge_padding_low = array<i64: 1, -1>, edge_padding_high = array<i64: -1, 2>, interior_padding = array<i64: 1, 0>} : (tensor<3x4xf64>, tensor<f64>) -> tensor<5x5xf64>)",
                              "tensor<5x5xf64>")});
  c.push_back({"reverse", program("%x: tensor<2x3xf64>", R"(
  %r = "stablehlo.reverse"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf64>) -> tensor<2x3xf64>)",
                                  "tensor<2x3xf64>")});
  c.push_back({"convert_f32_roundtrip", program("%x: tensor<2x3xf64>", R"(
  %a = "stablehlo.convert"(%x) : (tensor<2x3xf64>) -> tensor<2x3xf32>
  %b = "stablehlo.multiply"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = "stablehlo.convert"(%b) : (tensor<2x3xf32>) -> tensor<2x3xf64>)",
                                                "tensor<2x3xf64>"),
               0.5, 1.5, false, 1e-3, 1e-4});
  c.push_back({"dynamic_slice_clamped", program("%x: tensor<4x5xf64>", R"(
  %i = stablehlo.constant dense<1> : tensor<i64>
  %j = stablehlo.constant dense<4> : tensor<i64>
  %r = "stablehlo.dynamic_slice"(%x, %i, %j) {slice_sizes = array<i64: 2, 3>} : (tensor<4x5xf64>, tensor<i64>, tensor<i64>) -> tensor<2x3xf64>)",
                                                "tensor<2x3xf64>")});
  c.push_back({"dynamic_update_slice", program("%x: tensor<4x5xf64>, %u: tensor<2x2xf64>", R"(
  %i = stablehlo.constant dense<2> : tensor<i64>
  %j = stablehlo.constant dense<1> : tensor<i64>
  %u2 = "stablehlo.multiply"(%u, %u) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %r = "stablehlo.dynamic_update_slice"(%x, %u2, %i, %j) : (tensor<4x5xf64>, tensor<2x2xf64>, tensor<i64>, tensor<i64>) -> tensor<4x5xf64>)",
                                               "tensor<4x5xf64>")});
  // --- dot
  c.push_back({"dot_general_matmul", program("%x: tensor<2x3xf64>, %y: tensor<3x4xf64>", R"(
  %r = "stablehlo.dot_general"(%x, %y) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>)",
                                             "tensor<2x4xf64>")});
  c.push_back({"dot_general_batched_permuted", program("%x: tensor<3x2x4x5xf64>, %y: tensor<5x2x6x3xf64>", R"(
  %r = "stablehlo.dot_general"(%x, %y) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3, 0], rhs_contracting_dimensions = [0, 3]>} : (tensor<3x2x4x5xf64>, tensor<5x2x6x3xf64>) -> tensor<2x4x6xf64>)",
                                                       "tensor<2x4x6xf64>")});
  c.push_back({"dot_matrix_vector", program("%x: tensor<2x3xf64>, %y: tensor<3xf64>", R"(
  %r = "stablehlo.dot"(%x, %y) : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2xf64>)",
                                            "tensor<2xf64>")});
  // --- convolution (NCHW / OIHW unless stated)
  const std::string nchw = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]";
  c.push_back({"conv_basic", conv("tensor<1x2x5x5xf64>", "tensor<3x2x3x3xf64>", "tensor<1x3x3x3xf64>", nchw,
                                   "stride = [1, 1], pad = [[0, 0], [0, 0]]")});
  c.push_back({"conv_stride_padding", conv("tensor<2x2x6x5xf64>", "tensor<3x2x3x2xf64>", "tensor<2x3x3x6xf64>", nchw,
                                            "stride = [2, 1], pad = [[1, 0], [0, 2]]")});
  c.push_back({"conv_lhs_dilation", conv("tensor<1x2x3x4xf64>", "tensor<2x2x2x2xf64>", "tensor<1x2x6x3xf64>", nchw,
                                          "stride = [1, 1], pad = [[1, 1], [0, 0]], lhs_dilate = [2, 1]")});
  c.push_back({"conv_rhs_dilation", conv("tensor<1x2x5x6xf64>", "tensor<2x2x2x2xf64>", "tensor<1x2x4x4xf64>", nchw,
                                          "stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 2]")});
  c.push_back({"conv_feature_groups", conv("tensor<1x4x4x4xf64>", "tensor<6x2x2x2xf64>", "tensor<1x6x3x3xf64>", nchw,
                                            "stride = [1, 1]", "batch_group_count = 1 : i64, feature_group_count = 2 : i64")});
  c.push_back({"conv_batch_groups", conv("tensor<4x2x4x4xf64>", "tensor<6x2x2x2xf64>", "tensor<2x6x3x3xf64>", nchw,
                                          "stride = [1, 1]", "batch_group_count = 2 : i64, feature_group_count = 1 : i64")});
  c.push_back({"conv_nhwc_hwio_stride2", conv("tensor<1x5x5x2xf64>", "tensor<3x3x2x4xf64>", "tensor<1x3x3x4xf64>",
                                               "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
                                               "stride = [2, 2], pad = [[1, 1], [1, 1]]")});
  // ResNet-18's convolutions: the 7x7 stride-2 stem with padding 3 (the last input row and
  // column are in no window: (10 + 6 - 7) / 2 is not whole) and the 1x1 stride-2 downsample.
  c.push_back({"conv_7x7_stride2_pad3", conv("tensor<2x2x10x10xf64>", "tensor<3x2x7x7xf64>", "tensor<2x3x5x5xf64>",
                                              nchw, "stride = [2, 2], pad = [[3, 3], [3, 3]]")});
  c.push_back({"conv_1x1_stride2", conv("tensor<2x3x4x4xf64>", "tensor<4x3x1x1xf64>", "tensor<2x4x2x2xf64>", nchw,
                                         "stride = [2, 2], pad = [[0, 0], [0, 0]]")});
  // --- reductions
  c.push_back({"reduce_add_with_init", program("%x: tensor<3x4xf64>, %i: tensor<f64>", std::string(R"(
  %r = "stablehlo.reduce"(%x, %i) )") + kAddBody + R"( {dimensions = array<i64: 1>} : (tensor<3x4xf64>, tensor<f64>) -> tensor<3xf64>)",
                                               "tensor<3xf64>")});
  c.push_back({"reduce_max", program("%x: tensor<3x4xf64>", std::string(R"(
  %c = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %r = "stablehlo.reduce"(%x, %c) )") + kMaxBody + R"( {dimensions = array<i64: 0>} : (tensor<3x4xf64>, tensor<f64>) -> tensor<4xf64>)",
                                     "tensor<4xf64>"),
               0.1, 2.0, true});
  c.push_back({"reduce_min", program("%x: tensor<3x4xf64>", std::string(R"(
  %c = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
  %r = "stablehlo.reduce"(%x, %c) )") + kMinBody + R"( {dimensions = array<i64: 1, 0>} : (tensor<3x4xf64>, tensor<f64>) -> tensor<f64>)",
                                     "tensor<f64>"),
               0.1, 2.0, true});
  c.push_back({"reduce_multiply", program("%x: tensor<3x2x4xf64>", R"(
  %c = stablehlo.constant dense<1.0> : tensor<f64>
  %r = stablehlo.reduce(%x init: %c) applies stablehlo.multiply across dimensions = [2, 0] : (tensor<3x2x4xf64>, tensor<f64>) -> tensor<2xf64>)",
                                        "tensor<2xf64>")});
  c.push_back({"reduce_window_avg_pool", program("%x: tensor<1x2x5x5xf64>", std::string(R"(
  %c = stablehlo.constant dense<0.0> : tensor<f64>
  %s = "stablehlo.reduce_window"(%x, %c) )") + kAddBody + R"( {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : (tensor<1x2x5x5xf64>, tensor<f64>) -> tensor<1x2x3x3xf64>
  %n = stablehlo.constant dense<9.0> : tensor<1x2x3x3xf64>
  %r = "stablehlo.divide"(%s, %n) : (tensor<1x2x3x3xf64>, tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>)",
                                                 "tensor<1x2x3x3xf64>")});
  c.push_back({"reduce_window_sum_dilated", program("%x: tensor<4x5xf64>", std::string(R"(
  %c = stablehlo.constant dense<0.0> : tensor<f64>
  %r = "stablehlo.reduce_window"(%x, %c) )") + kAddBody + R"( {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 2>, base_dilations = array<i64: 1, 2>, window_dilations = array<i64: 2, 1>, padding = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4x5xf64>, tensor<f64>) -> tensor<3x5xf64>)",
                                                    "tensor<3x5xf64>")});
  c.push_back({"reduce_window_max_pool", program("%x: tensor<1x2x5x5xf64>", std::string(R"(
  %c = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %r = "stablehlo.reduce_window"(%x, %c) )") + kMaxBody + R"( {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : (tensor<1x2x5x5xf64>, tensor<f64>) -> tensor<1x2x3x3xf64>)",
                                                 "tensor<1x2x3x3xf64>"),
               0.1, 2.0, true});
  // ResNet-18's max-pool (3x3, stride 2, padding 1) on an even map: the windows overlap and the
  // last one hangs over the high padding.
  c.push_back({"reduce_window_max_pool_even", program("%x: tensor<2x2x6x6xf64>", std::string(R"(
  %c = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %r = "stablehlo.reduce_window"(%x, %c) )") + kMaxBody + R"( {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : (tensor<2x2x6x6xf64>, tensor<f64>) -> tensor<2x2x3x3xf64>)",
                                                      "tensor<2x2x3x3xf64>"),
               0.1, 2.0, true});
  // BatchNorm in train mode as the exporter lowers it (batch statistics over N, H, W; biased
  // variance; scale and shift), on a batch of 2 with a 2x2 map like ResNet-18's layer4.
  c.push_back({"batch_norm_train", program("%x: tensor<2x3x2x2xf64>, %g: tensor<3xf64>, %b: tensor<3xf64>", R"(
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<2x3x2x2xf64>, tensor<f64>) -> tensor<3xf64>
  %n = stablehlo.constant dense<8.0> : tensor<3xf64>
  %mean = "stablehlo.divide"(%s, %n) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %mb = "stablehlo.broadcast_in_dim"(%mean) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf64>) -> tensor<2x3x2x2xf64>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x3x2x2xf64>, tensor<2x3x2x2xf64>) -> tensor<2x3x2x2xf64>
  %d2 = "stablehlo.multiply"(%d, %d) : (tensor<2x3x2x2xf64>, tensor<2x3x2x2xf64>) -> tensor<2x3x2x2xf64>
  %ss = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<2x3x2x2xf64>, tensor<f64>) -> tensor<3xf64>
  %var = "stablehlo.divide"(%ss, %n) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %e = stablehlo.constant dense<1.0e-05> : tensor<3xf64>
  %ve = "stablehlo.add"(%var, %e) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %inv = "stablehlo.rsqrt"(%ve) : (tensor<3xf64>) -> tensor<3xf64>
  %ib = "stablehlo.broadcast_in_dim"(%inv) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf64>) -> tensor<2x3x2x2xf64>
  %y = "stablehlo.multiply"(%d, %ib) : (tensor<2x3x2x2xf64>, tensor<2x3x2x2xf64>) -> tensor<2x3x2x2xf64>
  %gb = "stablehlo.broadcast_in_dim"(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf64>) -> tensor<2x3x2x2xf64>
  %bb = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf64>) -> tensor<2x3x2x2xf64>
  %yg = "stablehlo.multiply"(%y, %gb) : (tensor<2x3x2x2xf64>, tensor<2x3x2x2xf64>) -> tensor<2x3x2x2xf64>
  %r = "stablehlo.add"(%yg, %bb) : (tensor<2x3x2x2xf64>, tensor<2x3x2x2xf64>) -> tensor<2x3x2x2xf64>)",
                                           "tensor<2x3x2x2xf64>"),
               0.1, 2.0, true});
  // Softmax as torch.export writes attention's (a -inf mask, the max subtracted, the sum broadcast
  // back along the reduced dim): its VJP comes from the result alone (rules_softmax.cpp).
  c.push_back({"softmax_attention", program("%x: tensor<2x3x4xf64>", std::string(R"(
  %ninf = stablehlo.constant dense<0xFFF0000000000000> : tensor<2x3x4xf64>
  %iota = stablehlo.iota dim = 2 : tensor<2x3x4xi64>
  %two = stablehlo.constant dense<2> : tensor<2x3x4xi64>
  %keep = stablehlo.compare NE, %iota, %two : (tensor<2x3x4xi64>, tensor<2x3x4xi64>) -> tensor<2x3x4xi1>
  %masked = stablehlo.select %keep, %x, %ninf : tensor<2x3x4xi1>, tensor<2x3x4xf64>
  %lowest = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %m = stablehlo.reduce(%masked init: %lowest) applies stablehlo.maximum across dimensions = [2] : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3xf64>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x3xf64>) -> tensor<2x3x4xf64>
  %s = stablehlo.subtract %masked, %mb : tensor<2x3x4xf64>
  %e = stablehlo.exponential %s : tensor<2x3x4xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3xf64>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (tensor<2x3xf64>) -> tensor<2x3x4xf64>
  %r = stablehlo.divide %e, %sb : tensor<2x3x4xf64>)"),
                                            "tensor<2x3x4xf64>"),
               0.1, 2.0, true});
  // JAX's keepdims form over a middle dim (reshape to size 1, broadcast in place), and the sum
  // used again (a log-sum-exp beside the softmax): its own cotangent flows by the ops' rules.
  c.push_back({"softmax_keepdims_shared_sum", program("%x: tensor<2x3x4xf64>", std::string(R"(
  %lowest = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %m = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x4xf64>
  %m1 = stablehlo.reshape %m : (tensor<2x4xf64>) -> tensor<2x1x4xf64>
  %mb = stablehlo.broadcast_in_dim %m1, dims = [0, 1, 2] : (tensor<2x1x4xf64>) -> tensor<2x3x4xf64>
  %s = stablehlo.subtract %x, %mb : tensor<2x3x4xf64>
  %e = stablehlo.exponential %s : tensor<2x3x4xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x4xf64>
  %sum1 = stablehlo.reshape %sum : (tensor<2x4xf64>) -> tensor<2x1x4xf64>
  %sb = stablehlo.broadcast_in_dim %sum1, dims = [0, 1, 2] : (tensor<2x1x4xf64>) -> tensor<2x3x4xf64>
  %y = stablehlo.divide %e, %sb : tensor<2x3x4xf64>
  %lse = stablehlo.log %sb : tensor<2x3x4xf64>
  %r = stablehlo.add %y, %lse : tensor<2x3x4xf64>)"),
                                                     "tensor<2x3x4xf64>"),
               0.1, 2.0, true});
  c.push_back({"reduce_window_min_pool", program("%x: tensor<4x6xf64>", std::string(R"(
  %c = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
  %r = "stablehlo.reduce_window"(%x, %c) )") + kMinBody + R"( {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>} : (tensor<4x6xf64>, tensor<f64>) -> tensor<2x4xf64>)",
                                                 "tensor<2x4xf64>"),
               0.1, 2.0, true});
  c.push_back({"sort_two_float_operands", program("%x: tensor<3x5xf64>, %y: tensor<3x5xf64>", R"(
  %s:2 = "stablehlo.sort"(%x, %y) ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>, %c: tensor<f64>, %d: tensor<f64>):
    %p = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<f64>, tensor<f64>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }) {dimension = 1 : i64, is_stable = false} : (tensor<3x5xf64>, tensor<3x5xf64>) -> (tensor<3x5xf64>, tensor<3x5xf64>)
  %r = "stablehlo.multiply"(%s#0, %s#1) : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>)",
                                                "tensor<3x5xf64>"),
               0.1, 2.0, true});
  c.push_back({"chlo_top_k", program("%x: tensor<3x5xf64>", R"(
  %v, %i = "chlo.top_k"(%x) {k = 2 : i64} : (tensor<3x5xf64>) -> (tensor<3x2xf64>, tensor<3x2xi32>)
  %r = "stablehlo.multiply"(%v, %v) : (tensor<3x2xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>)",
                                     "tensor<3x2xf64>"),
               0.1, 2.0, true});
  // --- indexing
  c.push_back({"gather_embedding_duplicates", program("%x: tensor<5x3xf64>", R"(
  %i = stablehlo.constant dense<[1, 0, 4, 1]> : tensor<4xi64>
  %r = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>, indices_are_sorted = false} : (tensor<5x3xf64>, tensor<4xi64>) -> tensor<4x3xf64>)",
                                                      "tensor<4x3xf64>")});
  c.push_back({"gather_clamped_windows", program("%x: tensor<6x4xf64>", R"(
  %i = stablehlo.constant dense<[[4, 3], [0, 1]]> : tensor<2x2xi64>
  %r = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 3, 2>, indices_are_sorted = false} : (tensor<6x4xf64>, tensor<2x2xi64>) -> tensor<2x3x2xf64>)",
                                                 "tensor<2x3x2xf64>")});
  c.push_back({"scatter_add", program("%x: tensor<5x3xf64>, %u: tensor<3x3xf64>", std::string(R"(
  %i = stablehlo.constant dense<[[1], [3], [1]]> : tensor<3x1xi64>
  %r = "stablehlo.scatter"(%x, %i, %u) )") + kAddBody + R"( {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<5x3xf64>, tensor<3x1xi64>, tensor<3x3xf64>) -> tensor<5x3xf64>)",
                                      "tensor<5x3xf64>")});
  c.push_back({"scatter_assign", program("%x: tensor<5x3xf64>, %u: tensor<3x3xf64>", R"(
  %i = stablehlo.constant dense<[[1], [3], [0]]> : tensor<3x1xi64>
  %r = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    "stablehlo.return"(%b) : (tensor<f64>) -> ()
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = true} : (tensor<5x3xf64>, tensor<3x1xi64>, tensor<3x3xf64>) -> tensor<5x3xf64>)",
                                         "tensor<5x3xf64>")});
  // --- branches: the predicate depends on the inputs, both ways
  for (const char* dir : {"GT", "LT"}) {
    c.push_back({std::string("if_") + dir, program("%x: tensor<3xf64>, %y: tensor<3xf64>", std::string(R"(
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
  %p = "stablehlo.compare"(%s, %z) {comparison_direction = #stablehlo<comparison_direction )") + dir + R"(>} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %a = "stablehlo.multiply"(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %b = "stablehlo.sine"(%a) : (tensor<3xf64>) -> tensor<3xf64>
    "stablehlo.return"(%b) : (tensor<3xf64>) -> ()
  }, {
    %a = "stablehlo.exponential"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    "stablehlo.return"(%a) : (tensor<3xf64>) -> ()
  }) : (tensor<i1>) -> tensor<3xf64>)",
                                                                   "tensor<3xf64>")});
  }
  c.push_back({"case", program("%x: tensor<3xf64>, %y: tensor<3xf64>", R"(
  %k = stablehlo.constant dense<1> : tensor<i32>
  %r = "stablehlo.case"(%k) ({
    "stablehlo.return"(%x) : (tensor<3xf64>) -> ()
  }, {
    %a = "stablehlo.divide"(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %b = "stablehlo.add"(%a, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    "stablehlo.return"(%b) : (tensor<3xf64>) -> ()
  }, {
    "stablehlo.return"(%y) : (tensor<3xf64>) -> ()
  }) : (tensor<i32>) -> tensor<3xf64>)",
                               "tensor<3xf64>")});
  // --- while loops with a known trip count: a recurrence capturing %v, and a scan that reads
  // xs[i] and writes ys[i] (the pattern of JAX's scan)
  c.push_back({"while_recurrence", program("%x: tensor<3xf64>, %v: tensor<3xf64>", R"(
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %res:2 = "stablehlo.while"(%i0, %x) ({
  ^bb0(%i: tensor<i64>, %s: tensor<3xf64>):
    %n = stablehlo.constant dense<4> : tensor<i64>
    %p = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %s: tensor<3xf64>):
    %one = stablehlo.constant dense<1> : tensor<i64>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %m = "stablehlo.multiply"(%s, %v) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %t = "stablehlo.tanh"(%m) : (tensor<3xf64>) -> tensor<3xf64>
    %u = "stablehlo.add"(%t, %s) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    "stablehlo.return"(%i1, %u) : (tensor<i64>, tensor<3xf64>) -> ()
  }) : (tensor<i64>, tensor<3xf64>) -> (tensor<i64>, tensor<3xf64>)
  %r = "stablehlo.multiply"(%res#1, %res#1) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>)",
                                           "tensor<3xf64>")});
  c.push_back({"while_scan", program("%xs: tensor<5x2xf64>, %h0: tensor<2xf64>", R"(
  %i0 = stablehlo.constant dense<1> : tensor<i32>
  %ys0 = stablehlo.constant dense<0.0> : tensor<5x2xf64>
  %res:3 = "stablehlo.while"(%i0, %h0, %ys0) ({
  ^bb0(%i: tensor<i32>, %h: tensor<2xf64>, %ys: tensor<5x2xf64>):
    %n = stablehlo.constant dense<5> : tensor<i32>
    %p = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %h: tensor<2xf64>, %ys: tensor<5x2xf64>):
    %one = stablehlo.constant dense<1> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %i1 = "stablehlo.add"(%one, %i) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %row = "stablehlo.dynamic_slice"(%xs, %i, %z) {slice_sizes = array<i64: 1, 2>} : (tensor<5x2xf64>, tensor<i32>, tensor<i32>) -> tensor<1x2xf64>
    %x = "stablehlo.reshape"(%row) : (tensor<1x2xf64>) -> tensor<2xf64>
    %hx = "stablehlo.multiply"(%h, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %h1 = "stablehlo.sine"(%hx) : (tensor<2xf64>) -> tensor<2xf64>
    %y = "stablehlo.reshape"(%h1) : (tensor<2xf64>) -> tensor<1x2xf64>
    %ys1 = "stablehlo.dynamic_update_slice"(%ys, %y, %i, %z) : (tensor<5x2xf64>, tensor<1x2xf64>, tensor<i32>, tensor<i32>) -> tensor<5x2xf64>
    "stablehlo.return"(%i1, %h1, %ys1) : (tensor<i32>, tensor<2xf64>, tensor<5x2xf64>) -> ()
  }) : (tensor<i32>, tensor<2xf64>, tensor<5x2xf64>) -> (tensor<i32>, tensor<2xf64>, tensor<5x2xf64>)
  %r = "stablehlo.add"(%res#2, %res#2) : (tensor<5x2xf64>, tensor<5x2xf64>) -> tensor<5x2xf64>)",
                                     "tensor<5x2xf64>")});
  // A loop inside a loop body: the inner one is differentiated inside the reverse loop (it is
  // recomputed there, from the stored state of the outer iteration).
  c.push_back({"while_nested", program("%x: tensor<2xf64>, %v: tensor<2xf64>", R"(
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %res:2 = "stablehlo.while"(%i0, %x) ({
  ^bb0(%i: tensor<i64>, %s: tensor<2xf64>):
    %n = stablehlo.constant dense<3> : tensor<i64>
    %p = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %s: tensor<2xf64>):
    %one = stablehlo.constant dense<1> : tensor<i64>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %j0 = stablehlo.constant dense<0> : tensor<i64>
    %in:2 = "stablehlo.while"(%j0, %s) ({
    ^bb0(%j: tensor<i64>, %t: tensor<2xf64>):
      %m = stablehlo.constant dense<2> : tensor<i64>
      %q = "stablehlo.compare"(%j, %m) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%q) : (tensor<i1>) -> ()
    }, {
    ^bb0(%j: tensor<i64>, %t: tensor<2xf64>):
      %one2 = stablehlo.constant dense<1> : tensor<i64>
      %j1 = "stablehlo.add"(%j, %one2) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %a = "stablehlo.multiply"(%t, %v) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
      %b = "stablehlo.sine"(%a) : (tensor<2xf64>) -> tensor<2xf64>
      %c = "stablehlo.add"(%b, %t) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
      "stablehlo.return"(%j1, %c) : (tensor<i64>, tensor<2xf64>) -> ()
    }) : (tensor<i64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>)
    %u = "stablehlo.tanh"(%in#1) : (tensor<2xf64>) -> tensor<2xf64>
    "stablehlo.return"(%i1, %u) : (tensor<i64>, tensor<2xf64>) -> ()
  }) : (tensor<i64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>)
  %r = "stablehlo.multiply"(%res#1, %res#1) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>)",
                                       "tensor<2xf64>")});
  // A loop inside a branch.
  c.push_back({"while_in_if", program("%x: tensor<2xf64>, %v: tensor<2xf64>", R"(
  %t = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%t) ({
    %i0 = stablehlo.constant dense<0> : tensor<i64>
    %res:2 = "stablehlo.while"(%i0, %x) ({
    ^bb0(%i: tensor<i64>, %s: tensor<2xf64>):
      %n = stablehlo.constant dense<3> : tensor<i64>
      %p = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%p) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i64>, %s: tensor<2xf64>):
      %one = stablehlo.constant dense<1> : tensor<i64>
      %i1 = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %a = "stablehlo.multiply"(%s, %v) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
      %b = "stablehlo.logistic"(%a) : (tensor<2xf64>) -> tensor<2xf64>
      "stablehlo.return"(%i1, %b) : (tensor<i64>, tensor<2xf64>) -> ()
    }) : (tensor<i64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>)
    "stablehlo.return"(%res#1) : (tensor<2xf64>) -> ()
  }, {
    "stablehlo.return"(%x) : (tensor<2xf64>) -> ()
  }) : (tensor<i1>) -> tensor<2xf64>)",
                                      "tensor<2xf64>")});
  // --- func.call and composite are inlined (JAX emits calls, also inside loop bodies)
  c.push_back({"func_call_and_composite_inlined", R"(func.func private @helper(%a: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "stablehlo.multiply"(%a, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = "stablehlo.sine"(%0) : (tensor<3xf64>) -> tensor<3xf64>
  return %1 : tensor<3xf64>
}
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %0 = func.call @helper(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = "stablehlo.composite"(%0, %x) {name = "test.helper", decomposition = @helper} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %2 = "stablehlo.multiply"(%1, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %2 : tensor<3xf64>
})"});
  // --- structure: a value used many times accumulates its cotangents
  c.push_back({"fan_out_accumulates", program("%x: tensor<2x3xf64>", R"(
  %a = "stablehlo.multiply"(%x, %x) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %b = "stablehlo.sine"(%x) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %c = "stablehlo.multiply"(%a, %b) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %d = "stablehlo.add"(%c, %x) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %r = "stablehlo.divide"(%d, %a) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>)",
                                              "tensor<2x3xf64>")});
  // An integer argument feeds the program through a convert: its gradient is zeros of its type.
  c.push_back({"integer_argument", program("%x: tensor<3xf64>, %n: tensor<3xi64>", R"(
  %m = "stablehlo.add"(%n, %n) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %f = "stablehlo.convert"(%m) : (tensor<3xi64>) -> tensor<3xf64>
  %r = "stablehlo.multiply"(%x, %f) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>)",
                                          "tensor<3xf64>"),
               0.5, 1.5, false, 1e-6, 1e-6, {0, 1, 2}});
  // A scalar first result is differentiated as is.
  c.push_back({"scalar_result", R"(func.func @main(%x: tensor<3xf64>) -> (tensor<f64>, tensor<3xf64>) {
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %e = "stablehlo.exponential"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
  %l = "stablehlo.log"(%s) : (tensor<f64>) -> tensor<f64>
  return %l, %e : tensor<f64>, tensor<3xf64>
})"});
  // --- batch norm (rules_norm.cpp): the output's gradient is batch_norm_grad; the batch statistics
  // reach the loss too here, so their direct paths are checked as well.
  c.push_back({"batch_norm_training", program("%x: tensor<3x2x4xf64>, %s: tensor<2xf64>, %o: tensor<2xf64>", R"(
  %bn:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<3x2x4xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<3x2x4xf64>, tensor<2xf64>, tensor<2xf64>)
  %m = "stablehlo.broadcast_in_dim"(%bn#1) {broadcast_dimensions = array<i64: 1>} : (tensor<2xf64>) -> tensor<3x2x4xf64>
  %v = "stablehlo.broadcast_in_dim"(%bn#2) {broadcast_dimensions = array<i64: 1>} : (tensor<2xf64>) -> tensor<3x2x4xf64>
  %mv = "stablehlo.multiply"(%m, %v) : (tensor<3x2x4xf64>, tensor<3x2x4xf64>) -> tensor<3x2x4xf64>
  %r = "stablehlo.add"(%bn#0, %mv) : (tensor<3x2x4xf64>, tensor<3x2x4xf64>) -> tensor<3x2x4xf64>)",
                                                       "tensor<3x2x4xf64>"),
               0.2, 2.0, true, 1e-6, 1e-6});
  c.push_back({"batch_norm_training_output_only", program("%x: tensor<4x3xf64>, %s: tensor<3xf64>, %o: tensor<3xf64>", R"(
  %bn:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>)
  %r = "stablehlo.add"(%bn#0, %x) : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>)",
                                                                   "tensor<4x3xf64>"),
               0.2, 2.0, true, 1e-6, 1e-6});
  c.push_back({"batch_norm_inference", program("%x: tensor<2x3x2xf64>, %s: tensor<3xf64>, %o: tensor<3xf64>, %mean: tensor<3xf64>, %var: tensor<3xf64>", R"(
  %r = "stablehlo.batch_norm_inference"(%x, %s, %o, %mean, %var) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<2x3x2xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x2xf64>)",
                                                        "tensor<2x3x2xf64>"),
               0.2, 2.0, false});
  return c;
}

class AutodiffGradTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(AutodiffGradTest, MatchesFiniteDifferences) { checkGradients(GetParam()); }

std::string caseName(const ::testing::TestParamInfo<GradCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(AutodiffElementwise, AutodiffGradTest, ::testing::ValuesIn(elementwiseCases()), caseName);
INSTANTIATE_TEST_SUITE_P(AutodiffOps, AutodiffGradTest, ::testing::ValuesIn(otherCases()), caseName);

// --- structural tests

// stablehlo.map has no VJP rule.
const char* kMapBody = R"(({
  ^bb0(%a: tensor<f64>):
    %n = "stablehlo.negate"(%a) : (tensor<f64>) -> tensor<f64>
    "stablehlo.return"(%n) : (tensor<f64>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf64>) -> tensor<4xf64>)";

TEST(AutodiffTest, OpWithoutRuleIsAnErrorNamingItAndItsLocation) {
  auto m = parseAndVerify(std::string(R"(func.func @main(%x: tensor<4xf64>) -> tensor<4xf64> {
  %e = "stablehlo.exponential"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %s = "stablehlo.map"(%e) )") + kMapBody + R"(
  return %s : tensor<4xf64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  size_t before = m->operations().size();
  std::vector<int> wrt = {0};
  auto r = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("stablehlo.map"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("test.mlir:3:"), std::string::npos) << r.status().message();
  EXPECT_EQ(m->operations().size(), before);  // the module is unchanged
}

TEST(AutodiffTest, OpOffTheDifferentiatedPathNeedsNoRule) {
  // The map sees only the argument that is not differentiated.
  auto m = parseAndVerify(std::string(R"(func.func @main(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xf64> {
  %s = "stablehlo.map"(%y) )") + kMapBody + R"(
  %r = "stablehlo.multiply"(%x, %s) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %r : tensor<4xf64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0};
  auto r = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(r) << r.status().toString();
  std::vector<Literal> args;
  for (int a = 0; a < 2; ++a) {
    Literal l = Literal::zeros(Type::tensor({4}, ElementType::kF64));
    for (int i = 0; i < 4; ++i) l.setDouble(i, (a ? 4.0 - i : 1.0 + i));
    args.push_back(l);
  }
  auto out = run(*m, *r, args);
  ASSERT_TRUE(out) << out.status().toString();
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ((*out)[1].getDouble(i), -(4.0 - i));  // -y
}

TEST(AutodiffTest, UnusedAndIndependentArgumentsGetZeroGradients) {
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<3xf64>, %unused: tensor<2x2xf64>, %n: tensor<3xi32>) -> tensor<3xf64> {
  %r = "stablehlo.multiply"(%x, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %r : tensor<3xf64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {1, 2, 0};
  auto r = addValueAndGradFunction(*m, "main", wrt, "grad");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, "grad");
  Literal x = Literal::zeros(Type::tensor({3}, ElementType::kF64));
  for (int i = 0; i < 3; ++i) x.setDouble(i, i + 1.5);
  Literal u = Literal::zeros(Type::tensor({2, 2}, ElementType::kF64));
  Literal n = Literal::zeros(Type::tensor({3}, ElementType::kSI32));
  auto out = run(*m, "grad", {x, u, n});
  ASSERT_TRUE(out) << out.status().toString();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[1].type(), u.type());
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*out)[1].getDouble(i), 0.0);
  EXPECT_EQ((*out)[2].type(), n.type());
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*out)[2].getInt(i), 0);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ((*out)[3].getDouble(i), 2 * (i + 1.5));
}

TEST(AutodiffTest, ProductGradientIsExactAtZeros) {
  // d/dx prod(x) at x = (0, 2, 3) is (6, 0, 0): the product of the other elements, not prod / x.
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<3xf64>) -> tensor<f64> {
  %c = stablehlo.constant dense<1.0> : tensor<f64>
  %r = stablehlo.reduce(%x init: %c) applies stablehlo.multiply across dimensions = [0] : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
  return %r : tensor<f64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0};
  auto r = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(r) << r.status().toString();
  Literal x = Literal::zeros(Type::tensor({3}, ElementType::kF64));
  x.setDouble(1, 2.0);
  x.setDouble(2, 3.0);
  auto out = run(*m, *r, {x});
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ((*out)[1].getDouble(0), 6.0);
  EXPECT_EQ((*out)[1].getDouble(1), 0.0);
  EXPECT_EQ((*out)[1].getDouble(2), 0.0);
}

TEST(AutodiffTest, MaxPoolGradientOfNarrowFloatsRoundsOnce) {
  // All three windows choose x[1]; their cotangents 1, 2^-8 and 2^-8 sum to 1 + 2^-7, a bf16
  // value, where bf16 adds one window at a time would round 1 + 2^-8 back to 1 twice. The rule
  // scatters in f32 and rounds once, as PyTorch's max-pool backward accumulates in float.
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<3xbf16>, %w: tensor<3xbf16>) -> tensor<3xbf16> {
  %c = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %r = "stablehlo.reduce_window"(%x, %c) ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %m = "stablehlo.maximum"(%a, %b) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
    "stablehlo.return"(%m) : (tensor<bf16>) -> ()
  }) {window_dimensions = array<i64: 3>, window_strides = array<i64: 1>, padding = dense<[[1, 1]]> : tensor<1x2xi64>} : (tensor<3xbf16>, tensor<bf16>) -> tensor<3xbf16>
  %p = "stablehlo.multiply"(%r, %w) : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  return %p : tensor<3xbf16>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0};
  auto r = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(r) << r.status().toString();
  Literal x = Literal::zeros(Type::tensor({3}, ElementType::kBF16));
  Literal w = Literal::zeros(Type::tensor({3}, ElementType::kBF16));
  x.setDouble(1, 5.0);
  w.setDouble(0, 1.0);
  w.setDouble(1, std::ldexp(1.0, -8));
  w.setDouble(2, std::ldexp(1.0, -8));
  auto out = run(*m, *r, {x, w});
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ((*out)[1].getDouble(0), 0.0);
  EXPECT_EQ((*out)[1].getDouble(1), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ((*out)[1].getDouble(2), 0.0);
}

TEST(AutodiffTest, NarrowProductPlusBiasContractsNarrowCotangents) {
  // PyTorch's bf16 addmm as the exporter writes it: the f32 product plus the bias, rounded once.
  // Its cotangent is a widened bf16 value, so the transposed products contract bf16 operands (on
  // tensor cores, as PyTorch's backward does) instead of widened f32 ones, with the same sums.
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<4x8xbf16>, %w: tensor<8x5xbf16>, %b: tensor<5xbf16>) -> tensor<4x5xbf16> {
  %d = "stablehlo.dot_general"(%x, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xbf16>, tensor<8x5xbf16>) -> tensor<4x5xf32>
  %bf = "stablehlo.convert"(%b) : (tensor<5xbf16>) -> tensor<5xf32>
  %bb = "stablehlo.broadcast_in_dim"(%bf) {broadcast_dimensions = array<i64: 1>} : (tensor<5xf32>) -> tensor<4x5xf32>
  %s = "stablehlo.add"(%d, %bb) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = "stablehlo.convert"(%s) : (tensor<4x5xf32>) -> tensor<4x5xbf16>
  return %y : tensor<4x5xbf16>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0, 1, 2};
  auto name = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(name) << name.status().toString();
  int dots = 0;
  for (const auto& op : FuncOp(m->lookupFunction(*name)).body().operations()) {
    if (op->code() != OpCode::DotGeneral) continue;
    ++dots;
    for (const Value* v : op->operands()) EXPECT_EQ(v->type().elementType(), ElementType::kBF16) << op->describe();
  }
  EXPECT_EQ(dots, 3);  // the forward product and its two transposes
  // Multiples of 1/64 in [-1, 1]: every f32 sum is exact, so the gradients are known exactly.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> k(-64, 64);
  Literal x = Literal::zeros(Type::tensor({4, 8}, ElementType::kBF16));
  Literal w = Literal::zeros(Type::tensor({8, 5}, ElementType::kBF16));
  Literal b = Literal::zeros(Type::tensor({5}, ElementType::kBF16));
  for (Literal* l : {&x, &w, &b})
    for (int64_t i = 0; i < l->numElements(); ++i) l->setDouble(i, k(rng) / 64.0);
  auto out = run(*m, *name, {x, w, b});
  ASSERT_TRUE(out) << out.status().toString();
  ASSERT_EQ(out->size(), 4u);
  // The objective is the sum of y: dx = 1 . w^T, dw = x^T . 1, db = 4 (rows) per element.
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      double want = 0;
      for (int64_t n = 0; n < 5; ++n) want += w.getDouble(j * 5 + n);
      EXPECT_EQ((*out)[1].getDouble(i * 8 + j), Literal::scalarDouble(ElementType::kBF16, want).getDouble(0));
    }
  for (int64_t j = 0; j < 8; ++j)
    for (int64_t n = 0; n < 5; ++n) {
      double want = 0;
      for (int64_t i = 0; i < 4; ++i) want += x.getDouble(i * 8 + j);
      EXPECT_EQ((*out)[2].getDouble(j * 5 + n), Literal::scalarDouble(ElementType::kBF16, want).getDouble(0));
    }
  for (int64_t n = 0; n < 5; ++n) EXPECT_EQ((*out)[3].getDouble(n), 4.0);
}

TEST(AutodiffTest, SortGradientFollowsThePermutation) {
  // The cotangent of sorted position k goes to the element that landed there; the iota riding
  // along (PyTorch's and JAX's argsort pattern) is an integer and gets none.
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<4xf64> {
  %i = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi64>
  %s:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>, %c: tensor<i64>, %d: tensor<i64>):
    %p = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<f64>, tensor<f64>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xf64>, tensor<4xi64>) -> (tensor<4xf64>, tensor<4xi64>)
  %r = "stablehlo.multiply"(%s#0, %w) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %r : tensor<4xf64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0};
  auto r = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(r) << r.status().toString();
  Literal x = Literal::zeros(Type::tensor({4}, ElementType::kF64));
  Literal w = Literal::zeros(Type::tensor({4}, ElementType::kF64));
  const double xs[] = {0.5, 3.0, -1.0, 2.0};  // descending order: 3.0, 2.0, 0.5, -1.0
  for (int i = 0; i < 4; ++i) {
    x.setDouble(i, xs[i]);
    w.setDouble(i, 10.0 * (i + 1));
  }
  auto out = run(*m, *r, {x, w});
  ASSERT_TRUE(out) << out.status().toString();
  const double expected[] = {30.0, 10.0, 40.0, 20.0};
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*out)[1].getDouble(i), expected[i]) << i;
}

TEST(AutodiffTest, ManyUsesAccumulateByAdd) {
  // x used four times: d/dx (x + x + x + x) = 4, through three adds of cotangents.
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
  %a = "stablehlo.add"(%x, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %b = "stablehlo.add"(%x, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %r = "stablehlo.add"(%a, %b) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0};
  auto r = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(r) << r.status().toString();
  Literal x = Literal::zeros(Type::tensor({2}, ElementType::kF64));
  auto out = run(*m, *r, {x});
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ((*out)[1].getDouble(0), 4.0);
  EXPECT_EQ((*out)[1].getDouble(1), 4.0);
}

TEST(AutodiffTest, SoftmaxBackwardReadsOnlyItsResult) {
  // The backward pass of a written-out softmax reads y, not e, the sum or the max's input: the
  // forward pass then keeps one tensor of the softmax's shape for it, not four.
  // x is a product, which the forward pass would have to keep at y's size to recompute y from it:
  // y is kept, not rematerialized (remat.cpp), and the counts below are the rule's alone.
  auto m = parseAndVerify(R"(func.func @main(%a: tensor<2x5xf64>, %i: tensor<5x5xf64>, %w: tensor<2x5xf64>) -> tensor<f64> {
  %x = "stablehlo.dot_general"(%a, %i) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x5xf64>, tensor<5x5xf64>) -> tensor<2x5xf64>
  %lowest = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %m = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf64>, tensor<f64>) -> tensor<2xf64>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<2xf64>) -> tensor<2x5xf64>
  %s = stablehlo.subtract %x, %mb : tensor<2x5xf64>
  %e = stablehlo.exponential %s : tensor<2x5xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x5xf64>, tensor<f64>) -> tensor<2xf64>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<2xf64>) -> tensor<2x5xf64>
  %y = stablehlo.divide %e, %sb : tensor<2x5xf64>
  %yw = stablehlo.multiply %y, %w : tensor<2x5xf64>
  %r = stablehlo.reduce(%yw init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5xf64>, tensor<f64>) -> tensor<f64>
  return %r : tensor<f64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> wrt = {0};
  auto name = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(name) << name.status().toString();
  const Block& body = FuncOp(m->lookupFunction(*name)).body();
  auto users = [&](OpCode code) {
    const Operation* def = nullptr;
    for (const auto& op : body.operations())
      if (op->code() == code) def = def ? def : op.get();
    if (!def) return -1;
    int n = 0;
    for (const auto& op : body.operations())
      for (const Value* v : op->operands()) n += v == def->result(0);
    return n;
  };
  EXPECT_EQ(users(OpCode::Exponential), 2);  // the sum and the divide: no backward op
  EXPECT_EQ(users(OpCode::Subtract), 1);     // the exponential
  EXPECT_EQ(users(OpCode::DotGeneral), 2);  // %x: the max, the subtract, and no mask of the max's rule
  // and the gradient is the softmax's: y * (w - sum(w * y)) per row
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  Literal x = Literal::zeros(Type::tensor({2, 5}, ElementType::kF64)), w = x.clone();
  Literal identity = Literal::zeros(Type::tensor({5, 5}, ElementType::kF64));
  for (int64_t i = 0; i < 5; ++i) identity.setDouble(i * 5 + i, 1.0);
  for (int64_t i = 0; i < 10; ++i) {
    x.setDouble(i, u(rng));
    w.setDouble(i, u(rng));
  }
  auto out = run(*m, *name, {x, identity, w});
  ASSERT_TRUE(out) << out.status().toString();
  for (int64_t row = 0; row < 2; ++row) {
    double mx = -INFINITY, total = 0, dot = 0;
    for (int64_t j = 0; j < 5; ++j) mx = std::max(mx, x.getDouble(row * 5 + j));
    for (int64_t j = 0; j < 5; ++j) total += std::exp(x.getDouble(row * 5 + j) - mx);
    for (int64_t j = 0; j < 5; ++j) dot += w.getDouble(row * 5 + j) * std::exp(x.getDouble(row * 5 + j) - mx) / total;
    for (int64_t j = 0; j < 5; ++j) {
      const double y = std::exp(x.getDouble(row * 5 + j) - mx) / total;
      EXPECT_NEAR((*out)[1].getDouble(row * 5 + j), y * (w.getDouble(row * 5 + j) - dot), 1e-14);
    }
  }
}

// GELU as exporters write it reads x/2, x/sqrt(2) and 1 + erf(x/sqrt(2)) in its backward pass;
// those are recomputed there from x (remat.cpp), so the forward pass keeps x alone (and LayerNorm's
// normalized x is recomputed from x - mean and the small rstd it keeps anyway).
TEST(AutodiffTest, CheapForwardValuesAreRecomputedInTheBackwardPass) {
  auto m = parseAndVerify(R"(func.func @main(%a: tensor<4x8xf64>, %b: tensor<8x16xf64>, %w: tensor<4x16xf64>) -> tensor<f64> {
  %x = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  %half = stablehlo.constant dense<0.5> : tensor<4x16xf64>
  %h = stablehlo.multiply %x, %half : tensor<4x16xf64>
  %r2 = stablehlo.constant dense<0.70710678118654757> : tensor<4x16xf64>
  %xs = stablehlo.multiply %x, %r2 : tensor<4x16xf64>
  %erf = chlo.erf %xs : tensor<4x16xf64> -> tensor<4x16xf64>
  %one = stablehlo.constant dense<1.0> : tensor<4x16xf64>
  %p = stablehlo.add %erf, %one : tensor<4x16xf64>
  %g = stablehlo.multiply %h, %p : tensor<4x16xf64>
  %gw = stablehlo.multiply %g, %w : tensor<4x16xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %r = stablehlo.reduce(%gw init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16xf64>, tensor<f64>) -> tensor<f64>
  return %r : tensor<f64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  const size_t forwardOps = FuncOp(m->lookupFunction("main")).body().operations().size() - 1;
  std::vector<int> wrt = {0, 1};
  auto name = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(name) << name.status().toString();
  const auto& ops = FuncOp(m->lookupFunction(*name)).body().operations();
  std::vector<std::string> kept;
  for (size_t i = 0; i < forwardOps; ++i)
    for (const auto& r : ops[i]->results()) {
      bool readLater = false;
      for (size_t j = forwardOps; j + 1 < ops.size(); ++j)  // the backward ops, not the return
        for (const Value* v : ops[j]->operands()) readLater = readLater || v == r.get();
      if (readLater && ops[i]->code() != OpCode::Constant) kept.push_back(ops[i]->name());
    }
  EXPECT_EQ(kept, std::vector<std::string>{"stablehlo.dot_general"});
}

TEST(AutodiffTest, BadRequestsAreErrors) {
  auto m = parseAndVerify(R"(func.func @main(%x: tensor<2xf64>) -> (tensor<2xi32>, tensor<2xf64>) {
  %i = "stablehlo.convert"(%x) : (tensor<2xf64>) -> tensor<2xi32>
  return %i, %x : tensor<2xi32>, tensor<2xf64>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::vector<int> bad = {3};
  auto r1 = addValueAndGradFunction(*m, "main", bad);
  ASSERT_FALSE(r1);
  EXPECT_NE(r1.status().message().find("no argument 3"), std::string::npos) << r1.status().message();
  std::vector<int> twice = {0, 0};
  EXPECT_FALSE(addValueAndGradFunction(*m, "main", twice));
  std::vector<int> ok = {0};
  auto r2 = addValueAndGradFunction(*m, "nope", ok);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.status().code(), StatusCode::kNotFound);
  auto r3 = addValueAndGradFunction(*m, "main", ok);  // the first result is an integer
  ASSERT_FALSE(r3);
  EXPECT_NE(r3.status().message().find("first result"), std::string::npos) << r3.status().message();
}

}  // namespace
}  // namespace wf
