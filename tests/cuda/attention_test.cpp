// Fused attention (kernels/attention.cpp): the warpforge.attention and warpforge.attention_grad
// composites, with their decompositions written out in plain StableHLO, run on the GPU through
// cuDNN (bf16, f16) and, where cuDNN's kernel does not apply (f32), as their decompositions;
// both against the CPU interpreter running the decompositions. Without a GPU the GPU tests skip;
// the checks of the decompositions themselves (against attention computed in double precision
// here) run anywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cuda/kernel.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

// One attention problem: q [B,H,Sq,D], k [B,H,Skv,D], v [B,H,Skv,Dv] of type t, a mask ("select",
// "add" or "none") of shape maskShape (each dim its dim of [B,H,Sq,Skv] or 1) and type maskType.
struct AttentionCase {
  int64_t b = 2, h = 3, sq = 77, skv = 77, d = 64, dv = 64;
  ElementType t = ElementType::kBF16;
  std::string mask = "select";
  std::vector<int64_t> maskShape;  // empty: [B,H,Sq,Skv]
  ElementType maskType = ElementType::kI1;
  double scale = 0.125;
  // cuDNN may decline it (then the decomposition runs): an f32 additive mask beside bf16/f16
  // operands, declared to cuDNN as f32 (it is never rounded to T, which would change the scores).
  bool mayDecline = false;

  std::vector<int64_t> mShape() const { return maskShape.empty() ? std::vector<int64_t>{b, h, sq, skv} : maskShape; }
  bool hasMask() const { return mask != "none"; }
  std::string name() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s b%lld h%lld sq%lld skv%lld d%lld dv%lld mask=%s", typeName(t).c_str(),
                  static_cast<long long>(b), static_cast<long long>(h), static_cast<long long>(sq),
                  static_cast<long long>(skv), static_cast<long long>(d), static_cast<long long>(dv), mask.c_str());
    return buf;
  }
};

std::string ty(const std::vector<int64_t>& shape, ElementType t) { return tensorType(shape, t); }

// Writes the ops of a function body, naming each type once.
class Body {
 public:
  explicit Body(const AttentionCase& c) : c_(c) {
    const ElementType f32 = ElementType::kF32;
    q = ty({c.b, c.h, c.sq, c.d}, c.t);
    k = ty({c.b, c.h, c.skv, c.d}, c.t);
    v = ty({c.b, c.h, c.skv, c.dv}, c.t);
    o = ty({c.b, c.h, c.sq, c.dv}, c.t);
    lse = ty({c.b, c.h, c.sq}, f32);
    m = ty(c.mShape(), c.maskType);
    sT = ty({c.b, c.h, c.sq, c.skv}, c.t);
    sF = ty({c.b, c.h, c.sq, c.skv}, f32);
    sI1 = ty({c.b, c.h, c.sq, c.skv}, ElementType::kI1);
    rowF = lse;
  }
  std::string q, k, v, o, lse, m, sT, sF, sI1, rowF;

  void line(const std::string& text) { text_ += "  " + text + "\n"; }
  std::string str() const { return text_; }

  // %name = f32 scalar constant broadcast to the score shape.
  void splat(const std::string& name, const std::string& value) {
    line("%" + name + "_c = \"stablehlo.constant\"() {value = dense<" + value + "> : tensor<f32>} : () -> tensor<f32>");
    line("%" + name + " = \"stablehlo.broadcast_in_dim\"(%" + name +
         "_c) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> " + sF);
  }
  void dot(const std::string& name, const std::string& lhs, const std::string& rhs, const std::string& lt,
           const std::string& rt, int lc, int rc, const std::string& result) {
    line("%" + name + " = \"stablehlo.dot_general\"(%" + lhs + ", %" + rhs +
         ") {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, "
         "1], lhs_contracting_dimensions = [" +
         std::to_string(lc) + "], rhs_contracting_dimensions = [" + std::to_string(rc) + "]>} : (" + lt + ", " + rt +
         ") -> " + result);
  }
  void binary(const std::string& op, const std::string& name, const std::string& a, const std::string& b,
              const std::string& t) {
    line("%" + name + " = \"stablehlo." + op + "\"(%" + a + ", %" + b + ") : (" + t + ", " + t + ") -> " + t);
  }
  void unary(const std::string& op, const std::string& name, const std::string& a, const std::string& from,
             const std::string& to) {
    line("%" + name + " = \"stablehlo." + op + "\"(%" + a + ") : (" + from + ") -> " + to);
  }
  // Reduces the scores' last dim with max or add (init -inf or 0).
  void rowReduce(const std::string& name, const std::string& x, bool max) {
    line("%" + name + "_init = \"stablehlo.constant\"() {value = dense<" + std::string(max ? "0xFF800000" : "0.0") +
         "> : tensor<f32>} : () -> tensor<f32>");
    line("%" + name + " = \"stablehlo.reduce\"(%" + x + ", %" + name + "_init) ({");
    line("^bb0(%x: tensor<f32>, %y: tensor<f32>):");
    line("  %r = \"stablehlo." + std::string(max ? "maximum" : "add") +
         "\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>");
    line("  \"stablehlo.return\"(%r) : (tensor<f32>) -> ()");
    line("}) {dimensions = array<i64: 3>} : (" + sF + ", tensor<f32>) -> " + rowF);
  }
  void rowBroadcast(const std::string& name, const std::string& row) {
    line("%" + name + " = \"stablehlo.broadcast_in_dim\"(%" + row +
         ") {broadcast_dimensions = array<i64: 0, 1, 2>} : (" + rowF + ") -> " + sF);
  }
  // %s: the masked, scaled scores in f32 (and %mb, the mask broadcast, for select). Reads %q, %k, %m.
  void scores(const std::string& scale) {
    dot("qk", "q", "k", q, k, 3, 3, sT);
    unary("convert", "qkf", "qk", sT, sF);
    splat("scale", scale);
    binary("multiply", c_.hasMask() ? "scaled" : "s", "qkf", "scale", sF);
    if (c_.mask == "select") {
      line("%mb = \"stablehlo.broadcast_in_dim\"(%m) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (" + m +
           ") -> " + sI1);
      splat("ninf", "0xFF800000");
      line("%s = \"stablehlo.select\"(%mb, %scaled, %ninf) : (" + sI1 + ", " + sF + ", " + sF + ") -> " + sF);
    } else if (c_.mask == "add") {
      std::string mf = "m";
      if (c_.maskType != ElementType::kF32) {
        unary("convert", "mf", "m", m, ty(c_.mShape(), ElementType::kF32));
        mf = "mf";
      }
      line("%mb = \"stablehlo.broadcast_in_dim\"(%" + mf + ") {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (" +
           ty(c_.mShape(), ElementType::kF32) + ") -> " + sF);
      binary("add", "s", "scaled", "mb", sF);
    }
  }

 private:
  const AttentionCase& c_;
  std::string text_;
};

std::string scaleText(double scale) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9e", scale);
  return buf;
}

std::string compositeAttributes(const AttentionCase& c) {
  return "composite_attributes = {scale = " + scaleText(c.scale) + " : f32, mask = \"" + c.mask + "\"}";
}

// %o: softmax in f32 between two matrix products in T (and %max, %sum: the softmax's row max and
// row sum). Reads %q, %k, %v, %m.
void writeAttention(Body& b, const AttentionCase& c) {
  b.scores(scaleText(c.scale));
  b.rowReduce("max", "s", true);
  b.rowBroadcast("maxb", "max");
  b.binary("subtract", "sub", "s", "maxb", b.sF);
  b.unary("exponential", "e", "sub", b.sF, b.sF);
  b.rowReduce("sum", "e", false);
  b.rowBroadcast("sumb", "sum");
  b.binary("divide", "p", "e", "sumb", b.sF);
  b.unary("convert", "pt", "p", b.sF, b.sT);
  b.dot("o", "pt", "v", b.sT, b.v, 3, 2, b.o);
}

// @attention_fwd(q, k, v[, mask]) -> (o, lse).
std::string forwardDecomposition(const AttentionCase& c) {
  Body b(c);
  writeAttention(b, c);
  b.unary("log", "logsum", "sum", b.rowF, b.rowF);
  b.binary("add", "lse", "max", "logsum", b.rowF);
  b.line("func.return %o, %lse : " + b.o + ", " + b.lse);
  const std::string mask = c.hasMask() ? ", %m: " + b.m : "";
  return "func.func private @attention_fwd(%q: " + b.q + ", %k: " + b.k + ", %v: " + b.v + mask + ") -> (" + b.o +
         ", " + b.lse + ") {\n" + b.str() + "}\n";
}

// @attention_bwd(q, k, v[, mask], o, lse, do) -> (dq, dk, dv): the forward's vector-Jacobian
// product, p recomputed from the forward's lse: dv = p^T do, dp = do v^T,
// ds = p (dp - rowsum(dp p)) (0 where masked), dq = scale ds k, dk = scale ds^T q.
std::string backwardDecomposition(const AttentionCase& c) {
  Body b(c);
  b.scores(scaleText(c.scale));
  b.rowBroadcast("lseb", "lse");
  b.binary("subtract", "sub", "s", "lseb", b.sF);
  b.unary("exponential", "p", "sub", b.sF, b.sF);
  b.unary("convert", "pt", "p", b.sF, b.sT);
  b.dot("dv", "pt", "do", b.sT, b.o, 2, 2, b.v);
  b.dot("dpt", "do", "v", b.o, b.v, 3, 3, b.sT);
  b.unary("convert", "dp", "dpt", b.sT, b.sF);
  b.binary("multiply", "dpp", "dp", "p", b.sF);
  b.rowReduce("rowsum", "dpp", false);
  b.rowBroadcast("rowsumb", "rowsum");
  b.binary("subtract", "diff", "dp", "rowsumb", b.sF);
  b.binary("multiply", "ds0", "p", "diff", b.sF);
  std::string ds = "ds0";
  if (c.mask == "select") {
    b.splat("zeros", "0.0");
    b.line("%ds1 = \"stablehlo.select\"(%mb, %ds0, %zeros) : (" + b.sI1 + ", " + b.sF + ", " + b.sF + ") -> " + b.sF);
    ds = "ds1";
  }
  b.binary("multiply", "ds", ds, "scale", b.sF);
  b.unary("convert", "dst", "ds", b.sF, b.sT);
  b.dot("dq", "dst", "k", b.sT, b.k, 3, 2, b.q);
  b.dot("dk", "dst", "q", b.sT, b.q, 2, 2, b.k);
  b.line("func.return %dq, %dk, %dv : " + b.q + ", " + b.k + ", " + b.v);
  const std::string mask = c.hasMask() ? ", %m: " + b.m : "";
  return "func.func private @attention_bwd(%q: " + b.q + ", %k: " + b.k + ", %v: " + b.v + mask + ", %o: " + b.o +
         ", %lse: " + b.lse + ", %do: " + b.o + ") -> (" + b.q + ", " + b.k + ", " + b.v + ") {\n" + b.str() + "}\n";
}

// @main(q, k, v[, mask]) -> (o, lse): the forward composite.
std::string forwardModule(const AttentionCase& c) {
  Body b(c);
  const std::string mask = c.hasMask() ? ", %m: " + b.m : "";
  const std::string maskOperand = c.hasMask() ? ", %m" : "";
  const std::string maskType = c.hasMask() ? ", " + b.m : "";
  return forwardDecomposition(c) + "func.func @main(%q: " + b.q + ", %k: " + b.k + ", %v: " + b.v + mask + ") -> (" +
         b.o + ", " + b.lse + ") {\n  %r:2 = \"stablehlo.composite\"(%q, %k, %v" + maskOperand +
         ") {name = \"warpforge.attention\", " + compositeAttributes(c) +
         ", decomposition = @attention_fwd, version = 0 : i32} : (" + b.q + ", " + b.k + ", " + b.v + maskType +
         ") -> (" + b.o + ", " + b.lse + ")\n  func.return %r#0, %r#1 : " + b.o + ", " + b.lse + "\n}\n";
}

// @main(q, k, v[, mask]) -> o: attention written out op by op (scale and -inf as broadcast
// scalars, as JAX writes them), as an exported inference program holds it, with no composite.
std::string writtenOutModule(const AttentionCase& c) {
  Body b(c);
  writeAttention(b, c);
  b.line("func.return %o : " + b.o);
  const std::string mask = c.hasMask() ? ", %m: " + b.m : "";
  return "func.func @main(%q: " + b.q + ", %k: " + b.k + ", %v: " + b.v + mask + ") -> " + b.o + " {\n" + b.str() +
         "}\n";
}

// @main(q, k, v[, mask]) -> o with q, k, v and o [B, S, H, D]: the head transposes around
// writtenOutModule's attention, as exporters write multi-head attention between its projections.
std::string sequenceMajorModule(const AttentionCase& c) {
  Body b(c);
  writeAttention(b, c);
  const std::string qs = ty({c.b, c.sq, c.h, c.d}, c.t), ks = ty({c.b, c.skv, c.h, c.d}, c.t),
                    vs = ty({c.b, c.skv, c.h, c.dv}, c.t), os = ty({c.b, c.sq, c.h, c.dv}, c.t);
  const std::string swap = "\"stablehlo.transpose\"(%X) {permutation = array<i64: 0, 2, 1, 3>} : ";
  std::string heads;
  for (auto [name, from, to] : {std::tuple{"q", qs, b.q}, std::tuple{"k", ks, b.k}, std::tuple{"v", vs, b.v}}) {
    std::string line = swap;
    line.replace(line.find("%X"), 2, std::string("%") + name + "s");
    heads += std::string("  %") + name + " = " + line + "(" + from + ") -> " + to + "\n";
  }
  std::string back = swap;
  back.replace(back.find("%X"), 2, "%o");
  const std::string mask = c.hasMask() ? ", %m: " + b.m : "";
  return "func.func @main(%qs: " + qs + ", %ks: " + ks + ", %vs: " + vs + mask + ") -> " + os + " {\n" + heads +
         b.str() + "  %os = " + back + "(" + b.o + ") -> " + os + "\n  func.return %os : " + os + "\n}\n";
}

// @main(q, k, v[, mask], do) -> (o, lse, dq, dk, dv): the forward composite, then the gradient
// composite reading its o and lse (as a training step does).
std::string trainingModule(const AttentionCase& c) {
  Body b(c);
  const std::string mask = c.hasMask() ? ", %m: " + b.m : "";
  const std::string maskOperand = c.hasMask() ? ", %m" : "";
  const std::string maskType = c.hasMask() ? ", " + b.m : "";
  return forwardDecomposition(c) + backwardDecomposition(c) + "func.func @main(%q: " + b.q + ", %k: " + b.k +
         ", %v: " + b.v + mask + ", %do: " + b.o + ") -> (" + b.o + ", " + b.lse + ", " + b.q + ", " + b.k + ", " +
         b.v + ") {\n  %r:2 = \"stablehlo.composite\"(%q, %k, %v" + maskOperand +
         ") {name = \"warpforge.attention\", " + compositeAttributes(c) +
         ", decomposition = @attention_fwd, version = 0 : i32} : (" + b.q + ", " + b.k + ", " + b.v + maskType +
         ") -> (" + b.o + ", " + b.lse + ")\n  %g:3 = \"stablehlo.composite\"(%q, %k, %v" + maskOperand +
         ", %r#0, %r#1, %do) {name = \"warpforge.attention_grad\", " + compositeAttributes(c) +
         ", decomposition = @attention_bwd, version = 0 : i32} : (" + b.q + ", " + b.k + ", " + b.v + maskType + ", " +
         b.o + ", " + b.lse + ", " + b.o + ") -> (" + b.q + ", " + b.k + ", " + b.v +
         ")\n  func.return %r#0, %r#1, %g#0, %g#1, %g#2 : " + b.o + ", " + b.lse + ", " + b.q + ", " + b.k + ", " +
         b.v + "\n}\n";
}

// Random inputs: q, k, v (and do) uniform in [-1, 1]; a select mask true with probability 3/4 and
// in every row at least once (a fully masked row has no softmax); an additive mask in [-2, 0].
std::vector<Literal> inputs(const AttentionCase& c, bool withGradient) {
  std::vector<Literal> args;
  args.push_back(randomLiteral(Type::tensor({c.b, c.h, c.sq, c.d}, c.t), -1, 1));
  args.push_back(randomLiteral(Type::tensor({c.b, c.h, c.skv, c.d}, c.t), -1, 1));
  args.push_back(randomLiteral(Type::tensor({c.b, c.h, c.skv, c.dv}, c.t), -1, 1));
  if (c.hasMask()) {
    const std::vector<int64_t> shape = c.mShape();
    Literal m = randomLiteral(Type::tensor(shape, c.maskType), -2, 0);
    if (c.mask == "select") {
      auto& g = rng();
      const int64_t row = shape[3];
      for (int64_t i = 0; i < m.numElements(); ++i) m.setInt(i, (g() % 4) != 0 ? 1 : 0);
      for (int64_t r = 0; r < m.numElements() / row; ++r) m.setInt(r * row + static_cast<int64_t>(g() % row), 1);
    }
    args.push_back(std::move(m));
  }
  if (withGradient) args.push_back(randomLiteral(Type::tensor({c.b, c.h, c.sq, c.dv}, c.t), -1, 1));
  return args;
}

// max |got - want| / max |want|, or "" when within `tol`; any NaN fails.
std::string compareToMax(const Literal& got, const Literal& want, double tol) {
  if (got.type() != want.type()) return "type " + got.type().toString() + " vs " + want.type().toString();
  double maxErr = 0, maxWant = 0;
  int64_t worst = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    const double a = got.getDouble(i), b = want.getDouble(i);
    if (std::isnan(a) || std::isnan(b)) return "NaN at element " + std::to_string(i);
    maxWant = std::max(maxWant, std::fabs(b));
    if (std::fabs(a - b) > maxErr) {
      maxErr = std::fabs(a - b);
      worst = i;
    }
  }
  const double rel = maxWant > 0 ? maxErr / maxWant : maxErr;
  if (rel <= tol) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf, "max error %.3g relative to max |want| %.3g (bound %.3g); worst element %lld: got %.6g, want %.6g",
                rel, maxWant, tol, static_cast<long long>(worst), got.getDouble(worst), want.getDouble(worst));
  return buf;
}

double toleranceFor(ElementType t) { return t == ElementType::kBF16 ? 2e-2 : t == ElementType::kF16 ? 5e-3 : 1e-4; }

// Runs `text` on the CPU interpreter and on the GPU; compares every result and returns the
// executable's stats.
ExecutableStats expectGpuMatchesCpu(const std::string& text, const std::vector<Literal>& args, double tol,
                                    const std::vector<std::string>& resultNames, const CompileOptions& options = {}) {
  Module m = parse(text);
  if (!mainOf(m)) return {};
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  EXPECT_TRUE(want) << want.status().toString();
  if (!want) return {};
  Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), options);
  EXPECT_TRUE(exe) << exe.status().toString();
  if (!exe) return {};
  Expected<RunResult> got = (*exe)->run(args);
  EXPECT_TRUE(got) << got.status().toString();
  if (!got) return {};
  EXPECT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size() && i < got->outputs.size(); ++i)
    EXPECT_EQ(compareToMax(got->outputs[i], (*want)[i], tol), "") << resultNames.at(i);
  return (*exe)->stats();
}

// The cases the GPU tests run: shapes off every tile size, Sq != Skv, broadcast masks.
std::vector<AttentionCase> gpuCases(ElementType t) {
  std::vector<AttentionCase> cases;
  AttentionCase c;
  c.t = t;
  cases.push_back(c);  // B=2 H=3 S=77 D=64, a full select mask
  AttentionCase cross = c;
  cross.sq = 50;
  cross.maskShape = {2, 1, 1, 77};  // a padding mask: per batch and key
  cases.push_back(cross);
  AttentionCase added = c;
  added.sq = 50;
  added.mask = "add";
  added.maskType = t;
  added.maskShape = {1, 3, 50, 77};  // per head, as ALiBi
  cases.push_back(added);
  AttentionCase addedF32 = c;
  addedF32.mask = "add";
  addedF32.maskType = ElementType::kF32;
  addedF32.maskShape = {2, 1, 77, 1};  // broadcast over keys: expanded into the workspace
  addedF32.mayDecline = true;
  cases.push_back(addedF32);
  AttentionCase plain = c;
  plain.mask = "none";
  plain.dv = 32;
  cases.push_back(plain);
  return cases;
}

class FusedAttention : public ::testing::TestWithParam<ElementType> {};

TEST_P(FusedAttention, ForwardMatchesDecomposition) {
  WF_REQUIRE_GPU();
  for (const AttentionCase& c : gpuCases(GetParam())) {
    SCOPED_TRACE(c.name());
    const ExecutableStats stats =
        expectGpuMatchesCpu(forwardModule(c), inputs(c, false), toleranceFor(c.t), {"o", "lse"});
    if (cuda::fusedAttentionBuilt() && !c.mayDecline) {
      EXPECT_EQ(stats.fusedComposites, 1) << "cuDNN declined (FusedAttentionLowering.Diagnose says why)";
    }
    if (c.mayDecline) std::cout << c.name() << ": " << stats.fusedComposites << " fused, "
                                << stats.decomposedComposites << " decomposed\n";
  }
}

TEST_P(FusedAttention, GradientMatchesDecomposition) {
  WF_REQUIRE_GPU();
  for (const AttentionCase& c : gpuCases(GetParam())) {
    SCOPED_TRACE(c.name());
    const ExecutableStats stats =
        expectGpuMatchesCpu(trainingModule(c), inputs(c, true), toleranceFor(c.t), {"o", "lse", "dq", "dk", "dv"});
    if (cuda::fusedAttentionBuilt() && !c.mayDecline) {
      EXPECT_EQ(stats.fusedComposites, 2) << "cuDNN declined (FusedAttentionLowering.Diagnose says why)";
    }
    if (c.mayDecline) std::cout << c.name() << ": " << stats.fusedComposites << " fused, "
                                << stats.decomposedComposites << " decomposed\n";
  }
}

// Attention written out op by op in an inference program: the backend outlines it
// (backends/cuda/plan_rewrites.h) and runs it as the fused kernel, matching the CPU running it
// as written.
TEST_P(FusedAttention, WrittenOutAttentionRunsFused) {
  WF_REQUIRE_GPU();
  for (const AttentionCase& c : gpuCases(GetParam())) {
    SCOPED_TRACE(c.name());
    const ExecutableStats stats = expectGpuMatchesCpu(writtenOutModule(c), inputs(c, false), toleranceFor(c.t), {"o"});
    if (cuda::fusedAttentionBuilt() && !c.mayDecline) {
      EXPECT_EQ(stats.fusedComposites, 1) << "not outlined, or cuDNN declined";
    }
    EXPECT_EQ(stats.hostSteps, 0);
  }
}

// Multi-head attention between head transposes: the fused kernel reads q, k and v and writes o
// as [B, S, H, D] (transforms/attention_layouts.h), so the program takes the steps of the
// attention alone.
TEST_P(FusedAttention, HeadTransposesAroundAttentionDoNotRun) {
  WF_REQUIRE_GPU();
  for (const AttentionCase& c : gpuCases(GetParam())) {
    SCOPED_TRACE(c.name());
    std::vector<Literal> args = inputs(c, false);
    const ExecutableStats alone = expectGpuMatchesCpu(writtenOutModule(c), args, toleranceFor(c.t), {"o"});
    for (size_t i = 0; i < 3; ++i) {  // q, k and v stored [B, S, H, D]
      const Type& t = args[i].type();
      args[i] = randomLiteral(Type::tensor({t.dim(0), t.dim(2), t.dim(1), t.dim(3)}, c.t), -1, 1);
    }
    const ExecutableStats stats = expectGpuMatchesCpu(sequenceMajorModule(c), args, toleranceFor(c.t), {"o"});
    if (cuda::fusedAttentionBuilt() && !c.mayDecline) {
      EXPECT_EQ(stats.fusedComposites, 1) << "not outlined, or cuDNN declined";
      EXPECT_EQ(stats.deviceSteps, alone.deviceSteps) << "a head transpose still runs";
    }
  }
}

// sequenceMajorModule with q, k and v the bias-added projections of one input x [B*S, H*D], as
// nn.Linear writes them under bf16: each product widened, plus its widened bias, reshaped to
// [B, S, H, D] and narrowed. The backend merges the three products (transforms/merge_products.h)
// and their bias adds, and attention reads the heads of the merged result where they lie.
std::string projectedModule(const AttentionCase& c) {
  std::string text = sequenceMajorModule(c);
  const int64_t e = c.h * c.d, rows = c.b * c.sq;
  const std::string x = ty({rows, e}, c.t), w = ty({e, e}, c.t), bias = ty({e}, c.t),
                    biasF = ty({e}, ElementType::kF32), p = ty({rows, e}, c.t), pf = ty({rows, e}, ElementType::kF32),
                    split = ty({c.b, c.sq, c.h, c.d}, ElementType::kF32), qs = ty({c.b, c.sq, c.h, c.d}, c.t);
  const std::string args = "%qs: " + qs + ", %ks: " + qs + ", %vs: " + qs;
  text.replace(text.find(args), args.size(),
               "%input: " + x + ", %wq: " + w + ", %wk: " + w + ", %wv: " + w + ", %bq: " + bias + ", %bk: " + bias +
                   ", %bv: " + bias);
  std::string projections;
  for (const char* n : {"q", "k", "v"}) {
    const std::string v = std::string("%") + n;
    projections += "  " + v + "p = \"stablehlo.dot_general\"(%input, %w" + n + ") {dot_dimension_numbers = "
                   "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (" + x +
                   ", " + w + ") -> " + p + "\n";
    projections += "  " + v + "pf = \"stablehlo.convert\"(" + v + "p) : (" + p + ") -> " + pf + "\n";
    projections += "  " + v + "bf = \"stablehlo.convert\"(%b" + n + ") : (" + bias + ") -> " + biasF + "\n";
    projections += "  " + v + "bb = \"stablehlo.broadcast_in_dim\"(" + v + "bf) {broadcast_dimensions = "
                   "array<i64: 1>} : (" + biasF + ") -> " + pf + "\n";
    projections += "  " + v + "a = \"stablehlo.add\"(" + v + "pf, " + v + "bb) : (" + pf + ", " + pf + ") -> " + pf +
                   "\n";
    projections += "  " + v + "r = \"stablehlo.reshape\"(" + v + "a) : (" + pf + ") -> " + split + "\n";
    projections += "  " + v + "s = \"stablehlo.convert\"(" + v + "r) : (" + split + ") -> " + qs + "\n";
  }
  const size_t bodyAt = text.find("{\n", text.find("func.func @main(")) + 2;
  text.insert(bodyAt, projections);
  return text;
}

TEST_P(FusedAttention, HeadsOfOneMergedProjectionAreReadWhereTheyLie) {
  WF_REQUIRE_GPU();
  AttentionCase c;  // B=2 H=3 S=77 D=64, a full select mask
  c.t = GetParam();
  SCOPED_TRACE(c.name());
  const std::string text = projectedModule(c);
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m)) << text;
  const int64_t e = c.h * c.d;
  std::vector<Literal> args = {randomLiteral(Type::tensor({c.b * c.sq, e}, c.t), -1, 1)};
  for (int i = 0; i < 3; ++i) args.push_back(randomLiteral(Type::tensor({e, e}, c.t), -0.125, 0.125));
  for (int i = 0; i < 3; ++i) args.push_back(randomLiteral(Type::tensor({e}, c.t), -1, 1));
  args.push_back(inputs(c, false)[3]);  // the mask
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  // The weights bound, as a package's are: their concatenations run once, before the first run.
  CompileOptions options;
  options.boundArguments = {1, 2, 3, 4, 5, 6};
  Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  for (size_t i = 1; i <= 6; ++i) ASSERT_TRUE((*exe)->bindArgument(i, args[i]).isOk());
  std::vector<Literal> perRun;
  perRun.push_back(args[0].clone());
  perRun.push_back(args[7].clone());
  Expected<RunResult> got = (*exe)->run(perRun);
  ASSERT_TRUE(got) << got.status().toString();
  ASSERT_EQ(got->outputs.size(), 1u);
  EXPECT_EQ(compareToMax(got->outputs[0], (*want)[0], toleranceFor(c.t)), "");
  const ExecutableStats stats = (*exe)->stats();
  const int perRunSteps = stats.deviceSteps - stats.hoistedSteps;
  std::cout << c.name() << ": " << stats.deviceSteps << " steps, " << stats.hoistedSteps << " hoisted, "
            << stats.matmulBiasEpilogues << " bias epilogues, " << stats.fusedComposites << " fused attention\n";
  if (cuda::fusedAttentionBuilt()) {
    EXPECT_EQ(stats.fusedComposites, 1) << "not outlined, or cuDNN declined";
    // One product (with its bias epilogue, or a bias kernel after it) and the attention: no slice
    // of the merged product is copied out.
    EXPECT_EQ(perRunSteps, stats.matmulBiasEpilogues == 1 ? 2 : 3);
  }
}

// `text` (a module whose @main takes the mask %m) with the mask computed inside @main instead: the
// top-left causal mask, iota(query) >= iota(key) over [1, 1, Sq, Skv], as decoders' exporters
// build it from positions. The backend finds it causal at compile time (transforms/causal_masks.h)
// and runs cuDNN's causal attention, which does not read it.
std::string withCausalMaskInside(std::string text, const AttentionCase& c) {
  const Body b(c);
  const std::string arg = ", %m: " + b.m;
  const size_t mainAt = text.find("func.func @main(");
  const size_t argAt = text.find(arg, mainAt);
  if (mainAt == std::string::npos || argAt == std::string::npos) return "";
  text.erase(argAt, arg.size());
  const size_t bodyAt = text.find("{\n", argAt) + 2;
  const std::string positions = ty(c.mShape(), ElementType::kSI64);
  text.insert(bodyAt, "  %qpos = \"stablehlo.iota\"() {iota_dimension = 2 : i64} : () -> " + positions +
                          "\n  %kpos = \"stablehlo.iota\"() {iota_dimension = 3 : i64} : () -> " + positions +
                          "\n  %m = \"stablehlo.compare\"(%qpos, %kpos) {comparison_direction = "
                          "#stablehlo<comparison_direction GE>} : (" + positions + ", " + positions + ") -> " + b.m +
                          "\n");
  return text;
}

TEST_P(FusedAttention, CausalMaskComputedInTheProgramRunsCausal) {
  WF_REQUIRE_GPU();
  for (int64_t sq : {77, 50}) {  // Sq == Skv, and fewer queries than keys (top-left aligned)
    AttentionCase c;
    c.t = GetParam();
    c.sq = sq;
    c.maskShape = {1, 1, c.sq, c.skv};
    SCOPED_TRACE(c.name());
    std::vector<Literal> forward = inputs(c, false);
    forward.erase(forward.begin() + 3);  // the mask is the program's own
    const ExecutableStats inference =
        expectGpuMatchesCpu(withCausalMaskInside(writtenOutModule(c), c), forward, toleranceFor(c.t), {"o"});
    std::vector<Literal> training = inputs(c, true);
    training.erase(training.begin() + 3);
    const ExecutableStats trained = expectGpuMatchesCpu(withCausalMaskInside(trainingModule(c), c), training,
                                                        toleranceFor(c.t), {"o", "lse", "dq", "dk", "dv"});
    if (cuda::fusedAttentionBuilt()) {
      EXPECT_EQ(inference.fusedComposites, 1) << "not outlined, or cuDNN declined";
      EXPECT_EQ(trained.fusedComposites, 2) << "cuDNN declined";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, FusedAttention, ::testing::Values(ElementType::kBF16, ElementType::kF16),
                         [](const ::testing::TestParamInfo<ElementType>& info) { return typeName(info.param); });

// The first bf16 case through the lowerings themselves: where cuDNN declines, the failure says why
// (a head dim, an old cuDNN or GPU, a frontend error), which the other tests only see as a
// decomposed composite.
TEST(FusedAttentionLowering, Diagnose) {
  WF_REQUIRE_GPU();
  if (!cuda::fusedAttentionBuilt()) GTEST_SKIP() << "built without the cuDNN frontend: the decompositions run";
  const AttentionCase c;
  Module m = parse(trainingModule(c));
  ASSERT_TRUE(mainOf(m));
  Expected<std::shared_ptr<cuda::Device>> device = cuda::Device::get(0);
  ASSERT_TRUE(device) << device.status().toString();
  const CompileOptions options;
  for (const auto& op : FuncOp(mainOf(m)).body().operations()) {
    if (op->code() != OpCode::Composite) continue;
    const cuda::Lowering* lowering = cuda::CudaKernelRegistry::instance().findComposite(cuda::compositeName(*op));
    ASSERT_NE(lowering, nullptr) << cuda::compositeName(*op);
    cuda::LowerContext ctx{**device, options};
    Expected<std::unique_ptr<cuda::OpKernel>> kernel = (*lowering)(*op, ctx);
    EXPECT_TRUE(kernel) << kernel.status().toString();
  }
}

// f32 has no fused kernel: the composite runs as its decomposition (inlined and fused by the
// planner), still on the GPU, and says so in the stats.
TEST(FusedAttentionDecomposed, F32RunsTheDecomposition) {
  WF_REQUIRE_GPU();
  AttentionCase c;
  c.t = ElementType::kF32;
  c.sq = 50;
  const ExecutableStats stats =
      expectGpuMatchesCpu(trainingModule(c), inputs(c, true), toleranceFor(c.t), {"o", "lse", "dq", "dk", "dv"});
  EXPECT_EQ(stats.fusedComposites, 0);
  EXPECT_EQ(stats.decomposedComposites, 2);
  EXPECT_EQ(stats.hostSteps, 0);
}

// --no-fused-attention: bf16 composites, which have a fused kernel, run as their decompositions
// all the same, forward and backward, and still match the CPU.
TEST(FusedAttentionDecomposed, SwitchedOffRunsTheDecomposition) {
  WF_REQUIRE_GPU();
  AttentionCase c;
  c.t = ElementType::kBF16;
  c.sq = 50;
  CompileOptions options;
  options.fusedAttention = false;
  const ExecutableStats stats = expectGpuMatchesCpu(trainingModule(c), inputs(c, true), toleranceFor(c.t),
                                                    {"o", "lse", "dq", "dk", "dv"}, options);
  EXPECT_EQ(stats.fusedComposites, 0);
  EXPECT_EQ(stats.decomposedComposites, 2);
  EXPECT_EQ(stats.hostSteps, 0);
}

// f32 attention written out in an inference program stays as written (no fused kernel takes
// it, and the outlined form would add the log-sum-exp nothing reads).
TEST(FusedAttentionDecomposed, WrittenOutF32StaysWrittenOut) {
  WF_REQUIRE_GPU();
  AttentionCase c;
  c.t = ElementType::kF32;
  c.sq = 50;
  const ExecutableStats stats = expectGpuMatchesCpu(writtenOutModule(c), inputs(c, false), toleranceFor(c.t), {"o"});
  EXPECT_EQ(stats.fusedComposites, 0);
  EXPECT_EQ(stats.decomposedComposites, 0);
  EXPECT_EQ(stats.hostSteps, 0);
}

// The plan of one forward composite: one step for the attention (plus nothing else: the bias of
// a select mask is written by the same step), the decomposition not planned.
TEST(FusedAttentionPlan, OneStep) {
  WF_REQUIRE_GPU();
  if (!cuda::fusedAttentionBuilt()) GTEST_SKIP() << "built without the cuDNN frontend: the decompositions run";
  const AttentionCase c;
  Module m = parse(forwardModule(c));
  ASSERT_TRUE(mainOf(m));
  Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats stats = (*exe)->stats();
  EXPECT_EQ(stats.fusedComposites, 1);
  EXPECT_EQ(stats.decomposedComposites, 0);
  EXPECT_EQ(stats.deviceSteps, 1);
  EXPECT_EQ(stats.fusedKernels, 0);
  EXPECT_EQ(stats.hostSteps, 0);
  EXPECT_GT(stats.workspaceBytes, 0u);  // the bias, at least
}

// The fused steps in a captured CUDA graph (the first run captures it, later runs replay it) and
// launched one by one give the same bits, run after run: the backward pass is cuDNN's
// deterministic one.
TEST(FusedAttentionPlan, RerunsAndGraphReplaysGiveTheSameBits) {
  WF_REQUIRE_GPU();
  AttentionCase c;
  c.sq = 50;
  Module m = parse(trainingModule(c));
  ASSERT_TRUE(mainOf(m));
  const std::vector<Literal> args = inputs(c, true);
  CompileOptions stepByStep;
  stepByStep.cudaGraphs = false;
  Expected<std::unique_ptr<Executable>> graphed = cudaBackend().compile(m, *mainOf(m), {});
  Expected<std::unique_ptr<Executable>> plain = cudaBackend().compile(m, *mainOf(m), stepByStep);
  ASSERT_TRUE(graphed) << graphed.status().toString();
  ASSERT_TRUE(plain) << plain.status().toString();
  Expected<RunResult> first = (*plain)->run(args);
  ASSERT_TRUE(first) << first.status().toString();
  for (int run = 0; run < 3; ++run) {
    for (Executable* exe : {graphed->get(), plain->get()}) {
      Expected<RunResult> again = exe->run(args);
      ASSERT_TRUE(again) << again.status().toString();
      ASSERT_EQ(again->outputs.size(), first->outputs.size());
      for (size_t i = 0; i < first->outputs.size(); ++i)
        EXPECT_TRUE(again->outputs[i].bitwiseEqual(first->outputs[i])) << "result #" << i << ", run " << run;
    }
  }
  EXPECT_TRUE((*graphed)->stats().usesGraph);
}

// Attention in double precision, from the same (rounded) inputs: o, lse and the gradients, for
// checking the decompositions the GPU results are compared with.
struct Reference {
  std::vector<double> o, lse, dq, dk, dv;
};

Reference reference(const AttentionCase& c, const std::vector<Literal>& args) {
  const Literal &q = args[0], &k = args[1], &v = args[2];
  const Literal* mask = c.hasMask() ? &args[3] : nullptr;
  const Literal& dO = args.back();
  const std::vector<int64_t> ms = c.mShape();
  Reference r;
  r.o.assign(static_cast<size_t>(c.b * c.h * c.sq * c.dv), 0);
  r.lse.assign(static_cast<size_t>(c.b * c.h * c.sq), 0);
  r.dq.assign(static_cast<size_t>(c.b * c.h * c.sq * c.d), 0);
  r.dk.assign(static_cast<size_t>(c.b * c.h * c.skv * c.d), 0);
  r.dv.assign(static_cast<size_t>(c.b * c.h * c.skv * c.dv), 0);
  std::vector<double> s(static_cast<size_t>(c.skv)), p(static_cast<size_t>(c.skv)), dp(static_cast<size_t>(c.skv));
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hi = 0; hi < c.h; ++hi) {
      const int64_t bh = bi * c.h + hi;
      for (int64_t i = 0; i < c.sq; ++i) {
        double max = -INFINITY;
        for (int64_t j = 0; j < c.skv; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x) dot += q.getDouble((bh * c.sq + i) * c.d + x) * k.getDouble((bh * c.skv + j) * c.d + x);
          s[j] = dot * c.scale;
          if (mask) {
            const int64_t at = (((ms[0] == 1 ? 0 : bi) * ms[1] + (ms[1] == 1 ? 0 : hi)) * ms[2] + (ms[2] == 1 ? 0 : i)) *
                                   ms[3] +
                               (ms[3] == 1 ? 0 : j);
            if (c.mask == "select") {
              if (mask->getInt(at) == 0) s[j] = -INFINITY;
            } else {
              s[j] += mask->getDouble(at);
            }
          }
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < c.skv; ++j) sum += std::exp(s[j] - max);
        r.lse[bh * c.sq + i] = max + std::log(sum);
        for (int64_t j = 0; j < c.skv; ++j) p[j] = std::exp(s[j] - max) / sum;
        double rowsum = 0;
        for (int64_t j = 0; j < c.skv; ++j) {
          dp[j] = 0;
          for (int64_t x = 0; x < c.dv; ++x) {
            r.o[(bh * c.sq + i) * c.dv + x] += p[j] * v.getDouble((bh * c.skv + j) * c.dv + x);
            dp[j] += dO.getDouble((bh * c.sq + i) * c.dv + x) * v.getDouble((bh * c.skv + j) * c.dv + x);
            r.dv[(bh * c.skv + j) * c.dv + x] += p[j] * dO.getDouble((bh * c.sq + i) * c.dv + x);
          }
          rowsum += p[j] * dp[j];
        }
        for (int64_t j = 0; j < c.skv; ++j) {
          const double ds = p[j] * (dp[j] - rowsum) * c.scale;
          for (int64_t x = 0; x < c.d; ++x) {
            r.dq[(bh * c.sq + i) * c.d + x] += ds * k.getDouble((bh * c.skv + j) * c.d + x);
            r.dk[(bh * c.skv + j) * c.d + x] += ds * q.getDouble((bh * c.sq + i) * c.d + x);
          }
        }
      }
    }
  return r;
}

std::string compareToMax(const Literal& got, const std::vector<double>& want, double tol) {
  Literal w = Literal::zeros(Type::tensor(got.type().shape(), ElementType::kF64));
  for (int64_t i = 0; i < w.numElements(); ++i) w.setDouble(i, want[static_cast<size_t>(i)]);
  Literal g = Literal::zeros(w.type());
  for (int64_t i = 0; i < g.numElements(); ++i) g.setDouble(i, got.getDouble(i));
  return compareToMax(g, w, tol);
}

// The decompositions the GPU is checked against compute attention and its gradient: the CPU
// interpreter runs them (in T, as the GPU tests do, with T's rounding) and attention computed in
// double precision from the same inputs agrees within T's tolerance. No GPU needed.
TEST(AttentionDecomposition, MatchesDoublePrecision) {
  for (ElementType t : {ElementType::kF32, ElementType::kBF16, ElementType::kF16}) {
    for (AttentionCase c : gpuCases(t)) {
      // Smaller problems: the interpreter is slow.
      c.b = std::min<int64_t>(c.b, 1);
      c.h = 2;
      c.sq = c.sq == c.skv ? 21 : 13;
      c.skv = 21;
      c.d = 16;
      c.dv = c.dv == c.d ? 16 : 8;
      std::vector<int64_t> shape = c.mShape();
      if (!c.maskShape.empty()) {
        const std::vector<int64_t> full = {c.b, c.h, c.sq, c.skv};
        for (size_t i = 0; i < 4; ++i) shape[i] = c.maskShape[i] == 1 ? 1 : full[i];
        c.maskShape = shape;
      }
      if (c.mask == "add" && c.maskType != ElementType::kF32) c.maskType = t;
      SCOPED_TRACE(c.name());
      Module m = parse(trainingModule(c));
      ASSERT_TRUE(mainOf(m));
      const std::vector<Literal> args = inputs(c, true);
      Expected<std::vector<Literal>> got = runCpu(m, cloneAll(args));
      ASSERT_TRUE(got) << got.status().toString();
      ASSERT_EQ(got->size(), 5u);
      const Reference want = reference(c, args);
      const double tol = toleranceFor(t);
      EXPECT_EQ(compareToMax((*got)[0], want.o, tol), "") << "o";
      EXPECT_EQ(compareToMax((*got)[1], want.lse, tol), "") << "lse";
      EXPECT_EQ(compareToMax((*got)[2], want.dq, tol), "") << "dq";
      EXPECT_EQ(compareToMax((*got)[3], want.dk, tol), "") << "dk";
      EXPECT_EQ(compareToMax((*got)[4], want.dv, tol), "") << "dv";
    }
  }
}

}  // namespace
}  // namespace wf::cudatest
