// The CUDA backend: compiles a function of a verified module into a CudaExecutable that runs it
// on one GPU.
//
// compile() walks the entry function once. Each op becomes one step of a launch plan: a device
// kernel (kernel.h lowerings), an alias (reshape, optimization_barrier and same-width
// bitcast_convert share their operand's buffer), an uploaded constant, the inlined body of a
// func.call or composite, or, only with CompileOptions::allowCpuFallback, a host step that runs the CPU
// interpreter's kernel on downloaded operands and uploads the results (named in
// RunReport::hostFallbackOps). An op without a CUDA kernel otherwise fails compile() with an
// error naming the op and its location.
//
// Memory: intermediate values are assigned to buffer slots by liveness (a slot is reused once
// the last reader of its value has run), so the plan's device footprint is the peak of live
// values, not their sum; slots, arguments and constants come from the device's caching
// allocator. Bound arguments (weights) are uploaded once, at bindArgument().
//
// Fusion: with CompileOptions::fuse (the default), chains of elementwise and data-movement ops
// of the entry function run as generated kernels (fusion.h), compiled with NVRTC (nvrtc.h).
//
// Hoisting: with CompileOptions::boundArguments (Session lists the weights), steps that read only
// bound arguments, constants and other such results (weight transposes and dtype conversions)
// run once, before the first run and again after a later bind; buffers that only they read are
// freed afterwards, and so are weights that only they read.
//
// Control flow: while, if and case become steps too. Their regions' ops are planned in line
// (regions read the values around them through their buffers), with control steps between them:
// a branch or switch step copies the predicate or index from the device and picks the next step
// on the host, and a jump closes a loop. Loop-carried values and results live in buffers of their
// own, which copy steps write. With the fallback allowed, a control-flow op whose regions hold
// something no device step takes (tuples, dynamic shapes) runs whole on the host.
//
// Grids: interpreter.run_parallel is one step. Each of its processes is an executable of its own
// (same device, own stream) run on a host thread of its own, reading its operands from and writing
// its results to the enclosing executable's buffers; their collectives meet on the device
// (collectives.h).
//
// Launch: a program with static shapes, no host steps, no control flow and no collectives is
// captured into a CUDA graph on its first run and replayed on every later run.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace wf {
class CheckSink;
}

namespace wf::cuda {

Expected<std::unique_ptr<Backend>> createCudaBackend(const DeviceSpec& device);

// What a compiled CUDA executable holds, for tests and tools.
struct ExecutableInfo {
  int deviceSteps = 0;  // kernel launches (ops with a CUDA kernel)
  int hostSteps = 0;    // ops that run on the host
  int aliases = 0;      // reshapes (and other renamings) that share their operand's buffer
  int inlinedCalls = 0;  // func.call / composite ops inlined into the plan
  int controlFlowOps = 0;  // while/if/case planned as device steps, the host picking the branch
  // Steps that meet other processes (collectives of a grid's process, interpreter.run_parallel):
  // they synchronise on the host, so the executable runs step by step, never as a CUDA graph.
  int collectiveOps = 0;
  int gridProcesses = 0;  // processes of interpreter.run_parallel grids, each an executable of its own
  int slots = 0;        // buffers for intermediate values
  size_t slotBytes = 0;          // their total size
  size_t intermediateBytes = 0;  // sum of every intermediate value's size (what no reuse would take)
  size_t peakLiveBytes = 0;      // intermediates live at the busiest step (the least any arena takes)
  size_t workspaceBytes = 0;
  int inPlaceSteps = 0;
  int channelsLastValues = 0;  // activations stored NHWC around convolutions that take it  // steps whose output takes the memory of an input they read for the last time
  int fusedKernels = 0;  // steps that run a generated fusion kernel (fusion.h)
  int fusedOps = 0;      // ops computed inside them (each op once, even where duplicated)
  int uniqueFusedKernels = 0;  // distinct generated kernels (repeated layers share them)
  int sharedFusedValues = 0;   // fused groups that compute a value an earlier group computed
  int hoistedSteps = 0;  // steps that depend only on bound arguments: run once, not per run
  bool usesGraph = false;  // captured into a CUDA graph (after the first run)
  int graphLaunches = 0;
};

// Null if `e` is not a CUDA executable.
const ExecutableInfo* executableInfo(const Executable& e);
// Tests: turn graph capture off (before the first run) to compare against direct launches.
void setUseGraphs(Executable& e, bool useGraphs);
// Where host steps of `check.*` ops report (the conformance runner); null makes them errors.
void setCheckSink(Executable& e, CheckSink* sink);

}  // namespace wf::cuda
