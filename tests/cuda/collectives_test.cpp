// Collectives on the GPU: grids of interpreter.run_parallel processes (replicas x partitions)
// whose collectives meet on the device, against the CPU interpreter on fresh random inputs, for
// every group strategy, and with every op on the GPU (RunReport::hostFallbackOps empty).
#include <string>
#include <vector>

#include "on_gpu_util.h"

namespace wf::cudatest {
namespace {

const std::vector<ElementType> kTypes = {ElementType::kSI32, ElementType::kSI64, ElementType::kF16,
                                         ElementType::kBF16, ElementType::kF32,  ElementType::kF64};

std::string rows(const std::vector<std::vector<int64_t>>& groups) {
  std::string s = "dense<[";
  for (size_t i = 0; i < groups.size(); ++i) {
    s += i ? ", [" : "[";
    for (size_t j = 0; j < groups[i].size(); ++j) s += (j ? ", " : "") + std::to_string(groups[i][j]);
    s += "]";
  }
  return s + "]> : tensor<" + std::to_string(groups.size()) + "x" +
         std::to_string(groups.empty() ? 0 : groups[0].size()) + "xi64>";
}

std::string groups(const std::vector<std::vector<int64_t>>& g) { return "replica_groups = " + rows(g); }

std::string channel(int64_t id) {
  return "channel_handle = #stablehlo.channel_handle<handle = " + std::to_string(id) + ", type = 0>";
}

// @main passes one `in` argument to each process of an R x P grid of @p and returns their results.
std::string grid(int64_t replicas, int64_t partitions, const std::string& process, const std::string& in,
                 const std::string& out) {
  const int64_t n = replicas * partitions;
  std::string args, operands, inTypes, outTypes, programs;
  for (int64_t i = 0; i < n; ++i) {
    args += (i ? ", %a" : "%a") + std::to_string(i) + ": " + in;
    operands += (i ? ", %a" : "%a") + std::to_string(i);
    inTypes += (i ? ", " : "") + in;
    outTypes += (i ? ", " : "") + out;
  }
  for (int64_t r = 0; r < replicas; ++r) {
    programs += r ? ", [" : "[";
    for (int64_t p = 0; p < partitions; ++p) programs += p ? ", @p" : "@p";
    programs += "]";
  }
  std::string results = "%r";
  if (n > 1) {
    results = "";
    for (int64_t i = 0; i < n; ++i) results += (i ? ", %r#" : "%r#") + std::to_string(i);
  }
  return process + "func.func @main(" + args + ") -> (" + outTypes + ") {\n  %r" +
         (n > 1 ? ":" + std::to_string(n) : "") + " = \"interpreter.run_parallel\"(" + operands +
         ") {programs = [" + programs + "]} : (" + inTypes + ") -> (" + outTypes + ")\n  return " + results +
         " : " + outTypes + "\n}\n";
}

void expectGrid(int64_t replicas, int64_t partitions, const std::string& process, const Type& in, const Type& out) {
  const std::string text = grid(replicas, partitions, process, in.toString(), out.toString());
  std::vector<Literal> args;
  for (int64_t i = 0; i < replicas * partitions; ++i) args.push_back(randomLiteral(in));
  SCOPED_TRACE(text);
  expectOnGpuMatchesCpu(text, args, defaultTolerance(out.elementType()));
}

// A process computing before and after its collective, so that the collective reads and writes
// buffers the neighbouring device steps use.
std::string withWork(const std::string& in, const std::string& out, const std::string& collective) {
  return "func.func @p(%x: " + in + ") -> " + out + " {\n  %y = stablehlo.add %x, %x : " + in + "\n" + collective +
         "  %w = stablehlo.add %z, %z : " + out + "\n  return %w : " + out + "\n}\n";
}

std::string reduction(const char* name, ElementType e, const std::string& body, const std::string& attrs,
                      const std::string& in, const std::string& out) {
  const std::string s = tensorType({}, e);
  return "  %z = \"stablehlo." + std::string(name) + "\"(%y) ({\n  ^bb0(%l: " + s + ", %r: " + s +
         "):\n    %0 = stablehlo." + body + " %l, %r : " + s + "\n    stablehlo.return %0 : " + s + "\n  }) {" + attrs +
         "} : (" + in + ") -> " + out + "\n";
}

struct GroupCase {
  int64_t replicas, partitions;
  std::string attrs;  // replica_groups, channel_handle, use_global_device_ids
};

// Every strategy of all_reduce / all_gather / reduce_scatter on grids of 1 to 4 processes:
// cross-replica (no channel), cross-replica-and-partition (a channel), flattened ids (a channel
// and use_global_device_ids); the group size is returned beside each case.
std::vector<std::pair<GroupCase, int64_t>> replicaCases() {
  return {
      {{1, 1, groups({{0}})}, 1},
      {{2, 1, groups({{0, 1}})}, 2},
      {{4, 1, groups({{0, 1}, {2, 3}})}, 2},
      {{4, 1, groups({{0, 2}, {1, 3}})}, 2},
      {{4, 1, groups({{3, 1, 0, 2}})}, 4},
      {{3, 1, ""}, 3},  // no replica_groups: every replica
      {{1, 2, groups({{0}})}, 1},
      {{2, 2, groups({{0, 1}})}, 2},  // cross-replica within each partition
      {{2, 2, groups({{0, 1}}) + ", " + channel(1)}, 4},
      {{1, 4, groups({{0}}) + ", " + channel(2)}, 4},
      {{2, 2, groups({{0, 3}, {1, 2}}) + ", " + channel(1) + ", use_global_device_ids"}, 2},
      {{2, 2, groups({{2, 0, 1, 3}}) + ", " + channel(3) + ", use_global_device_ids"}, 4},
  };
}

// all_to_all / collective_permute / broadcast / reduce: cross-replica without a channel,
// cross-partition with one.
std::vector<std::pair<GroupCase, int64_t>> channelCases() {
  return {
      {{1, 1, groups({{0}})}, 1},
      {{2, 1, groups({{1, 0}})}, 2},
      {{4, 1, groups({{0, 3}, {2, 1}})}, 2},
      {{4, 1, groups({{0, 1, 2, 3}})}, 4},
      {{1, 2, groups({{0, 1}}) + ", " + channel(1)}, 2},
      {{2, 2, groups({{1, 0}}) + ", " + channel(5)}, 2},
      {{1, 4, groups({{0, 1}, {2, 3}}) + ", " + channel(1)}, 2},
      {{2, 2, groups({{0, 1}})}, 2},  // cross-replica within each partition
  };
}

TEST(CudaCollectives, AllReduceEveryStrategyAndType) {
  WF_REQUIRE_GPU();
  for (ElementType e : kTypes)
    for (const auto& [c, size] : replicaCases()) {
      const Type t = Type::tensor({3, 5}, e);
      const std::string s = t.toString();
      expectGrid(c.replicas, c.partitions, withWork(s, s, reduction("all_reduce", e, "add", c.attrs, s, s)), t, t);
    }
}

TEST(CudaCollectives, AllReduceBodies) {
  WF_REQUIRE_GPU();
  const GroupCase c{2, 2, groups({{0, 1}}) + ", " + channel(1)};
  for (ElementType e : kTypes)
    for (const char* body : {"multiply", "maximum", "minimum"}) {
      const Type t = Type::tensor({7}, e);
      const std::string s = t.toString();
      expectGrid(c.replicas, c.partitions, withWork(s, s, reduction("all_reduce", e, body, c.attrs, s, s)), t, t);
    }
  for (const char* body : {"and", "or"}) {
    const Type t = Type::tensor({9}, ElementType::kSI32);
    const std::string s = t.toString();
    expectGrid(4, 1, withWork(s, s, reduction("all_reduce", ElementType::kSI32, body, groups({{0, 1, 2, 3}}), s, s)),
               t, t);
  }
}

TEST(CudaCollectives, ReduceScatter) {
  WF_REQUIRE_GPU();
  for (ElementType e : kTypes)
    for (const auto& [c, size] : replicaCases())
      for (int64_t dim : {0, 1}) {
        std::vector<int64_t> shape = {4, 3};
        shape[static_cast<size_t>(dim)] = 2 * size;
        std::vector<int64_t> part = shape;
        part[static_cast<size_t>(dim)] /= size;
        const Type in = Type::tensor(shape, e), out = Type::tensor(part, e);
        const std::string attrs = c.attrs + (c.attrs.empty() ? "" : ", ") + "scatter_dimension = " +
                                  std::to_string(dim) + " : i64";
        expectGrid(c.replicas, c.partitions,
                   withWork(in.toString(), out.toString(),
                            reduction("reduce_scatter", e, "add", attrs, in.toString(), out.toString())),
                   in, out);
      }
}

TEST(CudaCollectives, AllGather) {
  WF_REQUIRE_GPU();
  for (ElementType e : kTypes)
    for (const auto& [c, size] : replicaCases())
      for (int64_t dim : {0, 1, 2}) {
        const std::vector<int64_t> shape = {2, 3, 5};
        std::vector<int64_t> gathered = shape;
        gathered[static_cast<size_t>(dim)] *= size;
        const Type in = Type::tensor(shape, e), out = Type::tensor(gathered, e);
        const std::string attrs =
            c.attrs + (c.attrs.empty() ? "" : ", ") + "all_gather_dim = " + std::to_string(dim) + " : i64";
        const std::string op = "  %z = \"stablehlo.all_gather\"(%y) {" + attrs + "} : (" + in.toString() + ") -> " +
                               out.toString() + "\n";
        expectGrid(c.replicas, c.partitions, withWork(in.toString(), out.toString(), op), in, out);
      }
}

TEST(CudaCollectives, AllToAll) {
  WF_REQUIRE_GPU();
  for (ElementType e : kTypes)
    for (const auto& [c, size] : channelCases())
      for (auto [split, concat] : {std::pair<int64_t, int64_t>{0, 1}, {1, 0}, {1, 1}, {2, 0}}) {
        std::vector<int64_t> shape = {2, 3, 2};
        shape[static_cast<size_t>(split)] *= size;
        std::vector<int64_t> result = shape;
        result[static_cast<size_t>(split)] /= size;
        result[static_cast<size_t>(concat)] *= size;
        const Type in = Type::tensor(shape, e), out = Type::tensor(result, e);
        const std::string attrs = c.attrs + ", split_dimension = " + std::to_string(split) +
                                  " : i64, concat_dimension = " + std::to_string(concat) +
                                  " : i64, split_count = " + std::to_string(size) + " : i64";
        const std::string op = "  %z = \"stablehlo.all_to_all\"(%y) {" + attrs + "} : (" + in.toString() + ") -> " +
                               out.toString() + "\n";
        expectGrid(c.replicas, c.partitions, withWork(in.toString(), out.toString(), op), in, out);
      }
}

TEST(CudaCollectives, CollectivePermute) {
  WF_REQUIRE_GPU();
  struct Case {
    int64_t replicas, partitions;
    std::vector<std::vector<int64_t>> pairs;
    int64_t channelId;
  };
  const std::vector<Case> cases = {
      {1, 1, {{0, 0}}, 0},
      {2, 1, {{0, 1}, {1, 0}}, 0},
      {4, 1, {{0, 1}, {1, 2}, {3, 3}}, 0},  // process 0 gets zeros, 3 keeps its own
      {4, 1, {{2, 0}}, 0},                  // 1 and 3 take no part
      {1, 4, {{0, 3}, {3, 2}, {2, 1}, {1, 0}}, 1},
      {2, 2, {{0, 1}}, 0},  // cross-replica within each partition
      {2, 2, {{1, 0}}, 7},  // cross-partition within each replica
  };
  for (ElementType e : kTypes)
    for (const Case& c : cases) {
      const Type t = Type::tensor({2, 3}, e);
      const std::string s = t.toString();
      const std::string op = "  %z = \"stablehlo.collective_permute\"(%y) {source_target_pairs = " + rows(c.pairs) +
                             ", " + channel(c.channelId) + "} : (" + s + ") -> " + s + "\n";
      expectGrid(c.replicas, c.partitions, withWork(s, s, op), t, t);
    }
}

TEST(CudaCollectives, BroadcastAndReduce) {
  WF_REQUIRE_GPU();
  for (ElementType e : kTypes)
    for (const auto& [c, size] : channelCases()) {
      const Type t = Type::tensor({4}, e);
      const std::string s = t.toString();
      const std::string broadcast =
          "  %z = \"stablehlo.collective_broadcast\"(%y) {" + c.attrs + "} : (" + s + ") -> " + s + "\n";
      expectGrid(c.replicas, c.partitions, withWork(s, s, broadcast), t, t);
      expectGrid(c.replicas, c.partitions, withWork(s, s, reduction("collective_reduce", e, "add", c.attrs, s, s)), t,
                 t);
    }
}

// has_dynamic_root: each data operand's root is the index the last operand holds (per process).
TEST(CudaCollectives, DynamicRoot) {
  WF_REQUIRE_GPU();
  for (const char* op : {"collective_broadcast", "collective_reduce"}) {
    const std::string body = std::string(op) == "collective_reduce" ? R"( ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %m = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }))"
                                                                     : "";
    const std::string text = R"(
func.func @p(%x: tensor<4xf32>, %y: tensor<3xf32>, %root: tensor<2xsi32>) -> (tensor<4xf32>, tensor<3xf32>) {
  %z:2 = "stablehlo.)" + std::string(op) + R"("(%x, %y, %root))" + body + R"( {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>, has_dynamic_root} : (tensor<4xf32>, tensor<3xf32>, tensor<2xsi32>) -> (tensor<4xf32>, tensor<3xf32>)
  return %z#0, %z#1 : tensor<4xf32>, tensor<3xf32>
}
func.func @main(%x0: tensor<4xf32>, %y0: tensor<3xf32>, %r0: tensor<2xsi32>, %x1: tensor<4xf32>, %y1: tensor<3xf32>, %r1: tensor<2xsi32>, %x2: tensor<4xf32>, %y2: tensor<3xf32>, %r2: tensor<2xsi32>) -> (tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) {
  %r:6 = "interpreter.run_parallel"(%x0, %y0, %r0, %x1, %y1, %r1, %x2, %y2, %r2) {programs = [[@p], [@p], [@p]]} : (tensor<4xf32>, tensor<3xf32>, tensor<2xsi32>, tensor<4xf32>, tensor<3xf32>, tensor<2xsi32>, tensor<4xf32>, tensor<3xf32>, tensor<2xsi32>) -> (tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>
}
)";
    std::vector<Literal> args;
    for (int i = 0; i < 3; ++i) {
      args.push_back(randomLiteral(Type::tensor({4}, ElementType::kF32)));
      args.push_back(randomLiteral(Type::tensor({3}, ElementType::kF32)));
      args.push_back(randomLiteral(Type::tensor({2}, ElementType::kSI32), 0, 2));
    }
    SCOPED_TRACE(text);
    expectOnGpuMatchesCpu(text, args, defaultTolerance(ElementType::kF32));
  }
}

TEST(CudaCollectives, ProcessIds) {
  WF_REQUIRE_GPU();
  const std::string ids =
      "func.func @p(%x: tensor<si32>) -> tensor<2xui32> {\n"
      "  %r = stablehlo.replica_id : tensor<ui32>\n"
      "  %p = stablehlo.partition_id : tensor<ui32>\n"
      "  %a = stablehlo.reshape %r : (tensor<ui32>) -> tensor<1xui32>\n"
      "  %b = stablehlo.reshape %p : (tensor<ui32>) -> tensor<1xui32>\n"
      "  %c = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>\n"
      "  return %c : tensor<2xui32>\n}\n";
  for (auto [r, p] : {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {1, 3}, {2, 2}})
    expectGrid(r, p, ids, Type::tensor({}, ElementType::kSI32), Type::tensor({2}, ElementType::kUI32));
  // Outside a grid: process (0, 0), still on the device.
  expectOnGpuMatchesCpu(
      "func.func @main() -> (tensor<ui32>, tensor<ui32>) {\n  %r = stablehlo.replica_id : tensor<ui32>\n"
      "  %p = stablehlo.partition_id : tensor<ui32>\n  return %r, %p : tensor<ui32>, tensor<ui32>\n}\n",
      {}, {});
}

// Several collectives in a row, one inside a loop: every process meets its group in order.
TEST(CudaCollectives, SequenceAndLoop) {
  WF_REQUIRE_GPU();
  const std::string process = R"(
func.func @p(%x: tensor<4xf32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %c3 = stablehlo.constant dense<3> : tensor<i64>
  %w:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i64>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = "stablehlo.all_reduce"(%v) ({
      ^bb0(%l: tensor<f32>, %r: tensor<f32>):
        %m = stablehlo.maximum %l, %r : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4xf32>) -> tensor<4xf32>
      %t = stablehlo.add %s, %v : tensor<4xf32>
      %n = stablehlo.add %i, %c1 : tensor<i64>
      stablehlo.return %n, %t : tensor<i64>, tensor<4xf32>
    }
  %p = "stablehlo.collective_permute"(%w#1) {source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  %g = "stablehlo.all_gather"(%p) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, all_gather_dim = 0 : i64} : (tensor<4xf32>) -> tensor<8xf32>
  return %g : tensor<8xf32>
}
)";
  expectGrid(4, 1, process, Type::tensor({4}, ElementType::kF32), Type::tensor({8}, ElementType::kF32));
}

// A process that never joins its group: the others get an error instead of waiting forever.
TEST(CudaCollectives, MissingPeerIsAnError) {
  WF_REQUIRE_GPU();
  const std::string text = R"(
func.func @joins(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = "stablehlo.all_reduce"(%x) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %m = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @skips(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@joins], [@skips]]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
)";
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  const Type t = Type::tensor({4}, ElementType::kF32);
  std::vector<Literal> args = {randomLiteral(t), randomLiteral(t)};
  Expected<RunResult> got = runCuda(m, args);
  ASSERT_FALSE(got) << "a grid with a missing peer ran";
  EXPECT_NE(got.status().message().find("deadlock"), std::string::npos) << got.status().toString();
}

}  // namespace
}  // namespace wf::cudatest
