// Loop fusion (fusion.h): which ops a plan groups, that every generated kernel compiles with
// NVRTC (no GPU needed), and, on a GPU, that fused programs give what the CPU interpreter and the
// one-kernel-per-op plan give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/plan_rewrites.h"
#include "backends/cuda/codegen/nvrtc.h"
#include "cuda_test_util.h"
#include "eval/element_math.h"
#include "runtime/file_io.h"
#include "transforms/refine_shapes.h"

namespace wf::cudatest {
namespace {

// LayerNorm over the last dim, as the exporter lowers it (bias and scale broadcast from rank 1).
const char* kLayerNorm = R"(
func.func @main(%x: tensor<4x33x96xf32>, %g: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<4x33x96xf32> {
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %sum = "stablehlo.reduce"(%x, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<4x33x96xf32>, tensor<f32>) -> tensor<4x33xf32>
  %n = "stablehlo.constant"() {value = dense<96.0> : tensor<4x33xf32>} : () -> tensor<4x33xf32>
  %mean = "stablehlo.divide"(%sum, %n) : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  %mb = "stablehlo.broadcast_in_dim"(%mean) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x33xf32>) -> tensor<4x33x96xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<4x33x96xf32>, tensor<4x33x96xf32>) -> tensor<4x33x96xf32>
  %sq = "stablehlo.multiply"(%d, %d) : (tensor<4x33x96xf32>, tensor<4x33x96xf32>) -> tensor<4x33x96xf32>
  %vs = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<4x33x96xf32>, tensor<f32>) -> tensor<4x33xf32>
  %var = "stablehlo.divide"(%vs, %n) : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  %eps = "stablehlo.constant"() {value = dense<1e-5> : tensor<4x33xf32>} : () -> tensor<4x33xf32>
  %ve = "stablehlo.add"(%var, %eps) : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  %r = "stablehlo.rsqrt"(%ve) : (tensor<4x33xf32>) -> tensor<4x33xf32>
  %rb = "stablehlo.broadcast_in_dim"(%r) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x33xf32>) -> tensor<4x33x96xf32>
  %y = "stablehlo.multiply"(%d, %rb) : (tensor<4x33x96xf32>, tensor<4x33x96xf32>) -> tensor<4x33x96xf32>
  %gb = "stablehlo.broadcast_in_dim"(%g) {broadcast_dimensions = array<i64: 2>} : (tensor<96xf32>) -> tensor<4x33x96xf32>
  %yg = "stablehlo.multiply"(%y, %gb) : (tensor<4x33x96xf32>, tensor<4x33x96xf32>) -> tensor<4x33x96xf32>
  %bb = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 2>} : (tensor<96xf32>) -> tensor<4x33x96xf32>
  %out = "stablehlo.add"(%yg, %bb) : (tensor<4x33x96xf32>, tensor<4x33x96xf32>) -> tensor<4x33x96xf32>
  func.return %out : tensor<4x33x96xf32>
}
)";

// Attention-style head split in bf16 with the exporter's f32 islands: convert, bias add,
// reshape, transpose, convert back; a mask from iota/compare/select; a strided slice.
const char* kHeads = R"(
func.func @main(%x: tensor<6x40xbf16>, %bias: tensor<40xbf16>, %m: tensor<2x3x4x10xf32>) -> (tensor<2x4x3x10xbf16>, tensor<2x4x3x10xf32>, tensor<2x2x4x5xf32>) {
  %xf = "stablehlo.convert"(%x) : (tensor<6x40xbf16>) -> tensor<6x40xf32>
  %bf = "stablehlo.convert"(%bias) : (tensor<40xbf16>) -> tensor<40xf32>
  %bb = "stablehlo.broadcast_in_dim"(%bf) {broadcast_dimensions = array<i64: 1>} : (tensor<40xf32>) -> tensor<6x40xf32>
  %s = "stablehlo.add"(%xf, %bb) : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %r = "stablehlo.reshape"(%s) : (tensor<6x40xf32>) -> tensor<2x3x4x10xf32>
  %t = "stablehlo.transpose"(%r) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x10xf32>) -> tensor<2x4x3x10xf32>
  %o = "stablehlo.convert"(%t) : (tensor<2x4x3x10xf32>) -> tensor<2x4x3x10xbf16>
  %i0 = "stablehlo.iota"() {iota_dimension = 2 : i64} : () -> tensor<2x4x3x10xi32>
  %i1 = "stablehlo.iota"() {iota_dimension = 3 : i64} : () -> tensor<2x4x3x10xi32>
  %c = "stablehlo.compare"(%i0, %i1) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<2x4x3x10xi32>, tensor<2x4x3x10xi32>) -> tensor<2x4x3x10xi1>
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x4x3x10xf32>} : () -> tensor<2x4x3x10xf32>
  %mt = "stablehlo.transpose"(%m) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x10xf32>) -> tensor<2x4x3x10xf32>
  %e = "stablehlo.exponential"(%mt) : (tensor<2x4x3x10xf32>) -> tensor<2x4x3x10xf32>
  %sel = "stablehlo.select"(%c, %e, %ninf) : (tensor<2x4x3x10xi1>, tensor<2x4x3x10xf32>, tensor<2x4x3x10xf32>) -> tensor<2x4x3x10xf32>
  %sl = "stablehlo.slice"(%m) {start_indices = array<i64: 0, 1, 0, 1>, limit_indices = array<i64: 2, 3, 4, 10>, strides = array<i64: 1, 1, 1, 2>} : (tensor<2x3x4x10xf32>) -> tensor<2x2x4x5xf32>
  %neg = "stablehlo.negate"(%sl) : (tensor<2x2x4x5xf32>) -> tensor<2x2x4x5xf32>
  %mx = "stablehlo.maximum"(%neg, %sl) : (tensor<2x2x4x5xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x4x5xf32>
  func.return %o, %sel, %mx : tensor<2x4x3x10xbf16>, tensor<2x4x3x10xf32>, tensor<2x2x4x5xf32>
}
)";

// Integer and boolean chains, a value with two users, and a clamp with scalar bounds.
const char* kInts = R"(
func.func @main(%a: tensor<7x9xi32>, %b: tensor<7x9xi32>, %lo: tensor<i32>, %hi: tensor<i32>) -> (tensor<7x9xi32>, tensor<7x9xi64>, tensor<7x9xi1>) {
  %s = "stablehlo.add"(%a, %b) : (tensor<7x9xi32>, tensor<7x9xi32>) -> tensor<7x9xi32>
  %p = "stablehlo.multiply"(%s, %s) : (tensor<7x9xi32>, tensor<7x9xi32>) -> tensor<7x9xi32>
  %n = "stablehlo.negate"(%p) : (tensor<7x9xi32>) -> tensor<7x9xi32>
  %c = "stablehlo.clamp"(%lo, %n, %hi) : (tensor<i32>, tensor<7x9xi32>, tensor<i32>) -> tensor<7x9xi32>
  %w = "stablehlo.convert"(%s) : (tensor<7x9xi32>) -> tensor<7x9xi64>
  %x = "stablehlo.xor"(%a, %b) : (tensor<7x9xi32>, tensor<7x9xi32>) -> tensor<7x9xi32>
  %z = "stablehlo.constant"() {value = dense<0> : tensor<7x9xi32>} : () -> tensor<7x9xi32>
  %gt = "stablehlo.compare"(%x, %z) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<7x9xi32>, tensor<7x9xi32>) -> tensor<7x9xi1>
  %lt = "stablehlo.compare"(%s, %z) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<7x9xi32>, tensor<7x9xi32>) -> tensor<7x9xi1>
  %both = "stablehlo.and"(%gt, %lt) : (tensor<7x9xi1>, tensor<7x9xi1>) -> tensor<7x9xi1>
  %nb = "stablehlo.not"(%both) : (tensor<7x9xi1>) -> tensor<7x9xi1>
  func.return %c, %w, %nb : tensor<7x9xi32>, tensor<7x9xi64>, tensor<7x9xi1>
}
)";

// A transformer FFN's first half as the exporter lowers BERT's: the matmul's bias add, a reshape
// back to [batch, seq, hidden] that both halves of the (erf) GELU read, and the reshape to the
// next matmul's operand.
// A loop group whose rows are whole vectors (24 bf16 elements: three of 8), with each way an
// input can be read: a head transpose and a bias (the next element each), a per-row scale (one
// element for the whole group) and a transpose of the last dim (element by element); the f32
// sum is also a side output.
const char* kVectorRows = R"(
func.func @main(%x: tensor<3x16x5x24xbf16>, %bias: tensor<24xbf16>, %s: tensor<3x5x16xf32>, %y: tensor<3x5x24x16xbf16>) -> (tensor<3x5x16x24xbf16>, tensor<3x5x16x24xf32>) {
  %xt = "stablehlo.transpose"(%x) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<3x16x5x24xbf16>) -> tensor<3x5x16x24xbf16>
  %xf = "stablehlo.convert"(%xt) : (tensor<3x5x16x24xbf16>) -> tensor<3x5x16x24xf32>
  %bf = "stablehlo.convert"(%bias) : (tensor<24xbf16>) -> tensor<24xf32>
  %bb = "stablehlo.broadcast_in_dim"(%bf) {broadcast_dimensions = array<i64: 3>} : (tensor<24xf32>) -> tensor<3x5x16x24xf32>
  %sb = "stablehlo.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<3x5x16xf32>) -> tensor<3x5x16x24xf32>
  %yt = "stablehlo.transpose"(%y) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<3x5x24x16xbf16>) -> tensor<3x5x16x24xbf16>
  %yf = "stablehlo.convert"(%yt) : (tensor<3x5x16x24xbf16>) -> tensor<3x5x16x24xf32>
  %a = "stablehlo.add"(%xf, %bb) : (tensor<3x5x16x24xf32>, tensor<3x5x16x24xf32>) -> tensor<3x5x16x24xf32>
  %m = "stablehlo.multiply"(%a, %sb) : (tensor<3x5x16x24xf32>, tensor<3x5x16x24xf32>) -> tensor<3x5x16x24xf32>
  %r = "stablehlo.add"(%m, %yf) : (tensor<3x5x16x24xf32>, tensor<3x5x16x24xf32>) -> tensor<3x5x16x24xf32>
  %o = "stablehlo.convert"(%r) : (tensor<3x5x16x24xf32>) -> tensor<3x5x16x24xbf16>
  func.return %o, %r : tensor<3x5x16x24xbf16>, tensor<3x5x16x24xf32>
}
)";

// Its inputs, fresh.
std::vector<Literal> vectorRowsArgs() {
  std::vector<Literal> args;
  args.push_back(randomLiteral(Type::tensor({3, 16, 5, 24}, ElementType::kBF16)));
  args.push_back(randomLiteral(Type::tensor({24}, ElementType::kBF16)));
  args.push_back(randomLiteral(Type::tensor({3, 5, 16}, ElementType::kF32)));
  args.push_back(randomLiteral(Type::tensor({3, 5, 24, 16}, ElementType::kBF16)));
  return args;
}

// Slices of a merged product's result (merge_products.h), each projection's columns: one from a
// multiple of 8 (every second row, too), read as vectors of 8; one from column 20, element by
// element.
const char* kSlicedRows = R"(
func.func @main(%d: tensor<6x48xbf16>, %e: tensor<3x48xbf16>, %bias: tensor<24xbf16>) -> tensor<3x24xbf16> {
  %q = "stablehlo.slice"(%d) {start_indices = array<i64: 1, 8>, limit_indices = array<i64: 6, 32>, strides = array<i64: 2, 1>} : (tensor<6x48xbf16>) -> tensor<3x24xbf16>
  %k = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 20>, limit_indices = array<i64: 3, 44>, strides = array<i64: 1, 1>} : (tensor<3x48xbf16>) -> tensor<3x24xbf16>
  %qf = "stablehlo.convert"(%q) : (tensor<3x24xbf16>) -> tensor<3x24xf32>
  %kf = "stablehlo.convert"(%k) : (tensor<3x24xbf16>) -> tensor<3x24xf32>
  %bf = "stablehlo.convert"(%bias) : (tensor<24xbf16>) -> tensor<24xf32>
  %bb = "stablehlo.broadcast_in_dim"(%bf) {broadcast_dimensions = array<i64: 1>} : (tensor<24xf32>) -> tensor<3x24xf32>
  %s = "stablehlo.add"(%qf, %kf) : (tensor<3x24xf32>, tensor<3x24xf32>) -> tensor<3x24xf32>
  %a = "stablehlo.add"(%s, %bb) : (tensor<3x24xf32>, tensor<3x24xf32>) -> tensor<3x24xf32>
  %o = "stablehlo.convert"(%a) : (tensor<3x24xf32>) -> tensor<3x24xbf16>
  func.return %o : tensor<3x24xbf16>
}
)";

const char* kGeluFfn = R"(
func.func @main(%h: tensor<32x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<32x128xf32> {
  %d = "stablehlo.dot_general"(%h, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  %bb = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<32x128xf32>
  %a = "stablehlo.add"(%d, %bb) : (tensor<32x128xf32>, tensor<32x128xf32>) -> tensor<32x128xf32>
  %x = "stablehlo.reshape"(%a) : (tensor<32x128xf32>) -> tensor<2x16x128xf32>
  %half = "stablehlo.constant"() {value = dense<0.5> : tensor<2x16x128xf32>} : () -> tensor<2x16x128xf32>
  %p = "stablehlo.multiply"(%x, %half) : (tensor<2x16x128xf32>, tensor<2x16x128xf32>) -> tensor<2x16x128xf32>
  %s = "stablehlo.constant"() {value = dense<0.7071067811865476> : tensor<2x16x128xf32>} : () -> tensor<2x16x128xf32>
  %q = "stablehlo.multiply"(%x, %s) : (tensor<2x16x128xf32>, tensor<2x16x128xf32>) -> tensor<2x16x128xf32>
  %e = "chlo.erf"(%q) : (tensor<2x16x128xf32>) -> tensor<2x16x128xf32>
  %one = "stablehlo.constant"() {value = dense<1.0> : tensor<2x16x128xf32>} : () -> tensor<2x16x128xf32>
  %t = "stablehlo.add"(%e, %one) : (tensor<2x16x128xf32>, tensor<2x16x128xf32>) -> tensor<2x16x128xf32>
  %g = "stablehlo.multiply"(%p, %t) : (tensor<2x16x128xf32>, tensor<2x16x128xf32>) -> tensor<2x16x128xf32>
  %r = "stablehlo.reshape"(%g) : (tensor<2x16x128xf32>) -> tensor<32x128xf32>
  func.return %r : tensor<32x128xf32>
}
)";

// A batch norm in training as the exporter and autodiff write it for NCHW under bf16 autocast:
// statistics and a gradient sum over N, H and W of the f32 widening of bf16 activations (runs
// reductions), and the normalised output in bf16.
std::string batchNormProgram(const std::vector<int64_t>& nchw, const std::string& et) {
  std::string t = "tensor<";
  for (int64_t d : nchw) t += std::to_string(d) + "x";
  const std::string x = t + et + ">", xf = t + "f32>", xo = t + "bf16>";
  const std::string c = "tensor<" + std::to_string(nchw[1]) + "xf32>";
  const std::string count = std::to_string(nchw[0] * nchw[2] * nchw[3]) + ".0";
  auto sum = [&](const std::string& r, const std::string& v) {
    return "  " + r + " = \"stablehlo.reduce\"(" + v + ", %zero) ({\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n" +
           "    %s = \"stablehlo.add\"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n" +
           "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n  }) {dimensions = array<i64: 0, 2, 3>} : (" + xf +
           ", tensor<f32>) -> " + c + "\n";
  };
  std::string text = "func.func @main(%x: " + x + ", %dy: " + x + ") -> (" + c + ", " + c + ", " + c + ", " + xo + ") {\n";
  text += "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n";
  if (et == "f32") {
    text += "  %xf = \"stablehlo.negate\"(%x) : (" + x + ") -> " + xf + "\n";
    text += "  %dyf = \"stablehlo.abs\"(%dy) : (" + x + ") -> " + xf + "\n";
  } else {
    text += "  %xf = \"stablehlo.convert\"(%x) : (" + x + ") -> " + xf + "\n";
    text += "  %dyf = \"stablehlo.convert\"(%dy) : (" + x + ") -> " + xf + "\n";
  }
  text += sum("%sum", "%xf");
  text += "  %n = \"stablehlo.constant\"() {value = dense<" + count + "> : " + c + "} : () -> " + c + "\n";
  text += "  %mean = \"stablehlo.divide\"(%sum, %n) : (" + c + ", " + c + ") -> " + c + "\n";
  text += "  %mb = \"stablehlo.broadcast_in_dim\"(%mean) {broadcast_dimensions = array<i64: 1>} : (" + c + ") -> " + xf + "\n";
  text += "  %d = \"stablehlo.subtract\"(%xf, %mb) : (" + xf + ", " + xf + ") -> " + xf + "\n";
  text += "  %sq = \"stablehlo.multiply\"(%d, %d) : (" + xf + ", " + xf + ") -> " + xf + "\n";
  text += sum("%vs", "%sq");
  text += "  %var = \"stablehlo.divide\"(%vs, %n) : (" + c + ", " + c + ") -> " + c + "\n";
  text += "  %r = \"stablehlo.rsqrt\"(%var) : (" + c + ") -> " + c + "\n";
  text += "  %rb = \"stablehlo.broadcast_in_dim\"(%r) {broadcast_dimensions = array<i64: 1>} : (" + c + ") -> " + xf + "\n";
  text += "  %y = \"stablehlo.multiply\"(%d, %rb) : (" + xf + ", " + xf + ") -> " + xf + "\n";
  text += "  %yb = \"stablehlo.convert\"(%y) : (" + xf + ") -> " + xo + "\n";
  text += "  %pd = \"stablehlo.multiply\"(%dyf, %d) : (" + xf + ", " + xf + ") -> " + xf + "\n";
  text += "  %np = \"stablehlo.negate\"(%pd) : (" + xf + ") -> " + xf + "\n";
  text += sum("%g", "%np");
  text += "  func.return %mean, %var, %g, %yb : " + c + ", " + c + ", " + c + ", " + xo + "\n}\n";
  return text;
}

// PyTorch's bf16 linear layer as the exporter writes it (the f32 product plus bias, rounded
// once), on a batched lhs with shapes off every tile size, then a GELU-like use of the result.
const char* kDotBias = R"(
func.func @main(%x: tensor<2x37x53xbf16>, %w: tensor<29x53xbf16>, %b: tensor<29xbf16>) -> (tensor<2x37x29xbf16>, tensor<2x37x29xbf16>) {
  %d = "stablehlo.dot_general"(%x, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x37x53xbf16>, tensor<29x53xbf16>) -> tensor<2x37x29xf32>
  %bf = "stablehlo.convert"(%b) : (tensor<29xbf16>) -> tensor<29xf32>
  %bb = "stablehlo.broadcast_in_dim"(%bf) {broadcast_dimensions = array<i64: 2>} : (tensor<29xf32>) -> tensor<2x37x29xf32>
  %s = "stablehlo.add"(%d, %bb) : (tensor<2x37x29xf32>, tensor<2x37x29xf32>) -> tensor<2x37x29xf32>
  %y = "stablehlo.convert"(%s) : (tensor<2x37x29xf32>) -> tensor<2x37x29xbf16>
  %t = "stablehlo.tanh"(%y) : (tensor<2x37x29xbf16>) -> tensor<2x37x29xbf16>
  %g = "stablehlo.multiply"(%y, %t) : (tensor<2x37x29xbf16>, tensor<2x37x29xbf16>) -> tensor<2x37x29xbf16>
  func.return %y, %g : tensor<2x37x29xbf16>, tensor<2x37x29xbf16>
}
)";

TEST(FusionPlan, LayerNormFusesItsElementwiseChains) {
  Module m = parse(kLayerNorm);
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  // Row fusion: the whole norm is one group, both reductions included (d = x - mean has three
  // users, all inside the group, so it is recomputed per pass instead of stored).
  ASSERT_EQ(plan.groups.size(), 1u);
  const cuda::FusionGroup& g = plan.groups.back();
  EXPECT_EQ(g.root()->code(), OpCode::Add);
  int reduces = 0;
  for (const Operation* op : g.ops) reduces += op->code() == OpCode::Reduce;
  EXPECT_EQ(reduces, 2);
  ASSERT_EQ(g.inputs.size(), 3u);  // x, g, b
  EXPECT_EQ(g.inputs[0]->nameHint(), "%x");
  int broadcasts = 0;
  for (const Operation* op : plan.absorbed) broadcasts += op->code() == OpCode::BroadcastInDim;
  EXPECT_EQ(broadcasts, 4);
}

const Operation* opNamed(const Block& body, const std::string& name) {
  for (const auto& op : body.operations())
    if (op->numResults() == 1 && op->result(0)->nameHint() == name) return op.get();
  return nullptr;
}

TEST(FusionPlan, BatchNormSumsAreRunsReductionsOfTheirElementwiseWork) {
  Module m = parse(batchNormProgram({32, 8, 28, 28}, "bf16"));
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  // Three runs reductions, each computing its operand (the f32 widening, the centred square, the
  // gradient product) from the bf16 inputs as it reads them; no f32 activation is stored: not
  // the widened inputs, nor the centred value that three groups read (each computes it), nor
  // the squares and products.
  int runs = 0;
  for (const cuda::FusionGroup& g : plan.groups) {
    for (const Value* in : g.inputs) {
      if (in->type().rank() != 4) continue;
      EXPECT_EQ(in->type().elementType(), ElementType::kBF16) << in->nameHint();
    }
    if (!g.reducesRuns()) continue;
    ++runs;
    EXPECT_GT(g.ops.size(), 1u);
    Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(g, "k");
    ASSERT_TRUE(code) << code.status().toString();
    EXPECT_TRUE(code->twoPhase);
    // 8 results of 25088 elements: slices of them fill the device, combined by phase 1.
    EXPECT_GT(code->blocks, 8);
    EXPECT_GT(code->finishBlocks, 0);
    EXPECT_GE(code->workspaceBytes, static_cast<size_t>(code->blocks) * sizeof(float));
  }
  EXPECT_EQ(runs, 3);
  for (const Operation* op : plan.absorbed) EXPECT_NE(op->code(), OpCode::Reduce);
}

TEST(FusionPlan, BiasAddJoinsTheGeluThroughASharedReshape) {
  Module m = parse(kGeluFfn);
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  // The reshape %x has two users, both in the GELU's group: it is computed for that group alone,
  // so the bias add behind it joins too and %a never lives in memory. One kernel, not two.
  ASSERT_EQ(plan.groups.size(), 1u);
  const cuda::FusionGroup& g = plan.groups[0];
  EXPECT_EQ(g.root(), opNamed(body, "%g"));
  for (const char* name : {"%bb", "%a", "%x", "%p", "%q", "%e", "%t"}) {
    const Operation* op = opNamed(body, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_NE(std::find(g.ops.begin(), g.ops.end(), op), g.ops.end()) << name << " is not in the group";
    EXPECT_TRUE(plan.absorbed.count(op)) << name << " has a step of its own";
  }
  std::vector<std::string> inputs;  // the matmul's result and the bias
  for (const Value* v : g.inputs) inputs.push_back(v->nameHint());
  std::sort(inputs.begin(), inputs.end());
  EXPECT_EQ(inputs, (std::vector<std::string>{"%b", "%d"}));
}

TEST(FusionPlan, AReshapeReadByTwoGroupsKeepsItsProducerApart) {
  // As kGeluFfn, with the reshape also read by a second result's chain: the bias add would be
  // computed twice if both groups took it, so it keeps its own kernel.
  std::string text = kGeluFfn;
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("-> tensor<32x128xf32> {", "-> (tensor<32x128xf32>, tensor<2x16x128xf32>) {");
  replace("  func.return %r : tensor<32x128xf32>",
          "  %z = \"stablehlo.exponential\"(%x) : (tensor<2x16x128xf32>) -> tensor<2x16x128xf32>\n"
          "  func.return %r, %z : tensor<32x128xf32>, tensor<2x16x128xf32>");
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  ASSERT_EQ(plan.groups.size(), 3u);  // the bias add, the GELU, the exponential
  EXPECT_TRUE(plan.groupOfRoot.count(opNamed(body, "%a")));
  EXPECT_TRUE(plan.groupOfRoot.count(opNamed(body, "%g")));
  EXPECT_TRUE(plan.groupOfRoot.count(opNamed(body, "%z")));
}

TEST(FusionPlan, AConvertedEmbeddingTableIsConvertedRowByRowInEveryGroupThatGathers) {
  // A low-precision export: the bf16 table is converted to f32, rows are gathered, and the rows
  // are read by a row reduction (RMSNorm's mean square) and by the residual add.
  Module m = parse(R"(func.func @main(%ids: tensor<2x8x1xi64>, %table: tensor<100x64xbf16>, %r: tensor<2x8x64xf32>) -> (tensor<2x8xf32>, tensor<2x8x64xf32>) {
  %t = "stablehlo.convert"(%table) : (tensor<100x64xbf16>) -> tensor<100x64xf32>
  %e = "stablehlo.gather"(%t, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>, indices_are_sorted = false} : (tensor<100x64xf32>, tensor<2x8x1xi64>) -> tensor<2x8x64xf32>
  %sq = "stablehlo.multiply"(%e, %e) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ms = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8xf32>
  %sum = "stablehlo.add"(%e, %r) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  func.return %ms, %sum : tensor<2x8xf32>, tensor<2x8x64xf32>
}
)");
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  ASSERT_EQ(plan.groups.size(), 2u);
  for (const cuda::FusionGroup& g : plan.groups) {
    std::vector<std::string> codes;
    for (const Operation* op : g.ops) codes.push_back(op->name());
    EXPECT_NE(std::find(codes.begin(), codes.end(), "stablehlo.convert"), codes.end());
    EXPECT_NE(std::find(codes.begin(), codes.end(), "stablehlo.gather"), codes.end());
    // The groups read the bf16 table itself, never an f32 copy of it.
    for (const Value* in : g.inputs)
      EXPECT_FALSE(in->type().rank() == 2 && in->type().elementType() == ElementType::kF32);
  }
  for (const auto& op : mainBody(m).operations())
    if (op->code() == OpCode::Convert) {
      EXPECT_TRUE(plan.absorbed.count(op.get()));
    }
}

TEST(FusionPlan, TapsKeepTheirBuffers) {
  Module m = parse(kLayerNorm);
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  const Value* y = nullptr;
  for (const auto& op : body.operations())
    if (op->numResults() == 1 && op->result(0)->nameHint() == "%y") y = op->result(0);
  ASSERT_NE(y, nullptr);
  cuda::FusionPlan plan = cuda::planFusion(body, {y});
  // One kernel: the norm writes the tapped value beside its result (a side output, stored).
  ASSERT_EQ(plan.groups.size(), 1u);
  const std::vector<const Operation*> sides = {y->definingOp()};
  EXPECT_EQ(plan.groups[0].sideOutputs, sides);
}

TEST(FusionPlan, ValuesOnlyARegionReadsStayAlive) {
  // %d is read only inside the while body; %dead and %dead2 by nothing.
  Module m = parse(R"(func.func @main(%x: tensor<8xf32>, %step: tensor<8xf32>) -> tensor<8xf32> {
  %d = "stablehlo.multiply"(%step, %step) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %dead = "stablehlo.exponential"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %dead2 = "stablehlo.reshape"(%dead) : (tensor<8xf32>) -> tensor<2x4xf32>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<8xf32>):
    %n = "stablehlo.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
    %c = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<8xf32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = "stablehlo.add"(%v, %d) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    "stablehlo.return"(%i1, %v1) : (tensor<i32>, tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<8xf32>) -> (tensor<i32>, tensor<8xf32>)
  func.return %r#1 : tensor<8xf32>
}
)");
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  std::vector<std::string> absorbed;
  for (const Operation* op : plan.absorbed) absorbed.push_back(op->result(0)->nameHint());
  std::sort(absorbed.begin(), absorbed.end());
  EXPECT_EQ(absorbed, (std::vector<std::string>{"%dead", "%dead2"}));
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].root()->result(0)->nameHint(), "%d");
}

// The generated kernel's parameter ("in<i>") that reads the group's input named `name`.
std::string kernelInputNamed(const cuda::FusionGroup& g, const std::string& name) {
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.inputs[i]->nameHint() == name) return "in" + std::to_string(i);
  ADD_FAILURE() << name << " is not an input of the group";
  return "?";
}

// How a vector loop kernel reads each input (the kernel text), and that a root whose rows are
// not whole vectors keeps the scalar loop.
TEST(FusionPlan, VectorLoopKernelsReadWholeRowsAsVectors) {
  Module m = parse(kVectorRows);
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  ASSERT_EQ(plan.groups.size(), 1u);
  const cuda::FusionGroup& g = plan.groups[0];
  ASSERT_EQ(g.sideOutputs.size(), 1u);
  Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(g, "k");
  ASSERT_TRUE(code) << code.status().toString();
  auto in = [&](const std::string& name) { return kernelInputNamed(g, name); };
  const std::string& k = code->code;
  EXPECT_EQ(code->blocks, 3 * 5 * 16 * 24 / (256 * 8) + 1);
  for (const std::string& vector : {in("%x"), in("%bias")})
    EXPECT_NE(k.find("reinterpret_cast<const wf_vec<unsigned short, 8>*>(" + vector + " + "), std::string::npos) << vector << "\n" << k;
  EXPECT_NE(k.find("if (wf_e == 0) wf_r"), std::string::npos) << k;  // the row's scale, once
  EXPECT_NE(k.find(" = " + in("%s") + "["), std::string::npos) << k;
  EXPECT_EQ(k.find("reinterpret_cast<const wf_vec<float"), std::string::npos) << k;
  EXPECT_NE(k.find(in("%y") + "[(int)"), std::string::npos) << k;  // element by element
  EXPECT_EQ(k.find("wf_vec<unsigned short, 8>*>(" + in("%y")), std::string::npos) << k;
  // The root and the f32 side output are stored as vectors.
  EXPECT_NE(k.find("reinterpret_cast<wf_vec<unsigned short, 8>*>(out + base)"), std::string::npos) << k;
  EXPECT_NE(k.find("reinterpret_cast<wf_vec<float, 8>*>(out1 + base)"), std::string::npos) << k;

  // Rows of 20 bf16 elements are not whole vectors of 8: four elements per thread, 256 apart.
  std::string text = kVectorRows;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"x24x", "x20x"}, {"x24xbf16", "x20xbf16"},
                                 {"<24xbf16>", "<20xbf16>"}, {"<24xf32>", "<20xf32>"}, {"x24xf32", "x20xf32"}})
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  Module narrow = parse(text);
  ASSERT_TRUE(mainOf(narrow));
  cuda::FusionPlan narrowPlan = cuda::planFusion(mainBody(narrow), {});
  ASSERT_EQ(narrowPlan.groups.size(), 1u);
  Expected<cuda::FusedKernelSource> scalar = cuda::generateFusedKernel(narrowPlan.groups[0], "k");
  ASSERT_TRUE(scalar) << scalar.status().toString();
  EXPECT_EQ(scalar->code.find("wf_vec"), std::string::npos) << scalar->code;
  EXPECT_NE(scalar->code.find("base + k * 256"), std::string::npos) << scalar->code;
}

TEST(FusionPlan, SlicesFromWholeVectorsAreReadAsVectors) {
  Module m = parse(kSlicedRows);
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  ASSERT_EQ(plan.groups.size(), 1u);
  const cuda::FusionGroup& g = plan.groups[0];
  Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(g, "k");
  ASSERT_TRUE(code) << code.status().toString();
  auto in = [&](const std::string& name) { return kernelInputNamed(g, name); };
  const std::string& k = code->code;
  EXPECT_NE(k.find("reinterpret_cast<const wf_vec<unsigned short, 8>*>(" + in("%d") + " + "), std::string::npos) << k;
  EXPECT_EQ(k.find("wf_vec<unsigned short, 8>*>(" + in("%e")), std::string::npos) << k;
  EXPECT_NE(k.find(in("%e") + "[(int)"), std::string::npos) << k;  // element by element
}

TEST(FusionPlan, GeneratedKernelsCompileWithNvrtc) {
  const std::string batchNorm = batchNormProgram({32, 8, 28, 28}, "bf16"),
                    batchNormOnePhase = batchNormProgram({32, 256, 7, 7}, "f32");
  for (const char* text : {kLayerNorm, kHeads, kInts, kGeluFfn, kVectorRows, kSlicedRows, batchNorm.c_str(), batchNormOnePhase.c_str()}) {
    Module m = parse(text);
    ASSERT_TRUE(mainOf(m));
    cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
    ASSERT_FALSE(plan.groups.empty());
    std::string source = cuda::fusedKernelPrelude();
    for (size_t i = 0; i < plan.groups.size(); ++i) {
      Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(plan.groups[i], "k" + std::to_string(i));
      ASSERT_TRUE(code) << code.status().toString();
      source += code->code;
    }
    if (std::getenv("WF_PRINT_FUSED")) std::cout << source << "\n";
    for (const char* arch : {"sm_80", "sm_90"}) {
      Expected<std::string> cubin = cuda::compileToCubin(source, arch);
      EXPECT_TRUE(cubin) << cubin.status().toString() << "\n" << source;
      if (cubin) {
        EXPECT_GT(cubin->size(), 0u);
      }
    }
  }
}

// Every op the generator fuses, on every element type it takes it for, each as a one-op kernel,
// all compiled in one NVRTC program: generated calls the element math header (eval/element_math.h,
// embedded in the binary) does not compile fail here, without a GPU.
TEST(FusionPlan, EveryFusibleOpOnEveryTypeCompilesWithNvrtc) {
  const char* const types[] = {"i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "bf16", "f16", "f32", "f64"};
  std::vector<std::pair<std::string, int>> ops;  // name, operands
#define WF_UNARY(code, F) ops.emplace_back(std::string(opCodeName(OpCode::code)), 1);
#define WF_BINARY(code, F) ops.emplace_back(std::string(opCodeName(OpCode::code)), 2);
  WF_EM_UNARY_OPS(WF_UNARY) WF_EM_CHLO_UNARY_OPS(WF_UNARY)
  WF_EM_BINARY_OPS(WF_BINARY) WF_EM_CHLO_BINARY_OPS(WF_BINARY)
#undef WF_UNARY
#undef WF_BINARY
  std::string source = cuda::fusedKernelPrelude();
  int kernels = 0;
  std::vector<std::string> fused;
  auto add = [&](const std::string& text) {
    Module m = parse(text);
    ASSERT_TRUE(mainOf(m)) << text;
    const Operation& op = *mainBody(m).operations().front();
    if (!cuda::isFusible(op)) return;
    cuda::FusionGroup group;
    group.ops = {&op};
    for (const Value* v : op.operands())
      if (std::find(group.inputs.begin(), group.inputs.end(), v) == group.inputs.end()) group.inputs.push_back(v);
    Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(group, "k" + std::to_string(kernels++));
    ASSERT_TRUE(code) << code.status().toString() << "\n" << text;
    source += code->code;
    fused.push_back(std::string(opCodeName(op.code())));
  };
  for (const char* t : types) {
    const std::string tt = std::string("tensor<3x5x") + t + ">";
    const std::string sig = "func.func @main(%a: " + tt + ", %b: " + tt + ", %c: " + tt + ", %p: tensor<3x5xi1>) -> ";
    for (const auto& [name, arity] : ops)
      add(sig + tt + " {\n  %r = \"" + name + "\"(%a" + (arity == 2 ? ", %b" : "") + ") : (" + tt +
          (arity == 2 ? ", " + tt : "") + ") -> " + tt + "\n  func.return %r : " + tt + "\n}\n");
    for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"})
      add(sig + "tensor<3x5xi1> {\n  %r = \"stablehlo.compare\"(%a, %b) {comparison_direction = #stablehlo<comparison_direction " +
          dir + ">} : (" + tt + ", " + tt + ") -> tensor<3x5xi1>\n  func.return %r : tensor<3x5xi1>\n}\n");
    add(sig + tt + " {\n  %r = \"stablehlo.clamp\"(%a, %b, %c) : (" + tt + ", " + tt + ", " + tt + ") -> " + tt +
        "\n  func.return %r : " + tt + "\n}\n");
    add(sig + tt + " {\n  %r = \"stablehlo.select\"(%p, %a, %b) : (tensor<3x5xi1>, " + tt + ", " + tt + ") -> " + tt +
        "\n  func.return %r : " + tt + "\n}\n");
    for (const char* to : types) {
      const std::string tu = std::string("tensor<3x5x") + to + ">";
      add(sig + tu + " {\n  %r = \"stablehlo.convert\"(%a) : (" + tt + ") -> " + tu + "\n  func.return %r : " + tu + "\n}\n");
    }
  }
  if (HasFatalFailure()) return;
  // Today's fusible set: the float ops of the lists, integer and boolean arithmetic, compare,
  // clamp, select and converts.
  EXPECT_GE(kernels, 4 * 42 + 9 * 12 + 13 * 13);
  for (const char* name : {"stablehlo.exponential", "chlo.erf_inv", "stablehlo.atan2", "stablehlo.remainder", "stablehlo.xor"})
    EXPECT_NE(std::find(fused.begin(), fused.end(), name), fused.end()) << name;
  if (std::getenv("WF_PRINT_FUSED")) std::cout << source << "\n";
  Expected<std::string> cubin = cuda::compileToCubin(source, "sm_90");
  EXPECT_TRUE(cubin) << cubin.status().toString();
}

TEST(FusionPlan, CompilerErrorsComeBackWithTheLog) {
  Expected<std::string> cubin = cuda::compileToCubin("extern \"C\" __global__ void k() { undeclared(); }", "sm_90");
  ASSERT_FALSE(cubin);
  EXPECT_NE(cubin.status().message().find("undeclared"), std::string::npos) << cubin.status().toString();
}

// Fused, unfused and the CPU interpreter on the same fresh inputs.
// `bitwise`: the fused plan must equal the one-kernel-per-op plan bit for bit (true unless the
// program reduces: a row-fused reduction sums in another order than the reduce kernel).
// `hasDot`: a matrix product sums in another order than the interpreter's, so the comparison
// with the CPU is by relative L2 error.
void expectFusedMatches(const char* text, std::vector<Literal> args, bool bitwise = true, bool hasDot = false) {
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  std::vector<Literal> copies;
  for (const Literal& a : args) copies.push_back(a.clone());
  Expected<std::vector<Literal>> want = runCpu(m, std::move(copies));
  ASSERT_TRUE(want) << want.status().toString();
  bool narrowArguments = false;
  for (const Literal& a : args)
    narrowArguments = narrowArguments || a.elementType() == ElementType::kBF16 || a.elementType() == ElementType::kF16;
  CompileOptions fused, unfused;
  unfused.fuse = false;
  Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), fused);
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  EXPECT_GT(info.fusedKernels, 0);
  Expected<RunResult> got = (*exe)->run(args);
  ASSERT_TRUE(got) << got.status().toString();
  Expected<RunResult> plain = runCuda(m, args, unfused);
  ASSERT_TRUE(plain) << plain.status().toString();
  ASSERT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    // Reductions on the GPU sum in another order than the interpreter.
    Tolerance tol = defaultTolerance((*want)[i].elementType());
    if ((*want)[i].elementType() == ElementType::kF32 && !bitwise) tol = Tolerance{2e-5, 2e-6};
    // A product (`hasDot`) sums in another order on the GPU than in the interpreter (and the
    // tuned algorithm may change it from process to process). In bf16 an element of it may then
    // round to the neighbouring value (2^-8 of it), and so may what is computed from it.
    const Tolerance cpuTol = hasDot ? Tolerance{0, 0, narrowArguments ? 2e-3 : 1e-5} : tol;
    EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], cpuTol), "") << "result #" << i;
    // Same rounding after every op, no FMA contraction: bit for bit the per-op kernels.
    if (bitwise) EXPECT_EQ(compareLiterals(got->outputs[i], plain->outputs[i], Tolerance{0, 0}), "") << "result #" << i;
    else EXPECT_EQ(compareLiterals(got->outputs[i], plain->outputs[i], tol), "") << "result #" << i;
  }
}

TEST(FusionRun, LayerNorm) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kLayerNorm, {randomLiteral(Type::tensor({4, 33, 96}, ElementType::kF32)),
                                  randomLiteral(Type::tensor({96}, ElementType::kF32)),
                                  randomLiteral(Type::tensor({96}, ElementType::kF32))},
                     /*bitwise=*/false);
}

// Runs reductions: several slices per result combined by the second phase (8 channels of 25088
// elements), and one slice per result (256 channels of 1568), in bf16 and f32. The incoming
// gradient is the activation itself, so that every sum is far from zero (the gradient sum is then
// minus the sum of squares about the mean plus a cancelling term): a relative tolerance then
// judges the kernels, not the summation order.
TEST(FusionRun, BatchNormRunsReductions) {
  WF_REQUIRE_GPU();
  for (const auto& [shape, et] : {std::pair<std::vector<int64_t>, std::string>{{32, 8, 28, 28}, "bf16"},
                                  {{32, 256, 7, 7}, "bf16"}, {{16, 8, 20, 36}, "f32"}}) {
    SCOPED_TRACE(et);
    const ElementType t = et == "f32" ? ElementType::kF32 : ElementType::kBF16;
    Literal x = randomLiteral(Type::tensor(shape, t), 0.5, 2.0);
    Literal dy = x.clone();
    expectFusedMatches(batchNormProgram(shape, et).c_str(), {std::move(x), std::move(dy)}, /*bitwise=*/false);
  }
}

TEST(FusionRun, HeadsMaskAndSlice) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kHeads, {randomLiteral(Type::tensor({6, 40}, ElementType::kBF16)),
                              randomLiteral(Type::tensor({40}, ElementType::kBF16)),
                              randomLiteral(Type::tensor({2, 3, 4, 10}, ElementType::kF32))});
}

TEST(FusionRun, IntegersAndBooleans) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kInts, {randomLiteral(Type::tensor({7, 9}, ElementType::kSI32), 1, 0),
                             randomLiteral(Type::tensor({7, 9}, ElementType::kSI32), 1, 0),
                             randomLiteral(Type::tensor({}, ElementType::kSI32), -1000, 0),
                             randomLiteral(Type::tensor({}, ElementType::kSI32), 0, 1000)});
}

TEST(FusionRun, GeluWithItsBiasAdd) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kGeluFfn, {randomLiteral(Type::tensor({32, 64}, ElementType::kF32)),
                                randomLiteral(Type::tensor({64, 128}, ElementType::kF32)),
                                randomLiteral(Type::tensor({128}, ElementType::kF32))},
                     /*bitwise=*/true, /*hasDot=*/true);
}

TEST(FusionRun, VectorLoopKernels) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kVectorRows, vectorRowsArgs());
}

TEST(FusionRun, SlicesReadAsVectors) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kSlicedRows, {randomLiteral(Type::tensor({6, 48}, ElementType::kBF16)),
                                   randomLiteral(Type::tensor({3, 48}, ElementType::kBF16)),
                                   randomLiteral(Type::tensor({24}, ElementType::kBF16))});
}

// A caller's buffers need not be 16-byte aligned: the vector loop kernel then moves the same
// elements one at a time, to the same bits.
TEST(FusionRun, VectorLoopKernelsOnUnalignedBuffers) {
  WF_REQUIRE_GPU();
  Module m = parse(kVectorRows);
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  ASSERT_EQ(plan.groups.size(), 1u);
  const cuda::FusionGroup& g = plan.groups[0];
  Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(g, "wf_vector_rows");
  ASSERT_TRUE(code) << code.status().toString();
  Expected<std::shared_ptr<cuda::Device>> device = cuda::Device::get(0);
  ASSERT_TRUE(device) << device.status().toString();
  Expected<std::vector<cudaKernel_t>> kernels =
      cuda::compileRuntimeKernels(**device, cuda::fusedKernelPrelude(), {{"wf_vector_rows", code->code}}, CompileOptions{});
  ASSERT_TRUE(kernels) << kernels.status().toString();
  ASSERT_EQ((*kernels).size(), 1u);
  Status active = (*device)->activate();
  ASSERT_TRUE(active) << active.toString();

  const std::vector<Literal> args = vectorRowsArgs();
  const std::vector<std::string> names = {"%x", "%bias", "%s", "%y"};
  std::vector<const Literal*> inputs;
  for (const Value* v : g.inputs)
    inputs.push_back(&args[static_cast<size_t>(std::find(names.begin(), names.end(), v->nameHint()) - names.begin())]);
  const std::vector<size_t> outBytes = {3 * 5 * 16 * 24 * 2, 3 * 5 * 16 * 24 * 4};
  // Every buffer at `shift` bytes past a 256-byte boundary; the results as bytes.
  auto launch = [&](size_t shift) {
    std::vector<char*> buffers;
    std::vector<void*> pointers;
    for (const Literal* l : inputs) {
      char* b = nullptr;
      EXPECT_EQ(cudaMalloc(&b, l->sizeBytes() + 256), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(b + shift, l->data(), l->sizeBytes(), cudaMemcpyHostToDevice), cudaSuccess);
      buffers.push_back(b);
      pointers.push_back(b + shift);
    }
    for (size_t bytes : outBytes) {
      char* b = nullptr;
      EXPECT_EQ(cudaMalloc(&b, bytes + 256), cudaSuccess);
      buffers.push_back(b);
      pointers.push_back(b + shift);
    }
    std::vector<void*> params;
    for (void*& p : pointers) params.push_back(&p);
    EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>((*kernels)[0]), dim3(static_cast<unsigned>(code->blocks)),
                               dim3(static_cast<unsigned>(code->threads)), params.data(), 0, nullptr),
              cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::string> out;
    for (size_t k = 0; k < outBytes.size(); ++k) {
      std::string bytes(outBytes[k], '\0');
      EXPECT_EQ(cudaMemcpy(bytes.data(), pointers[inputs.size() + k], outBytes[k], cudaMemcpyDeviceToHost), cudaSuccess);
      out.push_back(std::move(bytes));
    }
    for (char* b : buffers) EXPECT_EQ(cudaFree(b), cudaSuccess);
    return out;
  };
  const std::vector<std::string> aligned = launch(0), shifted = launch(4);
  EXPECT_TRUE(aligned == shifted);

  // And both are what the program computes.
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  ASSERT_EQ(want->size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const Literal& w = (*want)[k];
    ASSERT_EQ(w.sizeBytes(), outBytes[k]);
    Literal got = Literal::uninitialized(w.type());
    std::memcpy(got.data(), aligned[k].data(), outBytes[k]);
    EXPECT_EQ(compareLiterals(got, w, defaultTolerance(w.elementType())), "") << "result #" << k;
  }
}

TEST(FusionRun, Bf16ProductPlusBiasRoundsOnce) {
  WF_REQUIRE_GPU();
  Module m = parse(kDotBias);
  ASSERT_TRUE(mainOf(m));
  std::vector<Literal> args = {randomLiteral(Type::tensor({2, 37, 53}, ElementType::kBF16)),
                               randomLiteral(Type::tensor({29, 53}, ElementType::kBF16)),
                               randomLiteral(Type::tensor({29}, ElementType::kBF16))};
  std::vector<Literal> copies;
  for (const Literal& a : args) copies.push_back(a.clone());
  Expected<std::vector<Literal>> want = runCpu(m, std::move(copies));
  ASSERT_TRUE(want) << want.status().toString();
  Expected<RunResult> got = runCuda(m, args, CompileOptions{});
  ASSERT_TRUE(got) << got.status().toString();
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], Tolerance{0, 0, 4e-3}), "") << "result #" << i;
  // Rounded once: y is the bf16 rounding of an f32 sum within a few f32 ulps of the exact one,
  // so only elements whose sum lies that near a rounding boundary may differ from the exact sum
  // rounded once. Rounding the product to bf16 before adding the bias (as cuBLASLt's bias
  // epilogue with a bf16 bias was measured to do, on every element) changes about a quarter.
  const Literal& y = got->outputs[0];
  int64_t once = 0, twice = 0;
  for (int64_t i = 0; i < 2 * 37; ++i)
    for (int64_t n = 0; n < 29; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < 53; ++k) sum += args[0].getDouble(i * 53 + k) * args[1].getDouble(n * 53 + k);
      const double bias = args[2].getDouble(n);
      const double roundedOnce = Literal::scalarDouble(ElementType::kBF16, sum + bias).getDouble(0);
      const double product = Literal::scalarDouble(ElementType::kBF16, sum).getDouble(0);
      const double roundedTwice = Literal::scalarDouble(ElementType::kBF16, product + bias).getDouble(0);
      once += y.getDouble(i * 29 + n) == roundedOnce;
      twice += y.getDouble(i * 29 + n) == roundedTwice;
    }
  EXPECT_GT(once, y.numElements() * 19 / 20) << "equal to the sum rounded twice: " << twice;
}

// RoPE's rotate_half as the exporter writes it (the halves of x sliced, the second negated, the
// two concatenated swapped), times sin, plus x times cos; head dim 10, so the halves are 5 wide;
// and a three-way concatenate along a middle dim with a one-wide operand.
const char* kRope = R"(
func.func @main(%x: tensor<2x3x7x10xbf16>, %cos: tensor<7x10xbf16>, %sin: tensor<7x10xbf16>, %u: tensor<2x1x4xf32>, %v: tensor<2x3x4xf32>, %w: tensor<2x2x4xf32>) -> (tensor<2x3x7x10xbf16>, tensor<2x6x4xf32>) {
  %x1 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 2, 3, 7, 5>, strides = array<i64: 1, 1, 1, 1>} : (tensor<2x3x7x10xbf16>) -> tensor<2x3x7x5xbf16>
  %x2 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 0, 5>, limit_indices = array<i64: 2, 3, 7, 10>, strides = array<i64: 1, 1, 1, 1>} : (tensor<2x3x7x10xbf16>) -> tensor<2x3x7x5xbf16>
  %n = "stablehlo.negate"(%x2) : (tensor<2x3x7x5xbf16>) -> tensor<2x3x7x5xbf16>
  %r = "stablehlo.concatenate"(%n, %x1) {dimension = 3 : i64} : (tensor<2x3x7x5xbf16>, tensor<2x3x7x5xbf16>) -> tensor<2x3x7x10xbf16>
  %cb = "stablehlo.broadcast_in_dim"(%cos) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<7x10xbf16>) -> tensor<2x3x7x10xbf16>
  %sb = "stablehlo.broadcast_in_dim"(%sin) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<7x10xbf16>) -> tensor<2x3x7x10xbf16>
  %a = "stablehlo.multiply"(%x, %cb) : (tensor<2x3x7x10xbf16>, tensor<2x3x7x10xbf16>) -> tensor<2x3x7x10xbf16>
  %b = "stablehlo.multiply"(%r, %sb) : (tensor<2x3x7x10xbf16>, tensor<2x3x7x10xbf16>) -> tensor<2x3x7x10xbf16>
  %y = "stablehlo.add"(%a, %b) : (tensor<2x3x7x10xbf16>, tensor<2x3x7x10xbf16>) -> tensor<2x3x7x10xbf16>
  %e = "stablehlo.exponential"(%v) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %c3 = "stablehlo.concatenate"(%u, %e, %w) {dimension = 1 : i64} : (tensor<2x1x4xf32>, tensor<2x3x4xf32>, tensor<2x2x4xf32>) -> tensor<2x6x4xf32>
  %z = "stablehlo.multiply"(%c3, %c3) : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  func.return %y, %z : tensor<2x3x7x10xbf16>, tensor<2x6x4xf32>
}
)";

TEST(FusionPlan, ConcatenatesAreReadWhereTheyAreUsed) {
  Module m = parse(kRope);
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  // One kernel per result; neither concatenate has a step or a buffer of its own.
  ASSERT_EQ(plan.groups.size(), 2u);
  for (const char* name : {"%r", "%c3", "%n", "%e"}) {
    const Operation* op = opNamed(body, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_TRUE(plan.absorbed.count(op)) << name << " has a step of its own";
  }
}

TEST(FusionRun, ConcatenatesOfRopeAndOfAMiddleDim) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kRope, {randomLiteral(Type::tensor({2, 3, 7, 10}, ElementType::kBF16)),
                             randomLiteral(Type::tensor({7, 10}, ElementType::kBF16)),
                             randomLiteral(Type::tensor({7, 10}, ElementType::kBF16)),
                             randomLiteral(Type::tensor({2, 1, 4}, ElementType::kF32)),
                             randomLiteral(Type::tensor({2, 3, 4}, ElementType::kF32)),
                             randomLiteral(Type::tensor({2, 2, 4}, ElementType::kF32))});
}

TEST(FusionRun, LargeTensorUsesEveryBlock) {
  WF_REQUIRE_GPU();
  // More elements than one launch's threads cover in one pass of the grid-stride loop.
  const char* text = R"(
func.func @main(%a: tensor<1100x1100xf32>, %b: tensor<1100xf32>) -> tensor<1100x1100xbf16> {
  %bb = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 0>} : (tensor<1100xf32>) -> tensor<1100x1100xf32>
  %t = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<1100x1100xf32>) -> tensor<1100x1100xf32>
  %s = "stablehlo.multiply"(%t, %bb) : (tensor<1100x1100xf32>, tensor<1100x1100xf32>) -> tensor<1100x1100xf32>
  %e = "stablehlo.tanh"(%s) : (tensor<1100x1100xf32>) -> tensor<1100x1100xf32>
  %o = "stablehlo.convert"(%e) : (tensor<1100x1100xf32>) -> tensor<1100x1100xbf16>
  func.return %o : tensor<1100x1100xbf16>
}
)";
  expectFusedMatches(text, {randomLiteral(Type::tensor({1100, 1100}, ElementType::kF32)),
                            randomLiteral(Type::tensor({1100}, ElementType::kF32))});
}

// A weight converted and transposed before a matrix product, as the exporter writes linear
// layers of bf16 models: with the weight bound, that work runs once, not per run.
const char* kLinear = R"(
func.func @main(%x: tensor<5x24xbf16>, %w: tensor<16x24xbf16>, %b: tensor<16xbf16>) -> tensor<5x16xf32> {
  %wf = "stablehlo.convert"(%w) : (tensor<16x24xbf16>) -> tensor<16x24xf32>
  %wt = "stablehlo.transpose"(%wf) {permutation = array<i64: 1, 0>} : (tensor<16x24xf32>) -> tensor<24x16xf32>
  %wb = "stablehlo.convert"(%wt) : (tensor<24x16xf32>) -> tensor<24x16xbf16>
  %y = "stablehlo.dot_general"(%x, %wb) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<5x24xbf16>, tensor<24x16xbf16>) -> tensor<5x16xbf16>
  %yf = "stablehlo.convert"(%y) : (tensor<5x16xbf16>) -> tensor<5x16xf32>
  %bf = "stablehlo.convert"(%b) : (tensor<16xbf16>) -> tensor<16xf32>
  %bb = "stablehlo.broadcast_in_dim"(%bf) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<5x16xf32>
  %out = "stablehlo.add"(%yf, %bb) : (tensor<5x16xf32>, tensor<5x16xf32>) -> tensor<5x16xf32>
  func.return %out : tensor<5x16xf32>
}
)";

TEST(FusionRun, BoundWeightWorkRunsOnceAndAgainAfterARebind) {
  WF_REQUIRE_GPU();
  Module m = parse(kLinear);
  ASSERT_TRUE(mainOf(m));
  CompileOptions options;
  options.boundArguments = {1, 2};
  Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  EXPECT_EQ(info.hoistedSteps, 1);  // the weight's convert-transpose-convert, one fused kernel
  Literal x = randomLiteral(Type::tensor({5, 24}, ElementType::kBF16));
  std::vector<Literal> xs;
  xs.push_back(x.clone());
  // Declared bound but not bound: an error, not a run on stale memory.
  Expected<RunResult> unbound = (*exe)->run(xs);
  ASSERT_FALSE(unbound);
  EXPECT_NE(unbound.status().message().find("argument #1"), std::string::npos) << unbound.status().toString();
  for (int round = 0; round < 2; ++round) {
    Literal w = randomLiteral(Type::tensor({16, 24}, ElementType::kBF16));
    Literal b = randomLiteral(Type::tensor({16}, ElementType::kBF16));
    ASSERT_TRUE((*exe)->bindArgument(1, w).isOk());
    ASSERT_TRUE((*exe)->bindArgument(2, b).isOk());
    std::vector<Literal> args;
    args.push_back(x.clone());
    args.push_back(w.clone());
    args.push_back(b.clone());
    Expected<std::vector<Literal>> want = runCpu(m, std::move(args));
    ASSERT_TRUE(want) << want.status().toString();
    for (int run = 0; run < 2; ++run) {
      Expected<RunResult> got = (*exe)->run(xs);
      ASSERT_TRUE(got) << got.status().toString();
      Tolerance tol;
      tol.relL2 = 1e-2;  // bf16 products
      EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], tol), "") << "round " << round << " run " << run;
    }
  }
}

// Programs the exporter wrote (with a dynamic batch), refined to batch 3.
std::unique_ptr<Module> exportedProgram(const std::string& name) {
  // From the repository root (where scripts/gpu-check.sh runs a carried binary), else from the
  // source tree this binary was built from.
  const std::string rel = "tests/unit/data/refine_shapes/" + name + ".mlir";
  Expected<std::string> text = readFileBytes(rel);
  if (!text) text = readFileBytes(std::string(WF_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(text) << text.status().toString();
  if (!text) return nullptr;
  Module m = parse(*text);
  if (!mainOf(m)) return nullptr;
  std::vector<Type> args;
  for (const Type& t : FuncOp(mainOf(m)).functionType().inputs) {
    std::vector<int64_t> shape = t.shape();
    for (int64_t& d : shape)
      if (d == kDynamic) d = 3;
    args.push_back(Type::tensor(shape, t.elementType()));
  }
  Expected<std::unique_ptr<Module>> refined = refineShapes(m, "main", args);
  EXPECT_TRUE(refined) << refined.status().toString();
  return refined ? std::move(*refined) : nullptr;
}

const char* const kExported[] = {"mlp", "bert_small", "convnet", "embednet", "lstm"};

// What every step reads is stored: an argument, or the result of an op that has a step (not
// one absorbed into a fused kernel). Checked in nested regions too (their ops read the entry's
// values as operands).
void expectStepsReadStoredValues(const Block& body, const cuda::FusionPlan& plan, const std::string& name) {
  // A side output is stored by its group's step, at the group's root: read only after it.
  std::unordered_map<const Operation*, size_t> position;
  for (const auto& op : body.operations()) position.emplace(op.get(), position.size());
  std::unordered_map<const Operation*, size_t> storedAt;  // side output -> its group's root position
  for (const cuda::FusionGroup& g : plan.groups)
    for (const Operation* side : g.sideOutputs) storedAt[side] = position.at(g.root());
  auto stored = [&](const Value* v, const Operation* reader) {
    const Operation* p = v->definingOp();
    if (!p || !plan.absorbed.count(p)) return true;
    auto it = storedAt.find(p);
    return it != storedAt.end() && position.at(reader) > it->second;
  };
  for (const cuda::FusionGroup& g : plan.groups)
    for (const Value* in : g.inputs)
      EXPECT_TRUE(stored(in, g.root())) << name << ": " << g.root()->describe() << " reads " << in->nameHint()
                                        << ", which no step before it stores";
  for (const auto& op : body.operations()) {
    if (plan.absorbed.count(op.get()) || plan.groupOfRoot.count(op.get())) continue;
    for (const Value* in : op->operands())
      EXPECT_TRUE(stored(in, op.get())) << name << ": " << op->describe() << " reads " << in->nameHint()
                                        << ", which no step before it stores";
  }
}

// A reshape kept as an alias (a matrix product reads it through a second reshape) whose other
// reader is a group that computes the reshape for itself, from a reshape of a computed value:
// the group's read of that operand must not count as absorbing it, or the alias would read a
// value no step stores (a two-layer LSTM's zero state, once its repeats were merged).
TEST(FusionPlan, AReshapeKeptAsAnAliasHasItsOperandStored) {
  Module m = parse(R"(
func.func @main(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<1x4x8xf32>) {
  %e = "stablehlo.exponential"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = "stablehlo.reshape"(%e) : (tensor<4x8xf32>) -> tensor<32xf32>
  %r1 = "stablehlo.reshape"(%r0) : (tensor<32xf32>) -> tensor<1x4x8xf32>
  %r2 = "stablehlo.reshape"(%r1) : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
  %d = "stablehlo.dot_general"(%r2, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = "stablehlo.reshape"(%a) : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
  %s = "stablehlo.multiply"(%r1, %b) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  func.return %d, %s : tensor<4x8xf32>, tensor<1x4x8xf32>
}
)");
  ASSERT_TRUE(mainOf(m));
  const Block& body = FuncOp(mainOf(m)).body();
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  expectStepsReadStoredValues(body, plan, "reshape chain");
}

// Two pre-norm blocks as a bf16 decoder's export writes them (f32 residual stream, bf16 matrix
// products): block 1 adds a product to the residual and RMS-normalises the sum (its mean of
// squares kept [rows, 1] and broadcast back), for a bf16 product whose output is block 2's; block
// 2 adds that to the residual again and layer-normalises it, returning the norm's f32 value and
// its bf16 copy. The residual sums and the f32 norm are read after the kernels that compute them:
// side outputs of those row groups. `cols` columns per row, 2 x 37 rows.
std::string preNormProgram(int cols) {
  const std::string C = std::to_string(cols);
  const std::string f = "tensor<2x37x" + C + "xf32>", m = "tensor<74x" + C + "xf32>", mb = "tensor<74x" + C + "xbf16>";
  const std::string rows = "tensor<2x37xf32>", keep = "tensor<2x37x1xf32>";
  auto sum = [&](const std::string& r, const std::string& v) {
    return "  " + r + " = \"stablehlo.reduce\"(" + v + ", %zero) ({\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n" +
           "    %s = \"stablehlo.add\"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n" +
           "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n  }) {dimensions = array<i64: 2>} : (" + f +
           ", tensor<f32>) -> " + rows + "\n";
  };
  auto bin = [&](const std::string& r, const char* op, const std::string& a, const std::string& b, const std::string& t) {
    return "  " + r + " = \"stablehlo." + op + "\"(" + a + ", " + b + ") : (" + t + ", " + t + ") -> " + t + "\n";
  };
  auto un = [&](const std::string& r, const char* op, const std::string& a, const std::string& from, const std::string& to) {
    return "  " + r + " = \"stablehlo." + op + "\"(" + a + ") : (" + from + ") -> " + to + "\n";
  };
  auto bcast = [&](const std::string& r, const std::string& a, const char* dims, const std::string& from) {
    return "  " + r + " = \"stablehlo.broadcast_in_dim\"(" + a + ") {broadcast_dimensions = array<i64: " + dims +
           ">} : (" + from + ") -> " + f + "\n";
  };
  auto dot = [&](const std::string& r, const std::string& a) {
    return "  " + r + " = \"stablehlo.dot_general\"(" + a +
           ", %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = "
           "[0]>} : (" + mb + ", tensor<" + C + "x" + C + "xbf16>) -> " + mb + "\n";
  };
  const std::string vec = "tensor<" + C + "xf32>";
  std::string t = "func.func @main(%h: " + f + ", %x: " + mb + ", %w: tensor<" + C + "x" + C + "xbf16>, %g: " + vec +
                  ", %b: " + vec + ") -> (" + mb + ", " + f + ", " + f + ") {\n";
  t += "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n";
  t += "  %n = \"stablehlo.constant\"() {value = dense<" + C + ".0> : " + rows + "} : () -> " + rows + "\n";
  t += "  %eps = \"stablehlo.constant\"() {value = dense<1.0e-06> : " + keep + "} : () -> " + keep + "\n";
  t += "  %eps2 = \"stablehlo.constant\"() {value = dense<1.0e-05> : " + rows + "} : () -> " + rows + "\n";
  // Block 1: r1 = h + x W; RMS norm of r1 times g, as bf16 for the next product.
  t += dot("%d1", "%x") + un("%c1", "convert", "%d1", mb, m) + un("%e1", "reshape", "%c1", m, f);
  t += bin("%r1", "add", "%h", "%e1", f) + bin("%sq", "multiply", "%r1", "%r1", f) + sum("%ss", "%sq");
  t += bin("%ms", "divide", "%ss", "%n", rows) + un("%msk", "reshape", "%ms", rows, keep);
  t += bin("%ve", "add", "%msk", "%eps", keep) + un("%rs", "rsqrt", "%ve", keep, keep);
  t += bcast("%rb", "%rs", "0, 1, 2", keep) + bin("%y", "multiply", "%r1", "%rb", f);
  t += bcast("%gb", "%g", "2", vec) + bin("%yg", "multiply", "%gb", "%y", f);
  t += un("%y2", "reshape", "%yg", f, m) + un("%o1", "convert", "%y2", m, mb);
  // Block 2: r2 = r1 + o1 W; layer norm of r2 (f32, returned), and its bf16 copy.
  t += dot("%d2", "%o1") + un("%c2", "convert", "%d2", mb, m) + un("%e2", "reshape", "%c2", m, f);
  t += bin("%r2", "add", "%r1", "%e2", f) + sum("%s2", "%r2") + bin("%mean", "divide", "%s2", "%n", rows);
  t += bcast("%mnb", "%mean", "0, 1", rows) + bin("%dv", "subtract", "%r2", "%mnb", f);
  t += bin("%dsq", "multiply", "%dv", "%dv", f) + sum("%vs", "%dsq") + bin("%var", "divide", "%vs", "%n", rows);
  t += bin("%vpe", "add", "%var", "%eps2", rows) + un("%inv", "rsqrt", "%vpe", rows, rows);
  t += bcast("%ib", "%inv", "0, 1", rows) + bin("%z", "multiply", "%dv", "%ib", f);
  t += bin("%zg", "multiply", "%z", "%gb", f) + bcast("%bb", "%b", "2", vec) + bin("%ln", "add", "%zg", "%bb", f);
  t += un("%l2", "reshape", "%ln", f, m) + un("%o2", "convert", "%l2", m, mb);
  t += "  func.return %o2, %ln, %r2 : " + mb + ", " + f + ", " + f + "\n}\n";
  return t;
}

TEST(FusionPlan, NormsWriteTheResidualSumsAsSideOutputs) {
  Module m = parse(preNormProgram(100));
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  expectStepsReadStoredValues(body, plan, "pre-norm blocks");
  // One kernel per norm: block 1's writes its bf16 output and the residual sum r1 (which block
  // 2 reads); block 2's writes its bf16 copy, the f32 norm and r2 (both returned).
  ASSERT_EQ(plan.groups.size(), 2u);
  const cuda::FusionGroup& first = plan.groups[0];
  const cuda::FusionGroup& second = plan.groups[1];
  EXPECT_EQ(first.root(), opNamed(body, "%o1"));
  ASSERT_EQ(first.sideOutputs.size(), 1u);
  EXPECT_EQ(first.sideOutputs[0], opNamed(body, "%r1"));
  EXPECT_EQ(second.root(), opNamed(body, "%o2"));
  std::vector<const Operation*> want = {opNamed(body, "%r2"), opNamed(body, "%ln")};
  EXPECT_EQ(second.sideOutputs, want);
  // Block 2 reads r1 from memory: it does not compute block 1's sum again.
  EXPECT_NE(std::find(second.inputs.begin(), second.inputs.end(), opNamed(body, "%r1")->result(0)),
            second.inputs.end());
  for (const cuda::FusionGroup& g : plan.groups) {
    Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(g, "k");
    ASSERT_TRUE(code) << code.status().toString();
    EXPECT_NE(code->code.find("out" + std::to_string(g.sideOutputs.size())), std::string::npos);
  }
}

// A value read by a group planned before the root (through work that group computes for
// itself) cannot be a side output of the later group: it would be stored too late. (The earlier
// group, the exponential's, may write it beside its own root.)
TEST(FusionPlan, AValueReadBeforeTheRootIsNoSideOutput) {
  Module m = parse(R"(
func.func @main(%a: tensor<4x8xf32>, %c: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "stablehlo.add"(%a, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = "stablehlo.exponential"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = "stablehlo.dot_general"(%t, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %m = "stablehlo.reduce"(%s, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %x = "stablehlo.maximum"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = "stablehlo.subtract"(%d, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y, %t : tensor<4x8xf32>, tensor<4x8xf32>
}
)");
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  expectStepsReadStoredValues(body, plan, "read before the root");
  for (const cuda::FusionGroup& g : plan.groups)
    for (const Operation* side : g.sideOutputs)
      if (side == opNamed(body, "%s")) {
        EXPECT_EQ(g.root(), opNamed(body, "%t")) << "%s is read by the exponential's kernel, before " << g.root()->describe();
      }
}

// Two residual blocks as a bf16 export writes them: the f32 sum with the block's input, its ReLU
// stored in f32 (the next block's residual) and rounded to bf16 for the next product. The loop
// group rounding to bf16 writes the f32 ReLU beside it: one kernel per block, where the rounding
// was a kernel of its own. The shapes (3 x 37 x 21) are no multiple of the loop's chunk.
const char* kResidualBlocks = R"(
func.func @main(%x: tensor<3x37x21xf32>, %a: tensor<3x37x21xf32>, %w: tensor<21x21xbf16>) -> tensor<3x37x21xf32> {
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<3x37x21xf32>} : () -> tensor<3x37x21xf32>
  %s1 = "stablehlo.add"(%x, %a) : (tensor<3x37x21xf32>, tensor<3x37x21xf32>) -> tensor<3x37x21xf32>
  %r1 = "stablehlo.maximum"(%s1, %zero) : (tensor<3x37x21xf32>, tensor<3x37x21xf32>) -> tensor<3x37x21xf32>
  %b1 = "stablehlo.convert"(%r1) : (tensor<3x37x21xf32>) -> tensor<3x37x21xbf16>
  %d1 = "stablehlo.dot_general"(%b1, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>} : (tensor<3x37x21xbf16>, tensor<21x21xbf16>) -> tensor<3x37x21xbf16>
  %f1 = "stablehlo.convert"(%d1) : (tensor<3x37x21xbf16>) -> tensor<3x37x21xf32>
  %s2 = "stablehlo.add"(%f1, %r1) : (tensor<3x37x21xf32>, tensor<3x37x21xf32>) -> tensor<3x37x21xf32>
  %r2 = "stablehlo.maximum"(%s2, %zero) : (tensor<3x37x21xf32>, tensor<3x37x21xf32>) -> tensor<3x37x21xf32>
  %b2 = "stablehlo.convert"(%r2) : (tensor<3x37x21xf32>) -> tensor<3x37x21xbf16>
  %d2 = "stablehlo.dot_general"(%b2, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>} : (tensor<3x37x21xbf16>, tensor<21x21xbf16>) -> tensor<3x37x21xbf16>
  %f2 = "stablehlo.convert"(%d2) : (tensor<3x37x21xbf16>) -> tensor<3x37x21xf32>
  %s3 = "stablehlo.add"(%f2, %r2) : (tensor<3x37x21xf32>, tensor<3x37x21xf32>) -> tensor<3x37x21xf32>
  func.return %s3 : tensor<3x37x21xf32>
}
)";

TEST(FusionPlan, LoopGroupsWriteTheF32ResidualBesideItsBf16Copy) {
  Module m = parse(kResidualBlocks);
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  cuda::FusionPlan plan = cuda::planFusion(body, {});
  expectStepsReadStoredValues(body, plan, "residual blocks");
  // One kernel per block (rooted at the bf16 copy, writing the f32 ReLU beside it), and the
  // last sum.
  ASSERT_EQ(plan.groups.size(), 3u);
  for (const char* name : {"%b1", "%b2"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(plan.groupOfRoot.count(opNamed(body, name)));
    const cuda::FusionGroup& g = plan.groups[static_cast<size_t>(plan.groupOfRoot.at(opNamed(body, name)))];
    ASSERT_EQ(g.sideOutputs.size(), 1u);
    EXPECT_EQ(g.sideOutputs[0], opNamed(body, name == std::string("%b1") ? "%r1" : "%r2"));
    Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(g, "k");
    ASSERT_TRUE(code) << code.status().toString();
    EXPECT_NE(code->code.find("out1[i] = "), std::string::npos) << code->code;
  }
}

TEST(FusionRun, LoopGroupsWithSideOutputs) {
  WF_REQUIRE_GPU();
  expectFusedMatches(kResidualBlocks,
                     {randomLiteral(Type::tensor({3, 37, 21}, ElementType::kF32)),
                      randomLiteral(Type::tensor({3, 37, 21}, ElementType::kF32)),
                      randomLiteral(Type::tensor({21, 21}, ElementType::kBF16), -0.3, 0.3)},
                     /*bitwise=*/true, /*hasDot=*/true);
}

// Batch norm in inference as the export writes it: the scale rsqrt(var + eps) * weight computed
// per channel, then broadcast over [N, C, H, W]. With the weights bound, the scale is a group of
// its own (hoisted out of the run) and the normalisation reads it, instead of computing a
// reciprocal square root for every element.
const char* kBatchNormInference = R"(
func.func @main(%x: tensor<2x6x5x7xf32>, %mean: tensor<6xf32>, %var: tensor<6xf32>, %w: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x5x7xf32> {
  %eps = "stablehlo.constant"() {value = dense<1.0e-05> : tensor<6xf32>} : () -> tensor<6xf32>
  %ve = "stablehlo.add"(%var, %eps) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %rs = "stablehlo.rsqrt"(%ve) : (tensor<6xf32>) -> tensor<6xf32>
  %scale = "stablehlo.multiply"(%rs, %w) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %mb = "stablehlo.broadcast_in_dim"(%mean) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<2x6x5x7xf32>
  %c = "stablehlo.subtract"(%x, %mb) : (tensor<2x6x5x7xf32>, tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %sb = "stablehlo.broadcast_in_dim"(%scale) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<2x6x5x7xf32>
  %n = "stablehlo.multiply"(%c, %sb) : (tensor<2x6x5x7xf32>, tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %bb = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<2x6x5x7xf32>
  %y = "stablehlo.add"(%n, %bb) : (tensor<2x6x5x7xf32>, tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<2x6x5x7xf32>} : () -> tensor<2x6x5x7xf32>
  %r = "stablehlo.maximum"(%y, %zero) : (tensor<2x6x5x7xf32>, tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  func.return %r : tensor<2x6x5x7xf32>
}
)";

TEST(FusionPlan, PerChannelWorkOfBoundWeightsIsAGroupOfItsOwn) {
  Module m = parse(kBatchNormInference);
  ASSERT_TRUE(mainOf(m));
  const Block& body = mainBody(m);
  // Without bound weights: one kernel, computing the scale for every element.
  EXPECT_EQ(cuda::planFusion(body, {}).groups.size(), 1u);
  // The mean is bound too, but it is only broadcast (nothing computed from it): read as it is.
  cuda::FusionOptions options;
  for (size_t a = 1; a < 5; ++a) options.constantArguments.insert(body.argument(a));
  cuda::FusionPlan plan = cuda::planFusion(body, {}, options);
  expectStepsReadStoredValues(body, plan, "batch norm");
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].root(), opNamed(body, "%scale"));
  const cuda::FusionGroup& norm = plan.groups[1];
  EXPECT_EQ(norm.root(), opNamed(body, "%r"));
  EXPECT_NE(std::find(norm.inputs.begin(), norm.inputs.end(), opNamed(body, "%scale")->result(0)), norm.inputs.end());
  for (const Operation* op : norm.ops) EXPECT_NE(op->code(), OpCode::Rsqrt);
  // A carried (or unbound) variance makes the scale per-run work: it stays in the one kernel.
  options.constantArguments.erase(body.argument(2));
  EXPECT_EQ(cuda::planFusion(body, {}, options).groups.size(), 1u);
}

TEST(FusionRun, PerChannelWorkOfBoundWeightsIsHoisted) {
  WF_REQUIRE_GPU();
  Module m = parse(kBatchNormInference);
  ASSERT_TRUE(mainOf(m));
  CompileOptions options;
  options.boundArguments = {1, 2, 3, 4};
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  EXPECT_EQ((*exe)->stats().fusedKernels, 2);
  EXPECT_GE((*exe)->stats().hoistedSteps, 1);
  const Type v = Type::tensor({6}, ElementType::kF32);
  std::vector<Literal> weights = {randomLiteral(v), randomLiteral(v, 0.5, 2), randomLiteral(v), randomLiteral(v)};
  for (size_t i = 0; i < weights.size(); ++i) ASSERT_TRUE((*exe)->bindArgument(i + 1, weights[i]).isOk());
  for (int run = 0; run < 3; ++run) {
    if (run == 2) {  // a new variance: the scale is computed again
      weights[1] = randomLiteral(v, 0.5, 2);
      ASSERT_TRUE((*exe)->bindArgument(2, weights[1]).isOk());
    }
    Literal x = randomLiteral(Type::tensor({2, 6, 5, 7}, ElementType::kF32));
    std::vector<Literal> all = {x.clone()};
    for (const Literal& w : weights) all.push_back(w.clone());
    auto want = runCpu(m, std::move(all));
    ASSERT_TRUE(want) << want.status().toString();
    std::vector<Literal> batch = {x.clone()};
    auto got = (*exe)->run(batch);
    ASSERT_TRUE(got) << got.status().toString();
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], defaultTolerance(ElementType::kF32)), "") << "run " << run;
  }
}

TEST(FusionRun, PreNormBlocksWithSideOutputs) {
  WF_REQUIRE_GPU();
  for (int cols : {100, 98}) {  // four columns per load and store, and one
    SCOPED_TRACE("cols " + std::to_string(cols));
    const std::string text = preNormProgram(cols);
    const int64_t c = cols;
    expectFusedMatches(text.c_str(),
                       {randomLiteral(Type::tensor({2, 37, c}, ElementType::kF32)),
                        randomLiteral(Type::tensor({74, c}, ElementType::kBF16)),
                        randomLiteral(Type::tensor({c, c}, ElementType::kBF16), -0.2, 0.2),
                        randomLiteral(Type::tensor({c}, ElementType::kF32)),
                        randomLiteral(Type::tensor({c}, ElementType::kF32))},
                       /*bitwise=*/false, /*hasDot=*/true);
  }
}

TEST(FusionPlan, ExportedModelsKernelsCompile) {
  for (const char* name : kExported) {
    std::unique_ptr<Module> m = exportedProgram(name);
    ASSERT_TRUE(m) << name;
    // As the backend plans it: after its rewrites (repeated ops merged, ...).
    Expected<cuda::PlanRewrites> rewrites = cuda::rewriteForPlanning(*m, "main", /*fuse=*/true);
    ASSERT_TRUE(rewrites) << name << ": " << rewrites.status().toString();
    cuda::FusionPlan plan = cuda::planFusion(FuncOp(mainOf(*m)).body(), {});
    EXPECT_FALSE(plan.groups.empty()) << name;
    expectStepsReadStoredValues(FuncOp(mainOf(*m)).body(), plan, name);
    if (std::string(name) == "bert_small") {
      // The embedding lookups are fused (the table is read row by row, never copied whole).
      int gathers = 0;
      for (const cuda::FusionGroup& g : plan.groups)
        for (const Operation* op : g.ops) gathers += op->code() == OpCode::Gather;
      EXPECT_GE(gathers, 2);
    }
    std::string source = cuda::fusedKernelPrelude();
    for (size_t i = 0; i < plan.groups.size(); ++i) {
      Expected<cuda::FusedKernelSource> code = cuda::generateFusedKernel(plan.groups[i], "k" + std::to_string(i));
      ASSERT_TRUE(code) << name << ": " << code.status().toString();
      source += code->code;
    }
    Expected<std::string> cubin = cuda::compileToCubin(source, "sm_90");
    EXPECT_TRUE(cubin) << name << ": " << cubin.status().toString();
  }
}

TEST(FusionRun, ExportedModelsMatchTheInterpreter) {
  WF_REQUIRE_GPU();
  for (const char* name : kExported) {
    std::unique_ptr<Module> m = exportedProgram(name);
    ASSERT_TRUE(m) << name;
    std::vector<Literal> args;
    for (const Type& t : FuncOp(mainOf(*m)).functionType().inputs)
      args.push_back(isInteger(t.elementType()) ? randomLiteral(t, 0, 1) : randomLiteral(t, -1, 1));
    std::vector<Literal> copies;
    for (const Literal& a : args) copies.push_back(a.clone());
    Expected<std::vector<Literal>> want = runCpu(*m, std::move(copies));
    ASSERT_TRUE(want) << name << ": " << want.status().toString();
    Expected<RunResult> got = runCuda(*m, args);
    ASSERT_TRUE(got) << name << ": " << got.status().toString();
    ASSERT_EQ(got->outputs.size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      Tolerance tol;
      tol.relL2 = 1e-5;  // matrix products sum in another order on the GPU
      EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], tol), "") << name << " result #" << i;
    }
  }
}

}  // namespace
}  // namespace wf::cudatest
