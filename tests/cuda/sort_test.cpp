// stablehlo.sort on the GPU against the CPU interpreter: keys with many duplicates (a carried
// operand of distinct positions checks stability), ascending and descending, FLOAT (-0 equals
// +0), TOTALORDER and JAX's canonicalising float comparator (NaNs), every sorted dimension of
// odd shapes, several carried operands of other types, and comparators the GPU does not take.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string scalar(ElementType t) { return Type::tensor({}, t).toString(); }

// A sort of `types` (all of `shape`) along `dim`, keyed on operand `key` with `compareOp`
// applied to its pair of arguments: "LT", "GT", with an optional compare_type.
std::string sortProgram(const std::vector<ElementType>& types, const std::vector<int64_t>& shape, int64_t dim,
                        size_t key, const std::string& dir, const std::string& compareType, bool jaxCanonical = false,
                        bool swapArgs = false) {
  std::string params, operands, inTypes, outTypes, blockArgs, rets;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string t = Type::tensor(shape, types[i]).toString();
    const std::string sep = i ? ", " : "";
    params += sep + "%a" + std::to_string(i) + ": " + t;
    operands += sep + "%a" + std::to_string(i);
    inTypes += sep + t;
    blockArgs += sep + "%x" + std::to_string(i) + ": " + scalar(types[i]) + ", %y" + std::to_string(i) + ": " +
                 scalar(types[i]);
    rets += sep + "%r#" + std::to_string(i);
  }
  const std::string kt = scalar(types[key]);
  std::string lhs = "%x" + std::to_string(key), rhs = "%y" + std::to_string(key);
  if (swapArgs) std::swap(lhs, rhs);
  std::string body;
  if (jaxCanonical) {
    // jnp.sort's comparator: zeros to +0, NaNs to one NaN, then a total order.
    const ElementType ket = types[key];
    const std::string nan = ket == ElementType::kF16    ? "0x7E00"
                            : ket == ElementType::kBF16 ? "0x7FC0"
                            : ket == ElementType::kF32  ? "0x7FC00000"
                                                        : "0x7FF8000000000000";
    auto canon = [&](const std::string& v, const std::string& tag) {
      return "    %z" + tag + " = stablehlo.constant dense<0.000000e+00> : " + kt + "\n" +
             "    %e" + tag + " = stablehlo.compare EQ, " + v + ", %z" + tag + ", FLOAT : (" + kt + ", " + kt +
             ") -> tensor<i1>\n" +
             "    %s" + tag + " = stablehlo.select %e" + tag + ", %z" + tag + ", " + v + " : tensor<i1>, " + kt + "\n" +
             "    %n" + tag + " = stablehlo.compare NE, " + v + ", " + v + ", FLOAT : (" + kt + ", " + kt +
             ") -> tensor<i1>\n" + "    %q" + tag + " = stablehlo.constant dense<" + nan + "> : " + kt + "\n" +
             "    %c" + tag + " = stablehlo.select %n" + tag + ", %q" + tag + ", %s" + tag + " : tensor<i1>, " + kt + "\n";
    };
    body = canon(lhs, "l") + canon(rhs, "r") + "    %p = stablehlo.compare " + dir + ", %cl, %cr, TOTALORDER : (" + kt +
           ", " + kt + ") -> tensor<i1>\n";
  } else {
    body = "    %p = stablehlo.compare " + dir + ", " + lhs + ", " + rhs + (compareType.empty() ? "" : ", " + compareType) +
           " : (" + kt + ", " + kt + ") -> tensor<i1>\n";
  }
  const std::string resultTypes = types.size() == 1 ? inTypes : "(" + inTypes + ")";
  const bool one = types.size() == 1;
  if (one) rets = "%r";
  return "func.func @main(" + params + ") -> " + resultTypes + " {\n" + "  %r" +
         (one ? std::string() : ":" + std::to_string(types.size())) + " = \"stablehlo.sort\"(" + operands + ") <{dimension = " + std::to_string(dim) +
         " : i64, is_stable = true}> ({\n" + "  ^bb0(" + blockArgs + "):\n" + body +
         "    stablehlo.return %p : tensor<i1>\n" + "  }) : (" + inTypes + ") -> " + resultTypes + "\n" +
         "  func.return " + rets + " : " + inTypes + "\n}\n";
}

// Keys with many duplicates: small integers; floats also get -0, +0 and (if `nans`) NaNs of
// both signs and infinities.
Literal keyLiteral(const Type& type, bool nans) {
  Literal l = randomLiteral(type, -3, 3);
  const ElementType t = type.elementType();
  if (!isFloat(t)) return l;
  auto& g = rng();
  for (int64_t i = 0; i < l.numElements(); ++i) {
    const int pick = static_cast<int>(g() % 16);
    double v = std::round(l.getDouble(i));
    if (pick == 0) v = -0.0;
    if (pick == 1) v = 0.0;
    if (pick == 2) v = 0.5;
    if (nans && pick == 3) v = std::nan("");
    if (nans && pick == 4) v = -std::nan("");
    if (nans && pick == 5) v = (g() & 1) ? INFINITY : -INFINITY;
    l.setDouble(i, v);
  }
  return l;
}

// Distinct values (positions) for a carried operand: a stability witness.
Literal positions(const Type& type) {
  Literal l = Literal::zeros(type);
  for (int64_t i = 0; i < l.numElements(); ++i) l.setInt(i, i);
  return l;
}

const std::vector<std::vector<int64_t>>& sortShapes() {
  static const std::vector<std::vector<int64_t>> shapes = {{1}, {37}, {5, 33}, {4, 7, 9}, {2, 1000}, {3, 0}, {3000}, {257, 3}};
  return shapes;
}

class CudaSort : public testing::TestWithParam<ElementType> {};

TEST_P(CudaSort, KeyWithCarriedPositionsMatchesCpu) {
  WF_REQUIRE_GPU();
  const ElementType et = GetParam();
  for (const auto& shape : sortShapes()) {
    for (int64_t dim = 0; dim < static_cast<int64_t>(shape.size()); ++dim) {
      for (const char* dir : {"LT", "GT"}) {
        std::vector<std::string> compareTypes = {""};
        if (isFloat(et)) compareTypes = {"FLOAT", "TOTALORDER"};
        else if (isUnsignedInteger(et) || et == ElementType::kI1) compareTypes = {"UNSIGNED"};
        else compareTypes = {"SIGNED"};
        for (const std::string& ct : compareTypes) {
          const Type kt = Type::tensor(shape, et), pt = Type::tensor(shape, ElementType::kSI32);
          SCOPED_TRACE(kt.toString() + " dim " + std::to_string(dim) + " " + dir + " " + ct);
          // The key first, then positions; and the key second, after positions.
          expectMatchesCpu(sortProgram({et, ElementType::kSI32}, shape, dim, 0, dir, ct),
                           {keyLiteral(kt, ct == "TOTALORDER"), positions(pt)}, Tolerance{});
          expectMatchesCpu(sortProgram({ElementType::kSI32, et}, shape, dim, 1, dir, ct, false, true),
                           {positions(pt), keyLiteral(kt, ct == "TOTALORDER")}, Tolerance{});
        }
      }
    }
  }
}

TEST_P(CudaSort, SingleOperand) {
  WF_REQUIRE_GPU();
  const ElementType et = GetParam();
  for (const auto& shape : sortShapes()) {
    const Type kt = Type::tensor(shape, et);
    const int64_t dim = static_cast<int64_t>(shape.size()) - 1;
    expectMatchesCpu(sortProgram({et}, shape, dim, 0, "LT", ""), {randomLiteral(kt, 1, 0)}, Tolerance{});
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaSort,
                         testing::Values(ElementType::kSI32, ElementType::kF32, ElementType::kBF16, ElementType::kF16,
                                         ElementType::kF64, ElementType::kSI8, ElementType::kUI16, ElementType::kSI64,
                                         ElementType::kUI64, ElementType::kUI32, ElementType::kI1),
                         [](const auto& info) { return typeName(info.param); });

// jnp.sort / jnp.argsort's comparator, with NaNs, infinities and signed zeros.
TEST(CudaSortJax, CanonicalisingComparator) {
  WF_REQUIRE_GPU();
  for (ElementType et : floatTypes()) {
    for (const auto& shape : sortShapes()) {
      for (int64_t dim = 0; dim < static_cast<int64_t>(shape.size()); ++dim) {
        for (const char* dir : {"LT", "GT"}) {
          const Type kt = Type::tensor(shape, et), pt = Type::tensor(shape, ElementType::kSI32);
          SCOPED_TRACE(kt.toString() + " dim " + std::to_string(dim) + " " + dir);
          expectMatchesCpu(sortProgram({et, ElementType::kSI32}, shape, dim, 0, dir, "", true),
                           {keyLiteral(kt, true), positions(pt)}, Tolerance{});
        }
      }
    }
  }
}

// Several carried operands of different widths, the key in the middle.
TEST(CudaSortMulti, ThreeOperands) {
  WF_REQUIRE_GPU();
  const std::vector<int64_t> shape = {6, 41};
  const std::vector<ElementType> types = {ElementType::kF64, ElementType::kBF16, ElementType::kUI8};
  for (int64_t dim = 0; dim < 2; ++dim) {
    std::vector<Literal> args;
    args.push_back(randomLiteral(Type::tensor(shape, types[0])));
    args.push_back(keyLiteral(Type::tensor(shape, types[1]), false));
    args.push_back(randomLiteral(Type::tensor(shape, types[2]), 1, 0));
    expectMatchesCpu(sortProgram(types, shape, dim, 1, "GT", "FLOAT"), args, Tolerance{});
  }
}

// A comparator the GPU kernels do not take is refused (unimplemented), never computed otherwise.
TEST(CudaSortMulti, LexicographicComparatorIsUnimplemented) {
  WF_REQUIRE_GPU();
  const std::string text =
      "func.func @main(%a: tensor<8xi32>, %b: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {\n"
      "  %r:2 = \"stablehlo.sort\"(%a, %b) <{dimension = 0 : i64, is_stable = true}> ({\n"
      "  ^bb0(%x0: tensor<i32>, %y0: tensor<i32>, %x1: tensor<i32>, %y1: tensor<i32>):\n"
      "    %lt = stablehlo.compare LT, %x0, %y0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %eq = stablehlo.compare EQ, %x0, %y0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %lt1 = stablehlo.compare LT, %x1, %y1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %and = stablehlo.and %eq, %lt1 : tensor<i1>\n"
      "    %p = stablehlo.or %lt, %and : tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  }) : (tensor<8xi32>, tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>)\n"
      "  func.return %r#0, %r#1 : tensor<8xi32>, tensor<8xi32>\n}\n";
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), CompileOptions{});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented) << exe.status().toString();
  EXPECT_NE(exe.status().toString().find("stablehlo.sort"), std::string::npos) << exe.status().toString();
}

}  // namespace
}  // namespace wf::cudatest
