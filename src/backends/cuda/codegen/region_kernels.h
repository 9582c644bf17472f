// Kernels generated around a region body (region_kernels.cpp): stablehlo.map, chlo.scan, and
// reduce and reduce_window with any body over any number of operands, which reduce.cu's lowerings
// hand over when their fast kernels do not take the body. Also the geometry of reduce and reduce_window,
// planned from the op once (reduce.cu) for both kinds of kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/kernel.h"

namespace wf::cuda {

// A reduction of a row-major input of `inShape` over the dims marked in `reduced`.
struct ReduceGeometry {
  std::vector<int64_t> inShape, inStrides;
  std::vector<bool> reduced;
  int64_t numOut = 1;  // result elements: the kept dims, in order
  int64_t numRed = 1;  // elements folded into each: the reduced dims, row-major in input order
};
// From the op's `dimensions` (reduce.cu).
Expected<ReduceGeometry> planReduceGeometry(const Operation& op, const std::vector<int64_t>& inShape);

// A reduce_window of operand 0's shape into result 0's: result element o reads, along dim d,
// the positions x = o * strides + w * dilation - padLo (w < window) of the input dilated by
// baseDilation and padded; x is a real element iff x >= 0, x % baseDilation == 0 and
// x / baseDilation < inDims, otherwise it holds the init value.
struct WindowPlan {
  int rank = 0;
  int64_t n = 0;  // result elements
  int64_t outDims[kMaxRank] = {};
  int64_t inDims[kMaxRank] = {};
  int64_t inStrides[kMaxRank] = {};
  int64_t window[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t dilation[kMaxRank] = {};
  int64_t baseDilation[kMaxRank] = {};
  int64_t padLo[kMaxRank] = {};
  int64_t windowSize = 1;
};
// From the op's attributes and static shapes (reduce.cu).
Expected<WindowPlan> planWindow(const Operation& op);

// A generated kernel: `code` defines the body's device function and the extern "C" entry
// `name(inputs..., results...)`, to be compiled after fusedKernelPrelude() (fusion.h); one thread
// per result element (per line of a scan) in a grid-stride loop over `n` of them.
struct RegionKernelSource {
  std::string name;
  std::string code;
  int64_t n = 0;
  int threads = 256;
  int64_t blocks = 1;
};

// The kernel for a map, chlo.scan, reduce or reduce_window (no GPU needed); Unimplemented for bodies,
// element types or ranks it does not take.
Expected<RegionKernelSource> generateRegionKernel(const Operation& op);

// generateRegionKernel, compiled by NVRTC (cached by source) for ctx.device.
Expected<std::unique_ptr<OpKernel>> lowerRegionKernel(const Operation& op, LowerContext& ctx);

}  // namespace wf::cuda
