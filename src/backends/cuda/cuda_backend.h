// The CUDA backend: compiles a function of a verified module into an Executable that runs it on
// one GPU. Each job has a unit of its own:
//   planner.h   walks the entry function once and makes its Plan (plan.h): steps (kernels,
//               aliases, constants, inlined calls, host fallback), control flow, fusion groups,
//               grids, hoisting and graph segments
//   memory.h    places intermediates and workspaces in one arena by liveness; holds the memory
//   executor.h  runs a plan: launches, host and control steps, grids, CUDA graph capture and
//               replay
// cuda_backend.cpp is the glue behind runtime/backend.h: shape refinement where the entry needs
// it, then planner, memory and executor. Its executables fill every field of ExecutableStats;
// CompileOptions::cudaGraphs off launches step by step instead of replaying a graph.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace wf::cuda {

Expected<std::unique_ptr<Backend>> createCudaBackend(const DeviceSpec& device);

}  // namespace wf::cuda
