// The StableHLO interpreter tests (../shared/stablehlo/interpret, or $WF_INTERPRET_DIR) on the
// CUDA backend: every public argument-less function that passes on the CPU interpreter must pass
// on cuda too. Ops without a CUDA kernel (and the check.* ops themselves) run on the host through
// the CPU fallback; the test prints, per file, how many functions passed and which ops still ran
// on the host, so the list shrinks as kernels land, and names every function whose values all
// have GPU types (i1, ints, f16, bf16, f32, f64) but that still ran something on the host.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::vector<std::string> interpretFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  // The chlo/ subfolder holds the chlo ops' tests (mulhi, ragged_dot, scan).
  for (const auto& e : std::filesystem::recursive_directory_iterator(interpretDir(), ec))
    if (e.path().extension() == ".mlir")
      files.push_back(std::filesystem::relative(e.path(), interpretDir()).generic_string());
  std::sort(files.begin(), files.end());
  if (files.empty()) files.push_back("");  // one test that reports the folder as missing
  return files;
}

class Checks : public CheckSink {
 public:
  void report(const Operation&, bool passed, const std::string& message) override {
    if (!passed && failures++ == 0) first = message;
  }
  void unsupported(const Operation&, const std::string&) override { ++unsupportedChecks; }
  int failures = 0;
  int unsupportedChecks = 0;
  std::string first;
};

enum class Outcome { kPass, kFail, kUnsupported };

struct Tally {
  int cpuPass = 0, cudaPass = 0, cudaUnsupported = 0, cudaFail = 0, allOnDevice = 0;
  int gpuTyped = 0, gpuTypedOnDevice = 0;  // functions whose values all have GPU types
};

// Whether every value of `op` (results, region arguments, nested ops) has a type the CUDA
// kernels compute on: i1, integers of 8 to 64 bits, f16, bf16, f32, f64 (not complex, f8,
// sub-byte, quantized, tuples or tokens).
bool usesOnlyGpuTypes(const Operation& op) {
  auto gpuType = [](const Type& t) {
    if (!t.isTensor()) return false;
    const auto& types = gpuTypes();
    return std::find(types.begin(), types.end(), t.elementType()) != types.end();
  };
  for (size_t i = 0; i < op.numResults(); ++i)
    if (!gpuType(op.result(i)->type())) return false;
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks()) {
      for (size_t i = 0; i < block->numArguments(); ++i)
        if (!gpuType(block->argument(i)->type())) return false;
      for (const auto& inner : block->operations())
        if (!usesOnlyGpuTypes(*inner)) return false;
    }
  return true;
}

// Functions in GPU types with some op on the host, and what ran there.
std::vector<std::string>& gpuTypedOnHost() {
  static std::vector<std::string> fns;
  return fns;
}

std::map<std::string, int>& hostOps() {
  static std::map<std::string, int> ops;
  return ops;
}
Tally& total() {
  static Tally t;
  return t;
}

class CudaConformance : public testing::TestWithParam<std::string> {};

TEST_P(CudaConformance, FunctionsPassingOnCpuPassOnCuda) {
  WF_REQUIRE_GPU();
  if (GetParam().empty()) GTEST_SKIP() << "no StableHLO interpreter tests at " << interpretDir();
  const std::string path = interpretDir() + "/" + GetParam();
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  Tally tally;
  std::vector<std::string> failures;
  for (const SourceChunk& chunk : splitInputFile(text)) {
    ParseOptions options;
    options.fileName = GetParam();
    options.firstLine = chunk.firstLine;
    Expected<Module> module = parseModule(chunk.text, options);
    if (!module || !verifyModule(*module).isOk()) continue;
    for (FuncOp fn : module->functions()) {
      if (!fn.isPublic() || fn.body().numArguments() != 0) continue;
      Checks cpuChecks;
      EvalContext ctx;
      ctx.module = &*module;
      ctx.checks = &cpuChecks;
      auto cpu = Interpreter::callFunction(*fn.op(), {}, ctx);
      if (!cpu || cpuChecks.failures > 0 || cpuChecks.unsupportedChecks > 0) continue;
      ++tally.cpuPass;
      const std::string name = GetParam() + ":@" + std::string(fn.symName());
      CompileOptions copts;
      copts.allowCpuFallback = true;
      auto exe = cudaBackend().compile(*module, *fn.op(), copts);
      if (!exe) {
        if (exe.status().code() == StatusCode::kUnimplemented) {
          ++tally.cudaUnsupported;
        } else {
          ++tally.cudaFail;
          failures.push_back(name + ": compile: " + exe.status().toString());
        }
        continue;
      }
      Checks gpuChecks;
      (*exe)->setCheckSink(&gpuChecks);
      auto run = (*exe)->run({});
      if (!run) {
        ++tally.cudaFail;
        failures.push_back(name + ": run: " + run.status().toString());
        continue;
      }
      if (gpuChecks.failures > 0) {
        ++tally.cudaFail;
        failures.push_back(name + ": " + gpuChecks.first);
        continue;
      }
      ++tally.cudaPass;
      std::set<std::string> onHost;
      for (const std::string& op : run->report.hostFallbackOps) {
        const std::string opName = op.substr(0, op.find(' '));
        // The test ops (check.*) and the interpreter's printing ops report to the host by design.
        if (opName.rfind("check.", 0) == 0 || opName == "stablehlo.custom_call" || opName == "interpreter.print" ||
            opName == "interpreter.probe")
          continue;
        if (onHost.insert(opName).second) ++hostOps()[opName];
      }
      if (onHost.empty()) ++tally.allOnDevice;
      if (usesOnlyGpuTypes(*fn.op())) {
        ++tally.gpuTyped;
        if (onHost.empty()) {
          ++tally.gpuTypedOnDevice;
        } else {
          std::string line = name + ":";
          for (const std::string& op : onHost) line += " " + op;
          gpuTypedOnHost().push_back(line);
        }
      }
    }
  }
  total().cpuPass += tally.cpuPass;
  total().cudaPass += tally.cudaPass;
  total().cudaFail += tally.cudaFail;
  total().cudaUnsupported += tally.cudaUnsupported;
  total().allOnDevice += tally.allOnDevice;
  total().gpuTyped += tally.gpuTyped;
  total().gpuTypedOnDevice += tally.gpuTypedOnDevice;
  RecordProperty("cuda_pass", tally.cudaPass);
  std::printf("  %-36s %3d on cpu, %3d pass on cuda (%3d all ops on the GPU), %d unsupported, %d fail\n",
              GetParam().c_str(), tally.cpuPass, tally.cudaPass, tally.allOnDevice, tally.cudaUnsupported, tally.cudaFail);
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Interpret, CudaConformance, testing::ValuesIn(interpretFiles()), [](const auto& info) {
  std::string n = info.param.empty() ? std::string("missing") : info.param.substr(0, info.param.size() - 5);
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

// Prints the totals and the ops still run on the host once every test has run.
class Summary : public testing::Environment {
 public:
  void TearDown() override {
    const Tally& t = total();
    if (t.cpuPass == 0) return;
    std::printf("conformance on cuda: %d of %d functions that pass on the CPU pass on cuda (%d with every op on "
                "the GPU), %d unsupported (dynamic shapes, tuples, tokens), %d fail\n",
                t.cudaPass, t.cpuPass, t.allOnDevice, t.cudaUnsupported, t.cudaFail);
    std::vector<std::pair<int, std::string>> ops;
    for (const auto& [name, n] : hostOps()) ops.emplace_back(-n, name);
    std::sort(ops.begin(), ops.end());
    std::string line = "ops run on the host (number of functions): ";
    for (const auto& [n, name] : ops) line += name + " " + std::to_string(-n) + ", ";
    std::printf("%s\n", line.c_str());
    std::printf("functions in GPU types (i1, ints, f16, bf16, f32, f64): %d pass on cuda, %d with every op on the GPU\n",
                t.gpuTyped, t.gpuTypedOnDevice);
    for (const std::string& f : gpuTypedOnHost()) std::printf("  on the host: %s\n", f.c_str());
  }
};
[[maybe_unused]] testing::Environment* const kSummary = testing::AddGlobalTestEnvironment(new Summary);

}  // namespace
}  // namespace wf::cudatest
