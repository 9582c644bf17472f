// `warpforge run`: runs one function of an MLIR file, or a model package, on tensors from .npy /
// .safetensors files and writes or prints its results. The input and output conventions are
// described in main.cpp's --help text.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "eval/interpreter.h"  // CheckSink
#include "cli/cli.h"
#include "runtime/npy.h"
#include "runtime/package.h"
#include "runtime/safetensors.h"
#include "runtime/session.h"
#include "serve/trace.h"

namespace wf::cli {
namespace {

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The function to run: --entry, else `main`, else the only public function.
Expected<const Operation*> findEntry(const Module& module, const std::string& entry) {
  if (!entry.empty()) {
    std::string name = entry[0] == '@' ? entry.substr(1) : entry;
    if (const Operation* f = module.lookupFunction(name)) return f;
    return notFound("no function @" + name + " in " + module.sourceFile);
  }
  if (const Operation* f = module.lookupFunction("main")) return f;
  std::vector<FuncOp> publics;
  for (FuncOp fn : module.functions())
    if (fn.isPublic()) publics.push_back(fn);
  if (publics.size() == 1) return publics[0].op();
  std::string names;
  for (FuncOp fn : publics) names += (names.empty() ? "@" : ", @") + std::string(fn.symName());
  return invalidArgument("no @main and " + std::to_string(publics.size()) + " public functions (" +
                         (names.empty() ? "none" : names) + "); choose one with --entry");
}

// The name an argument carries in its attributes (JAX's `jax.arg_info`), if any.
std::string argumentName(FuncOp fn, size_t i) {
  const Attribute* argAttrs = fn.op()->attr("arg_attrs");
  if (!argAttrs || argAttrs->kind() != Attribute::Kind::kArray || i >= argAttrs->elements().size()) return "";
  const Attribute& dict = argAttrs->elements()[i];
  if (dict.kind() != Attribute::Kind::kDictionary) return "";
  for (const char* key : {"jax.arg_info", "mhlo.name", "tf.name"})
    if (const Attribute* a = dict.field(key); a && a->kind() == Attribute::Kind::kString) return a->stringValue();
  return "";
}

std::string describeArgument(FuncOp fn, size_t i) {
  std::string s = "argument " + std::to_string(i);
  std::string name = argumentName(fn, i);
  if (!name.empty()) s += " ('" + name + "')";
  return s;
}

Expected<size_t> resolveArgument(FuncOp fn, const std::string& name) {
  size_t n = fn.body().numArguments();
  auto parseIndex = [&](std::string_view digits) -> std::optional<size_t> {
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
    return static_cast<size_t>(std::stoul(std::string(digits)));
  };
  std::optional<size_t> index = parseIndex(name);
  if (!index && name.rfind("arg", 0) == 0) index = parseIndex(std::string_view(name).substr(3));
  if (!index && name.rfind("%arg", 0) == 0) index = parseIndex(std::string_view(name).substr(4));
  if (index) {
    if (*index < n) return *index;
    return invalidArgument("input '" + name + "': @" + std::string(fn.symName()) + " has " + std::to_string(n) +
                           " arguments");
  }
  for (size_t i = 0; i < n; ++i)
    if (argumentName(fn, i) == name) return i;
  std::string known;
  for (size_t i = 0; i < n; ++i) {
    std::string argName = argumentName(fn, i);
    known += (known.empty() ? "" : ", ") + std::to_string(i) + (argName.empty() ? "" : " ('" + argName + "')");
  }
  return invalidArgument("input '" + name + "' names no argument of @" + std::string(fn.symName()) +
                         "; arguments are " + (known.empty() ? "none" : known));
}

// Converts a tensor whose element type is the widened storage of the declared type (int8 data
// for an i4 argument, int64 for index) after checking the values fit.
Expected<Literal> conformElementType(Literal value, ElementType declared, const std::string& what) {
  ElementType have = value.elementType();
  if (have == declared) return value;
  bool widened = ((declared == ElementType::kSI2 || declared == ElementType::kSI4) && have == ElementType::kSI8) ||
                 ((declared == ElementType::kUI2 || declared == ElementType::kUI4) && have == ElementType::kUI8) ||
                 (declared == ElementType::kIndex && have == ElementType::kSI64);
  if (!widened)
    return invalidArgument(what + ": expected element type " + std::string(elementTypeName(declared)) + ", got " +
                           std::string(elementTypeName(have)));
  Literal out = Literal::zeros(value.type().withElementType(declared));
  for (int64_t i = 0; i < value.numElements(); ++i) {
    out.setInt(i, value.getInt(i));
    if (out.getInt(i) != value.getInt(i))
      return invalidArgument(what + ": value " + std::to_string(value.getInt(i)) + " at index " + std::to_string(i) +
                             " does not fit " + std::string(elementTypeName(declared)));
  }
  return out;
}

Status checkShape(const Literal& value, const Type& declared, const std::string& what) {
  bool ok = value.type().isTensor() && value.shape().size() == declared.shape().size();
  for (size_t d = 0; ok && d < declared.shape().size(); ++d)
    ok = declared.shape()[d] == kDynamic || declared.shape()[d] == value.shape()[d];
  if (!ok) return invalidArgument(what + ": expected " + declared.toString() + ", got " + value.type().toString());
  return Status::ok();
}

// Reads the inputs given on the command line into the entry function's argument list.
Expected<std::vector<Literal>> readInputs(FuncOp fn, const std::vector<std::string>& specs) {
  size_t n = fn.body().numArguments();
  std::vector<std::optional<Literal>> args(n);
  std::vector<std::string> sources(n);

  auto bind = [&](size_t i, Literal value, const std::string& source) -> Status {
    const Type& declared = fn.body().argument(i)->type();
    std::string what = describeArgument(fn, i) + " from " + source;
    if (args[i]) return invalidArgument(describeArgument(fn, i) + " is given twice (" + sources[i] + " and " + source + ")");
    if (!declared.isTensor()) return unimplemented(describeArgument(fn, i) + " has type " + declared.toString() + ", which cannot be read from a file");
    WF_ASSIGN_OR_RETURN(value, conformElementType(std::move(value), declared.elementType(), what));
    WF_RETURN_IF_ERROR(checkShape(value, declared, what));
    args[i] = std::move(value);
    sources[i] = source;
    return Status::ok();
  };

  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      // A whole safetensors file: every tensor binds to the argument of its name.
      if (!endsWith(spec, ".safetensors"))
        return invalidArgument("input '" + spec + "': expected NAME=PATH, or a .safetensors file");
      WF_ASSIGN_OR_RETURN(SafetensorsFile file, readSafetensors(spec));
      for (NamedLiteral& t : file.tensors) {
        auto index = resolveArgument(fn, t.name);
        if (!index) return index.status().withContext(spec + ": tensor '" + t.name + "'");
        WF_RETURN_IF_ERROR(bind(*index, std::move(t.value), spec + ":" + t.name));
      }
      continue;
    }
    std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
    if (name.empty() || path.empty()) return invalidArgument("input '" + spec + "': expected NAME=PATH");
    WF_ASSIGN_OR_RETURN(size_t index, resolveArgument(fn, name));
    const Type& declared = fn.body().argument(index)->type();
    if (endsWith(path, ".npy")) {
      std::optional<ElementType> expected;
      if (declared.isTensor()) expected = declared.elementType();
      auto value = readNpy(path, expected);
      if (!value) return value.status().withContext(describeArgument(fn, index));
      WF_RETURN_IF_ERROR(bind(index, std::move(*value), path));
    } else if (endsWith(path, ".safetensors")) {
      WF_ASSIGN_OR_RETURN(SafetensorsFile file, readSafetensors(path));
      const Literal* value = file.tensors.size() == 1 ? &file.tensors[0].value : file.find(name);
      if (!value)
        return invalidArgument(describeArgument(fn, index) + ": " + path + " holds " + std::to_string(file.tensors.size()) +
                               " tensors and none is named '" + name + "'");
      WF_RETURN_IF_ERROR(bind(index, *value, path));
    } else {
      return invalidArgument("input '" + spec + "': the file must end in .npy or .safetensors");
    }
  }

  std::vector<Literal> out;
  std::string missing;
  for (size_t i = 0; i < n; ++i) {
    if (!args[i]) {
      missing += (missing.empty() ? "" : ", ") + describeArgument(fn, i) + " " + fn.body().argument(i)->type().toString();
      continue;
    }
    out.push_back(std::move(*args[i]));
  }
  if (!missing.empty()) return invalidArgument("@" + std::string(fn.symName()) + " is missing inputs: " + missing);
  return out;
}

// Check ops in a function being run: failures are reported and make the run fail.
class StderrChecks : public CheckSink {
 public:
  void report(const Operation& op, bool passed, const std::string& message) override {
    if (passed) return;
    ++failures;
    std::cerr << "warpforge: check failed: " << op.location().toString() << ": " << message << "\n";
  }
  void unsupported(const Operation& op, const std::string& message) override {
    std::cerr << "warpforge: check skipped: " << op.location().toString() << ": " << message << "\n";
  }
  int failures = 0;
};

// Writes every file, or none: all go to temporary names first and are renamed at the end.
Status writeAllOrNothing(const std::vector<std::pair<std::filesystem::path, std::string>>& files) {
  namespace fs = std::filesystem;
  std::vector<fs::path> temps;
  auto cleanup = [&] {
    std::error_code ec;
    for (const fs::path& t : temps) fs::remove(t, ec);
  };
  for (const auto& [path, bytes] : files) {
    fs::path tmp = path;
    tmp += ".tmp" + std::to_string(::getpid());
    temps.push_back(tmp);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      cleanup();
      return invalidArgument(path.string() + ": cannot write");
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    fs::rename(temps[i], files[i].first, ec);
    if (ec) {
      cleanup();
      return invalidArgument(files[i].first.string() + ": cannot rename: " + ec.message());
    }
  }
  return Status::ok();
}

// A result name as a file name: path separators and leading dots replaced.
std::string fileNameFor(std::string name) {
  for (char& c : name)
    if (c == '/' || c == '\\' || c == '\0') c = '_';
  if (name.empty() || name[0] == '.') name = "_" + name;
  return name;
}

Status writeOutputs(const std::vector<NamedLiteral>& results, const RunOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.outputDir, ec);
  if (ec) return invalidArgument(options.outputDir + ": cannot create directory: " + ec.message());
  std::vector<std::pair<fs::path, std::string>> files;
  SafetensorsFile st;
  for (size_t i = 0; i < results.size(); ++i) {
    const Literal& r = results[i].value;
    const std::string& name = results[i].name;
    if (r.isToken()) continue;  // tokens carry no data
    if (!r.type().isTensor()) return unimplemented("result '" + name + "' has type " + r.type().toString() + ", which cannot be written to a file");
    if (options.outputFormat == "safetensors") {
      st.tensors.push_back({name, r});
    } else {
      auto bytes = encodeNpy(r);
      if (!bytes) return bytes.status().withContext("result '" + name + "'");
      files.emplace_back(fs::path(options.outputDir) / (fileNameFor(name) + ".npy"), std::move(*bytes));
    }
  }
  if (options.outputFormat == "safetensors") {
    WF_ASSIGN_OR_RETURN(std::string bytes, encodeSafetensors(st));
    files.emplace_back(fs::path(options.outputDir) / "outputs.safetensors", std::move(bytes));
  }
  return writeAllOrNothing(files);
}

// Writes the results to --output-dir, or prints them.
int emitResults(const std::vector<NamedLiteral>& results, const RunOptions& options) {
  if (!options.outputDir.empty()) {
    Status written = writeOutputs(results, options);
    if (!written.isOk()) return reportStatus(written);
  } else {
    for (const NamedLiteral& r : results) std::cout << r.name << " = " << r.value.toString(1000) << "\n";
  }
  return kExitOk;
}

// Reads --input specs for a package: NAME=PATH with NAME a manifest input, or FILE.safetensors
// whose tensors are inputs by name. The manifest check (Package::checkInputs) comes later.
Expected<std::vector<NamedLiteral>> readPackageInputs(const Package& pkg, const std::vector<std::string>& specs) {
  std::vector<NamedLiteral> inputs;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      if (!endsWith(spec, ".safetensors"))
        return invalidArgument("input '" + spec + "': expected NAME=PATH, or a .safetensors file");
      WF_ASSIGN_OR_RETURN(SafetensorsFile file, readSafetensors(spec));
      for (NamedLiteral& t : file.tensors) inputs.push_back(std::move(t));
      continue;
    }
    std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
    if (name.empty() || path.empty()) return invalidArgument("input '" + spec + "': expected NAME=PATH");
    const TensorSpec* declared = nullptr;
    for (const TensorSpec& in : pkg.manifest().inputs)
      if (in.name == name) declared = &in;
    if (endsWith(path, ".npy")) {
      std::optional<ElementType> expected;
      if (declared) expected = declared->dtype;
      auto value = readNpy(path, expected);
      if (!value) return value.status().withContext("input '" + name + "'");
      inputs.push_back({name, std::move(*value)});
    } else if (endsWith(path, ".safetensors")) {
      WF_ASSIGN_OR_RETURN(SafetensorsFile file, readSafetensors(path));
      const Literal* value = file.tensors.size() == 1 ? &file.tensors[0].value : file.find(name);
      if (!value)
        return invalidArgument("input '" + name + "': " + path + " holds " + std::to_string(file.tensors.size()) +
                               " tensors and none is named '" + name + "'");
      inputs.push_back({name, *value});
    } else {
      return invalidArgument("input '" + spec + "': the file must end in .npy or .safetensors");
    }
  }
  return inputs;
}

int runPackage(const RunOptions& options, const DeviceSpec& device) {
  if (!options.entry.empty()) {
    printError("--entry does not apply to a model package: its manifest names the entry function");
    return kExitUsage;
  }
  auto pkg = Package::open(options.file);
  if (!pkg) return reportStatus(pkg.status());
  std::vector<NamedLiteral> inputs;
  if (options.inputs.empty() && !pkg->manifest().goldenInputs.empty()) {
    std::cerr << "warpforge: note: no --input given; running on the golden inputs in "
              << pkg->path(pkg->manifest().goldenInputs) << "\n";
    auto golden = pkg->loadGoldenInputs();
    if (!golden) return reportStatus(golden.status());
    inputs = std::move(*golden);
  } else {
    auto read = readPackageInputs(*pkg, options.inputs);
    if (!read) return reportStatus(read.status());
    inputs = std::move(*read);
  }
  // Inputs are checked before the model is compiled and the weights are read.
  if (auto checked = pkg->checkInputs(inputs); !checked) return reportStatus(checked.status());
  std::unique_ptr<serve::TraceWriter> trace;
  if (!options.traceFile.empty()) {
    auto opened = serve::TraceWriter::open(options.traceFile);
    if (!opened) return reportStatus(opened.status());
    trace = std::move(*opened);
  }
  SessionOptions sessionOptions;
  sessionOptions.device = device;
  sessionOptions.compile = options.compile;
  sessionOptions.compile.recordTimings = trace != nullptr;
  auto session = Session::create(std::move(*pkg), sessionOptions);
  if (!session) return reportStatus(session.status());
  auto start = serve::TraceWriter::Clock::now();
  auto result = (*session)->run(inputs);
  if (trace && result) {
    nlohmann::json shapes = nlohmann::json::object();
    for (const NamedLiteral& in : inputs) shapes[in.name] = in.value.type().toString();
    std::string name = (*session)->manifest().name;
    trace->lane(1, "run " + name + " (" + (*session)->deviceName() + ")");
    trace->run("run " + name, 1, start, serve::TraceWriter::Clock::now(), result->report, &(*session)->package().entry(),
               {{"device", (*session)->deviceName()}, {"inputs", shapes}});
  }
  if (!result) {  // the inputs passed their checks: this is an execution failure
    printError(result.status().message());
    return kExitFailure;
  }
  printHostFallback(result->report);
  return emitResults(result->outputs, options);
}

// An MLIR file: compiled by the device's backend; check.* ops in it report to `checks`.
// With --trace (on any device, the CPU included) the run and its ops go to the trace file.
Expected<std::vector<Literal>> runOnBackend(const Module& module, const Operation& entry, std::vector<Literal> args,
                                            const DeviceSpec& device, const RunOptions& options,
                                            serve::TraceWriter* trace, CheckSink* checks) {
  WF_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, createBackend(device));
  CompileOptions compile = options.compile;
  compile.recordTimings = trace != nullptr;
  WF_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend->compile(module, entry, compile));
  executable->setCheckSink(checks);
  auto start = serve::TraceWriter::Clock::now();
  WF_ASSIGN_OR_RETURN(RunResult result, executable->run(args));
  if (trace) {
    std::string name = "@" + std::string(FuncOp(&entry).symName());
    trace->lane(1, "run " + name + " (" + executable->deviceName() + ")");
    trace->run("run " + name, 1, start, serve::TraceWriter::Clock::now(), result.report, &entry,
               {{"device", executable->deviceName()}});
  }
  printHostFallback(result.report);
  return std::move(result.outputs);
}

}  // namespace

int runRun(const RunOptions& options) {
  auto device = resolveDevice(options.device);
  if (!device) {
    printError(device.status().message());
    return kExitUsage;
  }
  if (isPackageDirectory(options.file)) return runPackage(options, *device);
  auto module = loadModule(options.file);
  if (!module) return reportStatus(module.status());
  auto entry = findEntry(*module, options.entry);
  if (!entry) return reportStatus(entry.status());
  FuncOp fn(*entry);
  auto args = readInputs(fn, options.inputs);
  if (!args) return reportStatus(args.status());

  StderrChecks checks;
  Expected<std::vector<Literal>> results = std::vector<Literal>{};
  std::unique_ptr<serve::TraceWriter> trace;
  if (!options.traceFile.empty()) {
    auto opened = serve::TraceWriter::open(options.traceFile);
    if (!opened) return reportStatus(opened.status());
    trace = std::move(*opened);
  }
  results = runOnBackend(*module, **entry, std::move(*args), *device, options, trace.get(), &checks);
  if (!results) {
    printError(results.status().message());
    return kExitFailure;
  }
  std::vector<NamedLiteral> named;
  for (size_t i = 0; i < results->size(); ++i) named.push_back({"out" + std::to_string(i), std::move((*results)[i])});
  int code = emitResults(named, options);
  if (code != kExitOk) return code;
  return checks.failures > 0 ? kExitFailure : kExitOk;
}

}  // namespace wf::cli
