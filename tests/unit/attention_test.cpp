// Attention outlining (src/transforms/attention.cpp), its head transposes absorbed
// (src/transforms/attention_layouts.cpp) and the attention composite's VJP
// (src/autodiff/rules_attention.cpp): the rewritten program computes bit for bit what the written-out
// one did, its gradients match the written-out program's and central finite differences in float64,
// and the backward pass no longer reads the probabilities.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "eval/interpreter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"
#include "program_test_helpers.h"
#include "transforms/attention.h"
#include "transforms/attention_layouts.h"

namespace wf {
namespace {

Expected<Module> parseAndVerify(const std::string& text) { return programtest::parseAndVerify(text, "attention.mlir"); }
using programtest::run;

std::vector<Literal> randomArgs(const Operation& fn, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  std::vector<Literal> args;
  for (const auto& arg : FuncOp(&fn).body().arguments()) {
    Literal l = Literal::zeros(arg->type());
    for (int64_t i = 0; i < l.numElements(); ++i) l.setDouble(i, u(rng));
    args.push_back(std::move(l));
  }
  return args;
}

int countComposites(const Block& body, std::string_view name) {
  int n = 0;
  for (const auto& op : body.operations()) {
    const Attribute* a = op->attr("name");
    n += op->code() == OpCode::Composite && a && a->stringValue() == name;
  }
  return n;
}

// Attention as torch.export writes it for BERT under bf16 autocast: the scores widened from bf16
// to f32, scaled, a boolean mask through select with -inf, the row max subtracted, the
// probabilities narrowed back to bf16; then multiplied by a random %w so that every output element
// gets its own cotangent. Shapes: B=2, H=3, Sq=5, Skv=6, D=4; key 5 of every row is masked.
// `extraReturn` returns the probabilities too; `dropout` puts ops between the softmax and the
// narrowing (reading %p0, defining %p).
std::string bf16Attention(const std::string& extraReturn = "", const std::string& dropout = "") {
  std::string s = "func.func @main(%q: tensor<2x3x5x4xbf16>, %k: tensor<2x3x6x4xbf16>, %v: tensor<2x3x6x4xbf16>, "
                  "%w: tensor<2x3x5x4xbf16>) -> (tensor<2x3x5x4xbf16>" +
                  std::string(extraReturn.empty() ? "" : ", tensor<2x3x5x6xf32>") + ") {\n";
  s += R"(  %s0 = "stablehlo.dot_general"(%q, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x3x5x4xbf16>, tensor<2x3x6x4xbf16>) -> tensor<2x3x5x6xbf16>
  %s = stablehlo.convert %s0 : (tensor<2x3x5x6xbf16>) -> tensor<2x3x5x6xf32>
  %c = stablehlo.constant dense<0.5> : tensor<2x3x5x6xf32>
  %ss = stablehlo.multiply %s, %c : tensor<2x3x5x6xf32>
  %iota = stablehlo.iota dim = 3 : tensor<2x1x5x6xi64>
  %lim = stablehlo.constant dense<5> : tensor<2x1x5x6xi64>
  %keep = stablehlo.compare LT, %iota, %lim : (tensor<2x1x5x6xi64>, tensor<2x1x5x6xi64>) -> tensor<2x1x5x6xi1>
  %kb = stablehlo.broadcast_in_dim %keep, dims = [0, 1, 2, 3] : (tensor<2x1x5x6xi1>) -> tensor<2x3x5x6xi1>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<2x3x5x6xf32>
  %x = stablehlo.select %kb, %ss, %ninf : tensor<2x3x5x6xi1>, tensor<2x3x5x6xf32>
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x5x6xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x6xf32>
  %sh = stablehlo.subtract %x, %mb : tensor<2x3x5x6xf32>
  %e = stablehlo.exponential %sh : tensor<2x3x5x6xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : (tensor<2x3x5x6xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x6xf32>
  %p0 = stablehlo.divide %e, %sb : tensor<2x3x5x6xf32>
)";
  s += dropout;
  s += "  %pn = stablehlo.convert " + std::string(dropout.empty() ? "%p0" : "%p") +
       " : (tensor<2x3x5x6xf32>) -> tensor<2x3x5x6xbf16>\n";
  s += R"(  %o = "stablehlo.dot_general"(%pn, %v) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<2x3x5x6xbf16>, tensor<2x3x6x4xbf16>) -> tensor<2x3x5x4xbf16>
  %r = stablehlo.multiply %o, %w : tensor<2x3x5x4xbf16>
)";
  s += "  return %r" + extraReturn + " : tensor<2x3x5x4xbf16>" +
       std::string(extraReturn.empty() ? "" : ", tensor<2x3x5x6xf32>") + "\n}\n";
  return s;
}

TEST(AttentionOutline, TorchFormBecomesOneCompositeComputingTheSameBits) {
  const std::string text = bf16Attention();
  auto original = parseAndVerify(text);
  auto outlined = parseAndVerify(text);
  ASSERT_TRUE(original && outlined);
  auto n = outlineAttention(*outlined, "main");
  ASSERT_TRUE(n) << n.status().toString();
  ASSERT_EQ(*n, 1);
  ASSERT_TRUE(verifyModule(*outlined).isOk()) << printModule(*outlined);
  const Block& body = FuncOp(outlined->lookupFunction("main")).body();
  EXPECT_EQ(countComposites(body, kAttentionComposite), 1);
  // Neither product, the softmax nor the -inf select remain in @main.
  for (const auto& op : body.operations()) {
    EXPECT_NE(op->code(), OpCode::DotGeneral) << op->describe();
    EXPECT_NE(op->code(), OpCode::Exponential) << op->describe();
    EXPECT_NE(op->code(), OpCode::Select) << op->describe();
  }
  // The composite carries what a fused kernel needs.
  for (const auto& op : body.operations())
    if (op->code() == OpCode::Composite) {
      const Attribute* attrs = op->attr("composite_attributes");
      ASSERT_NE(attrs, nullptr);
      EXPECT_EQ(attrs->field("mask")->stringValue(), "select");
      EXPECT_EQ(op->numOperands(), 4u);  // q, k, v and the mask before its broadcast
      EXPECT_EQ(op->operand(3)->type().toString(), "tensor<2x1x5x6xi1>");
      EXPECT_EQ(op->result(1)->type().toString(), "tensor<2x3x5xf32>");
    }
  // Printed and parsed back, it computes what the written-out program computes, bit for bit.
  auto reparsed = parseAndVerify(printModule(*outlined));
  ASSERT_TRUE(reparsed) << reparsed.status().toString();
  std::vector<Literal> args = randomArgs(*original->lookupFunction("main"), 11);
  auto want = run(*original, "main", args);
  auto got = run(*reparsed, "main", args);
  ASSERT_TRUE(want && got) << (want ? got.status() : want.status()).toString();
  EXPECT_TRUE((*got)[0].bitwiseEqual((*want)[0]));
}

TEST(AttentionOutline, LseIsTheLogSumExpOfTheMaskedScaledScores) {
  auto m = parseAndVerify(bf16Attention());
  ASSERT_TRUE(m);
  ASSERT_EQ(*outlineAttention(*m, "main"), 1);
  const Operation* decomposition = m->lookupFunction("warpforge_attention_0");
  ASSERT_NE(decomposition, nullptr);
  std::vector<Literal> args = randomArgs(*decomposition, 5);
  Literal mask = Literal::zeros(Type::tensor({2, 1, 5, 6}, ElementType::kI1));
  for (int64_t i = 0; i < mask.numElements(); ++i) mask.setInt(i, (i % 6) != 5);
  args[3] = std::move(mask);
  auto out = run(*m, "warpforge_attention_0", args);
  ASSERT_TRUE(out) << out.status().toString();
  const Literal& lse = (*out)[1];
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t i = 0; i < 5; ++i) {
        double total = 0;
        for (int64_t j = 0; j < 5; ++j) {  // key 5 masked
          double s = 0;
          for (int64_t d = 0; d < 4; ++d)
            s += args[0].getDouble(((b * 3 + h) * 5 + i) * 4 + d) * args[1].getDouble(((b * 3 + h) * 6 + j) * 4 + d);
          total += std::exp(0.5 * s);
        }
        EXPECT_NEAR(lse.getDouble((b * 3 + h) * 5 + i), std::log(total), 0.05) << b << " " << h << " " << i;
      }
}

// JAX writes the scale and the -inf fill as scalar constants broadcast to the scores' shape: the
// same pattern, and the broadcasts go with it.
TEST(AttentionOutline, BroadcastScalarConstantsMatchToo) {
  std::string text = bf16Attention();
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("  %c = stablehlo.constant dense<0.5> : tensor<2x3x5x6xf32>\n",
          "  %c0 = stablehlo.constant dense<0.5> : tensor<f32>\n"
          "  %c = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<f32>) -> tensor<2x3x5x6xf32>\n");
  replace("  %ninf = stablehlo.constant dense<0xFF800000> : tensor<2x3x5x6xf32>\n",
          "  %ninf0 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
          "  %ninf = stablehlo.broadcast_in_dim %ninf0, dims = [] : (tensor<f32>) -> tensor<2x3x5x6xf32>\n");
  auto original = parseAndVerify(text);
  auto outlined = parseAndVerify(text);
  ASSERT_TRUE(original && outlined) << text;
  ASSERT_EQ(*outlineAttention(*outlined, "main"), 1);
  ASSERT_TRUE(verifyModule(*outlined).isOk()) << printModule(*outlined);
  for (const auto& op : FuncOp(outlined->lookupFunction("main")).body().operations()) {
    EXPECT_NE(op->code(), OpCode::Exponential) << op->describe();
    if (op->code() == OpCode::Composite) {
      EXPECT_FLOAT_EQ(static_cast<float>(op->attr("composite_attributes")->field("scale")->floatValue()), 0.5f);
    }
  }
  auto reparsed = parseAndVerify(printModule(*outlined));
  ASSERT_TRUE(reparsed) << reparsed.status().toString();
  std::vector<Literal> args = randomArgs(*original->lookupFunction("main"), 12);
  auto want = run(*original, "main", args);
  auto got = run(*reparsed, "main", args);
  ASSERT_TRUE(want && got) << (want ? got.status() : want.status()).toString();
  EXPECT_TRUE((*got)[0].bitwiseEqual((*want)[0]));
}

// narrowOnly (what the CUDA backend asks for inference programs) outlines bf16 attention and
// leaves f32 attention written out.
TEST(AttentionOutline, NarrowOnlyLeavesF32WrittenOut) {
  std::string f32 = bf16Attention();
  for (size_t at = f32.find("bf16"); at != std::string::npos; at = f32.find("bf16", at)) f32.replace(at, 4, "f32");
  // The widening and narrowing converts become f32 -> f32 converts, which the pattern allows.
  OutlineAttentionOptions narrowOnly;
  narrowOnly.narrowOnly = true;
  auto bf16 = parseAndVerify(bf16Attention());
  auto wide = parseAndVerify(f32);
  ASSERT_TRUE(bf16 && wide) << f32;
  EXPECT_EQ(*outlineAttention(*bf16, "main", narrowOnly), 1);
  EXPECT_EQ(*outlineAttention(*wide, "main", narrowOnly), 0);
  EXPECT_EQ(*outlineAttention(*wide, "main"), 1);
}

TEST(AttentionOutline, ProbabilitiesReadElsewhereStayWrittenOut) {
  // Returned (output_attentions), or dropped out before the product: the pattern stays.
  for (const std::string& text :
       {bf16Attention(", %p0"), bf16Attention("", "  %keepp = stablehlo.constant dense<2.0> : tensor<2x3x5x6xf32>\n"
                                                  "  %p = stablehlo.multiply %p0, %keepp : tensor<2x3x5x6xf32>\n")}) {
    auto m = parseAndVerify(text);
    ASSERT_TRUE(m) << m.status().toString() << "\n" << text;
    auto n = outlineAttention(*m, "main");
    ASSERT_TRUE(n) << n.status().toString();
    EXPECT_EQ(*n, 0) << text;
  }
}

// bf16Attention's ops with q, k and v the head transposes of [B, S, H, D] arguments and o
// transposed back, as exporters write multi-head attention between its projections. `widened`:
// as torch.export writes it under bf16, the arguments and transposes f32, narrowed to bf16 after
// the transposes, and o widened to f32 before its transpose. `qElsewhere` also reads q (so its
// transpose has a second reader); `oElsewhere` reads o itself.
std::string sequenceMajorAttention(bool qElsewhere, bool oElsewhere, bool widened) {
  const std::string inner = bf16Attention();
  const size_t from = inner.find("  %s0 ="), to = inner.find("  %r =");
  const std::string t = widened ? "f32" : "bf16";
  std::string s = "func.func @main(%qs: tensor<2x5x3x4x" + t + ">, %ks: tensor<2x6x3x4x" + t +
                  ">, %vs: tensor<2x6x3x4x" + t + ">, %w: tensor<2x5x3x4x" + t +
                  ">, %w2: tensor<2x3x5x4xbf16>) -> (tensor<2x5x3x4x" + t + ">, tensor<2x3x5x4xbf16>) {\n";
  for (auto [name, seq] : {std::pair{"q", "5"}, std::pair{"k", "6"}, std::pair{"v", "6"}}) {
    const std::string n = name, heads = std::string("tensor<2x3x") + seq + "x4x";
    const std::string tr = std::string("stablehlo.transpose %") + n + "s, dims = [0, 2, 1, 3] : (tensor<2x" + seq +
                           "x3x4x" + t + ">) -> " + heads + t + ">\n";
    if (widened)
      s += "  %" + n + "w = " + tr + "  %" + n + " = stablehlo.convert %" + n + "w : (" + heads + "f32>) -> " + heads +
           "bf16>\n";
    else
      s += "  %" + n + " = " + tr;
  }
  s += inner.substr(from, to - from);
  std::string o = "%o";
  if (widened) {
    s += "  %ow = stablehlo.convert %o : (tensor<2x3x5x4xbf16>) -> tensor<2x3x5x4xf32>\n";
    o = "%ow";
  }
  s += "  %ot = stablehlo.transpose " + o + ", dims = [0, 2, 1, 3] : (tensor<2x3x5x4x" + t + ">) -> tensor<2x5x3x4x" +
       t + ">\n";
  s += "  %r = stablehlo.multiply %ot, %w : tensor<2x5x3x4x" + t + ">\n";
  s += std::string("  %r2 = stablehlo.multiply ") + (oElsewhere ? "%o" : "%w2") + ", " + (qElsewhere ? "%q" : "%w2") +
       " : tensor<2x3x5x4xbf16>\n";
  s += "  return %r, %r2 : tensor<2x5x3x4x" + t + ">, tensor<2x3x5x4xbf16>\n}\n";
  return s;
}

// The composite's layout attributes, "-" where absent.
std::string layouts(const Block& body) {
  std::string s;
  for (const auto& op : body.operations())
    if (op->code() == OpCode::Composite)
      for (const char* name : {"q_layout", "k_layout", "v_layout", "o_layout"}) {
        const Attribute* a = op->attr("composite_attributes")->field(name);
        s += (s.empty() ? "" : " ") + (a ? a->stringValue() : std::string("-"));
      }
  return s;
}

int countOps(const Block& body, OpCode code) {
  int n = 0;
  for (const auto& op : body.operations()) n += op->code() == code;
  return n;
}

TEST(AttentionLayouts, HeadTransposesAbsorbedComputeTheSameBits) {
  struct Case {
    bool qElsewhere, oElsewhere, widened;
    std::string layouts;
    int transposesLeft;
  };
  for (const Case& c : {Case{false, false, false, "bshd bshd bshd bshd", 0},
                        Case{true, false, false, "- bshd bshd bshd", 1}, Case{false, true, false, "bshd bshd bshd -", 1},
                        Case{false, false, true, "bshd bshd bshd bshd", 0}, Case{true, true, true, "- bshd bshd -", 2}}) {
    const std::string text = sequenceMajorAttention(c.qElsewhere, c.oElsewhere, c.widened);
    SCOPED_TRACE(text);
    auto original = parseAndVerify(text);
    auto rewritten = parseAndVerify(text);
    ASSERT_TRUE(original && rewritten) << (original ? rewritten.status() : original.status()).toString();
    ASSERT_EQ(*outlineAttention(*rewritten, "main"), 1);
    auto n = absorbAttentionTransposes(*rewritten, "main");
    ASSERT_TRUE(n) << n.status().toString();
    EXPECT_EQ(*n, 1);
    ASSERT_TRUE(verifyModule(*rewritten).isOk()) << printModule(*rewritten);
    const Block& body = FuncOp(rewritten->lookupFunction("main")).body();
    EXPECT_EQ(layouts(body), c.layouts);
    EXPECT_EQ(countOps(body, OpCode::Transpose), c.transposesLeft) << printModule(*rewritten);
    // Nothing is left to absorb.
    EXPECT_EQ(*absorbAttentionTransposes(*rewritten, "main"), 0);
    // Printed and parsed back, it computes what the written-out program computes, bit for bit.
    auto reparsed = parseAndVerify(printModule(*rewritten));
    ASSERT_TRUE(reparsed) << reparsed.status().toString();
    std::vector<Literal> args = randomArgs(*original->lookupFunction("main"), 17);
    auto want = run(*original, "main", args);
    auto got = run(*reparsed, "main", args);
    ASSERT_TRUE(want && got) << (want ? got.status() : want.status()).toString();
    for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*got)[i].bitwiseEqual((*want)[i])) << "result " << i;
  }
}

// sequenceMajorAttention's attention with q, k and v heads of wider projections, as a merged
// product leaves them (transforms/merge_products.h): q heads 1..3 of %qy [10, 20] (5 heads of 4),
// k heads 0..2 of %ky [12, 16], v heads 1..3 of %vy [2, 6, 16]. `kElsewhere` also reads k's slice
// (times %w).
std::string headSlicedAttention(bool kElsewhere) {
  const std::string inner = bf16Attention();
  const size_t from = inner.find("  %s0 ="), to = inner.find("  %r =");
  std::string s = "func.func @main(%qy: tensor<10x20xbf16>, %ky: tensor<12x16xbf16>, %vy: tensor<2x6x16xbf16>, "
                  "%w: tensor<12x12xbf16>) -> (tensor<2x5x3x4xbf16>, tensor<12x12xbf16>) {\n";
  struct Operand {
    std::string name, y, seq;
    std::vector<int64_t> yShape;
    int64_t first;
  };
  for (const Operand& x : {Operand{"q", "qy", "5", {10, 20}, 1}, Operand{"k", "ky", "6", {12, 16}, 0},
                           Operand{"v", "vy", "6", {2, 6, 16}, 1}}) {
    std::string ys = "tensor<", sl = "tensor<", start, limit, strides;
    for (size_t d = 0; d < x.yShape.size(); ++d) {
      const bool last = d + 1 == x.yShape.size();
      ys += std::to_string(x.yShape[d]) + "x";
      sl += std::to_string(last ? 12 : x.yShape[d]) + "x";
      start += (d ? ", " : "") + std::to_string(last ? x.first * 4 : 0);
      limit += (d ? ", " : "") + std::to_string(last ? x.first * 4 + 12 : x.yShape[d]);
      strides += d ? ", 1" : "1";
    }
    ys += "bf16>";
    sl += "bf16>";
    const std::string bshd = "tensor<2x" + x.seq + "x3x4xbf16>", bhsd = "tensor<2x3x" + x.seq + "x4xbf16>";
    s += "  %" + x.name + "sl = \"stablehlo.slice\"(%" + x.y + ") {start_indices = array<i64: " + start +
         ">, limit_indices = array<i64: " + limit + ">, strides = array<i64: " + strides + ">} : (" + ys + ") -> " +
         sl + "\n";
    s += "  %" + x.name + "s = \"stablehlo.reshape\"(%" + x.name + "sl) : (" + sl + ") -> " + bshd + "\n";
    s += "  %" + x.name + " = stablehlo.transpose %" + x.name + "s, dims = [0, 2, 1, 3] : (" + bshd + ") -> " + bhsd +
         "\n";
  }
  s += inner.substr(from, to - from);
  s += "  %ot = stablehlo.transpose %o, dims = [0, 2, 1, 3] : (tensor<2x3x5x4xbf16>) -> tensor<2x5x3x4xbf16>\n";
  s += std::string("  %k2 = stablehlo.multiply ") + (kElsewhere ? "%ksl" : "%w") + ", %w : tensor<12x12xbf16>\n";
  s += "  return %ot, %k2 : tensor<2x5x3x4xbf16>, tensor<12x12xbf16>\n}\n";
  return s;
}

TEST(AttentionLayouts, HeadsOfWiderProjectionsAreReadWhereTheyLie) {
  for (bool kElsewhere : {false, true}) {
    const std::string text = headSlicedAttention(kElsewhere);
    SCOPED_TRACE(text);
    auto original = parseAndVerify(text);
    auto rewritten = parseAndVerify(text);
    ASSERT_TRUE(original && rewritten) << (original ? rewritten.status() : original.status()).toString();
    ASSERT_EQ(*outlineAttention(*rewritten, "main"), 1);
    ASSERT_EQ(*absorbAttentionTransposes(*rewritten, "main"), 1);
    auto n = absorbAttentionHeadSlices(*rewritten, "main");
    ASSERT_TRUE(n) << n.status().toString();
    EXPECT_EQ(*n, 1);
    ASSERT_TRUE(verifyModule(*rewritten).isOk()) << printModule(*rewritten);
    const Block& body = FuncOp(rewritten->lookupFunction("main")).body();
    std::string heads;
    for (const auto& op : body.operations())
      if (op->code() == OpCode::Composite)
        for (const char* name : {"q_heads", "k_heads", "v_heads"}) {
          const Attribute* a = op->attr("composite_attributes")->field(name);
          std::optional<std::vector<int64_t>> range = a ? a->asIntList() : std::nullopt;
          heads += (heads.empty() ? "" : " ") + (range ? std::to_string((*range)[0]) + ":" + std::to_string((*range)[1])
                                                       : std::string("-"));
        }
    EXPECT_EQ(heads, "1:3 0:3 1:3");
    // The slices go, but k's where it is read elsewhere.
    EXPECT_EQ(countOps(body, OpCode::Slice), kElsewhere ? 1 : 0) << printModule(*rewritten);
    EXPECT_EQ(*absorbAttentionHeadSlices(*rewritten, "main"), 0);
    auto reparsed = parseAndVerify(printModule(*rewritten));
    ASSERT_TRUE(reparsed) << reparsed.status().toString();
    std::vector<Literal> args = randomArgs(*original->lookupFunction("main"), 23);
    auto want = run(*original, "main", args);
    auto got = run(*reparsed, "main", args);
    ASSERT_TRUE(want && got) << (want ? got.status() : want.status()).toString();
    for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*got)[i].bitwiseEqual((*want)[i])) << "result " << i;
  }
}

// The gradients of the outlined program: the same as the written-out program's (the backward
// composite's decomposition recomputes the forward ops), and the backward pass reads no
// [B, H, Sq, Skv] value of the forward pass.
TEST(AttentionGradient, MatchesTheWrittenOutProgramWithoutKeepingTheProbabilities) {
  const std::string text = bf16Attention();
  auto original = parseAndVerify(text);
  auto outlined = parseAndVerify(text);
  ASSERT_TRUE(original && outlined);
  ASSERT_EQ(*outlineAttention(*outlined, "main"), 1);
  std::vector<int> wrt = {0, 1, 2};
  auto a = addValueAndGradFunction(*original, "main", wrt);
  auto b = addValueAndGradFunction(*outlined, "main", wrt);
  ASSERT_TRUE(a && b) << (a ? b.status() : a.status()).toString();
  auto reparsed = parseAndVerify(printModule(*outlined));
  ASSERT_TRUE(reparsed) << reparsed.status().toString();
  const Block& body = FuncOp(reparsed->lookupFunction(*b)).body();
  EXPECT_EQ(countComposites(body, kAttentionComposite), 1);
  EXPECT_EQ(countComposites(body, kAttentionGradComposite), 1);
  for (const auto& op : body.operations())
    for (const auto& r : op->results())
      EXPECT_FALSE(r->type().rank() == 4 && r->type().dim(1) == 3 && r->type().dim(2) == 5 && r->type().dim(3) == 6)
          << op->describe() << " makes a scores-shaped value in the value-and-grad function";

  std::vector<Literal> args = randomArgs(*original->lookupFunction("main"), 3);
  auto want = run(*original, *a, args);
  auto got = run(*reparsed, *b, args);
  ASSERT_TRUE(want && got) << (want ? got.status() : want.status()).toString();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const Literal& w = (*want)[i];
    const Literal& g = (*got)[i];
    ASSERT_EQ(w.type(), g.type());
    for (int64_t e = 0; e < w.numElements(); ++e) {
      ASSERT_FALSE(std::isnan(g.getDouble(e)));
      // The same ops in the same order, except that the backward pass reads a recomputed
      // (identical) forward: equal up to bf16 rounding of the cotangents' sums' order.
      EXPECT_NEAR(g.getDouble(e), w.getDouble(e), 1e-2 * (1 + std::fabs(w.getDouble(e)))) << "result " << i << " [" << e << "]";
    }
  }
}

// Float64 attention as a composite written by hand (the decomposition: torch's form with an
// additive float bias), differentiated through the rule and checked by central differences;
// with the bias among the differentiated arguments the rule takes the inline path.
std::string compositeProgram() {
  return R"(func.func private @attn(%q: tensor<2x2x3x4xf64>, %k: tensor<2x2x5x4xf64>, %v: tensor<2x2x5x3xf64>, %bias: tensor<2x1x3x5xf64>) -> (tensor<2x2x3x3xf64>, tensor<2x2x3xf32>) {
  %s = "stablehlo.dot_general"(%q, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x2x3x4xf64>, tensor<2x2x5x4xf64>) -> tensor<2x2x3x5xf64>
  %c = stablehlo.constant dense<0.7> : tensor<2x2x3x5xf64>
  %ss = stablehlo.multiply %s, %c : tensor<2x2x3x5xf64>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [0, 1, 2, 3] : (tensor<2x1x3x5xf64>) -> tensor<2x2x3x5xf64>
  %x = stablehlo.add %ss, %bb : tensor<2x2x3x5xf64>
  %lowest = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %m = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x3x5xf64>, tensor<f64>) -> tensor<2x2x3xf64>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x2x3xf64>) -> tensor<2x2x3x5xf64>
  %sh = stablehlo.subtract %x, %mb : tensor<2x2x3x5xf64>
  %e = stablehlo.exponential %sh : tensor<2x2x3x5xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : (tensor<2x2x3x5xf64>, tensor<f64>) -> tensor<2x2x3xf64>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<2x2x3xf64>) -> tensor<2x2x3x5xf64>
  %p = stablehlo.divide %e, %sb : tensor<2x2x3x5xf64>
  %o = "stablehlo.dot_general"(%p, %v) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<2x2x3x5xf64>, tensor<2x2x5x3xf64>) -> tensor<2x2x3x3xf64>
  %l = stablehlo.log %sum : tensor<2x2x3xf64>
  %lse64 = stablehlo.add %m, %l : tensor<2x2x3xf64>
  %lse = stablehlo.convert %lse64 : (tensor<2x2x3xf64>) -> tensor<2x2x3xf32>
  return %o, %lse : tensor<2x2x3x3xf64>, tensor<2x2x3xf32>
}
func.func @main(%q: tensor<2x2x3x4xf64>, %k: tensor<2x2x5x4xf64>, %v: tensor<2x2x5x3xf64>, %bias: tensor<2x1x3x5xf64>, %w: tensor<2x2x3x3xf64>) -> tensor<f64> {
  %o:2 = "stablehlo.composite"(%q, %k, %v, %bias) {name = "warpforge.attention", composite_attributes = {scale = 0.7 : f32, mask = "add"}, decomposition = @attn, version = 0 : i32} : (tensor<2x2x3x4xf64>, tensor<2x2x5x4xf64>, tensor<2x2x5x3xf64>, tensor<2x1x3x5xf64>) -> (tensor<2x2x3x3xf64>, tensor<2x2x3xf32>)
  %ow = stablehlo.multiply %o#0, %w : tensor<2x2x3x3xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %r = stablehlo.reduce(%ow init: %z) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<2x2x3x3xf64>, tensor<f64>) -> tensor<f64>
  return %r : tensor<f64>
}
)";
}

void checkFiniteDifferences(const std::vector<int>& wrt, const std::string& gradComposite, int expectedGradComposites) {
  auto m = parseAndVerify(compositeProgram());
  ASSERT_TRUE(m) << m.status().toString();
  auto name = addValueAndGradFunction(*m, "main", wrt);
  ASSERT_TRUE(name) << name.status().toString();
  auto reparsed = parseAndVerify(printModule(*m));
  ASSERT_TRUE(reparsed) << reparsed.status().toString();
  EXPECT_EQ(countComposites(FuncOp(reparsed->lookupFunction(*name)).body(), gradComposite), expectedGradComposites);
  std::vector<Literal> args = randomArgs(*reparsed->lookupFunction("main"), 21);
  auto grads = run(*reparsed, *name, args);
  ASSERT_TRUE(grads) << grads.status().toString();
  const double eps = 1e-6;
  for (size_t k = 0; k < wrt.size(); ++k) {
    const size_t a = static_cast<size_t>(wrt[k]);
    const Literal& g = (*grads)[1 + k];
    for (int64_t i = 0; i < args[a].numElements(); ++i) {
      std::vector<Literal> plus = args, minus = args;
      for (auto& l : plus) l = l.clone();
      for (auto& l : minus) l = l.clone();
      plus[a].setDouble(i, args[a].getDouble(i) + eps);
      minus[a].setDouble(i, args[a].getDouble(i) - eps);
      auto fp = run(*reparsed, "main", plus);
      auto fm = run(*reparsed, "main", minus);
      ASSERT_TRUE(fp && fm);
      const double numeric = ((*fp)[0].getDouble(0) - (*fm)[0].getDouble(0)) / (2 * eps);
      EXPECT_NEAR(g.getDouble(i), numeric, 1e-6 * (1 + std::fabs(numeric))) << "argument " << a << " [" << i << "]";
    }
  }
}

TEST(AttentionGradient, BackwardCompositeMatchesFiniteDifferences) {
  checkFiniteDifferences({0, 1, 2}, std::string(kAttentionGradComposite), 1);
}

TEST(AttentionGradient, LearnedBiasGetsItsGradientInline) {
  checkFiniteDifferences({0, 1, 2, 3}, std::string(kAttentionGradComposite), 0);
}

}  // namespace
}  // namespace wf
