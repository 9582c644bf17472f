// The `warpforge` command-line tool: one file per subcommand, wired up in main.cpp.
//
// Exit codes, shared by every subcommand:
//   0  success
//   1  checks failed or a function raised an error while running (`check`), or execution failed (`run`)
//   2  usage or input errors: bad flags, unreadable files, malformed MLIR, wrong input tensors
// Errors go to stderr as `warpforge: error: <message>`.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

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

struct CheckOptions {
  std::vector<std::string> files;
  bool json = false;
  bool verbose = false;       // also list passing functions
  bool isolate = true;        // run each file in a child process so a crash is contained
  double timeoutSeconds = 0;  // per function; 0 = no limit (needs isolate)
};
int runCheck(const CheckOptions& options);

struct RunOptions {
  std::string file;
  std::string entry;
  std::vector<std::string> inputs;  // NAME=PATH or PATH.safetensors
  std::string outputDir;
  std::string outputFormat = "npy";  // npy | safetensors
};
int runRun(const RunOptions& options);

struct InspectOptions {
  std::string file;
  bool json = false;
};
int runInspect(const InspectOptions& options);

struct PrintCommandOptions {
  std::string file;
  bool locations = false;
};
int runPrint(const PrintCommandOptions& options);

}  // namespace wf::cli
