// `warpforge`: subcommands check, run, inspect, print. See cli.h for the exit codes.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/cli.h"
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

}  // namespace wf::cli

int main(int argc, char** argv) {
  using namespace wf::cli;
  CLI::App app{"WarpForge: run and check StableHLO programs on the CPU.\n"
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
  checkCmd->add_flag("--no-isolate", noIsolate,
                     "Run in this process instead of one child process per file (a crash then ends the run)");

  RunOptions run;
  CLI::App* runCmd = app.add_subcommand(
      "run",
      "Run one function on tensors read from .npy / .safetensors files.\n"
      "Inputs: --input NAME=PATH, where NAME is the argument index (0, 1, ...), argN, or the name in the "
      "argument's jax.arg_info attribute; PATH ends in .npy, or in .safetensors holding a single tensor or one "
      "named NAME. --input FILE.safetensors (no NAME) binds every tensor in it to the argument of that name.\n"
      "Every argument needs exactly one input with exactly its dtype and shape.\n"
      "Outputs: with --output-dir DIR, result i is written to DIR/out<i>.npy (--output-format npy, the "
      "default) or all results to DIR/outputs.safetensors as tensors out0, out1, ... (--output-format "
      "safetensors); files appear only if every result was written. Without --output-dir results are "
      "printed.");
  runCmd->add_option("file", run.file, "MLIR file")->required();
  runCmd->add_option("--entry", run.entry, "Function to run (default: main, else the only public function)");
  runCmd->add_option("-i,--input", run.inputs, "NAME=PATH or PATH.safetensors (repeatable)");
  runCmd->add_option("-o,--output-dir", run.outputDir, "Directory for the results");
  runCmd->add_option("--output-format", run.outputFormat, "npy (one file per result) or safetensors")
      ->check(CLI::IsMember({"npy", "safetensors"}));

  InspectOptions inspect;
  CLI::App* inspectCmd =
      app.add_subcommand("inspect", "List functions with their signatures, and op counts per op name");
  inspectCmd->add_option("file", inspect.file, "MLIR file")->required();
  inspectCmd->add_flag("--json", inspect.json, "Print JSON");

  PrintCommandOptions print;
  CLI::App* printCmd = app.add_subcommand("print", "Parse, verify and print a module in generic form");
  printCmd->add_option("file", print.file, "MLIR file")->required();
  printCmd->add_flag("--locations", print.locations, "Print loc(...) after each op");

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

  if (checkCmd->parsed()) {
    check.isolate = !noIsolate;
    return runCheck(check);
  }
  if (runCmd->parsed()) return runRun(run);
  if (inspectCmd->parsed()) return runInspect(inspect);
  if (printCmd->parsed()) return runPrint(print);
  return kExitUsage;
}
