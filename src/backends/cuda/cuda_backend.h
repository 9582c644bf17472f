// The CUDA backend: compiles a function of a verified module into an Executable that runs it on
// one GPU; its executables fill every field of ExecutableStats (runtime/backend.h).
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
// captured into a CUDA graph on its first run and replayed on every later run (unless
// CompileOptions::cudaGraphs is off).
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace wf::cuda {

Expected<std::unique_ptr<Backend>> createCudaBackend(const DeviceSpec& device);

}  // namespace wf::cuda
