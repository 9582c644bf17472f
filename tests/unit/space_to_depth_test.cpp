// Strided convolutions over few channels as stride-1 convolutions over 2x2 pixel blocks
// (src/transforms/space_to_depth.cpp): the rewritten program computes the same bits where every
// sum is exact (inputs of -1, 0 and 1), on shapes that are odd, padded asymmetrically and
// cropped; convolutions of other kinds stay as written.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/space_to_depth.h"

namespace wf {
namespace {

using programtest::mainOf;

struct Conv {
  std::string type = "bf16";
  int64_t n = 2, c = 3, h = 17, w = 19, o = 5, kh = 7, kw = 7;
  int64_t stride = 2, padLow = 3, padHigh = 3, dilation = 1;
};

int64_t outSize(int64_t in, int64_t k, const Conv& c) {
  return (in + c.padLow + c.padHigh - ((k - 1) * c.dilation + 1)) / c.stride + 1;
}

std::string program(const Conv& c) {
  auto t = [&](int64_t a, int64_t b, int64_t h, int64_t w) {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(h) + "x" + std::to_string(w) +
           "x" + c.type + ">";
  };
  const std::string x = t(c.n, c.c, c.h, c.w), k = t(c.o, c.c, c.kh, c.kw),
                    y = t(c.n, c.o, outSize(c.h, c.kh, c), outSize(c.w, c.kw, c));
  const std::string s = std::to_string(c.stride), d = std::to_string(c.dilation), lo = std::to_string(c.padLow),
                    hi = std::to_string(c.padHigh);
  return "func.func @main(%x: " + x + ", %k: " + k + ") -> " + y + " {\n  %y = \"stablehlo.convolution\"(%x, %k) {" +
         "dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, window_strides = array<i64: " +
         s + ", " + s + ">, padding = dense<[[" + lo + ", " + hi + "], [" + hi + ", " + lo +
         "]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: " + d + ", " + d +
         ">, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (" + x + ", " + k + ") -> " + y +
         "\n  func.return %y : " + y + "\n}\n";
}

// Arguments of -1, 0 and 1: every sum of products is an integer far inside f32's and bf16's
// exact range, so any summation order gives the same bits.
std::vector<Literal> smallIntegers(const Module& m, uint32_t seed) {
  std::vector<Literal> args = programtest::randomArguments(m, seed);
  for (Literal& a : args)
    for (int64_t i = 0; i < a.numElements(); ++i) a.setDouble(i, std::round(a.getDouble(i) / 3.0));
  return args;
}

// Rewrites `c`; expects `rewritten` convolutions and, for each seed, the same bits.
void check(const Conv& c, int rewritten, bool tf32Convolutions = false) {
  const std::string text = program(c);
  auto original = programtest::parseAndVerify(text, "conv.mlir");
  auto changed = programtest::parseAndVerify(text, "conv.mlir");
  ASSERT_TRUE(original && changed) << text;
  Expected<int> n = spaceToDepthConvolutions(*changed->lookupFunction("main"), tf32Convolutions);
  ASSERT_TRUE(n) << n.status().toString();
  EXPECT_EQ(*n, rewritten) << text;
  // The rewritten program verifies after printing and parsing back.
  auto reparsed = programtest::parseAndVerify(printModule(*changed), "rewritten.mlir");
  ASSERT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*changed);
  for (uint32_t seed : {1u, 2u}) EXPECT_EQ(programtest::sameResults(*original, *reparsed, smallIntegers(*original, seed)), "") << text;
  if (rewritten == 0) return;
  for (const auto& op : FuncOp(mainOf(*reparsed)).body().operations())
    if (op->code() == OpCode::Convolution) {
      const std::vector<int64_t>& in = op->operand(0)->type().shape();
      EXPECT_EQ(in[1] % 8, 0) << "channels of the rewritten input: " << in[1];
      EXPECT_EQ(op->operand(1)->type().shape()[2], (c.kh + 1) / 2);
    }
}

TEST(SpaceToDepth, StemLikeConvolutionsComputeTheSameBits) {
  check(Conv{}, 1);                                          // ResNet's stem, on odd sizes
  check(Conv{.type = "f16", .h = 16, .w = 16}, 1);           // even sizes
  check(Conv{.c = 4, .kh = 3, .kw = 3, .padLow = 1, .padHigh = 1}, 1);  // 16 channels, no channel padding
  check(Conv{.c = 1, .h = 12, .w = 9, .kh = 5, .kw = 4, .padLow = 2, .padHigh = 0}, 1);  // uneven windows and padding
  check(Conv{.h = 20, .w = 21, .padLow = 0, .padHigh = 0}, 1);  // rows no window reads are cropped
  // f32 where TF32 is allowed for convolutions (channels-last on tensor cores there too).
  check(Conv{.type = "f32"}, 1, /*tf32Convolutions=*/true);
  check(Conv{.type = "f32", .c = 1, .h = 12, .w = 9, .kh = 5, .kw = 4, .padLow = 2, .padHigh = 0}, 1, true);
}

TEST(SpaceToDepth, OtherConvolutionsStayAsWritten) {
  check(Conv{.type = "f32"}, 0);              // true f32 runs in NCHW
  check(Conv{.type = "f64"}, 0, true);        // no tensor cores for f64
  check(Conv{.stride = 1}, 0);                // nothing to fold
  check(Conv{.c = 8}, 0);                     // already a multiple of 8 channels
  check(Conv{.c = 5}, 0);                     // 20 channels would pad to 24
  check(Conv{.kh = 1, .kw = 1, .padLow = 0, .padHigh = 0}, 0);  // 1x1 windows: a strided slice, not a slow stem
  check(Conv{.padLow = 2, .padHigh = 2, .dilation = 2}, 0);     // dilated windows
}

}  // namespace
}  // namespace wf
