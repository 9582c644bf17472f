// Control-flow kernels: while, if, case, func.call, composite, optimization_barrier, chlo.scan
// and interpreter.run_parallel, on hand-built IR.
#include <gtest/gtest.h>

#include <random>

#include "ir_build_test_util.h"

namespace wf {
namespace {

using namespace wf::testing;

class ControlFlowTest : public ::testing::Test {
 protected:
  void SetUp() override { registerTestTargets(); }
};

// sum = 0; i = 0; while (i < n) { sum += i * i; i += 1 }; returns (i, sum).
Operation* buildSumOfSquares(Module& m) {
  Operation* f = addFunction(m, "main", {i64()}, {i64(), i64()});
  Block* b = bodyOf(f);
  Value* n = b->argument(0);
  Value* zero = constant(b, Literal::scalarInt(ElementType::kSI64, 0));
  Value* one = constant(b, Literal::scalarInt(ElementType::kSI64, 1));
  Operation* w = addOp(b, "stablehlo.while", {zero, zero}, {i64(), i64()});
  Block* cond = addRegion(w, {i64(), i64()});
  ret(cond, {call(cond, "test.lt", {cond->argument(0), n}, i1())});  // n comes from the enclosing scope
  Block* body = addRegion(w, {i64(), i64()});
  Value* sq = call(body, "test.mul", {body->argument(0), body->argument(0)}, i64());
  Value* sum = call(body, "test.add", {body->argument(1), sq}, i64());
  Value* next = call(body, "test.add", {body->argument(0), one}, i64());
  ret(body, {next, sum});
  ret(b, {w->result(0), w->result(1)}, "func.return");
  return f;
}

TEST_F(ControlFlowTest, WhileComputesSumOfSquares) {
  Module m;
  buildSumOfSquares(m);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const int64_t n = std::uniform_int_distribution<int64_t>(0, 200)(rng);
    auto r = runFunction(m, "main", {Literal::scalarInt(ElementType::kSI64, n)});
    ASSERT_TRUE(r) << r.status().toString();
    int64_t expected = 0;
    for (int64_t i = 0; i < n; ++i) expected += i * i;
    EXPECT_EQ((*r)[0].getInt(0), n);
    EXPECT_EQ((*r)[1].getInt(0), expected) << "n = " << n;
  }
}

TEST_F(ControlFlowTest, WhileConditionMustBeBoolean) {
  Module m;
  Operation* f = addFunction(m, "main", {}, {i64()});
  Block* b = bodyOf(f);
  Value* zero = constant(b, Literal::scalarInt(ElementType::kSI64, 0));
  Operation* w = addOp(b, "stablehlo.while", {zero}, {i64()});
  Block* cond = addRegion(w, {i64()});
  ret(cond, {cond->argument(0)});  // an i64, not an i1
  Block* body = addRegion(w, {i64()});
  ret(body, {body->argument(0)});
  ret(b, {w->result(0)}, "func.return");
  auto r = runFunction(m, "main");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("stablehlo.while"), std::string::npos) << r.status().toString();
}

// case(index) { 0: 10, 1: if (pred) { 20 } else { 30 }, 2: 40 }
Operation* buildNestedCase(Module& m) {
  Operation* f = addFunction(m, "main", {Type::scalar(ElementType::kSI32), i1()}, {i64()});
  Block* b = bodyOf(f);
  Operation* c = addOp(b, "stablehlo.case", {b->argument(0)}, {i64()});
  Block* br0 = addRegion(c);
  ret(br0, {constant(br0, Literal::scalarInt(ElementType::kSI64, 10))});
  Block* br1 = addRegion(c);
  Operation* i = addOp(br1, "stablehlo.if", {b->argument(1)}, {i64()});
  Block* t = addRegion(i);
  ret(t, {constant(t, Literal::scalarInt(ElementType::kSI64, 20))});
  Block* e = addRegion(i);
  ret(e, {constant(e, Literal::scalarInt(ElementType::kSI64, 30))});
  ret(br1, {i->result(0)});
  Block* br2 = addRegion(c);
  ret(br2, {constant(br2, Literal::scalarInt(ElementType::kSI64, 40))});
  ret(b, {c->result(0)}, "func.return");
  return f;
}

TEST_F(ControlFlowTest, NestedCaseAndIf) {
  Module m;
  buildNestedCase(m);
  struct Case {
    int64_t index;
    bool pred;
    int64_t expected;
  };
  // Out-of-range indices (negative or too large) select the last branch.
  for (Case c : {Case{0, true, 10}, Case{1, true, 20}, Case{1, false, 30}, Case{2, false, 40}, Case{-1, true, 40},
                 Case{3, true, 40}, Case{1000, false, 40}}) {
    auto r = runFunction(m, "main", {Literal::scalarInt(ElementType::kSI32, c.index), Literal::scalarInt(ElementType::kI1, c.pred)});
    ASSERT_TRUE(r) << r.status().toString();
    EXPECT_EQ((*r)[0].getInt(0), c.expected) << "index " << c.index << " pred " << c.pred;
  }
}

TEST_F(ControlFlowTest, CallCompositeAndBarrier) {
  Module m;
  Operation* square = addFunction(m, "square", {i64()}, {i64()});
  Block* sb = bodyOf(square);
  ret(sb, {call(sb, "test.mul", {sb->argument(0), sb->argument(0)}, i64())}, "func.return");

  Operation* f = addFunction(m, "main", {i64()}, {i64(), i64(), i64()});
  Block* b = bodyOf(f);
  Value* called = addOp(b, "func.call", {b->argument(0)}, {i64()}, {{"callee", Attribute::symbolRef("square")}})->result(0);
  Value* composed = addOp(b, "stablehlo.composite", {called}, {i64()},
                          {{"name", Attribute::string("test.square")}, {"decomposition", Attribute::symbolRef("square")}})
                        ->result(0);
  Operation* barrier = addOp(b, "stablehlo.optimization_barrier", {called, composed}, {i64(), i64()});
  ret(b, {barrier->result(0), barrier->result(1), b->argument(0)}, "func.return");

  auto r = runFunction(m, "main", {Literal::scalarInt(ElementType::kSI64, -7)});
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ((*r)[0].getInt(0), 49);
  EXPECT_EQ((*r)[1].getInt(0), 2401);
  EXPECT_EQ((*r)[2].getInt(0), -7);
}

TEST_F(ControlFlowTest, CallOfMissingFunctionIsAnError) {
  Module m;
  Operation* f = addFunction(m, "main", {}, {});
  Block* b = bodyOf(f);
  addOp(b, "func.call", {}, {}, {{"callee", Attribute::symbolRef("nowhere")}});
  ret(b, {}, "func.return");
  auto r = runFunction(m, "main");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("@nowhere"), std::string::npos) << r.status().toString();
}

// chlo.scan(input) inits(init) dimension=d: running sums, checked against a direct computation.
void checkCumsum(int64_t rows, int64_t cols, int64_t dim, bool reverse) {
  Module m;
  std::vector<int64_t> carryShape = {dim == 0 ? cols : rows};
  Type inType = tensorOf({rows, cols});
  Type carryType = tensorOf(carryShape);
  Operation* f = addFunction(m, "main", {inType, carryType}, {inType, carryType});
  Block* b = bodyOf(f);
  std::vector<NamedAttribute> attrs = {{"dimension", Attribute::integer(dim)}};
  if (reverse) attrs.push_back({"is_reverse", Attribute::boolean(true)});
  Operation* scan = addOp(b, "chlo.scan", {b->argument(0), b->argument(1)}, {inType, carryType}, attrs);
  Block* body = addRegion(scan, {carryType, carryType});
  Value* s = call(body, "test.add", {body->argument(0), body->argument(1)}, carryType);
  ret(body, {s, s});
  ret(b, {scan->result(0), scan->result(1)}, "func.return");

  std::mt19937 rng(static_cast<unsigned>(rows * 31 + cols * 7 + dim + reverse));
  std::vector<int64_t> data(static_cast<size_t>(rows * cols)), init(static_cast<size_t>(carryShape[0]));
  for (int64_t& v : data) v = std::uniform_int_distribution<int64_t>(-100, 100)(rng);
  for (int64_t& v : init) v = std::uniform_int_distribution<int64_t>(-100, 100)(rng);
  auto r = runFunction(m, "main", {ints({rows, cols}, data), ints(carryShape, init)});
  ASSERT_TRUE(r) << r.status().toString();

  std::vector<int64_t> expected(data.size());
  std::vector<int64_t> carry = init;
  const int64_t length = dim == 0 ? rows : cols;
  for (int64_t step = 0; step < length; ++step) {
    const int64_t k = reverse ? length - 1 - step : step;
    for (int64_t j = 0; j < carryShape[0]; ++j) {
      const int64_t idx = dim == 0 ? k * cols + j : j * cols + k;
      carry[static_cast<size_t>(j)] += data[static_cast<size_t>(idx)];
      expected[static_cast<size_t>(idx)] = carry[static_cast<size_t>(j)];
    }
  }
  EXPECT_EQ(valuesOf((*r)[0]), expected);
  EXPECT_EQ(valuesOf((*r)[1]), carry);
}

TEST_F(ControlFlowTest, ScanCumulativeSums) {
  checkCumsum(5, 3, 0, false);
  checkCumsum(4, 6, 1, false);
  checkCumsum(5, 3, 0, true);
  checkCumsum(2, 7, 1, true);
}

// A 2x2 grid of replica_id/partition_id programs, with operands distributed row-major.
TEST_F(ControlFlowTest, RunParallelDistributesOperandsAndConcatenatesResults) {
  Module m;
  Type u32 = Type::scalar(ElementType::kUI32);
  Operation* ids = addFunction(m, "ids", {i64()}, {u32, u32, i64()});
  Block* ib = bodyOf(ids);
  Value* r = addOp(ib, "stablehlo.replica_id", {}, {u32})->result(0);
  Value* p = addOp(ib, "stablehlo.partition_id", {}, {u32})->result(0);
  ret(ib, {r, p, call(ib, "test.add", {ib->argument(0), ib->argument(0)}, i64())}, "func.return");

  std::vector<Type> results;
  for (int i = 0; i < 4; ++i) results.insert(results.end(), {u32, u32, i64()});
  Operation* f = addFunction(m, "main", {}, results);
  Block* b = bodyOf(f);
  std::vector<Value*> operands;
  for (int64_t i = 0; i < 4; ++i) operands.push_back(constant(b, Literal::scalarInt(ElementType::kSI64, 100 + i)));
  Attribute row = Attribute::array({Attribute::symbolRef("ids"), Attribute::symbolRef("ids")});
  Operation* run = addOp(b, "interpreter.run_parallel", operands, results, {{"programs", Attribute::array({row, row})}});
  std::vector<Value*> all;
  for (const auto& v : run->results()) all.push_back(v.get());
  ret(b, all, "func.return");

  auto out = runFunction(m, "main");
  ASSERT_TRUE(out) << out.status().toString();
  ASSERT_EQ(out->size(), 12u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*out)[static_cast<size_t>(3 * i)].getInt(0), i / 2) << "replica of process " << i;
    EXPECT_EQ((*out)[static_cast<size_t>(3 * i + 1)].getInt(0), i % 2) << "partition of process " << i;
    EXPECT_EQ((*out)[static_cast<size_t>(3 * i + 2)].getInt(0), 2 * (100 + i)) << "operand of process " << i;
  }
}

}  // namespace
}  // namespace wf
