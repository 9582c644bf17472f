// Every op of src/ir/ops.def has a CPU kernel, except the ones README.md's support table lists
// as not supported (and the structural ops the interpreter runs itself). An op added to ops.def
// without a kernel, or a kernel added without updating the table, fails here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "eval/interpreter.h"

namespace wf {
namespace {

TEST(KernelCoverage, EveryOpHasACpuKernelOrIsListedAsUnsupported) {
  const std::set<std::string> structural = {"func.func", "func.return", "stablehlo.return"};
  const std::set<std::string> unsupported = {"stablehlo.async_start",     "stablehlo.async_done",
                                             "stablehlo.einsum",          "stablehlo.unary_einsum",
                                             "stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"};
  std::set<std::string> missing;
  const KernelRegistry& registry = KernelRegistry::instance();
  for (int i = 0; i < kNumOpCodes; ++i) {
    const auto code = static_cast<OpCode>(i);
    const std::string name(opCodeName(code));
    if (!registry.find(code) && !structural.count(name)) missing.insert(name);
  }
  EXPECT_EQ(missing, unsupported);
}

}  // namespace
}  // namespace wf
