// Collectives across in-process replicas/partitions: process groups as the spec defines them,
// each collective on small grids against hand-computed results, point-to-point messages, and
// failing or deadlocked processes that must end the grid with an error instead of hanging.
#include <gtest/gtest.h>

#include <random>

#include "eval/collectives.h"
#include "ir_build_test_util.h"

namespace wf {
namespace {

using namespace wf::testing;

class CollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override { registerTestTargets(); }
};

std::string groupsToString(const std::vector<ProcessGroup>& groups) {
  std::string s;
  for (const ProcessGroup& g : groups) {
    s += "[";
    for (const ProcessId& p : g) s += p.toString();
    s += "]";
  }
  return s;
}

TEST_F(CollectivesTest, ProcessGroupsFollowTheSpecExamples) {
  auto cr = computeProcessGroups(GroupStrategy::kCrossReplica, {{0, 1}, {2, 3}}, 4, 2);
  ASSERT_TRUE(cr);
  EXPECT_EQ(groupsToString(*cr), "[(0, 0)(1, 0)][(0, 1)(1, 1)][(2, 0)(3, 0)][(2, 1)(3, 1)]");
  auto cp = computeProcessGroups(GroupStrategy::kCrossPartition, {{0, 1}}, 4, 2);
  ASSERT_TRUE(cp);
  EXPECT_EQ(groupsToString(*cp), "[(0, 0)(0, 1)][(1, 0)(1, 1)][(2, 0)(2, 1)][(3, 0)(3, 1)]");
  auto crp = computeProcessGroups(GroupStrategy::kCrossReplicaAndPartition, {{0, 1}, {2, 3}}, 4, 2);
  ASSERT_TRUE(crp);
  EXPECT_EQ(groupsToString(*crp), "[(0, 0)(1, 0)(0, 1)(1, 1)][(2, 0)(3, 0)(2, 1)(3, 1)]");
  auto fl = computeProcessGroups(GroupStrategy::kFlattenedIds, {{0, 1, 2, 3}, {4, 5, 6, 7}}, 4, 2);
  ASSERT_TRUE(fl);
  EXPECT_EQ(groupsToString(*fl), "[(0, 0)(0, 1)(1, 0)(1, 1)][(2, 0)(2, 1)(3, 0)(3, 1)]");
  // Ragged groups are padded with -1; ids outside the grid are errors.
  auto ragged = computeProcessGroups(GroupStrategy::kCrossReplica, {{0, 1}, {2, -1}}, 3, 1);
  ASSERT_TRUE(ragged);
  EXPECT_EQ(groupsToString(*ragged), "[(0, 0)(1, 0)][(2, 0)]");
  EXPECT_FALSE(computeProcessGroups(GroupStrategy::kCrossReplica, {{0, 5}}, 2, 1));
}

Attribute groupsAttr(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> flat;
  for (const auto& g : groups) flat.insert(flat.end(), g.begin(), g.end());
  return Attribute::denseElements(
      ints({static_cast<int64_t>(groups.size()), static_cast<int64_t>(groups[0].size())}, flat));
}

Attribute channel(int64_t handle) {
  return Attribute::dialectStruct("stablehlo.channel_handle",
                                  {{"handle", Attribute::integer(handle)}, {"type", Attribute::integer(0)}});
}

void addSumRegion(Operation* op) {
  Block* r = addRegion(op, {i64(), i64()});
  ret(r, {call(r, "test.add", {r->argument(0), r->argument(1)}, i64())});
}

// func @f(%x: in) -> out { %r = <name>(%x) {attrs} ; return %r }
const Operation* buildCollective(Module& m, const std::string& name, Type in, Type out,
                                 std::vector<NamedAttribute> attrs, bool withRegion) {
  Operation* f = addFunction(m, "f", {in}, {out});
  Block* b = bodyOf(f);
  Operation* op = addOp(b, name, {b->argument(0)}, {out}, std::move(attrs));
  if (withRegion) addSumRegion(op);
  ret(b, {op->result(0)}, "func.return");
  return f;
}

std::vector<std::vector<int64_t>> randomInputs(size_t processes, size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int64_t>> in(processes, std::vector<int64_t>(size));
  for (auto& v : in)
    for (int64_t& x : v) x = std::uniform_int_distribution<int64_t>(-1000, 1000)(rng);
  return in;
}

// Runs @f on a numReplicas x numPartitions grid; process i gets inputs[i] shaped `shape`.
std::vector<std::vector<int64_t>> runOnGrid(const Module& m, int64_t numReplicas, int64_t numPartitions,
                                            const std::vector<std::vector<int64_t>>& inputs,
                                            std::vector<int64_t> shape) {
  std::vector<Literal> args;
  for (const auto& v : inputs) args.push_back(ints(shape, v));
  auto r = Interpreter::runGrid(*m.lookupFunction("f"), args, m, numReplicas, numPartitions, nullptr);
  EXPECT_TRUE(r) << r.status().toString();
  std::vector<std::vector<int64_t>> out;
  if (r)
    for (const auto& results : *r) out.push_back(valuesOf(results[0]));
  return out;
}

std::vector<int64_t> sumOf(const std::vector<std::vector<int64_t>>& in, std::vector<size_t> which) {
  std::vector<int64_t> s(in[0].size(), 0);
  for (size_t w : which)
    for (size_t i = 0; i < s.size(); ++i) s[i] += in[w][i];
  return s;
}

TEST_F(CollectivesTest, AllReduceCrossReplicaOn2x2) {
  Module m;
  buildCollective(m, "stablehlo.all_reduce", tensorOf({4}), tensorOf({4}),
                  {{"replica_groups", groupsAttr({{0, 1}})}, {"channel_handle", channel(0)}}, true);
  auto in = randomInputs(4, 4, 1);
  auto out = runOnGrid(m, 2, 2, in, {4});
  ASSERT_EQ(out.size(), 4u);
  // Processes are row-major (replica, partition): 0=(0,0) 1=(0,1) 2=(1,0) 3=(1,1).
  EXPECT_EQ(out[0], sumOf(in, {0, 2}));
  EXPECT_EQ(out[2], sumOf(in, {0, 2}));
  EXPECT_EQ(out[1], sumOf(in, {1, 3}));
  EXPECT_EQ(out[3], sumOf(in, {1, 3}));
}

TEST_F(CollectivesTest, AllReduceCrossReplicaAndPartitionOn2x2) {
  Module m;
  buildCollective(m, "stablehlo.all_reduce", tensorOf({3}), tensorOf({3}),
                  {{"replica_groups", groupsAttr({{0, 1}})}, {"channel_handle", channel(1)}}, true);
  auto in = randomInputs(4, 3, 2);
  auto out = runOnGrid(m, 2, 2, in, {3});
  ASSERT_EQ(out.size(), 4u);
  for (const auto& o : out) EXPECT_EQ(o, sumOf(in, {0, 1, 2, 3}));
}

TEST_F(CollectivesTest, AllReduceFlattenedIdsOn2x2) {
  Module m;
  buildCollective(m, "stablehlo.all_reduce", tensorOf({3}), tensorOf({3}),
                  {{"replica_groups", groupsAttr({{0, 3}, {1, 2}})},
                   {"channel_handle", channel(1)},
                   {"use_global_device_ids", Attribute::unit()}},
                  true);
  auto in = randomInputs(4, 3, 3);
  auto out = runOnGrid(m, 2, 2, in, {3});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], sumOf(in, {0, 3}));
  EXPECT_EQ(out[3], sumOf(in, {0, 3}));
  EXPECT_EQ(out[1], sumOf(in, {1, 2}));
  EXPECT_EQ(out[2], sumOf(in, {1, 2}));
}

TEST_F(CollectivesTest, AllGatherCrossReplicaAndPartitionOrdersPartitionsOutermost) {
  Module m;
  buildCollective(m, "stablehlo.all_gather", tensorOf({2, 1}), tensorOf({2, 4}),
                  {{"all_gather_dim", Attribute::integer(1)},
                   {"replica_groups", groupsAttr({{0, 1}})},
                   {"channel_handle", channel(1)}},
                  false);
  std::vector<std::vector<int64_t>> in = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  auto out = runOnGrid(m, 2, 2, in, {2, 1});
  ASSERT_EQ(out.size(), 4u);
  // Group order: (0,0) (1,0) (0,1) (1,1) = processes 0, 2, 1, 3.
  for (const auto& o : out) EXPECT_EQ(o, (std::vector<int64_t>{1, 5, 3, 7, 2, 6, 4, 8}));
}

TEST_F(CollectivesTest, AllToAllCrossPartition) {
  Module m;
  buildCollective(m, "stablehlo.all_to_all", tensorOf({2, 4}), tensorOf({4, 2}),
                  {{"split_dimension", Attribute::integer(1)},
                   {"concat_dimension", Attribute::integer(0)},
                   {"split_count", Attribute::integer(2)},
                   {"replica_groups", groupsAttr({{0, 1}})},
                   {"channel_handle", channel(1)}},
                  false);
  std::vector<std::vector<int64_t>> in = {{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16}};
  auto out = runOnGrid(m, 1, 2, in, {2, 4});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<int64_t>{1, 2, 5, 6, 9, 10, 13, 14}));
  EXPECT_EQ(out[1], (std::vector<int64_t>{3, 4, 7, 8, 11, 12, 15, 16}));
}

TEST_F(CollectivesTest, ReduceScatterCrossReplica) {
  Module m;
  buildCollective(m, "stablehlo.reduce_scatter", tensorOf({2, 4}), tensorOf({2, 2}),
                  {{"scatter_dimension", Attribute::integer(1)}, {"replica_groups", groupsAttr({{0, 1}})}}, true);
  auto in = randomInputs(2, 8, 4);
  auto out = runOnGrid(m, 2, 1, in, {2, 4});
  ASSERT_EQ(out.size(), 2u);
  auto total = sumOf(in, {0, 1});
  EXPECT_EQ(out[0], (std::vector<int64_t>{total[0], total[1], total[4], total[5]}));
  EXPECT_EQ(out[1], (std::vector<int64_t>{total[2], total[3], total[6], total[7]}));
}

TEST_F(CollectivesTest, CollectivePermuteSendsAlongPairs) {
  Module m;
  buildCollective(m, "stablehlo.collective_permute", tensorOf({2}), tensorOf({2}),
                  {{"source_target_pairs", groupsAttr({{0, 1}, {1, 2}})}, {"channel_handle", channel(0)}}, false);
  std::vector<std::vector<int64_t>> in = {{1, 2}, {3, 4}, {5, 6}};
  auto out = runOnGrid(m, 3, 1, in, {2});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(out[1], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(out[2], (std::vector<int64_t>{3, 4}));
}

TEST_F(CollectivesTest, CollectiveBroadcastFromFirstOfGroup) {
  Module m;
  buildCollective(m, "stablehlo.collective_broadcast", tensorOf({2}), tensorOf({2}),
                  {{"replica_groups", groupsAttr({{2, 1}})}, {"channel_handle", channel(0)}}, false);
  std::vector<std::vector<int64_t>> in = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  auto out = runOnGrid(m, 4, 1, in, {2});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(out[1], (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(out[2], (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(out[3], (std::vector<int64_t>{0, 0}));
}

// while (i < 25) { acc += all_reduce(x * (i + 1)) } on a 2x2 grid: many collectives in sequence
// on the same channel and group must pair up in order.
TEST_F(CollectivesTest, RepeatedAllReduceInsideWhile) {
  Module m;
  Operation* f = addFunction(m, "f", {i64()}, {i64()});
  Block* b = bodyOf(f);
  Value* zero = constant(b, Literal::scalarInt(ElementType::kSI64, 0));
  Value* one = constant(b, Literal::scalarInt(ElementType::kSI64, 1));
  Value* limit = constant(b, Literal::scalarInt(ElementType::kSI64, 25));
  Operation* w = addOp(b, "stablehlo.while", {zero, zero}, {i64(), i64()});
  Block* cond = addRegion(w, {i64(), i64()});
  ret(cond, {call(cond, "test.lt", {cond->argument(0), limit}, i1())});
  Block* body = addRegion(w, {i64(), i64()});
  Value* next = call(body, "test.add", {body->argument(0), one}, i64());
  Value* scaled = call(body, "test.mul", {b->argument(0), next}, i64());
  Operation* ar = addOp(body, "stablehlo.all_reduce", {scaled}, {i64()},
                        {{"replica_groups", groupsAttr({{0, 1}})}, {"channel_handle", channel(1)}});
  addSumRegion(ar);
  ret(body, {next, call(body, "test.add", {body->argument(1), ar->result(0)}, i64())});
  ret(b, {w->result(1)}, "func.return");

  std::vector<Literal> args;
  int64_t total = 0;
  for (int64_t i = 0; i < 4; ++i) {
    args.push_back(Literal::scalarInt(ElementType::kSI64, 10 + i));
    total += 10 + i;
  }
  auto r = Interpreter::runGrid(*f, args, m, 2, 2, nullptr);
  ASSERT_TRUE(r) << r.status().toString();
  for (const auto& results : *r) EXPECT_EQ(results[0].getInt(0), total * (25 * 26 / 2));
}

TEST_F(CollectivesTest, FailingProcessDoesNotHangTheGrid) {
  Module m;
  const Operation* reducer = buildCollective(m, "stablehlo.all_reduce", tensorOf({2}), tensorOf({2}),
                                             {{"replica_groups", groupsAttr({{0, 1, 2}})}}, true);
  Operation* failing = addFunction(m, "failing", {tensorOf({2})}, {tensorOf({2})});
  Block* fb = bodyOf(failing);
  ret(fb, {call(fb, "test.fail", {fb->argument(0)}, tensorOf({2}))}, "func.return");

  ProcessGrid grid;
  grid.numReplicas = 3;
  grid.functions = {reducer, reducer, failing};
  for (int i = 0; i < 3; ++i) grid.args.push_back({ints({2}, {i, i})});
  auto r = runProcessGrid(grid, m, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("test.fail called"), std::string::npos) << r.status().toString();
  EXPECT_NE(r.status().message().find("process (2, 0)"), std::string::npos) << r.status().toString();
}

TEST_F(CollectivesTest, ProcessThatNeverJoinsIsADeadlockError) {
  Module m;
  const Operation* reducer = buildCollective(m, "stablehlo.all_reduce", tensorOf({2}), tensorOf({2}),
                                             {{"replica_groups", groupsAttr({{0, 1}})}}, true);
  Operation* idle = addFunction(m, "idle", {tensorOf({2})}, {tensorOf({2})});
  ret(bodyOf(idle), {bodyOf(idle)->argument(0)}, "func.return");
  ProcessGrid grid;
  grid.numReplicas = 2;
  grid.functions = {reducer, idle};
  grid.args = {{ints({2}, {1, 2})}, {ints({2}, {3, 4})}};
  auto r = runProcessGrid(grid, m, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().toString();
}

const Operation* buildSender(Module& m, int64_t channelId) {
  Operation* f = addFunction(m, "send", {tensorOf({2})}, {Type::token()});
  Block* b = bodyOf(f);
  Value* token = addOp(b, "stablehlo.after_all", {}, {Type::token()})->result(0);
  Value* t1 = addOp(b, "stablehlo.send", {b->argument(0), token}, {Type::token()},
                    {{"channel_handle", channel(channelId)}, {"is_host_transfer", Attribute::boolean(true)}})
                  ->result(0);
  Value* doubled = call(b, "test.add", {b->argument(0), b->argument(0)}, tensorOf({2}));
  Value* t2 = addOp(b, "stablehlo.send", {doubled, t1}, {Type::token()}, {{"channel_handle", channel(channelId)}})
                  ->result(0);
  ret(b, {t2}, "func.return");
  return f;
}

const Operation* buildReceiver(Module& m, int64_t channelId) {
  Operation* f = addFunction(m, "recv", {}, {tensorOf({2}), tensorOf({2})});
  Block* b = bodyOf(f);
  Value* token = addOp(b, "stablehlo.create_token", {}, {Type::token()})->result(0);
  Operation* r1 = addOp(b, "stablehlo.recv", {token}, {tensorOf({2}), Type::token()},
                        {{"channel_handle", channel(channelId)}});
  Operation* r2 = addOp(b, "stablehlo.recv", {r1->result(1)}, {tensorOf({2}), Type::token()},
                        {{"channel_handle", channel(channelId)}});
  ret(b, {r1->result(0), r2->result(0)}, "func.return");
  return f;
}

TEST_F(CollectivesTest, SendRecvDeliversInOrder) {
  Module m;
  ProcessGrid grid;
  grid.numReplicas = 2;
  grid.functions = {buildSender(m, 3), buildReceiver(m, 3)};
  grid.args = {{ints({2}, {7, -9})}, {}};
  auto r = runProcessGrid(grid, m, nullptr);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(valuesOf((*r)[1][0]), (std::vector<int64_t>{7, -9}));
  EXPECT_EQ(valuesOf((*r)[1][1]), (std::vector<int64_t>{14, -18}));
}

TEST_F(CollectivesTest, RecvWithoutSenderIsADeadlockError) {
  Module m;
  ProcessGrid grid;
  grid.numReplicas = 2;
  grid.functions = {buildSender(m, 1), buildReceiver(m, 2)};  // different channels
  grid.args = {{ints({2}, {1, 2})}, {}};
  auto r = runProcessGrid(grid, m, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().toString();
  EXPECT_NE(r.status().message().find("channel 2"), std::string::npos) << r.status().toString();
}

TEST_F(CollectivesTest, SingleProcessCollectivesNeedNoGrid) {
  Module m;
  buildCollective(m, "stablehlo.all_reduce", tensorOf({2}), tensorOf({2}), {{"replica_groups", groupsAttr({{0}})}},
                  true);
  auto r = runFunction(m, "f", {ints({2}, {4, 5})});
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(valuesOf((*r)[0]), (std::vector<int64_t>{4, 5}));
}

}  // namespace
}  // namespace wf
