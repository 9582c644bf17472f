// Multi-tensor loops (fusion.h generateMultiTensorKernel, planner.cpp mergeMultiTensorSteps): an
// optimizer's update of every parameter as a few launches. Without a GPU: which groups take the
// form, that groups of different shapes share its code, and that it compiles with NVRTC. On a
// GPU: the merged plan against the CPU interpreter and, bit for bit, against a step per loop,
// over tensors of sizes no vector width divides, more tensors than one launch takes, and updates
// carried into their arguments in place (the trainer's mode).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/codegen/nvrtc.h"
#include "backends/cuda/plan_rewrites.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

struct Param {
  std::vector<int64_t> shape;
  ElementType type = ElementType::kF32;
  // The gradient comes transposed (a linear layer's weight gradient, as autodiff writes it):
  // the update reads it at coordinates.
  bool transposedGradient = false;
};

// AdamW's update of every parameter, as optimizers.py writes it: the parameter, its gradient and
// the two moments in, the three new values out; the learning rate and decay factors are
// one-element arguments every update reads. Arguments: for each parameter p, g, m, v (in that
// order, by parameter), then %lr, %decay. Results: every new p, then every new m and v.
std::string adamProgram(const std::vector<Param>& params) {
  std::ostringstream args, body, ret, retTypes;
  std::vector<std::string> newP, newMV, newPT, newMVT;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string t = tensorType(params[i].shape, params[i].type);
    const std::string f = tensorType(params[i].shape, ElementType::kF32);
    const std::string s = std::to_string(i);
    const std::vector<int64_t> gshape = params[i].transposedGradient
                                            ? std::vector<int64_t>{params[i].shape[1], params[i].shape[0]}
                                            : params[i].shape;
    const std::string gt = tensorType(gshape, params[i].type);
    args << "%p" << s << ": " << t << ", %g" << s << ": " << gt << ", %m" << s << ": " << f << ", %v" << s << ": " << f
         << ", ";
    const std::string grad = params[i].transposedGradient ? "%gt" + s : "%g" + s;
    if (params[i].transposedGradient)
      body << "  %gt" << s << " = \"stablehlo.transpose\"(%g" << s << ") {permutation = array<i64: 1, 0>} : (" << gt
           << ") -> " << t << "\n";
    auto scalar = [&](const std::string& name, const std::string& from) {
      body << "  %" << name << s << " = \"stablehlo.broadcast_in_dim\"(" << from
           << ") {broadcast_dimensions = array<i64>} : (tensor<f32>) -> " << f << "\n";
    };
    scalar("b1_", "%b1");
    scalar("c1_", "%c1");
    scalar("b2_", "%b2");
    scalar("c2_", "%c2");
    scalar("eps_", "%eps");
    scalar("lr_", "%lr");
    scalar("decay_", "%decay");
    auto op = [&](const std::string& out, const std::string& name, const std::string& a, const std::string& b) {
      body << "  %" << out << s << " = \"stablehlo." << name << "\"(%" << a << s << (b.empty() ? "" : ", %" + b + s)
           << ") : (" << f << (b.empty() ? "" : ", " + f) << ") -> " << f << "\n";
    };
    // Narrow parameters and gradients are widened to f32; f32 ones negated (twice, the result
    // negated back below), so that both kinds of update are groups of the same size.
    const std::string widen = params[i].type != ElementType::kF32 ? "convert" : "negate";
    body << "  %pf" << s << " = \"stablehlo." << widen << "\"(%p" << s << ") : (" << t << ") -> " << f << "\n";
    body << "  %gf" << s << " = \"stablehlo." << widen << "\"(" << grad << ") : (" << t << ") -> " << f << "\n";
    op("ma", "multiply", "m", "b1_");
    op("mb", "multiply", "gf", "c1_");
    op("mn", "add", "ma", "mb");
    op("va", "multiply", "v", "b2_");
    op("vg", "multiply", "gf", "gf");
    op("vb", "multiply", "vg", "c2_");
    op("vn", "add", "va", "vb");
    op("sq", "sqrt", "vn", "");
    op("den", "add", "sq", "eps_");
    op("q", "divide", "mn", "den");
    op("u", "multiply", "q", "lr_");
    op("pd", "multiply", "pf", "decay_");
    op("pn", "subtract", "pd", "u");
    body << "  %po" << s << " = \"stablehlo." << widen << "\"(%pn" << s << ") : (" << f << ") -> " << t << "\n";
    newP.push_back("%po" + s);
    newPT.push_back(t);
    newMV.push_back("%mn" + s);
    newMV.push_back("%vn" + s);
    newMVT.push_back(f);
    newMVT.push_back(f);
  }
  std::vector<std::string> results = newP, types = newPT;
  results.insert(results.end(), newMV.begin(), newMV.end());
  types.insert(types.end(), newMVT.begin(), newMVT.end());
  std::ostringstream out;
  out << "func.func @main(" << args.str() << "%lr: tensor<f32>, %decay: tensor<f32>) -> (";
  for (size_t i = 0; i < types.size(); ++i) out << (i ? ", " : "") << types[i];
  out << ") {\n"
      << "  %b1 = stablehlo.constant dense<0.9> : tensor<f32>\n"
      << "  %c1 = stablehlo.constant dense<0.1> : tensor<f32>\n"
      << "  %b2 = stablehlo.constant dense<0.999> : tensor<f32>\n"
      << "  %c2 = stablehlo.constant dense<0.001> : tensor<f32>\n"
      << "  %eps = stablehlo.constant dense<1.0e-8> : tensor<f32>\n"
      << body.str() << "  func.return ";
  for (size_t i = 0; i < results.size(); ++i) out << (i ? ", " : "") << results[i];
  out << " : ";
  for (size_t i = 0; i < types.size(); ++i) out << (i ? ", " : "") << types[i];
  out << "\n}\n";
  return out.str();
}

// Sizes no vector width (4 for f32, 8 for bf16) divides, and one of a few elements.
const std::vector<Param> kParams = {
    {{3, 5}}, {{7}}, {{1000, 3}}, {{17, 33}}, {{2}}, {{513, 1025}}, {{5, 9}, ElementType::kBF16}, {{1001}, ElementType::kBF16},
    {{64, 3, 3}, ElementType::kBF16}};

// The loop groups of a program's plan whose root is a new parameter (their side outputs the
// moments): one per parameter.
std::vector<const cuda::FusionGroup*> updateGroups(const cuda::FusionPlan& plan) {
  std::vector<const cuda::FusionGroup*> out;
  for (const cuda::FusionGroup& g : plan.groups)
    if (g.root()->result(0)->nameHint().rfind("%po", 0) == 0) out.push_back(&g);
  return out;
}

TEST(MultiTensorPlan, UpdatesOfEveryShapeShareOneCodeAndCompile) {
  Module m = parse(adamProgram(kParams));
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  const std::vector<const cuda::FusionGroup*> groups = updateGroups(plan);
  ASSERT_EQ(groups.size(), kParams.size());
  std::string source = cuda::fusedKernelPrelude();
  std::vector<std::string> codes;
  for (size_t i = 0; i < groups.size(); ++i) {
    // The new moments are written beside the new parameter: one group per update.
    EXPECT_EQ(groups[i]->sideOutputs.size(), 2u) << "parameter " << i;
    Expected<cuda::MultiTensorKernelSource> k = cuda::generateMultiTensorKernel(*groups[i], "update");
    ASSERT_TRUE(k) << k.status().toString();
    EXPECT_EQ(k->pointersPerTensor, 4 + 2 + 3);  // p, g, m, v, lr, decay; new p, m, v
    EXPECT_EQ(k->maxTensors, 48);  // 9 addresses, a count and a start each: 4 KB
    EXPECT_EQ(k->elementsPerBlock, 256 * (kParams[i].type == ElementType::kF32 ? 4 : 8));
    // The one-element inputs (%lr, %decay) are read at their element, the others at the index.
    ASSERT_EQ(k->inputOrder.size(), groups[i]->inputs.size());
    for (size_t slot = 0; slot < k->inputOrder.size(); ++slot) {
      const Value* in = groups[i]->inputs[k->inputOrder[slot]];
      const std::string name = "in" + std::to_string(slot);
      EXPECT_EQ(k->code.find(name + "[0]") != std::string::npos, in->type().numElements() == 1) << in->nameHint();
      EXPECT_EQ(k->code.find(name + "[i]"), std::string::npos) << in->nameHint();
    }
    codes.push_back(k->code);
  }
  // f32 parameters share one kernel, bf16 ones another.
  for (size_t i = 1; i < codes.size(); ++i)
    EXPECT_EQ(codes[i] == codes[0], kParams[i].type == ElementType::kF32) << "parameter " << i;
  source += codes[0];
  std::string bf16 = codes.back();
  const std::string from = "update";
  bf16.replace(bf16.find(from), from.size(), "update_bf16");  // the table's struct
  bf16.replace(bf16.find(from + "("), from.size(), "update_bf16");
  source += bf16;
  if (std::getenv("WF_PRINT_FUSED")) std::cout << source << "\n";
  for (const char* arch : {"sm_80", "sm_90"}) {
    Expected<std::string> cubin = cuda::compileToCubin(source, arch);
    EXPECT_TRUE(cubin) << cubin.status().toString() << "\n" << source;
  }
}

// A reduction has no multi-tensor form; a transpose and a broadcast of a row are read at
// coordinates worked out from the linear index.
TEST(MultiTensorPlan, ReductionsHaveNoMultiTensorFormAndMovedElementsAreReadAtCoordinates) {
  const char* text = R"(
func.func @main(%a: tensor<4x6xf32>, %b: tensor<6x4xf32>, %c: tensor<6xf32>, %d: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4xf32>) {
  %t = "stablehlo.transpose"(%b) {permutation = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %x = "stablehlo.add"(%a, %t) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %cb = "stablehlo.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<4x6xf32>
  %y = "stablehlo.multiply"(%d, %cb) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = "stablehlo.reduce"(%d, %z) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %r = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%r) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %x, %y, %s : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4xf32>
}
)";
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  ASSERT_GE(plan.groups.size(), 3u);
  int reductions = 0;
  for (const cuda::FusionGroup& g : plan.groups) {
    Expected<cuda::MultiTensorKernelSource> k = cuda::generateMultiTensorKernel(g, "k");
    if (g.hasReduce()) {
      ++reductions;
      ASSERT_FALSE(k) << g.root()->describe();
      EXPECT_EQ(k.status().code(), StatusCode::kUnimplemented) << k.status().toString();
    } else {
      ASSERT_TRUE(k) << k.status().toString();
      EXPECT_NE(k->code.find("const int c1 = (wf_i) % 6;"), std::string::npos) << k->code;
      if (std::getenv("WF_PRINT_FUSED")) std::cout << k->code << "\n";
    }
  }
  EXPECT_EQ(reductions, 1);
}

// Updates reading their gradient transposed: their code holds their shape (the coordinates the
// transpose is read at), so those of one shape share it, and read it clamped inside the tensor.
const std::vector<Param> kTransposed = {{{33, 17}, ElementType::kF32, true}, {{3, 5}},
                                        {{33, 17}, ElementType::kF32, true}, {{64, 5}, ElementType::kF32, true},
                                        {{7, 9}}, {{33, 17}, ElementType::kBF16, true}};

TEST(MultiTensorPlan, TransposedGradientsShareCodeByShape) {
  Module m = parse(adamProgram(kTransposed));
  ASSERT_TRUE(mainOf(m));
  // As the planner sees it: the broadcasts of the scalars to the two 33x17 updates merged into
  // one, so that the two groups meet their inputs in other orders.
  Expected<cuda::PlanRewrites> rewrites = cuda::rewriteForPlanning(m, "main", /*fuse=*/true);
  ASSERT_TRUE(rewrites) << rewrites.status().toString();
  EXPECT_GT(rewrites->merged, 0);
  cuda::FusionPlan plan = cuda::planFusion(mainBody(m), {});
  const std::vector<const cuda::FusionGroup*> groups = updateGroups(plan);
  ASSERT_EQ(groups.size(), kTransposed.size());
  std::vector<std::string> codes;
  std::string source = cuda::fusedKernelPrelude();
  for (size_t i = 0; i < groups.size(); ++i) {
    Expected<cuda::MultiTensorKernelSource> k =
        cuda::generateMultiTensorKernel(*groups[i], "update" + std::to_string(i));
    ASSERT_TRUE(k) << k.status().toString();
    if (kTransposed[i].transposedGradient) {
      EXPECT_NE(k->code.find("wf_i"), std::string::npos) << "parameter " << i;
    }
    codes.push_back(k->code);
    source += k->code;
  }
  auto same = [&](size_t a, size_t b) {
    std::string x = codes[a], y = codes[b];
    for (std::string* c : {&x, &y})
      for (size_t at; (at = c->find("update")) != std::string::npos;) c->replace(at, 7, "#");
    return x == y;
  };
  EXPECT_TRUE(same(0, 2));   // both 33x17
  EXPECT_FALSE(same(0, 3));  // 64x5
  EXPECT_TRUE(same(1, 4));   // plain updates of any shape
  EXPECT_FALSE(same(0, 1));
  EXPECT_FALSE(same(0, 5));  // bf16
  Expected<std::string> cubin = cuda::compileToCubin(source, "sm_90");
  EXPECT_TRUE(cubin) << cubin.status().toString();
}

std::vector<Literal> adamArgs(const std::vector<Param>& params, std::mt19937_64& gen) {
  std::vector<Literal> args;
  for (const Param& p : params) {
    args.push_back(randomLiteral(Type::tensor(p.shape, p.type), -2, 2));
    const std::vector<int64_t> gshape = p.transposedGradient ? std::vector<int64_t>{p.shape[1], p.shape[0]} : p.shape;
    args.push_back(randomLiteral(Type::tensor(gshape, p.type), -1, 1));
    args.push_back(randomLiteral(Type::tensor(p.shape, ElementType::kF32), -0.1, 0.1));
    args.push_back(randomLiteral(Type::tensor(p.shape, ElementType::kF32), 0.0, 0.01));
  }
  Literal lr = Literal::zeros(Type::tensor({}, ElementType::kF32)), decay = lr.clone();
  lr.setDouble(0, std::uniform_real_distribution<double>(1e-3, 1e-2)(gen));
  decay.setDouble(0, 1.0 - std::uniform_real_distribution<double>(1e-5, 1e-4)(gen));
  args.push_back(std::move(lr));
  args.push_back(std::move(decay));
  return args;
}

// The merged plan, the plan of a step per loop and the CPU interpreter on the same inputs.
void expectMergedMatches(const std::vector<Param>& params, int wantSteps, int wantLoops) {
  Module m = parse(adamProgram(params));
  ASSERT_TRUE(mainOf(m));
  std::mt19937_64 gen(0x3417 + params.size());
  std::vector<Literal> args = adamArgs(params, gen);
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  CompileOptions merged, apart;
  apart.multiTensorLoops = false;
  auto exe = cudaBackend().compile(m, *mainOf(m), merged);
  ASSERT_TRUE(exe) << exe.status().toString();
  auto plain = cudaBackend().compile(m, *mainOf(m), apart);
  ASSERT_TRUE(plain) << plain.status().toString();
  const ExecutableStats st = (*exe)->stats();
  EXPECT_EQ(st.multiTensorSteps, wantSteps);
  EXPECT_EQ(st.multiTensorLoops, wantLoops);
  EXPECT_EQ((*plain)->stats().multiTensorSteps, 0);
  EXPECT_EQ((*plain)->stats().deviceSteps - st.deviceSteps, wantLoops - wantSteps);
  for (int run = 0; run < 2; ++run) {
    Expected<RunResult> got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    Expected<RunResult> apartRun = (*plain)->run(args);
    ASSERT_TRUE(apartRun) << apartRun.status().toString();
    ASSERT_EQ(got->outputs.size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], defaultTolerance((*want)[i].elementType())), "")
          << "result #" << i;
      EXPECT_TRUE(got->outputs[i].bitwiseEqual(apartRun->outputs[i])) << "result #" << i << ", run " << run;
    }
  }
}

TEST(MultiTensorRun, AdamUpdatesOfEveryShapeMatchTheCpuAndAStepPerLoop) {
  WF_REQUIRE_GPU();
  // Six f32 updates in one step, three bf16 ones in another.
  expectMergedMatches(kParams, 2, 9);
}

TEST(MultiTensorRun, TransposedGradientsMergeByShape) {
  WF_REQUIRE_GPU();
  // The two 33x17 updates in one step, the plain 3x5 and 7x9 ones in another.
  expectMergedMatches(kTransposed, 2, 4);
}

TEST(MultiTensorRun, MoreTensorsThanOneLaunchTakes) {
  WF_REQUIRE_GPU();
  // One launch takes 48 of these updates (9 addresses each in a table of 4 KB).
  std::vector<Param> params;
  for (int i = 0; i < 60; ++i) params.push_back({{2 + (i * 37) % 301, 1 + i % 3}});
  params.push_back({{513, 1025}});  // more blocks than one tensor is given: a loop of passes
  expectMergedMatches(params, 1, 61);
}

// The trainer's mode: every new parameter and moment carried into its argument, in place.
TEST(MultiTensorRun, UpdatesCarriedInPlaceMatchTheCpuStepAfterStep) {
  WF_REQUIRE_GPU();
  const std::vector<Param> params = {{{3, 5}}, {{7}}, {{1000, 3}}, {{17, 33}}};
  Module m = parse(adamProgram(params));
  ASSERT_TRUE(mainOf(m));
  const size_t n = params.size();
  CompileOptions options;
  options.carryInPlace = true;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k : {size_t{0}, size_t{2}, size_t{3}}) options.boundArguments.push_back(4 * i + k);
    options.carriedResults.push_back({i, 4 * i});                   // p
    options.carriedResults.push_back({n + 2 * i, 4 * i + 2});       // m
    options.carriedResults.push_back({n + 2 * i + 1, 4 * i + 3});   // v
  }
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  EXPECT_EQ((*exe)->stats().multiTensorSteps, 1);
  EXPECT_EQ((*exe)->stats().carriedInPlace, static_cast<int>(3 * n));
  std::mt19937_64 gen(0x5eed);
  std::vector<Literal> state = adamArgs(params, gen);
  for (size_t i = 0; i < n; ++i)
    for (size_t k : {size_t{0}, size_t{2}, size_t{3}})
      ASSERT_TRUE((*exe)->bindArgument(4 * i + k, state[4 * i + k]).isOk());
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    std::vector<Literal> fresh = adamArgs(params, gen);
    for (size_t i = 0; i < n; ++i) state[4 * i + 1] = fresh[4 * i + 1].clone();  // a new gradient
    state[4 * n] = fresh[4 * n].clone();
    state[4 * n + 1] = fresh[4 * n + 1].clone();
    Expected<std::vector<Literal>> want = runCpu(m, cloneAll(state));
    ASSERT_TRUE(want) << want.status().toString();
    std::vector<Literal> perRun;  // the arguments not bound: the gradients, %lr, %decay
    for (size_t i = 0; i < state.size(); ++i)
      if (i >= 4 * n || i % 4 == 1) perRun.push_back(state[i].clone());
    Expected<RunResult> got = (*exe)->run(perRun);
    ASSERT_TRUE(got) << got.status().toString();
    for (size_t i = 0; i < n; ++i) {
      const std::pair<size_t, size_t> carried[] = {{i, 4 * i}, {n + 2 * i, 4 * i + 2}, {n + 2 * i + 1, 4 * i + 3}};
      for (const auto& [result, argument] : carried) {
        Expected<Literal> value = (*exe)->readArgument(argument);
        ASSERT_TRUE(value) << value.status().toString();
        EXPECT_EQ(compareLiterals(*value, (*want)[result], defaultTolerance(ElementType::kF32)), "")
            << "argument " << argument;
        state[argument] = (*want)[result].clone();
      }
    }
  }
}

}  // namespace
}  // namespace wf::cudatest
