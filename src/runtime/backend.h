// The backend contract: what a device backend (src/backends/<name>) gives the runtime.
//
// A backend compiles one function of a verified module into an Executable for one device.
// An Executable owns everything device-side that outlives a call: bound arguments (weights are
// bound once and stay resident), compiled kernels, workspaces, captured graphs. Calls take and
// return host Literals; the Session (session.h) sits on top and deals with packages, names and
// checks. Backends register a factory under their device kind ("cpu", "cuda"); the runtime
// never names a concrete backend.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "ir/literal.h"
#include "support/status.h"

namespace wf {

class CheckSink;  // eval/interpreter.h: receives the outcome of `check.*` ops
namespace dist {
class Job;  // dist/job.h: this process's place in a distributed job
}  // namespace dist

// "cpu", "cuda", "cuda:1". The ordinal is 0 unless given.
struct DeviceSpec {
  std::string kind = "cpu";
  int ordinal = 0;

  static Expected<DeviceSpec> parse(std::string_view text);
  std::string toString() const;  // "cpu", "cuda:0"
};

// CompileOptions::carriedResults: entry result `result` is the next value of entry argument
// `argument`.
struct CarriedResult {
  size_t result = 0;
  size_t argument = 0;
  friend bool operator==(const CarriedResult&, const CarriedResult&) = default;
};

struct CompileOptions {
  // Ops the backend has no kernel for run on the host instead of failing compile(); each such op
  // is named in RunReport::hostFallbackOps. Off by default: no silent fallback.
  bool allowCpuFallback = false;
  // fp32 matrix products (dot_general) may use TF32 tensor cores: PyTorch's
  // torch.backends.cuda.matmul.allow_tf32. Off by default.
  bool allowTf32 = false;
  // fp32 convolutions (forward and gradients) may use TF32 tensor cores: PyTorch's
  // torch.backends.cudnn.allow_tf32, which PyTorch turns on by default. Off by default here: true
  // f32 unless asked.
  bool allowTf32Convolutions = false;
  // SSA names (as printed in the source, e.g. "%layer1") of values of the entry function whose
  // values each run also returns, in this order, in RunResult::taps. Used for activations.
  std::vector<std::string> tapValues;
  // Worker threads for host kernels; 0 lets the backend choose.
  int numThreads = 0;
  // Fill RunReport::timings on each run (one entry per op of the entry function, or per fused
  // kernel). Off by default, since timing costs a clock read (or a device event) per op. Added
  // for `warpforge bench --profile`; a backend that cannot time ops leaves timings empty.
  bool recordTimings = false;
  // Entry arguments the caller binds (Executable::bindArgument) before the first run: weights.
  // Work that depends only on them and on constants (weight transposes and dtype conversions)
  // may then run once, before the first run and again after a later bind, instead of on every
  // run. Running without binding one of them is an error.
  std::vector<size_t> boundArguments;
  // 3x3 stride-1 f32 convolutions may run Winograd's algorithm (cpu: oneDNN's, where it has one
  // for the CPU and shape; the plan says which). Fewer multiplications, a slightly different
  // rounding (within the fp32 validate tolerances); off keeps every convolution direct.
  bool winograd = true;
  // Fuse chains of elementwise and data-movement ops into generated kernels (backends that can).
  // On by default; off runs one kernel per op, for debugging and for comparing the two.
  bool fuse = true;
  // Products of one activation by several bound weights (query, key and value; gate and up) run
  // as one product by the weights side by side (cuda, with fusion: transforms/merge_products.h),
  // where the merged product has at most 2^21 result elements or each weight has no more
  // elements than its product's result (MergeProductsOptions). Faster where the products are
  // small or their tiles fill the device poorly (BERT-large at 8 x 384 tokens: 4.36 -> 4.24 ms on
  // an H200), at the cost of a second copy of those weights on the device (683 -> 832 MiB): the
  // side-by-side copy is made once per bind and the bound originals are kept for the next bind.
  // Off keeps each product as written.
  bool mergeProducts = true;
  // A bf16/f16 product whose result only its fused bias add (and GELU) reads computes them in
  // its epilogue (cuda, with fusion: kernels/dot_gelu.h, planner.cpp planDotEpilogues) instead of
  // storing the product for a fused loop to read. Off keeps the product and the loop apart, for
  // comparing the two (the GELU epilogue's Phi is a polynomial, the loop's is erff).
  bool matmulEpilogues = true;
  // Attention composites (outlined by the plan rewrites or the train-step builder) run as their
  // own kernel (cuda: cuDNN's fused attention, forward and backward). Off runs each composite's
  // decomposition op by op, fused as the rest of the program is, for comparing the two.
  bool fusedAttention = true;
  // Fused loops of the same code over different tensors, none reading another's result, run as
  // one launch (cuda, with fusion: planner.cpp mergeMultiTensorSteps): an optimizer's update of
  // every parameter takes a few launches rather than one per parameter and state, as PyTorch's
  // fused AdamW does. Off keeps a step per loop.
  bool multiTensorLoops = true;
  // Capture a run into a CUDA graph and replay it on later runs where the program allows it
  // (cuda: static shapes, no host steps, control flow or collectives). On by default; off
  // launches step by step, for comparing the two. Backends without graphs ignore it.
  bool cudaGraphs = true;
  // Results that replace bound arguments (a training step's new parameters and optimizer
  // state; XLA's input/output aliasing with donated buffers). After each successful run, result
  // `result` becomes the bound value of argument `argument`, staying on the device (no copy to
  // the host); RunResult::outputs then holds only the results not listed here, in result order.
  // Each argument must be in boundArguments, each result and each argument may appear once, and
  // the result's type must be the argument's (compile() fails naming the pair otherwise). A run
  // that fails leaves every bound argument as it was (unless carryInPlace). Executable::readArgument reads a carried
  // value back; bindArgument overwrites it (loading a checkpoint). Work that depends on a
  // carried argument is never hoisted (see boundArguments): it runs on every run.
  std::vector<CarriedResult> carriedResults;
  // Carried results may be computed straight into their argument's memory where the backend can
  // prove it safe (cuda: the step computing the result reads the argument element for element
  // and is its last reader, outside loops), as PyTorch's optimizers update parameters in place:
  // the carried state is held once instead of twice. The price: a run that fails part way (a
  // device fault, not a bad input, which is refused before anything runs) may leave those
  // arguments half updated. Off by default.
  bool carryInPlace = false;
  // The on-disk cache of the kernels a backend generates and compiles at compile time (cuda: the
  // NVRTC output of fused and region kernels; backends/cuda/codegen/kernel_cache.h), shared by
  // processes and runs. On by default, in kernelCacheDir, or where WARPFORGE_CACHE_DIR,
  // XDG_CACHE_HOME or HOME say (WARPFORGE_KERNEL_CACHE=0 turns it off there). false
  // (`--no-kernel-cache`): compile every kernel. Never changes what a kernel computes.
  bool kernelCache = true;
  std::string kernelCacheDir;  // `--kernel-cache DIR`; empty: from the environment
  // The distributed job this process is one rank of (docs/distributed.md); null: a single
  // process. The program runs as one process of the job (replica_id = rank, WORLD_SIZE
  // replicas), its collectives meeting the other ranks through the job's communicator, and
  // interpreter.run_parallel grids run one process per rank.
  std::shared_ptr<dist::Job> job;
};

// One span of a run, for traces and per-op timing.
struct OpTiming {
  std::string name;      // op name or fused kernel name
  std::string location;  // file:line:col of the op
  double microseconds = 0;
};

struct RunReport {
  std::vector<std::string> hostFallbackOps;  // "stablehlo.sort at model.mlir:12:3", once each
  std::vector<OpTiming> timings;             // filled when the backend records them
  // Time on the device from the program's first launch to its last (inputs already resident,
  // outputs not yet copied back), measured with device events; negative where the backend has
  // no device clock (cpu).
  double deviceMillis = -1;
};

// What an executable is made of and what it did, for tests and tools. Each backend fills the
// fields that apply to it and leaves the others 0: the CUDA backend all of them; the CPU backend
// (an interpreter) its steps only.
struct ExecutableStats {
  // Steps: what one run executes.
  int deviceSteps = 0;  // steps on the executable's device: kernel launches (cuda), the entry's ops (cpu)
  int hostSteps = 0;    // ops a device backend runs on the host (CompileOptions::allowCpuFallback)
  int aliases = 0;      // reshapes (and other renamings) that share their operand's buffer
  int inlinedCalls = 0;    // func.call / composite ops inlined into the steps
  // stablehlo.composite ops with a kernel of their own (Backend::lowersComposite): the ones run
  // as that kernel (one step each), and the ones it declined (a type or shape it lacks), which
  // ran as their decomposition.
  int fusedComposites = 0;
  int decomposedComposites = 0;
  int controlFlowOps = 0;  // while/if/case among the steps (cuda: the host picking the branch)
  // Steps that meet other processes (collectives of a grid's process, interpreter.run_parallel):
  // they synchronise on the host, so the executable runs step by step, never as a CUDA graph.
  int collectiveOps = 0;
  int gridProcesses = 0;  // processes of interpreter.run_parallel grids, each an executable of its own
  // Memory: intermediate values in slots of one arena, assigned by liveness.
  int slots = 0;                 // buffers for intermediate values
  size_t slotBytes = 0;          // their total size (the arena)
  size_t intermediateBytes = 0;  // sum of every intermediate value's size (what no reuse would take)
  size_t peakLiveBytes = 0;      // intermediates live at the busiest step (the least any arena takes)
  size_t workspaceBytes = 0;     // the largest scratch memory one step asked for
  int inPlaceSteps = 0;  // steps whose output takes the memory of an input they read for the last time
  int channelsLastValues = 0;  // activations stored NHWC around convolutions that take it
  // cuda: convolutions that compute a convolution's gradients (ir/conv_gradient.h) and run as
  // cuDNN's backward kernels rather than as forward convolutions.
  int convolutionBackwardData = 0;    // input gradients: cudnnConvolutionBackwardData
  int convolutionBackwardFilter = 0;  // weight gradients: cudnnConvolutionBackwardFilter
  // cuda: convolutions run with the elementwise group that reads their result as one cuDNN graph
  // (kernels/convolution_epilogue.h): a batch norm, ReLU, a residual add in the epilogue.
  int convolutionEpilogues = 0;
  int convolutionEpiloguesDeclined = 0;  // pairs offered that cuDNN (or the translation) declined
  // cuda: products run with the bias add that alone reads them as cuBLASLt's bias epilogue
  // (kernels/dot.h): a linear layer's bias under bf16.
  int matmulBiasEpilogues = 0;
  // cuda: products run with the bias add and erf GELU that alone read them as one CUTLASS kernel
  // (kernels/dot_gelu.h): BERT's intermediate layer under bf16.
  int matmulGeluEpilogues = 0;
  // Fusion (CompileOptions::fuse): generated kernels.
  int fusedKernels = 0;        // steps that run a generated fusion kernel
  int fusedOps = 0;            // ops computed inside them (each op once, even where duplicated)
  int uniqueFusedKernels = 0;  // distinct generated kernels (repeated layers share them)
  int sharedFusedValues = 0;   // fused groups that compute a value an earlier group computed
  // cuda: fused loops run together, one launch for the same group over several tensors (the
  // update of every parameter by an optimizer: planner.cpp mergeMultiTensorSteps). The steps
  // that do, and the loops they run (each would be a step of its own without).
  int multiTensorSteps = 0;
  int multiTensorLoops = 0;
  // Hoisting (CompileOptions::boundArguments).
  int hoistedSteps = 0;  // steps that depend only on bound arguments: run once, not per run
  // Carrying (CompileOptions::carriedResults).
  int carriedResults = 0;  // results that become bound arguments after each run
  // Of those, the ones that cost a device-to-device copy per run (cuda: a result that is an
  // argument, a constant, a hoisted value or another carried result; the others are computed
  // straight into the argument's next buffer).
  int carriedCopies = 0;
  // Of those, the ones computed over their argument's memory (CompileOptions::carryInPlace).
  int carriedInPlace = 0;
  // Launches (CompileOptions::cudaGraphs).
  bool usesGraph = false;  // captured into CUDA graphs (after the first run)
  int graphLaunches = 0;   // graphs replayed, over all runs
  // The runs of steps captured as one graph each: 1 for a whole plan; a job's collectives cut a
  // plan into the runs between them (cuda planner.cpp planGraphSegments); 0: launched step by step.
  int graphSegments = 0;
};

// Kernels generated and compiled at compile time (cuda: the NVRTC programs of fused and region
// kernels), counted over the whole process: `bench` and `train` report them, and running a
// command twice shows what the kernel cache (CompileOptions::kernelCache) saves. A program the
// process compiled before is reused from memory and not counted again.
struct GeneratedKernelStats {
  int cacheHits = 0;         // programs loaded from the kernel cache
  int cacheMisses = 0;       // programs compiled: not in the cache, or the cache off
  double compileMillis = 0;  // spent in the compiler (NVRTC), over the misses
  double loadMillis = 0;     // spent loading machine code onto the device, hits and misses
  // Library algorithms (cuDNN convolutions, cuBLASLt products) chosen by timing candidates
  // (backends/cuda/tuning.h): problems timed, the time that took, and decisions found kept.
  int tunedProblems = 0;
  double tuningMillis = 0;
  int tuningHits = 0;
};
GeneratedKernelStats generatedKernelStats();  // so far; safe from any thread
void recordGeneratedKernels(const GeneratedKernelStats& more);

struct RunResult {
  // The entry's results in order, less those CompileOptions::carriedResults lists (they stay
  // on the device as bound arguments).
  std::vector<Literal> outputs;
  std::vector<Literal> taps;  // CompileOptions::tapValues, in order
  RunReport report;
};

class Executable {
 public:
  virtual ~Executable() = default;

  // Binds entry argument `index` to `value` for every later run (weights). The value is copied
  // (to the device where there is one); `value` may be released afterwards.
  virtual Status bindArgument(size_t index, const Literal& value) = 0;
  // Runs with `args` for the arguments not bound, in argument order.
  virtual Expected<RunResult> run(std::span<const Literal> args) = 0;
  // The current value of bound argument `index`, copied to the host: what bindArgument gave
  // it, or what the last successful run carried into it (CompileOptions::carriedResults). For
  // checkpoints and validation; an argument that is not bound is an error, and so (cuda) is a
  // weight that only hoisted work reads, whose device copy is released after that work.
  virtual Expected<Literal> readArgument(size_t index) = 0;
  // Bytes of device memory this executable holds now (bound arguments, workspaces, caches).
  virtual size_t deviceBytesInUse() const = 0;
  // The same bytes by what holds them ("bound arguments", "intermediates", ...), for reports;
  // empty where the backend does not break them down.
  virtual std::vector<std::pair<std::string, size_t>> deviceMemoryBreakdown() const { return {}; }
  virtual std::string deviceName() const = 0;  // "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
  // What the executable is made of (steps, fusion, memory plan) and how it ran so far (graph
  // launches); see ExecutableStats for which fields a backend fills.
  virtual ExecutableStats stats() const = 0;
  // Where `check.*` ops report when they run (the conformance runner); null, the default, makes
  // them errors. Set it before running, not while a run is in flight; the sink must outlive the
  // runs that use it.
  virtual void setCheckSink(CheckSink* sink) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // `entry` is a func.func of `module`; `module` must outlive the returned Executable.
  virtual Expected<std::unique_ptr<Executable>> compile(const Module& module, const Operation& entry,
                                                        const CompileOptions& options) = 0;
  // Whether compile() has a kernel of its own for stablehlo.composite ops of this name (cuda:
  // "warpforge.attention", through cuDNN) rather than only their decomposition. Callers that
  // inline calls before compiling (refineShapes) keep such composites whole for the backend
  // (RefineShapesOptions::keepComposite), which still runs the decomposition of one its kernel
  // does not take.
  virtual bool lowersComposite(std::string_view name) const { return false; }
};

using BackendFactory = std::function<Expected<std::unique_ptr<Backend>>(const DeviceSpec&)>;

// Registers the factory for a device kind (replacing an earlier one of that kind); backends call
// this from registerBuiltinBackends() (backends/registry.h), which programs call once at start:
// the runtime names no concrete backend. Safe to call from any thread.
void registerBackend(std::string kind, BackendFactory factory);
// The backend for a device; an unknown kind, or one whose backend was not built, is an error
// that lists the kinds this binary has.
Expected<std::unique_ptr<Backend>> createBackend(const DeviceSpec& device);
std::vector<std::string> registeredBackendKinds();

// For backends implementing CompileOptions::carriedResults: checks each pair against `entry`
// (indices in range, the argument in options.boundArguments, no result or argument twice, the
// same type on both sides); an error names the pair. Returns, by result index, whether the
// result is carried.
Expected<std::vector<bool>> checkCarriedResults(const Operation& entry, const CompileOptions& options);

// For backends implementing CompileOptions::tapValues: the value of `entry`'s top-level block
// (an argument or an op result) that an SSA name denotes: "%layer1" (or "layer1"), and
// "%3#1" for result 1 of an op with several. An error names the missing or ambiguous value.
Expected<const Value*> findEntryValue(const Operation& entry, std::string_view ssaName);

}  // namespace wf
