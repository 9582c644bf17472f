// expectMatchesCpu for programs that must run wholly on the GPU: compiled with the host fallback
// allowed, so that an op lacking a kernel shows up by name in RunReport::hostFallbackOps (the
// failure says which) rather than as a bare compile error.
#pragma once

#include "cuda_test_util.h"

namespace wf::cudatest {

inline void expectOnGpuMatchesCpu(const std::string& text, const std::vector<Literal>& args, Tolerance tol,
                                  CompileOptions options = {}) {
  Module m = parse(text);
  if (!mainOf(m)) return;
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString() << "\n" << text;
  options.allowCpuFallback = true;
  Expected<RunResult> got = runCuda(m, args, options);
  ASSERT_TRUE(got) << got.status().toString() << "\n" << text;
  std::string hostOps;
  for (const std::string& op : got->report.hostFallbackOps) hostOps += op + "; ";
  EXPECT_TRUE(got->report.hostFallbackOps.empty()) << "ran on the host: " << hostOps << "\n" << text;
  ASSERT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], tol), "") << "result #" << i << " of\n" << text;
}

}  // namespace wf::cudatest
