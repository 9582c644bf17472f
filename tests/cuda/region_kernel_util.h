// For the tests of kernels generated around a region (map, reduce, reduce_window, chlo.scan):
// generate the kernel of one op of @main and compile it through NVRTC, which needs no GPU.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <iostream>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/codegen/nvrtc.h"
#include "backends/cuda/codegen/region_kernels.h"
#include "cuda_test_util.h"

namespace wf::cudatest {

// The last op of @main in `text` with one of `codes`, its generated kernel compiled for sm_90.
// WF_PRINT_REGION=1 prints the source.
inline void expectRegionKernelCompiles(const std::string& text, std::initializer_list<OpCode> codes) {
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  const Operation* target = nullptr;
  for (const auto& op : FuncOp(mainOf(m)).body().operations())
    if (std::find(codes.begin(), codes.end(), op->code()) != codes.end()) target = op.get();
  ASSERT_NE(target, nullptr) << text;
  Expected<cuda::RegionKernelSource> source = cuda::generateRegionKernel(*target);
  ASSERT_TRUE(source) << source.status().toString() << "\n" << text;
  if (std::getenv("WF_PRINT_REGION")) std::cout << source->code << "\n";
  Expected<std::string> cubin = cuda::compileToCubin(cuda::fusedKernelPrelude() + source->code, "sm_90");
  EXPECT_TRUE(cubin) << cubin.status().toString() << "\n" << source->code;
}

}  // namespace wf::cudatest
