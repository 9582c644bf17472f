// `warpforge`: subcommands check, run, validate, bench, inspect, print, autodiff, train, serve. See cli.h for the exit codes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "cli/cli.h"
#include "dist/job.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"
#include "runtime/file_io.h"

namespace wf::cli {

void printError(const std::string& message) { std::cerr << "warpforge: error: " << message << "\n"; }

int reportStatus(const Status& status) {
  printError(status.message());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kParseError:
    case StatusCode::kVerifyError:
    case StatusCode::kNotFound:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

Expected<Module> loadModule(const std::string& path) {
  WF_ASSIGN_OR_RETURN(std::string text, readFileBytes(path));
  ParseOptions options;
  options.fileName = path;
  WF_ASSIGN_OR_RETURN(Module module, parseModule(text, options));
  WF_RETURN_IF_ERROR(verifyModule(module));
  return module;
}

Expected<DeviceSpec> resolveDevice(const std::string& flag) {
  auto spec = DeviceSpec::parse(flag);
  if (!spec) return spec.status().withContext("--device");
  // In a job, a bare "cuda" is the rank's local GPU, the one joinJob gives its NCCL communicator.
  if (spec->kind == "cuda" && flag.find(':') == std::string::npos) {
    WF_ASSIGN_OR_RETURN(std::optional<dist::JobEnv> env, dist::jobFromEnvironment());
    if (env) spec->ordinal = env->localRank;
  }
  registerBuiltinBackends();
  std::vector<std::string> kinds = registeredBackendKinds();
  if (std::find(kinds.begin(), kinds.end(), spec->kind) == kinds.end()) {
    auto backend = createBackend(*spec);  // fails, with a message listing the devices this binary has
    if (!backend) return backend.status().withContext("--device");
  }
  return spec;
}

void printHostFallback(const RunReport& report) {
  if (report.hostFallbackOps.empty()) return;
  std::cerr << "warpforge: note: " << report.hostFallbackOps.size() << " op(s) ran on the host (--allow-cpu-fallback):";
  for (const std::string& op : report.hostFallbackOps) std::cerr << "\n  " << op;
  std::cerr << "\n";
}

void addTf32Flags(CLI::App* cmd, CompileOptions& compile) {
  cmd->add_flag_callback(
      "--allow-tf32", [&compile] { compile.allowTf32 = compile.allowTf32Convolutions = true; },
      "Let fp32 matrix products and convolutions use TF32 tensor cores (cuda): both of PyTorch's allow_tf32 switches");
  cmd->add_flag("--allow-tf32-matmul", compile.allowTf32,
                "Let fp32 matrix products use TF32 tensor cores (cuda): torch.backends.cuda.matmul.allow_tf32");
  cmd->add_flag("--allow-tf32-conv", compile.allowTf32Convolutions,
                "Let fp32 convolutions use TF32 tensor cores (cuda): torch.backends.cudnn.allow_tf32, on by default "
                "in PyTorch");
}

void addKernelCacheFlags(CLI::App* cmd, CompileOptions& compile) {
  CLI::Option* dir = cmd->add_option(
      "--kernel-cache", compile.kernelCacheDir,
      "Directory of the on-disk cache of generated kernels (cuda; default: $WARPFORGE_CACHE_DIR, else "
      "$XDG_CACHE_HOME/warpforge, else ~/.cache/warpforge; WARPFORGE_KERNEL_CACHE=0 turns it off)");
  cmd->add_flag("--no-kernel-cache{false}", compile.kernelCache,
                "Compile every generated kernel, without reading or writing the kernel cache (cuda)")
      ->excludes(dir);
}

std::string formatCompileTime(double millis, const GeneratedKernelStats& before, const GeneratedKernelStats& now,
                              const std::vector<PhaseTime>& phasesBefore, const std::vector<PhaseTime>& phasesNow) {
  // Whole milliseconds from 100 on, three digits below (a small model compiles in under 1 ms).
  auto msText = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f ms" : "%.3g ms", v);
    return std::string(buf);
  };
  const int misses = now.cacheMisses - before.cacheMisses, hits = now.cacheHits - before.cacheHits;
  std::string out = "compile: " + msText(millis);
  if (misses + hits > 0)
    out += " (generated kernels: " + std::to_string(misses) + " program(s) compiled by NVRTC in " +
           msText(now.compileMillis - before.compileMillis) + ", " + std::to_string(hits) +
           " from the kernel cache; loading " + msText(now.loadMillis - before.loadMillis) + ")";
  const int tuned = now.tunedProblems - before.tunedProblems, tuningHits = now.tuningHits - before.tuningHits;
  if (tuned + tuningHits > 0)
    out += " (library algorithms: " + std::to_string(tuned) + " problem(s) timed in " +
           msText(now.tuningMillis - before.tuningMillis) + ", " + std::to_string(tuningHits) +
           " from the kernel cache)";
  if (!phasesNow.empty() && millis >= 1000) {  // a fast start needs no breakdown
    const std::string phases = formatTopPhases(phasesBefore, phasesNow, millis);
    if (!phases.empty()) out += "; by phase: " + phases;
  }
  return out;
}

bool isPackageDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

bool isTrainingPackage(const std::string& path) {
  if (!isPackageDirectory(path)) return false;
  auto text = readFileBytes((std::filesystem::path(path) / "manifest.json").string());
  if (!text) return false;
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("format") && j["format"] == "warpforge.training-package";
}

}  // namespace wf::cli

namespace {

// The compile options that --device commands share.
void addCompileFlags(CLI::App* cmd, wf::CompileOptions& compile) {
  cmd->add_flag("--allow-cpu-fallback", compile.allowCpuFallback,
                "Run ops the device has no kernel for on the host instead of failing (each is reported)");
  wf::cli::addTf32Flags(cmd, compile);
  cmd->add_flag("--no-winograd{false}", compile.winograd,
                "Run 3x3 convolutions directly, never by Winograd's algorithm (cpu; it rounds a little differently)");
  cmd->add_flag("--no-fusion{false}", compile.fuse,
                "Run one kernel per op instead of generated fused kernels (cuda) or fused loops and convolutions (cpu); for debugging");
  cmd->add_flag("--no-merge-products{false}", compile.mergeProducts,
                "Keep products of one activation by several weights (query, key, value) apart instead of running them "
                "as one product by a side-by-side copy of the weights (cuda; saves that copy's memory)");
  cmd->add_flag("--no-matmul-epilogues{false}", compile.matmulEpilogues,
                "Store each bf16/f16 product and add its bias (and GELU) in the next fused loop instead of in the "
                "product's epilogue (cuda; for comparing)");
  cmd->add_flag("--no-fused-attention{false}", compile.fusedAttention,
                "Run attention op by op (its decomposition, fused as the rest) instead of as one fused-attention "
                "kernel (cuda; for comparing)");
  cmd->add_flag("--no-multi-tensor{false}", compile.multiTensorLoops,
                "Launch each fused loop on its own instead of running the same loop over several tensors (an optimizer's "
                "update of every parameter) as one launch (cuda; for comparing)");
  cmd->add_flag("--no-cuda-graphs{false}", compile.cudaGraphs,
                "Launch step by step instead of replaying a captured CUDA graph (cuda; for comparing)");
  wf::cli::addKernelCacheFlags(cmd, compile);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wf::cli;
  wf::registerBuiltinBackends();
  CLI::App app{"WarpForge: run, check, validate and time StableHLO programs and model packages.\n"
               "Exit codes: 0 ok, 1 check failures / execution errors, 2 usage or input errors."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");

  CheckOptions check;
  CLI::App* checkCmd = app.add_subcommand(
      "check",
      "Run every public, argument-less function of StableHLO test files (split at `// -----`) and report "
      "their check.* results.\nHuman output lists each non-passing function as `file:line: @name: STATUS: "
      "message` and ends with `N passed, M failed[, K skipped]` (errors count as failed, unsupported as "
      "skipped).\nExit 0 if nothing failed or errored, 1 if something did, 2 if a file could not be read, "
      "parsed or verified.");
  checkCmd->add_option("files", check.files, "MLIR files")->required();
  checkCmd->add_flag("--json", check.json,
                     "Print one JSON array of {file, line, function, status, message}; status is "
                     "pass|fail|error|unsupported");
  checkCmd->add_flag("-v,--verbose", check.verbose, "Also list passing functions");
  checkCmd->add_option("--timeout", check.timeoutSeconds, "Seconds allowed per function (0: no limit)");
  bool noIsolate = false;
  checkCmd->add_option("--device", check.device, "Device: cpu (the only one that evaluates check.* ops)");
  checkCmd->add_flag("--no-isolate", noIsolate,
                     "Run in this process instead of one child process per file (a crash then ends the run)");

  RunOptions run;
  CLI::App* runCmd = app.add_subcommand(
      "run",
      "Run one function of an MLIR file, or a model package, on tensors read from .npy / .safetensors "
      "files.\n"
      "Inputs: --input NAME=PATH, where NAME is the argument index (0, 1, ...), argN, or the name in the "
      "argument's jax.arg_info attribute; PATH ends in .npy, or in .safetensors holding a single tensor or one "
      "named NAME. --input FILE.safetensors (no NAME) binds every tensor in it to the argument of that name.\n"
      "Every argument needs exactly one input with exactly its dtype and shape.\n"
      "Outputs: with --output-dir DIR, result i is written to DIR/out<i>.npy (--output-format npy, the "
      "default) or all results to DIR/outputs.safetensors as tensors out0, out1, ... (--output-format "
      "safetensors); files appear only if every result was written. Without --output-dir results are "
      "printed.\n"
      "With a model package directory instead of FILE: NAME is a manifest input name, weights come from the "
      "package, inputs are checked against the manifest (dtype, shape, dynamic dimensions), and results are "
      "named after the manifest's outputs (DIR/<name>.npy, or tensors <name> in outputs.safetensors). Without "
      "--input the package's golden inputs are used.");
  runCmd->add_option("file", run.file, "MLIR file or model package directory")->required();
  runCmd->add_option("--entry", run.entry, "Function to run (default: main, else the only public function)");
  runCmd->add_option("-i,--input", run.inputs, "NAME=PATH or PATH.safetensors (repeatable)");
  runCmd->add_option("-o,--output-dir", run.outputDir, "Directory for the results");
  runCmd->add_option("--output-format", run.outputFormat, "npy (one file per result) or safetensors")
      ->check(CLI::IsMember({"npy", "safetensors"}));
  runCmd->add_option("--device", run.device, "Device to run on: cpu (default), cuda, cuda:N");
  runCmd->add_option("--trace", run.traceFile,
                     "Write Chrome trace-event JSON (opens in Perfetto): the run and one span per op with its types");
  addCompileFlags(runCmd, run.compile);

  ValidateOptions validate;
  CLI::App* validateCmd = app.add_subcommand(
      "validate",
      "Run a model package on its golden inputs and compare each output (and, with --activations, each "
      "recorded activation, in layer order) with the golden tensors under the manifest's tolerances "
      "(elementwise |a - e| <= atol + rtol * |e|, or relative L2 error); NaN never passes.\n"
      "Prints per tensor: shape, dtype, max abs error, max rel error and the verdict, then PASS or FAIL; a "
      "failure names the first diverging activation when the package records activations.\n"
      "Exit 0 if everything matches, 1 on a mismatch, 2 if the package or the device is unusable.");
  validateCmd->add_option("package", validate.package, "Model package directory")->required();
  validateCmd->add_option("--device", validate.device, "Device to run on: cpu (default), cuda, cuda:N");
  validateCmd->add_flag("--activations", validate.activations, "Also compare every recorded activation");
  validateCmd->add_flag("--json", validate.json, "Print one JSON object");
  validateCmd->add_flag("--training", validate.training,
                        "Replay a training package's golden run: loss of every step, gradients, weights and optimizer "
                        "state (docs/training.md); implied by a training package");
  validateCmd->add_flag("--keep-going", validate.keepGoing,
                        "With --training: judge every golden step after the first divergence too (the verdict and the "
                        "divergence named stay the first one's)");
  validateCmd->add_option("--golden", validate.golden,
                          "With --training: a golden run directory other than the package's golden/ (same file names)");
  addCompileFlags(validateCmd, validate.compile);

  BenchOptions bench;
  CLI::App* benchCmd = app.add_subcommand(
      "bench",
      "Time a model package: --warmup untimed runs, then --iters timed runs on the golden inputs (or on "
      "synthetic inputs of the manifest's shapes when the package has none). Prints the median, p10 and "
      "p90 latency and the throughput (batch size / median latency, in samples/s).");
  benchCmd->add_option("package", bench.package, "Model package directory")->required();
  benchCmd->add_option("--device", bench.device, "Device to run on: cpu (default), cuda, cuda:N");
  benchCmd->add_option("--iters", bench.iters, "Timed runs (default 20)")->check(CLI::Range(1, 1000000));
  benchCmd->add_option("--warmup", bench.warmup, "Untimed runs first (default 3)")->check(CLI::Range(0, 1000000));
  benchCmd->add_option("--threads", bench.threads, "Host threads for CPU kernels (default: all cores)")
      ->check(CLI::Range(1, 1024));
  benchCmd->add_option("--batch", bench.batch,
                       "For a package with a dynamic 'batch' dimension: run that batch size (the inputs' rows "
                       "repeated or cut)")
      ->check(CLI::Range(1, 1 << 20));
  benchCmd->add_flag("--json", bench.json, "Print one JSON object");
  benchCmd->add_option("--trace", bench.traceFile,
                       "Write Chrome trace-event JSON (opens in Perfetto): each timed run and one span per op");
  benchCmd->add_flag("--profile", bench.profile,
                     "Also time each op (per op name and the slowest ops); adds a little overhead per op");
  addCompileFlags(benchCmd, bench.compile);

  InspectOptions inspect;
  CLI::App* inspectCmd =
      app.add_subcommand("inspect", "List functions with their signatures, and op counts per op name");
  inspectCmd->add_option("file", inspect.file, "MLIR file, or a model package directory (its manifest first)")
      ->required();
  inspectCmd->add_flag("--json", inspect.json, "Print JSON");
  inspectCmd->add_flag("--fusion", inspect.fusion,
                       "Also print the CUDA backend's fusion plan: the generated kernels of each function with static "
                       "shapes, the ops each holds, and the ops left to their own kernels");
  inspectCmd->add_flag("--kernel-source", inspect.kernelSource,
                       "With the fusion plan (implies --fusion): each generated kernel's CUDA source as NVRTC compiles "
                       "it, for values stored row-major (the backend stores some activations around convolutions "
                       "channels-last, and generates their kernels for that)");
  inspectCmd->add_flag("--cpu-plan", inspect.cpuPlan,
                       "A model package: also print the CPU backend's plan of its entry function (the hoisted "
                       "prologue, fused elementwise loops, fused convolutions, the ops left to their own kernels)");
  inspectCmd->add_flag("--no-winograd{false}", inspect.compile.winograd,
                       "With --cpu-plan: the plan that --no-winograd runs");
  inspectCmd->add_flag("--no-fusion{false}", inspect.compile.fuse, "With --cpu-plan: the plan that --no-fusion runs");
  inspectCmd->add_flag("--no-merge-products{false}", inspect.compile.mergeProducts,
                       "With --fusion: the plan that --no-merge-products runs (products by weights kept apart)");

  PrintCommandOptions print;
  CLI::App* printCmd = app.add_subcommand("print", "Parse, verify and print a module in generic form");
  printCmd->add_option("file", print.file, "MLIR file, or a model package directory")->required();
  printCmd->add_flag("--locations", print.locations, "Print loc(...) after each op");
  printCmd->add_option("--refine", print.refine,
                       "Print the module refined to these static argument types, e.g. 'tensor<4x128xi64>,...' "
                       "(trailing arguments with static types, such as weights, may be left out)");
  printCmd->add_option("--entry", print.entry, "Function for --refine (default: the package's entry, or main)");

  AutodiffOptions autodiff;
  CLI::App* autodiffCmd = app.add_subcommand(
      "autodiff",
      "Add to a module a function that returns what --function returns, followed by the gradient of its "
      "first result (of the sum of its elements when it is not a scalar) with respect to each --wrt argument, "
      "and write the module (docs/autodiff.md).\n"
      "Integer and boolean values are not differentiated (their gradients are zeros); an op on the "
      "differentiated path that has no VJP rule is an error naming it and its source location.\n"
      "Exit 0 on success, 1 if an op cannot be differentiated, 2 on input errors; the output file is "
      "written only on success.");
  autodiffCmd->add_option("file", autodiff.file, "MLIR file, or a model package directory")->required();
  autodiffCmd->add_option("--function", autodiff.function, "Function to differentiate (default: the package's entry, or main)");
  autodiffCmd->add_option("--wrt", autodiff.wrt, "Argument numbers, e.g. 0,2 (default: for a package's entry its parameters (manifest weights of "
                          "kind parameter), else every float argument)");
  autodiffCmd->add_option("--name", autodiff.name, "Name of the new function (default: <function>_value_and_grad)");
  autodiffCmd->add_option("-o,--output", autodiff.output, "Output MLIR file (default: stdout)");

  TrainOptions train;
  CLI::App* trainCmd = app.add_subcommand(
      "train",
      "Train a training package (warpforge.export_training) on a prepared data file: one safetensors file whose "
      "tensors are named after the loss program's batch arguments, examples along the first dimension "
      "(docs/training.md). Batches follow the sampler's order for --seed (the same order the Python reference "
      "uses); loss_curve.json, metrics.json and checkpoint.safetensors go to --checkpoint-dir (default: the "
      "current directory, no checkpoint). --resume continues from the checkpoint and reproduces the "
      "uninterrupted run exactly.");
  trainCmd->add_option("package", train.package, "Training package directory")->required();
  trainCmd->add_option("--data", train.data, "Training features (.safetensors)")->required();
  trainCmd->add_option("--eval-data", train.evalData, "Features for the eval program (.safetensors)");
  auto* epochsOpt = trainCmd->add_option("--epochs", train.epochs, "Epochs (default 1)");
  trainCmd->add_option("--steps", train.steps, "Updates in all (instead of --epochs)")->excludes(epochsOpt);
  trainCmd->add_option("--batch", train.batch, "Batch size; must be the one the package was exported with");
  trainCmd->add_option("--accumulate", train.accumulate,
                       "Micro-batches of --batch per update (gradient accumulation; default: the package's)")
      ->check(CLI::PositiveNumber);
  trainCmd->add_flag("--no-dropout{false}", train.dropout, "Train with every dropout off (the RNG state still advances)");
  trainCmd->add_option("--device", train.device, "Device to run on: cpu (default), cuda, cuda:N");
  trainCmd->add_option("--checkpoint-dir", train.checkpointDir, "Directory for the checkpoint, loss_curve.json and metrics.json");
  trainCmd->add_flag("--resume", train.resume, "Continue from the checkpoint in --checkpoint-dir");
  trainCmd->add_option("--eval-every", train.evalEvery, "Evaluate every N steps (and at the end) with --eval-data");
  trainCmd->add_option("--checkpoint-every", train.checkpointEvery, "Save a checkpoint every N steps (and at the end)");
  trainCmd->add_option("--log-every", train.logEvery, "A progress line every N steps when stderr is not a terminal");
  trainCmd->add_option("--seed", train.seed, "Seed of the data order (default 0)");
  trainCmd->add_flag("--no-shuffle{false}", train.shuffle, "Examples in file order");
  trainCmd->add_option("--metric", train.metric, "Eval metric: none, accuracy (argmax of output 0 vs --label), squad (EM/F1)")
      ->check(CLI::IsMember({"none", "accuracy", "squad"}));
  trainCmd->add_option("--label", train.labelName, "The eval data's label tensor for --metric accuracy (default: label)");
  trainCmd->add_option("--export", train.exportDir,
                       "After training, write a model package (the eval program with the trained weights) to this new directory");
  trainCmd->add_flag("--profile", train.profile,
                     "Per-op times of the train step (summed over the steps after the first 3) and its memory plan");
  addCompileFlags(trainCmd, train.compile);

  CLI::App* serveCmd = addServeCommand(app);

  LaunchOptions launch;
  CLI::App* launchCmd = app.add_subcommand(
      "launch",
      "Run N processes of a distributed job on this machine: `warpforge launch -n N -- CMD ARGS...`.\n"
      "Each gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT (the variables "
      "torchrun sets); each line of its output is prefixed `[rank k] `. When a rank exits non-zero or is "
      "killed, the others are stopped (SIGTERM, then SIGKILL after --grace seconds) and launch exits with "
      "that rank's code, naming it. Exit 0 when every rank exits 0. See docs/distributed.md.");
  launchCmd->add_option("-n,--nproc", launch.numProcesses, "Number of processes (ranks)")->required()->check(
      CLI::Range(1, 4096));
  launchCmd->add_option("--master-addr", launch.masterAddr, "MASTER_ADDR (default 127.0.0.1)");
  launchCmd->add_option("--master-port", launch.masterPort, "MASTER_PORT (default: a free port)");
  launchCmd->add_option("--grace", launch.graceSeconds, "Seconds between SIGTERM and SIGKILL when tearing down");
  launchCmd->add_option("command", launch.command, "The command each rank runs (after --)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    printError(e.what());
    std::cerr << "Run with --help for usage.\n";
    return kExitUsage;
  }

  // Commands that run a program become one rank of a job when WORLD_SIZE > 1.
  auto asRank = [](const std::string& device, std::shared_ptr<wf::dist::Job>& slot, auto&& body,
                   bool evenAlone = false) -> int {
    auto job = joinJob(device, evenAlone);
    if (!job) return reportStatus(job.status());
    slot = *job;
    int code = body();
    return leaveJob(*job, code);
  };
  if (checkCmd->parsed()) {
    check.isolate = !noIsolate;
    return asRank(check.device, check.job, [&] { return runCheck(check); });
  }
  if (runCmd->parsed()) return asRank(run.device, run.compile.job, [&] { return runRun(run); });
  if (validateCmd->parsed()) {
    if (validate.training || isTrainingPackage(validate.package))
      return asRank(validate.device, validate.compile.job, [&] { return runValidateTraining(validate); });
    return asRank(validate.device, validate.compile.job, [&] { return runValidate(validate); });
  }
  if (benchCmd->parsed()) return asRank(bench.device, bench.compile.job, [&] { return runBench(bench); });
  if (launchCmd->parsed()) return runLaunch(launch);
  if (inspectCmd->parsed()) return runInspect(inspect);
  if (printCmd->parsed()) return runPrint(print);
  if (autodiffCmd->parsed()) return runAutodiff(autodiff);
  if (trainCmd->parsed())
    return asRank(train.device, train.compile.job, [&] { return runTrain(train); }, /*evenAlone=*/true);
  if (serveCmd->parsed()) return runServe();
  return kExitUsage;
}
