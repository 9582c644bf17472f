// Max and min pools narrowed before they run (src/transforms/narrow_pools.cpp): a pool that only a
// narrowing conversion reads pools the converted values instead, with the same bits as the
// program as written; pools read otherwise, sums, and widening conversions stay.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/narrow_pools.h"

namespace wf {
namespace {

using programtest::mainOf;

// A 3x3 stride-2 pool with padding of %x ([2, 5, 9, 9] of `wide`) by `body`, converted to
// `narrow`; with `alsoReturned`, the pooled value is returned too.
std::string pool(const std::string& wide, const std::string& narrow, const std::string& body, bool alsoReturned = false) {
  const std::string x = "tensor<2x5x9x9x" + wide + ">", p = "tensor<2x5x5x5x" + wide + ">",
                    n = "tensor<2x5x5x5x" + narrow + ">", s = "tensor<" + wide + ">";
  std::string t = "func.func @main(%x: " + x + ") -> (" + n + (alsoReturned ? ", " + p : "") + ") {\n";
  t += "  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>\n";
  t += "  %i = \"stablehlo.convert\"(%init) : (tensor<f32>) -> " + s + "\n";
  t += "  %p = \"stablehlo.reduce_window\"(%x, %i) ({\n  ^bb0(%a: " + s + ", %b: " + s + "):\n    %m = \"stablehlo." +
       body + "\"(%a, %b) : (" + s + ", " + s + ") -> " + s + "\n    \"stablehlo.return\"(%m) : (" + s +
       ") -> ()\n  }) {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = "
       "dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : (" + x + ", " + s + ") -> " + p + "\n";
  t += "  %n = \"stablehlo.convert\"(%p) : (" + p + ") -> " + n + "\n";
  t += "  func.return %n" + std::string(alsoReturned ? ", %p : " + n + ", " + p : " : " + n) + "\n}\n";
  return t;
}

// Narrows @main of `text`; expects `narrowed` pools and the same bits. Returns the element type
// the pool is left with.
std::string checkNarrowing(const std::string& text, int narrowed) {
  auto original = programtest::parseAndVerify(text, "pool.mlir");
  auto rewritten = programtest::parseAndVerify(text, "pool.mlir");
  EXPECT_TRUE(original && rewritten);
  if (!original || !rewritten) return "";
  Expected<int> n = narrowPools(*rewritten->lookupFunction("main"));
  EXPECT_TRUE(n) << n.status().toString();
  EXPECT_EQ(n ? *n : -1, narrowed);
  auto reparsed = programtest::parseAndVerify(printModule(*rewritten), "narrowed.mlir");
  EXPECT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*rewritten);
  if (!reparsed) return "";
  for (uint32_t seed : {5u, 6u})
    EXPECT_EQ(programtest::sameResults(*original, *reparsed, programtest::randomArguments(*original, seed)), "");
  for (const auto& op : FuncOp(mainOf(*reparsed)).body().operations())
    if (op->code() == OpCode::ReduceWindow) return std::string(elementTypeName(op->result(0)->type().elementType()));
  return "";
}

TEST(NarrowPools, MaxPoolOfF32ReadAsBf16RunsInBf16) {
  EXPECT_EQ(checkNarrowing(pool("f32", "bf16", "maximum"), 1), std::string("bf16"));
  EXPECT_EQ(checkNarrowing(pool("f32", "f16", "minimum"), 1), std::string("f16"));
  EXPECT_EQ(checkNarrowing(pool("f64", "f32", "maximum"), 1), std::string("f32"));
}

TEST(NarrowPools, OtherPoolsStayAsWritten) {
  // The wide pooled value is read besides the conversion.
  EXPECT_EQ(checkNarrowing(pool("f32", "bf16", "maximum", true), 0), std::string("f32"));
  // A sum rounds differently once its terms are rounded.
  EXPECT_EQ(checkNarrowing(pool("f32", "bf16", "add"), 0), std::string("f32"));
  // Widening.
  EXPECT_EQ(checkNarrowing(pool("bf16", "f32", "maximum"), 0), std::string("bf16"));
}

}  // namespace
}  // namespace wf
