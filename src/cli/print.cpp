// `warpforge print`: parse, verify and print a module in MLIR generic form.
#include <iostream>

#include "cli/cli.h"
#include "ir/printer.h"

namespace wf::cli {

int runPrint(const PrintCommandOptions& options) {
  auto module = loadModule(options.file);
  if (!module) return reportStatus(module.status());
  wf::PrintOptions printOptions;
  printOptions.printLocations = options.locations;
  std::cout << printModule(*module, printOptions);
  return kExitOk;
}

}  // namespace wf::cli
