// `warpforge autodiff`: adds a value-and-gradient function to a module (src/autodiff/autodiff.h)
// and writes the module. The output file is written through a temporary file and a rename, so
// an error never leaves a partial file.
#include <iostream>

#include "autodiff/autodiff.h"
#include "cli/cli.h"
#include "ir/printer.h"
#include "runtime/file_io.h"
#include "runtime/package.h"
#include "train/training_package.h"

namespace wf::cli {
namespace {

// "0,2,5" -> {0, 2, 5}.
Expected<std::vector<int>> parseArgumentList(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 0)
      return invalidArgument("--wrt: '" + item + "' is not an argument number (expected e.g. --wrt 0,2)");
    out.push_back(value);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int runAutodiff(const AutodiffOptions& options) {
  if (isTrainingPackage(options.file)) {
    // The train-step program of a training package (src/train/training_package.h).
    if (!options.function.empty() || !options.wrt.empty() || !options.name.empty())
      return reportStatus(invalidArgument(
          "--function, --wrt and --name do not apply to a training package: its programs and parameters are in its manifest"));
    auto pkg = train::TrainingPackage::open(options.file);
    if (!pkg) return reportStatus(pkg.status());
    auto module = pkg->deriveTrainModule();
    if (!module) return reportStatus(module.status());
    std::string text = printModule(*module);
    if (options.output.empty() || options.output == "-") {
      std::cout << text;
    } else if (Status s = writeFileAtomically(options.output, text); !s.isOk()) {
      return reportStatus(s);
    }
    std::cerr << "warpforge: wrote the train-step program of " << pkg->name()
              << " (@train_step: value and grad of the loss, then the " << pkg->optimizerKind() << " update)\n";
    return kExitOk;
  }
  std::string file = options.file;
  std::string function = options.function;
  std::vector<int> parameters;  // a package's trainable weights: the default --wrt for its entry
  bool isPackage = isPackageDirectory(file);
  if (isPackage) {
    auto pkg = Package::open(file);
    if (!pkg) return reportStatus(pkg.status());
    file = pkg->path(Package::kModelFile);
    if (function.empty()) function = pkg->manifest().entry;
    if (function == pkg->manifest().entry)
      for (const TensorSpec& w : pkg->manifest().weights)
        if (w.kind.empty() || w.kind == "parameter") parameters.push_back(static_cast<int>(w.index));
    isPackage = function == pkg->manifest().entry;
  }
  if (function.empty()) function = "main";
  auto module = loadModule(file);
  if (!module) return reportStatus(module.status());
  const Operation* fn = module->lookupFunction(function);
  if (!fn) return reportStatus(notFound(file + ": no function @" + function));

  std::vector<int> wrt;
  if (options.wrt.empty() && isPackage) {
    wrt = parameters;
  } else if (options.wrt.empty()) {
    // Every float tensor argument.
    const Block& body = FuncOp(fn).body();
    for (size_t i = 0; i < body.numArguments(); ++i) {
      const Type& t = body.argument(i)->type();
      if (t.isTensor() && isFloat(t.elementType())) wrt.push_back(static_cast<int>(i));
    }
  } else {
    auto parsed = parseArgumentList(options.wrt);
    if (!parsed) return reportStatus(parsed.status());
    wrt = std::move(*parsed);
  }

  auto name = addValueAndGradFunction(*module, function, wrt, options.name);
  if (!name) return reportStatus(name.status().withContext(file));
  std::string text = printModule(*module);
  if (options.output.empty() || options.output == "-") {
    std::cout << text;
  } else if (Status s = writeFileAtomically(options.output, text); !s.isOk()) {
    return reportStatus(s);
  }
  std::cerr << "warpforge: added @" << *name << " (results of @" << function << ", then the gradients of "
            << wrt.size() << " argument(s))\n";
  return kExitOk;
}

}  // namespace wf::cli
