// The launch plan of one CUDA executable: what the planner (planner.h) makes of an entry
// function, what memory.h lays out in device memory and what the executor (executor.h) runs.
//
// A plan is a list of steps over numbered buffers. A buffer id names the device memory of one
// value (an entry argument, a constant, an op result, a loop-carried value) or one step's
// workspace; ops that only rename bytes (reshape, ...) give their results their operand's id.
// Each step launches one kernel (an op's lowering, kernel.h, or a generated fusion kernel), runs
// one op on the host (CompileOptions::allowCpuFallback), or is a control step of while/if/case
// that picks the next step on the host. Steps run in index order except where control steps
// jump.
//
// Apart from the steps' kernels (which own their launch state), a plan is plain data: the planner
// fills everything but `arena`, memory.h fills `arena`, and the executor reads it all and
// changes none of it (it only drops `constants` once they are uploaded).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/kernel.h"
#include "ir/ir.h"
#include "ir/literal.h"
#include "runtime/backend.h"

namespace wf::cuda {

// Operands or results one step passes to its kernel (variadic ops such as sort and scatter
// included; the fusion planner keeps groups to 24 inputs).
constexpr size_t kMaxStepBuffers = 64;

// What a step does besides launching its kernel: control steps of while/if/case read a device
// scalar (the predicate or branch index, inputBuffers[0]) on the host and pick the next step.
enum class Control {
  kNone,           // a kernel (or, with kernel null, a host step)
  kBranchIfFalse,  // go on with the next step if the i1 is true, else jump to `targets[0]`
  kSwitch,         // jump to targets[index]; an index out of range takes the last
  kJump,           // jump to targets[0]
};

struct Step {
  const Operation* op = nullptr;
  std::unique_ptr<OpKernel> kernel;  // null: a host step or a control step
  Control control = Control::kNone;
  std::vector<size_t> targets;  // control steps: step indices to jump to
  ElementType controlType = ElementType::kI1;  // of the scalar a branch or switch reads
  // Writes a buffer that other steps write too (the loop-carried values and the results of
  // while/if/case): never hoisted into the prologue.
  bool rewrites = false;
  // Meets other processes of a grid (a collective, or interpreter.run_parallel itself): it
  // synchronises on the host, so it is never hoisted nor captured into a graph.
  bool meetsPeers = false;
  // A collective of a job rank (collectives.h CommKernel): enqueued on the executor's
  // communication stream, it runs while later compute steps do, until Plan::commJoin.
  bool comm = false;
  std::vector<const Value*> inputs;  // operands, then (host steps) captured values
  std::vector<int> inputBuffers;
  std::vector<int> outputBuffers;
  // Scratch memory the kernel asked for (LowerContext::workspaceBytes): a buffer live during
  // this step only, so that it shares memory with values that are dead by then.
  int workspaceBuffer = -1;
  size_t workspaceBytes = 0;
  // Inputs (indices into inputBuffers) whose element i only the thread writing output element i
  // reads, in a type of the output's size: the output may take such an input's memory when this
  // step is the input's last reader (as `out += identity` does in PyTorch).
  std::vector<size_t> inPlaceInputs;
  // A multi-tensor step (planner.cpp mergeMultiTensorSteps) runs the same loop group for several
  // tensors: by input and by output, the member (tensor) it belongs to; empty for one member. An
  // in-place input gives its memory only to an output of its own member: another member's
  // elements are written by other threads.
  std::vector<int> inputMember, outputMember;
  // The profile's name for the step where it is not its op's (a multi-tensor step's).
  std::string name;

  int memberOfInput(size_t k) const { return inputMember.empty() ? 0 : inputMember[k]; }
  int memberOfOutput(size_t k) const { return outputMember.empty() ? 0 : outputMember[k]; }
};

// Steps [first, end) that the executor may capture into one CUDA graph and replay on later runs:
// device steps only (no host, control or collective step, whose work depends on the host), and
// no join of a collective inside (planner.cpp planGraphSegments).
struct GraphSegment {
  size_t first = 0;
  size_t end = 0;
};

// Where memory.h placed the intermediates: every result and workspace of the per-run steps lives
// in one arena, at an offset chosen by liveness. Arguments, constants and the prologue's
// temporaries are not in it: they get device buffers of their own.
struct ArenaLayout {
  std::vector<bool> inArena;   // by buffer id: an intermediate, placed in the arena
  std::vector<size_t> offset;  // by buffer id: an intermediate's offset in the arena
  size_t bytes = 0;            // the arena's size
};

// CompileOptions::carriedResults: how one result becomes the next value of a bound argument.
// The run computes the result into `resultBuffer`, a device buffer of its own (never in the
// arena); after a successful run the executor swaps the memory of `argBuffer` and
// `resultBuffer`, so the argument reads the new value on the next run and the old value's memory
// takes the one after it (ping-pong: see executor.h for why). Where the result is a value the
// run does not compute (an argument, a constant, a hoisted value, or one that another carried
// result already writes), the planner adds a device-to-device copy step into a fresh
// `resultBuffer` at the end of the run. `resultBuffer == argBuffer`: the result is the argument
// itself, nothing changes.
struct CarriedBuffer {
  size_t result = 0;
  size_t argument = 0;
  int argBuffer = -1;
  int resultBuffer = -1;
};

struct Plan {
  // Buffers.
  std::vector<size_t> bufferBytes;                 // by buffer id
  std::unordered_map<const Value*, int> bufferOf;  // the buffer each planned value lives in
  std::vector<int> argBuffers;                     // by entry argument
  // By entry argument: listed in CompileOptions::boundArguments (bound before the first run).
  std::vector<bool> declaredBound;
  std::vector<std::pair<int, Literal>> constants;  // buffer id, value (uploaded at allocation)
  std::vector<const Value*> outputs;               // the entry's results, in order
  std::vector<bool> resultCarried;                 // by result: carried into an argument, not returned
  std::vector<CarriedBuffer> carried;              // CompileOptions::carriedResults, in their order
  std::vector<const Value*> taps;                  // CompileOptions::tapValues, in order

  // Steps, in the order they run (control steps aside).
  std::vector<Step> steps;
  // Loops, as [first step, last step (the jump back)]: values that live into a loop stay live
  // until its end, since every iteration reads them again.
  std::vector<std::pair<size_t, size_t>> loops;
  ValueStrides channelsLast;  // activations stored NHWC (logical NCHW), by value

  // Hoisting (CompileOptions::boundArguments): steps that read only bound arguments, constants
  // and other hoisted results run in the prologue, once before the first run (and again after
  // a later bind), not in the per-run launch or graph. Carried arguments change with every run:
  // steps reading them are never hoisted.
  std::vector<bool> hoisted;          // by step
  std::vector<bool> prologueTemp;     // by buffer: read by hoisted steps only, freed after
  // by buffer: bound argument that only hoisted steps read, and the only bound argument its
  // prologue group reads: freed after the prologue, uploaded again by a bind
  std::vector<bool> prologueOnlyArg;
  // Prologue groups: hoisted steps joined by the buffers (bound arguments, hoisted results) they
  // share. A bind reruns only the groups that read its argument; a group rerun reads every bound
  // argument and temporary of its own again, and nothing of another group's.
  std::vector<int> hoistedGroup;      // by step: its group, -1 for a step not hoisted
  std::vector<int> argPrologueGroup;  // by entry argument: the group reading it, -1 for none
  int prologueGroups = 0;

  // Launch: the steps that run as CUDA graphs, in order. One segment holding every step when the
  // plan has no host step, control flow or collective; between a job's collectives, the runs of
  // compute steps; none otherwise. Steps outside every segment are launched one by one.
  std::vector<GraphSegment> graphSegments;

  // Overlap of a job's collectives (Step::comm) with the compute steps. By step: for a comm step,
  // the step before which the compute stream waits for it: the first later step that reads one
  // of its results, writes one of its operands, results or workspace, or is a host, control or
  // other synchronising step (whose host synchronisation must not wait on peers unbounded, and
  // whose jumps must not carry a collective in flight across a loop's back edge);
  // steps.size() when that is the end of the run. Its operands, results and workspace stay live
  // until then (memory.h). -1 for the other steps. A later comm step reading its results needs
  // no wait: the communication stream runs them in order.
  std::vector<int> commJoin;

  // Memory (memory.h: assignSlots).
  ArenaLayout arena;

  // The planner's and assignSlots' counts (ExecutableStats); the executor adds its launches.
  ExecutableStats stats;
};

}  // namespace wf::cuda
