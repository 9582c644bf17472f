// Loop fusion for the CUDA backend. Chains of elementwise ops (math, compare, select, clamp,
// convert) together with the ops that only move or make elements (broadcast_in_dim, transpose,
// reshape, slice, iota, splat constants) become one generated kernel: each thread computes
// elements of the group's root from the group's inputs, so the intermediate values never touch
// memory. The kernels are CUDA C++ compiled at run time with NVRTC (nvrtc.h).
//
// Planning (planFusion) walks a block from its last op to its first. An op whose result must
// live in memory roots a group; the group absorbs a producer when
//   - the producer computes (elementwise, convert) and the group is its only user, or
//   - the producer only moves or makes elements (broadcast, transpose, reshape, slice, iota,
//     splat constant): it is cheap to recompute, so every group that uses it absorbs it, and it
//     gets a buffer of its own only if some other user needs one.
// Row fusion: a group may also hold reductions over the trailing dims of a shape R x N
// (softmax's max and sum, a norm's mean and variance) together with the elementwise work before
// them and the work that reads their results broadcast back over the row. Such a group runs one
// warp (or one block, for few rows) per row: each reduction is a pass over the row that
// recomputes its input from the group's inputs (the row stays in L1/L2), and a last pass computes
// the root. Producers with several users join a group when all their users are in it, and so do
// the producers of a move op all of whose users are in it (the bias add read through a reshape by
// both halves of a GELU). A row group may also write side outputs: elementwise values of the
// root's element count that ops after it read (FusionGroup::sideOutputs), so that a norm, the
// residual sum before it and its low-precision copy are one kernel, not three. A loop group
// writes side outputs of its root's shape at its root's coordinates (a bf16 network's f32
// residual sum, read by the next residual add, beside its bf16 copy for the next convolution).
//
// Runs fusion: a reduction whose innermost dim is reduced under a kept one (a batch norm's
// statistics and gradient sums over N, H and W of NCHW) roots a group of the elementwise work
// that computes its operand; a block per result (and slice of its elements) reads the group's
// inputs along their contiguous runs, so the operand is never stored.
//
// Values in `materialize` (activation taps) and values used by nested regions or by ops that are
// not fused keep their buffers. Narrow floats round to their type after every op, so a fused
// group computes bit for bit what the one-op kernels compute (contraction into FMA is off).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf::cuda {

struct FusionGroup {
  std::vector<const Operation*> ops;  // members in block order; the last one is the root
  std::vector<const Value*> inputs;   // values read from outside the group, in first-use order
  // Members whose results are stored too, in block order; ops outside the group read them only
  // after the root. In a row group each has the root's element count and is written at the
  // root's linear index in the last pass over the row (a pre-norm block's residual sum, read
  // again by the next residual add, beside the norm's bf16 output; a layer norm's f32 output, the
  // next residual, beside its bf16 copy for the matrix product). In a loop group each has the
  // root's shape and is written at the root's coordinates, in its own storage order (a residual
  // block's f32 output beside its bf16 copy). Never in a runs reduction's group.
  std::vector<const Operation*> sideOutputs;
  const Operation* root() const { return ops.back(); }
  bool hasReduce() const;
  bool reducesRuns() const;  // rooted at a runs reduction (a kernel of two phases)
};

// A generated kernel and how to launch it (threads per block, blocks). A runs reduction's kernel
// takes two more parameters, `(..., out, void* partial, int phase)`: phase 0 on `blocks` blocks
// reduces slices of each result's elements, and where there are several slices it writes their
// partial results to `partial` (workspaceBytes) and phase 1 on `finishBlocks` blocks combines
// them, in slice order.
struct FusedKernelSource {
  std::string code;
  int threads = 256;
  int64_t blocks = 1;
  bool twoPhase = false;
  int64_t finishBlocks = 0;  // 0: phase 0 writes the results
  size_t workspaceBytes = 0;
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
  std::unordered_map<const Operation*, int> groupOfRoot;  // root op -> index in groups
  std::unordered_set<const Operation*> absorbed;          // ops that need no step of their own
};

struct FusionOptions {
  int maxOps = 64;     // members per group
  int maxInputs = 24;  // kernel parameters per group
  // Arguments whose value stays the same from run to run (bound weights, not carried). Work
  // computed from these and constants alone at a much smaller shape than a broadcast of it (a
  // batch norm's scale, rsqrt(var + eps) * weight, per channel) gets a group of its own, which
  // the executable hoists out of the run, instead of being recomputed for every element of the
  // group reading the broadcast.
  std::unordered_set<const Value*> constantArguments;
};

// Plans the top-level ops of `block` (nested regions are left alone). Groups of one op are made
// only for ops that benefit from the generated kernel (see fusion.cpp).
FusionPlan planFusion(const Block& block, const std::unordered_set<const Value*>& materialize,
                      const FusionOptions& options = {});

// Element strides of values stored other than row-major (channels-last activations around
// convolutions), by value; a value not listed is row-major.
using ValueStrides = std::unordered_map<const Value*, std::vector<int64_t>>;

// The CUDA C++ source of one kernel computing `group`, with `extern "C" __global__` entry
// `name(inputs..., output, side outputs...)`, and its launch geometry. With `strides`, inputs and a root listed
// there are read and written in their storage order (groups without reductions only); the
// threads walk the root's storage order, so a group whose operands share it stays coalesced.
Expected<FusedKernelSource> generateFusedKernel(const FusionGroup& group, const std::string& name,
                                                const ValueStrides* strides = nullptr);

// The multi-tensor form of a loop group: one launch computing the group for several tensors
// at once (the same update of every parameter of an optimizer, as PyTorch's fused AdamW and
// multi_tensor_apply do). It exists for loop groups without reductions whose root and side
// outputs are row-major and of one shape. Each thread walks the root's linear index i, vector by
// vector: the values that keep the element order (inputs of the root's element count, elementwise
// ops, reshapes, broadcasts that only add dims of size 1, splat constants) are read or computed
// at i, those of one element (a learning rate, a bias correction) at that element, and an op that
// moves elements (a transposed gradient, a broadcast row) at the coordinates worked out from i.
// The code depends on the group's ops and types, and on its shapes only where it works out
// coordinates: the updates of tensors of any shapes share it, those reading a transposed
// gradient share it with the tensors of their shape.
//
// Its one parameter is a table `name_tensors` of at most `maxTensors` tensors, given by the host
// (planner.cpp MultiTensorKernel): for tensor t, `p[t]` holds the addresses of its inputs, root
// (in inputOrder: slot k holds group.inputs[inputOrder[k]], the order the code reaches them), its
// root and side outputs (pointersPerTensor in all), `n[t]` its element count,
// and `start[t]` the first of its blocks (start[t + 1] - start[t] blocks, of 256 threads, walk
// its elements, elementsPerBlock per block and pass; unused entries start at the total). A
// group outside that form: kUnimplemented, naming what it holds.
// The most bytes a table takes: a kernel's parameter space on every GPU.
constexpr size_t kMultiTensorTableBytes = 4096;
struct MultiTensorKernelSource {
  std::string code;
  std::vector<size_t> inputOrder;
  int pointersPerTensor = 0;
  int maxTensors = 0;
  int threads = 0;  // per block
  int64_t elementsPerBlock = 0;
};
Expected<MultiTensorKernelSource> generateMultiTensorKernel(const FusionGroup& group, const std::string& name,
                                                          const ValueStrides* strides = nullptr);

// Device helpers every generated kernel uses (narrow-float loads and stores, IEEE max/min).
std::string fusedKernelPrelude();

// True if this op may be a member of a fusion group (its types and attributes are supported).
bool isFusible(const Operation& op);

// A region whose ops act on rank-0 tensors (a reduction or map body, a sort comparator, a scatter
// update) as a CUDA device function, written by the fused kernels' code generator:
//   __device__ __forceinline__ void name(A0 a0, A1 a1, ..., R0* r0, R1* r1, ...)
// Arguments and results are values of their compute C type (computeTypeName): narrow floats are
// floats already rounded to their type, and the body rounds after every op as fused kernels do.
// Kernels around it need fusedKernelPrelude(). Ops the generator has no code for (those that
// isFusible() refuses), other ranks, or values from outside the region: Unimplemented, naming the
// op.
// With `elementwiseShape`, the region may also act on tensors of that shape (a scan body over
// slices): the function then computes one element of them, which takes ops that are elementwise
// on such values, splat constants and broadcasts of rank-0 values; the other ops on them (a
// reduction, a reshape, a broadcast of a non-scalar) are Unimplemented, naming the op.
struct RegionFunction {
  std::string code;
  std::vector<ElementType> argTypes;     // of a0, a1, ...
  std::vector<ElementType> resultTypes;  // of r0, r1, ...
};
Expected<RegionFunction> generateRegionFunction(const Region& region, const std::string& name,
                                               const std::vector<int64_t>* elementwiseShape = nullptr);

// The C types and expressions of generated code, for kernels written around a region function:
// how an element type is stored in memory and what it computes in (nullptr for types the
// generated kernels do not take), a load from storage `ref` to a compute value, a store of a
// compute value to storage, and the conversion of a compute value to another element type (as
// stablehlo.convert, for the types the generator converts).
const char* storageTypeName(ElementType t);
const char* computeTypeName(ElementType t);
std::string loadExpr(ElementType t, const std::string& ref);
std::string storeExpr(ElementType t, const std::string& value);
std::string convertExpr(ElementType from, ElementType to, const std::string& value);

}  // namespace wf::cuda
