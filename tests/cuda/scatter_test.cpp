// stablehlo.scatter on the GPU against the CPU interpreter: the general form (update window
// dims, inserted dims, batching dims, index vector dim first or last), indices that collide and
// that fall partly or wholly outside the input, update computations assignment (last update
// wins, as on the CPU), add, multiply, maximum and minimum on integer and float types, the
// unique_indices path, a variadic assignment; and select_and_scatter (the max-pool gradient). Float values are small integers so that sums
// and products are exact in any order (atomic combiners add in an unspecified order).
#include <algorithm>
#include <numeric>

#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

struct ScatterCase {
  std::vector<int64_t> operand, indices, updates;
  std::string dims;  // the #stablehlo.scatter<...> fields
  int64_t lo, hi;    // indices drawn from [lo, hi]
};

const std::vector<ScatterCase>& scatterCases() {
  static const std::vector<ScatterCase> all = {
      // Rows of a [20, 6] table, 9 row indices (collisions, some outside).
      {{20, 6}, {9, 1}, {9, 6},
       "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
       -2, 21},
      // 2-d starts into a 3-d operand with 2x3x7 windows that may hang over the edge.
      {{5, 6, 7}, {4, 2}, {4, 2, 3, 7},
       "update_window_dims = [1, 2, 3], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1", -1, 5},
      // Index vector dim first, a collapsed middle dim, starts mapped in reverse order.
      {{8, 9, 3}, {2, 5}, {5, 4, 3},
       "update_window_dims = [1, 2], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1, 0], "
       "index_vector_dim = 0",
       -1, 8},
      // Batching dims: operand dim 0 pairs with indices dim 0.
      {{3, 10, 4}, {3, 6, 1}, {3, 6, 4},
       "update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], "
       "scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2",
       -1, 10},
      // Scalar updates, heavy collisions: 300 updates into 7 elements.
      {{7}, {300, 1}, {300},
       "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1", 0, 6},
      // Odd sizes, a 2-d batch of indices, the implicit index vector dim.
      {{33, 5}, {3, 11}, {3, 11, 5},
       "update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2",
       0, 32},
  };
  return all;
}

std::string scalar(ElementType t) { return Type::tensor({}, t).toString(); }

// body: "assign" or a binary op name ("add", "multiply", "maximum", "minimum").
std::string scatterProgram(const ScatterCase& c, ElementType et, ElementType it, const std::string& body,
                           bool unique = false) {
  const std::string op = Type::tensor(c.operand, et).toString(), idx = Type::tensor(c.indices, it).toString(),
                    upd = Type::tensor(c.updates, et).toString(), s = scalar(et);
  std::string region = "  ^bb0(%cur: " + s + ", %new: " + s + "):\n";
  if (body == "assign") {
    region += "    stablehlo.return %new : " + s + "\n";
  } else {
    region += "    %v = stablehlo." + body + " %cur, %new : " + s + "\n    stablehlo.return %v : " + s + "\n";
  }
  return "func.func @main(%x: " + op + ", %i: " + idx + ", %u: " + upd + ") -> " + op + " {\n" +
         "  %r = \"stablehlo.scatter\"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = "
         "#stablehlo.scatter<" +
         c.dims + ">, unique_indices = " + (unique ? "true" : "false") + "}> ({\n" + region + "  }) : (" + op + ", " +
         idx + ", " + upd + ") -> " + op + "\n  func.return %r : " + op + "\n}\n";
}

// Small integer values (exact sums and products in any order); for products, no zeros and
// magnitudes 1 and 2 only.
Literal values(const Type& type, bool product) {
  Literal l = Literal::zeros(type);
  auto& g = rng();
  const ElementType t = type.elementType();
  for (int64_t i = 0; i < l.numElements(); ++i) {
    int64_t v;
    if (product) {
      static const int64_t choices[4] = {-2, -1, 1, 2};
      v = choices[g() % 4];
    } else {
      v = static_cast<int64_t>(g() % 9) - 4;
    }
    if (isUnsignedInteger(t) || t == ElementType::kI1) v = v < 0 ? -v : v;
    if (t == ElementType::kI1) v &= 1;
    if (isFloat(t)) l.setDouble(i, static_cast<double>(v));
    else l.setInt(i, v);
  }
  return l;
}

class CudaScatter : public testing::TestWithParam<std::tuple<std::string, ElementType>> {};

TEST_P(CudaScatter, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [body, et] = GetParam();
  for (size_t ci = 0; ci < scatterCases().size(); ++ci) {
    const ScatterCase& c = scatterCases()[ci];
    for (ElementType it : {ElementType::kSI32, ElementType::kSI64, ElementType::kUI8}) {
      const Type op = Type::tensor(c.operand, et), idx = Type::tensor(c.indices, it), upd = Type::tensor(c.updates, et);
      SCOPED_TRACE("case " + std::to_string(ci) + " indices " + idx.toString());
      const bool product = body == "multiply";
      for (int trial = 0; trial < 2; ++trial)
        expectMatchesCpu(scatterProgram(c, et, it, body),
                         {values(op, product), randomLiteral(idx, isUnsignedInteger(it) ? 0 : c.lo, c.hi),
                          values(upd, product)},
                         Tolerance{});
    }
  }
}

std::vector<std::tuple<std::string, ElementType>> scatterParams() {
  std::vector<std::tuple<std::string, ElementType>> out;
  const std::vector<ElementType> types = {ElementType::kSI32, ElementType::kF32,  ElementType::kBF16,
                                          ElementType::kF16,  ElementType::kF64,  ElementType::kSI8,
                                          ElementType::kUI16, ElementType::kSI64, ElementType::kUI64,
                                          ElementType::kUI32};
  for (const char* body : {"assign", "add", "multiply", "maximum", "minimum"})
    for (ElementType t : types) out.emplace_back(body, t);
  out.emplace_back("assign", ElementType::kI1);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Bodies, CudaScatter, testing::ValuesIn(scatterParams()),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + typeName(std::get<1>(info.param)); });

// unique_indices = true takes the non-atomic path: distinct indices (a permutation).
TEST(CudaScatterUnique, DistinctIndices) {
  WF_REQUIRE_GPU();
  const ScatterCase c = {{40, 3}, {29, 1}, {29, 3},
                         "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
                         "index_vector_dim = 1",
                         0, 0};
  for (ElementType et : {ElementType::kF32, ElementType::kBF16, ElementType::kSI32}) {
    for (const char* body : {"assign", "add", "maximum"}) {
      const Type op = Type::tensor(c.operand, et), idx = Type::tensor(c.indices, ElementType::kSI32),
                 upd = Type::tensor(c.updates, et);
      std::vector<int64_t> perm(40);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng());
      Literal indices = Literal::zeros(idx);
      for (int64_t i = 0; i < 29; ++i) indices.setInt(i, perm[static_cast<size_t>(i)]);
      expectMatchesCpu(scatterProgram(c, et, ElementType::kSI32, body, true),
                       {values(op, false), indices, values(upd, false)}, Tolerance{});
    }
  }
}

// Two inputs assigned together (variadic scatter), colliding indices: both take the same winner.
TEST(CudaScatterVariadic, TwoInputsAssign) {
  WF_REQUIRE_GPU();
  const std::string text =
      "func.func @main(%x: tensor<9x2xf32>, %y: tensor<9x2xi32>, %i: tensor<40x1xi32>, %u: tensor<40x2xf32>, "
      "%v: tensor<40x2xi32>) -> (tensor<9x2xf32>, tensor<9x2xi32>) {\n"
      "  %r:2 = \"stablehlo.scatter\"(%x, %y, %i, %u, %v) <{indices_are_sorted = false, scatter_dimension_numbers = "
      "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
      "index_vector_dim = 1>, unique_indices = false}> ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):\n"
      "    stablehlo.return %c, %d : tensor<f32>, tensor<i32>\n"
      "  }) : (tensor<9x2xf32>, tensor<9x2xi32>, tensor<40x1xi32>, tensor<40x2xf32>, tensor<40x2xi32>) -> "
      "(tensor<9x2xf32>, tensor<9x2xi32>)\n"
      "  func.return %r#0, %r#1 : tensor<9x2xf32>, tensor<9x2xi32>\n}\n";
  Literal v = Literal::zeros(Type::tensor({40, 2}, ElementType::kSI32));
  for (int64_t i = 0; i < v.numElements(); ++i) v.setInt(i, i);
  expectMatchesCpu(text,
                   {randomLiteral(Type::tensor({9, 2}, ElementType::kF32)),
                    randomLiteral(Type::tensor({9, 2}, ElementType::kSI32), -5, 5),
                    randomLiteral(Type::tensor({40, 1}, ElementType::kSI32), -1, 9),
                    randomLiteral(Type::tensor({40, 2}, ElementType::kF32)), v},
                   Tolerance{});
}

// An update computation the GPU does not take is refused (unimplemented).
TEST(CudaScatterVariadic, SubtractBodyIsUnimplemented) {
  WF_REQUIRE_GPU();
  const ScatterCase& c = scatterCases()[0];
  Module m = parse(scatterProgram(c, ElementType::kF32, ElementType::kSI32, "subtract"));
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), CompileOptions{});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented) << exe.status().toString();
}

// ---- select_and_scatter ----

struct PoolCase {
  std::vector<int64_t> operand, source, window, strides, padding;
};

std::string selectAndScatterProgram(const PoolCase& c, ElementType et, const std::string& select,
                                    const std::string& scatter) {
  const std::string op = Type::tensor(c.operand, et).toString(), src = Type::tensor(c.source, et).toString(),
                    s = scalar(et);
  const std::string ct = isFloat(et) ? "FLOAT" : isUnsignedInteger(et) ? "UNSIGNED" : "SIGNED";
  std::string pad = "dense<[";
  for (size_t d = 0; d < c.operand.size(); ++d)
    pad += (d ? ", [" : "[") + std::to_string(c.padding[2 * d]) + ", " + std::to_string(c.padding[2 * d + 1]) + "]";
  pad += "]> : tensor<" + std::to_string(c.operand.size()) + "x2xi64>";
  auto list = [](const std::vector<int64_t>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
  };
  return "func.func @main(%x: " + op + ", %s: " + src + ", %init: " + s + ") -> " + op + " {\n" +
         "  %r = \"stablehlo.select_and_scatter\"(%x, %s, %init) ({\n" + "  ^bb0(%a: " + s + ", %b: " + s + "):\n" +
         "    %c = stablehlo.compare " + select + ", %a, %b, " + ct + " : (" + s + ", " + s + ") -> tensor<i1>\n" +
         "    stablehlo.return %c : tensor<i1>\n" + "  }, {\n" + "  ^bb0(%a: " + s + ", %b: " + s + "):\n" +
         "    %c = stablehlo." + scatter + " %a, %b : " + s + "\n" + "    stablehlo.return %c : " + s + "\n" +
         "  }) {window_dimensions = array<i64: " + list(c.window) + ">, window_strides = array<i64: " +
         list(c.strides) + ">, padding = " + pad + "} : (" + op + ", " + src + ", " + s + ") -> " + op +
         "\n  func.return %r : " + op + "\n}\n";
}

class CudaSelectAndScatter : public testing::TestWithParam<ElementType> {};

TEST_P(CudaSelectAndScatter, MaxPoolGradientMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType et = GetParam();
  const std::vector<PoolCase> cases = {
      // 2x2 stride 2 (no overlap), NCHW.
      {{2, 3, 8, 10}, {2, 3, 4, 5}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0}},
      // 3x3 stride 2 pad 1 (ResNet's stem pool): overlapping windows collide.
      {{1, 2, 9, 7}, {1, 2, 5, 4}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1}},
      // Windows apart (stride 3 over windows of 2 and 3): some elements in no window, padding
      // low on H and high on W, sizes no tile divides.
      {{2, 3, 11, 13}, {2, 3, 4, 4}, {1, 1, 2, 3}, {1, 1, 3, 3}, {0, 0, 0, 0, 1, 0, 0, 1}},
      // 3x3 stride 1, asymmetric padding, NHWC (the window not on the last two dims).
      {{2, 6, 5, 3}, {2, 5, 5, 3}, {1, 3, 3, 1}, {1, 1, 1, 1}, {0, 0, 0, 1, 1, 1, 0, 0}},
      // 1-d, odd length.
      {{37}, {12}, {4}, {3}, {1, 0}},
  };
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const PoolCase& c = cases[ci];
    SCOPED_TRACE("case " + std::to_string(ci));
    const Type op = Type::tensor(c.operand, et), src = Type::tensor(c.source, et), s = Type::tensor({}, et);
    for (const auto& [select, scatter] : std::vector<std::pair<std::string, std::string>>{
             {"GE", "add"}, {"GT", "add"}, {"LE", "maximum"}, {"LT", "minimum"}}) {
      // Few distinct operand values: ties decide which element a window selects.
      Literal init = Literal::zeros(s);
      expectMatchesCpu(selectAndScatterProgram(c, et, select, scatter), {values(op, false), values(src, false), init},
                       Tolerance{});
    }
  }
}

// ResNet's stem pool on random values: overlapping windows send several sources to one element,
// and the GPU sums them in the CPU's order (increasing source index) without atomics, so the
// result is the CPU's bit for bit, and the same on every run.
TEST(CudaSelectAndScatterOrder, OverlappingWindowsSumInTheCpuOrderOnEveryRun) {
  WF_REQUIRE_GPU();
  const PoolCase c{{4, 8, 30, 30}, {4, 8, 15, 15}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1}};
  const Type op = Type::tensor(c.operand, ElementType::kF32), src = Type::tensor(c.source, ElementType::kF32);
  // Few distinct operand values, so that many elements win several windows; random sources.
  std::vector<Literal> args = {values(op, false), randomLiteral(src, -1, 1),
                               Literal::zeros(Type::tensor({}, ElementType::kF32))};
  const std::string text = selectAndScatterProgram(c, ElementType::kF32, "GE", "add");
  expectMatchesCpu(text, {args[0].clone(), args[1].clone(), args[2].clone()}, Tolerance{});
  Module m = parse(text);
  auto first = runCuda(m, args);
  auto second = runCuda(m, args);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(compareLiterals(first->outputs[0], second->outputs[0], Tolerance{}), "");
}

INSTANTIATE_TEST_SUITE_P(Types, CudaSelectAndScatter,
                         testing::Values(ElementType::kF32, ElementType::kBF16, ElementType::kF16, ElementType::kF64,
                                         ElementType::kSI32, ElementType::kSI8, ElementType::kUI16),
                         [](const auto& info) { return typeName(info.param); });

}  // namespace
}  // namespace wf::cudatest
