// A convolution and the elementwise work that reads its result, as one cuDNN graph (the cuDNN
// frontend's graph API, runtime fusion): a batch norm's per-channel shift and scale, a residual
// add, ReLU and the narrowing to the next convolution's type run in the convolution's epilogue,
// on its f32 sums, instead of as a generated kernel over the rounded result in memory.
//
// The planner (planner.cpp, planConvolutionEpilogues) offers a convolution whose result only a
// loop fusion group reads, with the activations channels-last. The group's ops become cuDNN
// pointwise ops: add, subtract, multiply, divide, maximum, minimum, negate (max(x, 0) as ReLU),
// on f32 values of the result's shape, with per-channel operands ([C] broadcast along dim 1),
// scalars (splat constants) and full-size tensors (a residual, in any float type, read widened);
// the result and side outputs in the group's types. Where the group holds anything else, the
// channels are no multiple of 8, or cuDNN has no engine for the graph, the lowering declines
// (kUnimplemented) and the convolution and the group run as two steps, as before: nothing else
// changes. Of the graph's plans, the fastest of cuDNN's first four is timed once per problem
// and kept (tuning.h). WARPFORGE_TUNING_LOG=1 writes the timings and each decline to stderr.
//
// What differs from the two steps: the convolution's sums reach the epilogue in f32, without
// the rounding to the convolution's type (bf16, f16) that its stored result had; that rounding
// is the only one left out (as in XLA's and TensorRT's fused convolutions), so results are at
// least as close to the f32 model. cuDNN's ReLU and maximum give 0 where the convolution's sum
// is NaN (which needs a NaN or infinity in its inputs), where the generated kernel propagates it.
#pragma once

#include <memory>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/kernel.h"

namespace wf::cuda {

// The kernel of `convolution` and `group` together: it reads the convolution's input and (packed)
// filter, then the group's other inputs in their order, and writes the group's root, then its
// side outputs. `layouts` gives the storage of every value it reads or writes (channels-last).
// kUnimplemented (with the reason) where the graph cannot run as one.
Expected<std::unique_ptr<OpKernel>> lowerConvolutionEpilogue(const Operation& convolution, const FusionGroup& group,
                                                             const ValueStrides& layouts, LowerContext& ctx);

}  // namespace wf::cuda
