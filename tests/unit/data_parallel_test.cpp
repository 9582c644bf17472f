// DDP's gradient bucket assignment (train/data_parallel.h), against torch's
// compute_bucket_assignment_by_size worked by hand; python/tests/test_distributed_training.py
// checks a whole model against torch's own function.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "train/data_parallel.h"
#include "train/training_package.h"

namespace wf::train {
namespace {

using Buckets = std::vector<std::vector<size_t>>;
constexpr int64_t kMB = 1024 * 1024;

std::vector<BucketTensor> f32(std::initializer_list<int64_t> bytes) {
  std::vector<BucketTensor> out;
  for (int64_t b : bytes) out.push_back({ElementType::kF32, b});
  return out;
}

TEST(DataParallelBuckets, FirstBucketSmallThenCap) {
  const std::vector<int64_t> limits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
  // 0.5 MB + 0.5 MB reaches the 1 MB first bucket exactly (>=: it closes); then 25 MB buckets.
  auto t = f32({kMB / 2, kMB / 2, 10 * kMB, 10 * kMB, 10 * kMB, 3 * kMB, 30 * kMB, kMB});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0, 1}, {2, 3, 4}, {5, 6}, {7}}));
}

TEST(DataParallelBuckets, OneLargeTensorClosesTheFirstBucketAlone) {
  const std::vector<int64_t> limits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
  auto t = f32({40 * kMB, 4, 4});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0}, {1, 2}}));
}

TEST(DataParallelBuckets, SmallModelIsOneBucket) {
  const std::vector<int64_t> limits = {kDdpFirstBucketBytes, kDdpBucketCapBytes};
  auto t = f32({64, 1024, 64, 4096});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0, 1, 2, 3}}));
}

TEST(DataParallelBuckets, ElementTypesBucketApartWithTheirOwnLimits) {
  // Each type keeps its own open bucket and its own place in the limits; the open buckets close
  // at the end in order of their type's first tensor.
  std::vector<BucketTensor> t = {{ElementType::kF32, kMB}, {ElementType::kBF16, kMB / 4}, {ElementType::kF32, kMB},
                                 {ElementType::kBF16, kMB}, {ElementType::kF32, 2}};
  const std::vector<int64_t> limits = {kMB, 4 * kMB};
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0}, {1, 3}, {2, 4}}));
}

TEST(DataParallelBuckets, OneLimitOnly) {
  const std::vector<int64_t> limits = {100};
  auto t = f32({60, 60, 60, 40, 10});
  EXPECT_EQ(assignBuckets(t, limits), (Buckets{{0, 1}, {2, 3}, {4}}));
}

// The data-parallel step of a small package written here: parameters a (1.2 MB), b (32 B),
// c (28 MB), registered in that order. In reverse order c fills the 1 MB first bucket alone, b and a
// share the next. @train_step_dp all-reduces each bucket once, at the top level; the accumulating
// step only inside the branch of the last micro-batch.

const char* kLoss = R"(
func.func @main(%x: tensor<4xf32>, %a: tensor<300000xf32>, %b: tensor<8xf32>, %c: tensor<7000000xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %aa = stablehlo.multiply %a, %a : tensor<300000xf32>
  %sa = stablehlo.reduce(%aa init: %z) applies stablehlo.add across dimensions = [0] : (tensor<300000xf32>, tensor<f32>) -> tensor<f32>
  %bb = stablehlo.multiply %b, %b : tensor<8xf32>
  %sb = stablehlo.reduce(%bb init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  %cc = stablehlo.multiply %c, %c : tensor<7000000xf32>
  %sc = stablehlo.reduce(%cc init: %z) applies stablehlo.add across dimensions = [0] : (tensor<7000000xf32>, tensor<f32>) -> tensor<f32>
  %sx = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %s1 = stablehlo.add %sa, %sb : tensor<f32>
  %s2 = stablehlo.add %s1, %sc : tensor<f32>
  %s3 = stablehlo.multiply %s2, %sx : tensor<f32>
  return %s3 : tensor<f32>
}
)";

const char* kOptimizer = R"(
func.func @optimizer_update(%a: tensor<300000xf32>, %b: tensor<8xf32>, %c: tensor<7000000xf32>,
                            %ga: tensor<300000xf32>, %gb: tensor<8xf32>, %gc: tensor<7000000xf32>,
                            %step: tensor<i64>, %lr: tensor<1xf32>) -> (tensor<300000xf32>, tensor<8xf32>, tensor<7000000xf32>) {
  %l = stablehlo.reshape %lr : (tensor<1xf32>) -> tensor<f32>
  %la = stablehlo.broadcast_in_dim %l, dims = [] : (tensor<f32>) -> tensor<300000xf32>
  %lb = stablehlo.broadcast_in_dim %l, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %lc = stablehlo.broadcast_in_dim %l, dims = [] : (tensor<f32>) -> tensor<7000000xf32>
  %da = stablehlo.multiply %la, %ga : tensor<300000xf32>
  %db = stablehlo.multiply %lb, %gb : tensor<8xf32>
  %dc = stablehlo.multiply %lc, %gc : tensor<7000000xf32>
  %na = stablehlo.subtract %a, %da : tensor<300000xf32>
  %nb = stablehlo.subtract %b, %db : tensor<8xf32>
  %nc = stablehlo.subtract %c, %dc : tensor<7000000xf32>
  return %na, %nb, %nc : tensor<300000xf32>, tensor<8xf32>, tensor<7000000xf32>
}
)";

const char* kManifest = R"({
  "format": "warpforge.training-package", "format_version": 1, "name": "dp",
  "training": {
    "loss": {"file": "loss.mlir", "entry": "main", "arguments": [
      {"name": "x", "argument": 0, "kind": "batch", "dtype": "f32", "shape": [4]},
      {"name": "a", "argument": 1, "kind": "parameter", "trainable": true, "dtype": "f32", "shape": [300000]},
      {"name": "b", "argument": 2, "kind": "parameter", "trainable": true, "dtype": "f32", "shape": [8]},
      {"name": "c", "argument": 3, "kind": "parameter", "trainable": true, "dtype": "f32", "shape": [7000000]}],
      "results": [{"name": "loss", "result": 0, "dtype": "f32", "shape": []}]},
    "params": ["a", "b", "c"],
    "optimizer": {"file": "optimizer.mlir", "entry": "optimizer_update", "kind": "sgd",
                  "state_file": "optimizer_state.safetensors", "param_groups": [{"lr": 0.1, "params": ["a", "b", "c"]}],
                  "state": []},
    "lr_schedule": {"kind": "constant", "base_lrs": [0.1]},
    "weights": "weights.safetensors"
  }
})";

// Ops named `name` directly in `block`, and inside the regions of its ops.
void count(const Block& block, const std::string& name, int& top, int& nested, bool inRegion) {
  for (const auto& op : block.operations()) {
    if (op->name() == name) ++(inRegion ? nested : top);
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks()) count(*b, name, top, nested, true);
  }
}

TEST(DataParallelStep, BucketsBecomeOneAllReduceEachOnlyWhereTheUpdateIs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "wf_data_parallel_pkg";
  fs::create_directories(dir);
  std::ofstream(dir / "loss.mlir") << kLoss;
  std::ofstream(dir / "optimizer.mlir") << kOptimizer;
  std::ofstream(dir / "manifest.json") << kManifest;
  auto pkg = TrainingPackage::open(dir.string());
  ASSERT_TRUE(pkg) << pkg.status().message();
  DataParallelOptions options;
  options.worldSize = 3;
  // indices into params [a, b, c]: c alone (28 MB >= 1 MB), then b and a
  EXPECT_EQ(gradientBuckets(*pkg, options), (Buckets{{2}, {1, 0}}));
  auto module = pkg->buildTrainModule();
  ASSERT_TRUE(module) << module.status().message();
  Status added = addDataParallelSteps(*pkg, *module, options);
  ASSERT_TRUE(added.isOk()) << added.message();

  const Operation* step = module->lookupFunction("train_step_dp");
  const Operation* acc = module->lookupFunction("train_step_accumulate_dp");
  ASSERT_TRUE(step && acc);
  // the signatures of the single-process steps
  EXPECT_EQ(FuncOp(step).functionType(), FuncOp(module->lookupFunction("train_step")).functionType());
  EXPECT_EQ(FuncOp(acc).functionType(), FuncOp(module->lookupFunction("train_step_accumulate")).functionType());
  int top = 0, nested = 0;
  count(FuncOp(step).body(), "stablehlo.all_reduce", top, nested, false);
  EXPECT_EQ(top, 2);
  EXPECT_EQ(nested, 0);
  // each bucket's all_reduce takes its own gradients, divided by the world size first
  std::vector<size_t> operands;
  for (const auto& op : FuncOp(step).body().operations()) {
    if (op->name() != "stablehlo.all_reduce") continue;
    operands.push_back(op->numOperands());
    for (const Value* v : op->operands()) {
      ASSERT_TRUE(v->definingOp());
      EXPECT_EQ(v->definingOp()->name(), "stablehlo.divide");
    }
  }
  EXPECT_EQ(operands, (std::vector<size_t>{1, 2}));
  // The value and grad is inlined, and the all_reduce of c's bucket (whose gradient backward
  // computes first) comes before the ops that compute the gradients of the next bucket: it can
  // run while they do.
  const auto& ops = FuncOp(step).body().operations();
  auto at = [&](const Operation* op) {
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].get() == op) return i;
    return ops.size();
  };
  std::vector<const Operation*> reduces;
  for (const auto& op : ops) {
    if (op->name() == "func.call") {
      EXPECT_NE(op->attr("callee")->stringValue(), "loss_value_and_grad") << "called, not inlined";
    }
    if (op->name() == "stablehlo.all_reduce") reduces.push_back(op.get());
  }
  ASSERT_EQ(reduces.size(), 2u);
  for (const Value* divided : reduces[1]->operands()) {
    const Operation* grad = divided->definingOp()->operand(0)->definingOp();
    ASSERT_TRUE(grad);
    EXPECT_LT(at(reduces[0]), at(grad)) << "bucket {b, a}'s gradient " << grad->name() << " is computed before bucket {c} is all-reduced";
  }
  top = nested = 0;
  count(FuncOp(acc).body(), "stablehlo.all_reduce", top, nested, false);
  EXPECT_EQ(top, 0);  // no communication before the last micro-batch (DDP's no_sync)
  EXPECT_EQ(nested, 2);
  // the module still verifies; the plain steps have no collectives
  top = nested = 0;
  count(FuncOp(module->lookupFunction("train_step")).body(), "stablehlo.all_reduce", top, nested, false);
  EXPECT_EQ(top + nested, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wf::train
