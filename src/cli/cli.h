// The `warpforge` command-line tool: one file per subcommand, wired up in main.cpp.
//
// Exit codes, shared by every subcommand:
//   0  success
//   1  checks failed or a function raised an error while running (`check`), execution failed (`run`,
//      `bench`), or results differ from the golden ones (`validate`)
//   2  usage or input errors: bad flags, unreadable files, malformed MLIR, a package that is
//      malformed or does not match its model, wrong input tensors, a device this binary lacks
// Errors go to stderr as `warpforge: error: <message>`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/backend.h"
#include "support/phase_timer.h"
#include "support/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace wf::dist {
class Job;
}  // namespace wf::dist

namespace wf::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Prints `warpforge: error: <message>` to stderr.
void printError(const std::string& message);
// Prints the error and returns the exit code for it: 2 for input-type errors (parse, verify,
// invalid argument, not found), 1 otherwise.
int reportStatus(const Status& status);

// Reads, parses and verifies a whole MLIR file.
Expected<Module> loadModule(const std::string& path);

// --device: "cpu", "cuda", "cuda:N", checked against the backends this binary has (registering
// them). A malformed spec or a device kind this binary lacks is an error; callers exit with 2. In a
// distributed job (WORLD_SIZE > 1) a bare "cuda" is cuda:LOCAL_RANK, the rank's own GPU.
Expected<DeviceSpec> resolveDevice(const std::string& flag);
// Prints `warpforge: note: N op(s) ran on the host: ...` to stderr when a run fell back.
void printHostFallback(const RunReport& report);
// True when `path` is a directory (a model package) rather than an MLIR file.
bool isPackageDirectory(const std::string& path);
// When the environment describes a distributed job (WORLD_SIZE > 1: torchrun, `warpforge
// launch`, srun or a Kubernetes operator set RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// LOCAL_RANK), joins it as this rank: gloo for the cpu, nccl for cuda (device LOCAL_RANK unless
// --device names one). Null without a job. WARPFORGE_DIST_TIMEOUT bounds every wait.
// evenAlone: WORLD_SIZE=1 set explicitly also makes a job, of one rank (`train` runs its
// data-parallel step so, at world size 1).
Expected<std::shared_ptr<dist::Job>> joinJob(const std::string& deviceFlag, bool evenAlone = false);
// Leaves the job with the command's exit code: after a barrier when it succeeded (a failed
// barrier makes it 1); at once and without a goodbye when it failed, so that the other ranks
// fail fast, naming this one.
int leaveJob(const std::shared_ptr<dist::Job>& job, int exitCode);
// `warpforge launch -n N -- CMD...` (launch.cpp).
struct LaunchOptions {
  int numProcesses = 1;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 0;            // 0: a free port
  double graceSeconds = 5;       // after a rank fails: SIGTERM, then SIGKILL after this long
  std::vector<std::string> command;
};
int runLaunch(const LaunchOptions& options);

// True when `path` is a training package (manifest format "warpforge.training-package").
bool isTrainingPackage(const std::string& path);

struct CheckOptions {
  std::vector<std::string> files;
  bool json = false;
  bool verbose = false;       // also list passing functions
  bool isolate = true;        // run each file in a child process so a crash is contained
  double timeoutSeconds = 0;  // per function; 0 = no limit (needs isolate)
  std::string device = "cpu";  // only the cpu evaluates check.* ops
  std::shared_ptr<dist::Job> job;  // one rank of a job (joinJob): every file runs in this process
};
int runCheck(const CheckOptions& options);

struct RunOptions {
  std::string file;
  std::string entry;
  std::vector<std::string> inputs;  // NAME=PATH or PATH.safetensors
  std::string outputDir;
  std::string outputFormat = "npy";  // npy | safetensors
  std::string device = "cpu";
  CompileOptions compile;         // --allow-cpu-fallback, --allow-tf32[-matmul|-conv], --no-fusion
  std::string traceFile;          // --trace: Chrome trace-event JSON of the run (serve/trace.h)
};
// `file` is an MLIR file, or a model package directory (inputs by manifest name, weights from
// the package; results named after the manifest's outputs).
int runRun(const RunOptions& options);

struct ValidateOptions {
  std::string package;
  std::string device = "cpu";
  bool activations = false;  // also compare every recorded activation
  bool json = false;
  CompileOptions compile;
  bool training = false;  // --training: replay a training package's golden run (validate_training.cpp)
  std::string golden;     // --golden DIR: a golden run other than the package's own golden/
  bool keepGoing = false; // --keep-going: with --training, judge every step after a divergence too
};
// Runs a package on its golden inputs and compares outputs (and activations) under the
// manifest's tolerances. Exit 0 if all pass, 1 on a mismatch (naming the first diverging
// activation when the package records them), 2 on input errors.
int runValidate(const ValidateOptions& options);
// `validate --training`: replays a training package's golden steps on the Trainer and checks
// loss, gradients, weights and optimizer state; exit 1 names the first step and tensor that diverge.
int runValidateTraining(const ValidateOptions& options);

struct BenchOptions {
  std::string package;
  std::string device = "cpu";
  int iters = 20;
  int warmup = 3;
  int threads = 0;  // 0: the backend's default
  int batch = 0;    // > 0: resize the dynamic dimension 'batch' of the inputs to this (rows repeated)
  bool json = false;
  bool profile = false;  // per-op times (CompileOptions::recordTimings), aggregated over the timed runs
  std::string traceFile;  // --trace: Chrome trace-event JSON of the timed runs (serve/trace.h)
  CompileOptions compile;
};
// Times runs of a package (golden inputs, or synthetic ones of the manifest's shapes) after
// warm-up: median, p10, p90 latency and throughput in samples/s.
int runBench(const BenchOptions& options);

struct InspectOptions {
  std::string file;  // an MLIR file, or a model package directory (its manifest, then model.mlir)
  bool json = false;
  bool fusion = false;  // also the CUDA backend's fusion plan of each function with static shapes
  bool kernelSource = false;  // with the fusion plan, each generated kernel's CUDA source
  bool cpuPlan = false;  // a model package: also the CPU backend's plan of its entry (backends/cpu/plan.h)
  CompileOptions compile;  // the plans of these options (--cpu-plan: --no-winograd, --no-fusion; --fusion: --no-merge-products)
};
int runInspect(const InspectOptions& options);

struct PrintCommandOptions {
  std::string file;
  bool locations = false;
  std::string refine;  // --refine: static argument types, "tensor<4x128xi64>,..."
  std::string entry;   // --entry: the function --refine specializes (default: the package's, or main)
};
int runPrint(const PrintCommandOptions& options);

struct AutodiffOptions {
  std::string file;      // an MLIR file, or a model package directory (its model.mlir and entry)
  std::string function;  // --function (default: the package's entry, or main)
  std::string wrt;       // --wrt "0,2" (default: a package's parameters, else every float tensor argument)
  std::string name;      // --name of the new function (default: <function>_value_and_grad)
  std::string output;    // -o (default: stdout)
};
// Writes the module with a new function returning @function's results, then the gradient of the
// sum of its first result with respect to each --wrt argument (src/autodiff/autodiff.h).
int runAutodiff(const AutodiffOptions& options);

struct TrainOptions {
  std::string package;
  std::string data;            // --data: prepared features (safetensors, docs/data.md)
  std::string evalData;        // --eval-data: features for the eval program
  int64_t epochs = 0;          // --epochs (default 1 when --steps is not given)
  int64_t steps = 0;           // --steps
  int64_t batch = 0;           // --batch: checked against the package's batch size
  int64_t accumulate = 0;      // --accumulate K micro-batches per update (0: the package's)
  bool dropout = true;         // --no-dropout: every dropout the identity (the golden run's setting)
  std::string device = "cpu";
  std::string checkpointDir;   // --checkpoint-dir: checkpoint.safetensors, loss_curve.json, metrics.json
  bool resume = false;         // --resume from checkpoint-dir's checkpoint
  int64_t evalEvery = 0;       // --eval-every N steps (and at the end, with --eval-data)
  int64_t checkpointEvery = 0; // --checkpoint-every N steps (and at the end)
  int64_t logEvery = 10;       // --log-every N steps: a progress line (every step on a terminal)
  uint64_t seed = 0;           // --seed of the data order
  bool shuffle = true;         // --no-shuffle: examples in file order
  std::string metric = "none"; // --metric none | accuracy | squad
  std::string labelName = "label";  // --label: the eval data's label tensor for --metric accuracy
  std::string exportDir;       // --export DIR: a model package of the eval program with the trained weights
  bool profile = false;        // --profile: per-op times of the steps after the first 3, and the memory plan
  CompileOptions compile;
};
// Trains a training package (src/train/trainer.h); exit 1 on a failed step (a non-finite loss
// names the step and the first tensor that went non-finite), 2 on input errors.
int runTrain(const TrainOptions& options);

// `--allow-tf32` (TF32 for fp32 matrix products and convolutions), `--allow-tf32-matmul` and
// `--allow-tf32-conv` (one of the two, as PyTorch's two switches: CompileOptions::allowTf32,
// allowTf32Convolutions), for every command that compiles for a device (main.cpp).
void addTf32Flags(CLI::App* cmd, CompileOptions& compile);
// `--kernel-cache DIR` and `--no-kernel-cache` (CompileOptions::kernelCache, kernelCacheDir), for
// every command that compiles for a device (main.cpp).
void addKernelCacheFlags(CLI::App* cmd, CompileOptions& compile);
// "compile: 812 ms (generated kernels: 3 program(s) compiled by NVRTC in 700 ms, 0 from the kernel
// cache; loading 5 ms)": the generated kernels counted between two generatedKernelStats()
// snapshots, or just the time where none were generated (cpu).
// With phase snapshots (support/phase_timer.h) and a compile of a second or more, the outermost
// phases follow: "; by phase: compile (cuda) 20.1 s, parse 1.2 s".
std::string formatCompileTime(double millis, const GeneratedKernelStats& before, const GeneratedKernelStats& after,
                              const std::vector<PhaseTime>& phasesBefore = {},
                              const std::vector<PhaseTime>& phasesAfter = {});

// `warpforge serve` (serve.cpp): adds the subcommand and its flags to `app`; runServe() runs it
// once the subcommand was parsed.
CLI::App* addServeCommand(CLI::App& app);
int runServe();

}  // namespace wf::cli
