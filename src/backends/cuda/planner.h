// The planner: walks an entry function once and makes its Plan (plan.h).
//
// Each op becomes one step: a device kernel (kernel.h lowerings), an alias (reshape,
// optimization_barrier and same-width bitcast_convert share their operand's buffer), an uploaded
// constant, the inlined body of a func.call or composite, or, only with
// CompileOptions::allowCpuFallback, a host step that runs the CPU interpreter's kernel on
// downloaded operands and uploads the results (named in RunReport::hostFallbackOps). An op
// without a CUDA kernel otherwise fails compile() with an error naming the op and its location.
//
// Composites: a stablehlo.composite whose name has a lowering of its own
// (CudaKernelRegistry::findComposite: fused attention) is one step running that kernel; where the
// lowering declines (a type or shape it lacks), its decomposition is inlined and fused like the
// entry's ops. ExecutableStats counts both (fusedComposites, decomposedComposites).
//
// Fusion: with CompileOptions::fuse (the default), chains of elementwise and data-movement ops
// of the entry function run as generated kernels (fusion.h planFusion groups them), compiled
// with NVRTC (nvrtc.h) once the whole function is planned. Identical groups share one kernel, and
// a group computing what an earlier group computed from the same buffers is not run twice.
// Activations that only convolutions taking NHWC and fused groups read are stored channels-last.
//
// Control flow: while, if and case become steps too. Their regions' ops are planned in line
// (regions read the values around them through their buffers), with control steps between them:
// a branch or switch step copies the predicate or index from the device and picks the next step
// on the host, and a jump closes a loop. Loop-carried values and results live in buffers of their
// own, which copy steps write. With the fallback allowed, a control-flow op whose regions hold
// something no device step takes (tuples, dynamic shapes) runs whole on the host.
//
// Grids: interpreter.run_parallel is one step (executor.h GridKernel). Each of its processes is
// compiled as an executor of its own (same device, own stream), reading its operands from and
// writing its results to the enclosing executable's buffers; their collectives meet on the device
// (collectives.h).
//
// Hoisting: with CompileOptions::boundArguments (Session lists the weights), steps that read only
// bound arguments, constants and other such results (weight transposes and dtype conversions)
// are marked to run once, in a prologue before the first run and again after a later bind;
// buffers that only they read are freed afterwards, and so are weights that only they read.
// Arguments that CompileOptions::carriedResults lists change with every run: what reads them is
// never hoisted.
//
// Carried results: each is computed straight into a buffer of its own that the executor swaps
// with its argument's after a run (plan.h CarriedBuffer); one the run does not compute (an
// argument, a constant, a hoisted value, one another carried result takes) gets a copy step at
// the end.
//
// Launch: a plan with no host steps, no control flow and no collectives is one graph segment,
// which the executor captures into a CUDA graph on its first run and replays on later runs.
#pragma once

#include <memory>

#include "backends/cuda/kernels/collectives.h"
#include "backends/cuda/device.h"
#include "backends/cuda/plan.h"
#include "runtime/backend.h"

namespace wf::cuda {

// The plan of `entry` (a func.func of `module` with static-shape arguments) for process `process`
// on `device`, with its fused kernels compiled and its hoisting decided; its memory is laid out
// afterwards (memory.h assignSlots). Compiles the processes of the grids it holds.
Expected<Plan> planFunction(const std::shared_ptr<Device>& device, const Module& module, const Operation& entry,
                            const CompileOptions& options, const ProcessContext& process);

}  // namespace wf::cuda
