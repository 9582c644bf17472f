// `warpforge print`: parse, verify and print a module in MLIR generic form; with --refine, the
// module specialized to static argument types (src/transforms/refine_shapes.h).
#include <iostream>

#include "cli/cli.h"
#include "ir/printer.h"
#include "runtime/package.h"
#include "transforms/refine_shapes.h"

namespace wf::cli {

int runPrint(const PrintCommandOptions& options) {
  std::string file = options.file;
  std::string entry = options.entry;
  if (isPackageDirectory(file)) {
    auto pkg = Package::open(file);
    if (!pkg) return reportStatus(pkg.status());
    file = pkg->path(Package::kModelFile);
    if (entry.empty()) entry = pkg->manifest().entry;
  }
  auto module = loadModule(file);
  if (!module) return reportStatus(module.status());
  wf::PrintOptions printOptions;
  printOptions.printLocations = options.locations;
  if (options.refine.empty()) {
    std::cout << printModule(*module, printOptions);
    return kExitOk;
  }

  auto types = parseTypeList(options.refine);
  if (!types) return reportStatus(types.status().withContext("--refine"));
  if (entry.empty()) entry = module->lookupFunction("main") ? "main" : "";
  const Operation* fn = module->lookupFunction(entry);
  if (!fn) return reportStatus(invalidArgument("--entry: no function @" + entry + " in " + file));
  // Arguments past the given types (a package's weights) keep their declared static types.
  const Block& body = FuncOp(fn).body();
  for (size_t i = types->size(); i < body.numArguments(); ++i) {
    const Type& declared = body.argument(i)->type();
    if (declared.isTensor() && !declared.hasStaticShape())
      return reportStatus(invalidArgument("--refine: argument #" + std::to_string(i) + " of @" + entry + " is " +
                                          declared.toString() + ": give its static type"));
    types->push_back(declared);
  }
  auto refined = refineShapes(*module, entry, *types);
  if (!refined) return reportStatus(refined.status());
  std::cout << printModule(**refined, printOptions);
  return kExitOk;
}

}  // namespace wf::cli
