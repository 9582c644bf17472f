// The CPU backend behind the runtime's Backend/Executable contract (runtime/backend.h): an
// adapter over the host evaluator (eval/interpreter.h). compile() checks that every op reachable from
// the entry function has a CPU kernel and resolves tap names; bound arguments are held as host
// Literals; run() calls Interpreter::callFunction and captures taps through
// EvalContext::onResult. With CompileOptions::recordTimings each run reports one OpTiming per
// op of the entry function's body: the time from the previous such op finishing to this one
// finishing (nested regions and callees count towards the op that holds them). check.* ops
// report to the sink given by Executable::setCheckSink. stats() counts the entry's ops as steps.
// Carried results (CompileOptions::carriedResults) become the bound Literals after a run that
// succeeded (copied only where they share storage with what the caller holds); the CPU hoists
// nothing, so work on carried arguments runs on every run as all work does.
//
// Threads: the host kernels share one process-wide pool (support/thread_pool.h) and OpenBLAS's
// own pool. CompileOptions::numThreads > 0 sets both; the kernel pool is sized when first used,
// so a count that differs from the one it already runs with is an error rather than a silent
// no-op (set it before the first run in the process, or with WARPFORGE_NUM_THREADS).
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace wf {

// Registers the "cpu" device kind (ordinal 0 only). Called by registerBuiltinBackends().
void registerCpuBackend();
// The CPU backend itself, for code that wants it without going through the registry.
std::unique_ptr<Backend> makeCpuBackend();

}  // namespace wf
