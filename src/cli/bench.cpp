// `warpforge bench PKG`: times a model package after warm-up and prints latency percentiles and
// throughput.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/profile.h"
#include "runtime/package.h"
#include "runtime/session.h"
#include "serve/trace.h"
#include "support/thread_pool.h"

namespace wf::cli {
namespace {

// Inputs of the manifest's dtypes and shapes, dynamic dimensions at their minimum (at least 1),
// filled with small deterministic values (integers 0, so that indices stay in range).
std::vector<NamedLiteral> syntheticInputs(const Manifest& m) {
  std::vector<NamedLiteral> inputs;
  uint32_t state = 12345;
  for (const TensorSpec& s : m.inputs) {
    const std::vector<int64_t> shape = smallestShape(m, s);
    Literal value = Literal::zeros(Type::tensor(shape, s.dtype));
    if (isFloat(s.dtype))
      for (int64_t i = 0; i < value.numElements(); ++i) {
        state = state * 1664525u + 1013904223u;
        value.setDouble(i, static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0);
      }
    inputs.push_back({s.name, std::move(value)});
  }
  return inputs;
}

// `value` with every dimension named `dim` in `spec` resized to `size`, rows repeated cyclically
// (so token ids and the like stay valid).
Literal resizeDynamicDim(const Literal& value, const TensorSpec& spec, const std::string& dim, int64_t size) {
  std::vector<int64_t> shape = value.shape();
  bool changed = false;
  for (size_t d = 0; d < spec.shape.size() && d < shape.size(); ++d)
    if (spec.shape[d].name == dim && shape[d] != size) {
      shape[d] = size;
      changed = true;
    }
  if (!changed) return value;
  Literal out = Literal::zeros(Type::tensor(shape, value.elementType()));
  std::vector<int64_t> inStrides = rowMajorStrides(value.shape());
  size_t bytes = static_cast<size_t>(storageBytes(value.elementType()));
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    int64_t rest = i, src = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t coord = rest % shape[d];
      rest /= shape[d];
      src += (coord % value.shape()[d]) * inStrides[d];
    }
    std::memcpy(out.data() + static_cast<size_t>(i) * bytes, value.data() + static_cast<size_t>(src) * bytes, bytes);
  }
  return out;
}

// Linear interpolation between closest ranks (numpy's default), on sorted samples.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(rank);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", v);
  return buf;
}

}  // namespace

int runBench(const BenchOptions& options) {
  auto device = resolveDevice(options.device);
  if (!device) {
    printError(device.status().message());
    return kExitUsage;
  }
  auto pkg = Package::open(options.package);
  if (!pkg) return reportStatus(pkg.status());
  const Manifest manifest = pkg->manifest();

  std::vector<NamedLiteral> inputs;
  bool synthetic = manifest.goldenInputs.empty();
  if (!synthetic) {
    auto golden = pkg->loadGoldenInputs();
    if (!golden) return reportStatus(golden.status());
    inputs = std::move(*golden);
  } else {
    inputs = syntheticInputs(manifest);
  }
  if (options.batch > 0) {
    if (!manifest.dynamicDims.count("batch")) {
      printError("--batch: " + options.package + " has no dynamic dimension named 'batch' (export it with a dynamic batch)");
      return kExitUsage;
    }
    for (NamedLiteral& in : inputs)
      for (const TensorSpec& spec : manifest.inputs)
        if (spec.name == in.name && in.value.numElements() > 0)
          in.value = resizeDynamicDim(in.value, spec, "batch", options.batch);
  }
  DimBindings bindings;
  auto args = pkg->checkInputs(inputs, &bindings);
  if (!args) return reportStatus(args.status());
  // The batch size: the dynamic dimension named "batch" if there is one, else dimension 0 of the
  // first input.
  int64_t batch = 1;
  if (auto it = bindings.find("batch"); it != bindings.end()) batch = it->second;
  else if (!inputs.empty() && !inputs[0].value.shape().empty()) batch = inputs[0].value.shape()[0];
  batch = std::max<int64_t>(batch, 1);

  SessionOptions sessionOptions;
  sessionOptions.device = *device;
  sessionOptions.compile = options.compile;
  sessionOptions.compile.numThreads = options.threads;
  std::unique_ptr<serve::TraceWriter> trace;
  if (!options.traceFile.empty()) {
    auto opened = serve::TraceWriter::open(options.traceFile);
    if (!opened) return reportStatus(opened.status());
    trace = std::move(*opened);
  }
  sessionOptions.compile.recordTimings = options.profile || trace != nullptr;
  std::string pkgDir = pkg->dir();
  using Clock = std::chrono::steady_clock;
  // The compile time (cold or warm kernel cache: run bench twice to see both) and the generated
  // kernels behind it, counted through the first run, where a package with dynamic dimensions is
  // compiled for its input shapes.
  const GeneratedKernelStats kernelsBefore = generatedKernelStats();
  const std::vector<PhaseTime> phasesBefore = phaseTimes();
  const auto compileStart = Clock::now();
  auto session = Session::create(std::move(*pkg), sessionOptions);
  const double compileMs = std::chrono::duration<double, std::milli>(Clock::now() - compileStart).count();
  if (!session) return reportStatus(session.status());
  std::string deviceName = (*session)->deviceName();
  int threads = device->kind == "cpu" ? numThreads() : options.threads;

  std::vector<double> samples, deviceSamples;
  double firstRunMs = 0;
  GeneratedKernelStats kernels;
  std::vector<PhaseTime> phasesAfterFirstRun;
  std::vector<std::string> hostFallbackOps;
  Profile profile;
  for (int i = 0; i < options.warmup + options.iters; ++i) {
    auto start = Clock::now();
    auto result = (*session)->runPrepared(*args);
    auto end = Clock::now();
    if (!result) {
      printError(result.status().message());
      return kExitFailure;
    }
    if (i == 0) {
      printHostFallback(result->report);
      hostFallbackOps = result->report.hostFallbackOps;
      firstRunMs = std::chrono::duration<double, std::milli>(end - start).count();
      kernels = generatedKernelStats();
      phasesAfterFirstRun = phaseTimes();
    }
    if (i >= options.warmup && options.profile) profile.add(result->report);
    if (trace && i >= options.warmup) {
      if (i == options.warmup) trace->lane(1, "bench " + manifest.name + " (" + deviceName + ")");
      trace->run("run " + std::to_string(i - options.warmup), 1, start, end, result->report,
                 &(*session)->package().entry(), {{"device", deviceName}, {"batch", batch}});
    }
    if (i >= options.warmup) {
      samples.push_back(std::chrono::duration<double, std::milli>(end - start).count());
      if (result->report.deviceMillis >= 0) deviceSamples.push_back(result->report.deviceMillis);
    }
  }
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  double median = percentile(sorted, 50), p10 = percentile(sorted, 10), p90 = percentile(sorted, 90);
  double mean = 0;
  for (double s : samples) mean += s;
  mean /= static_cast<double>(samples.size());
  double throughput = median > 0 ? static_cast<double>(batch) * 1000.0 / median : 0;
  // On a GPU, also the device time alone: the program's kernels with inputs already resident
  // (what a framework's CUDA-event timing of a forward pass measures).
  std::vector<double> sortedDevice = deviceSamples;
  std::sort(sortedDevice.begin(), sortedDevice.end());
  size_t deviceBytes = (*session)->deviceBytesInUse();

  if (options.json) {
    nlohmann::json j = {
        {"package", pkgDir},
        {"name", manifest.name},
        {"device", deviceName},
        {"threads", threads},
        {"batch", batch},
        {"warmup", options.warmup},
        {"iters", options.iters},
        {"synthetic_inputs", synthetic},
        {"host_fallback_ops", hostFallbackOps},
        {"compile_ms", compileMs},
        {"first_run_ms", firstRunMs},
        {"generated_kernels",
         {{"compiled", kernels.cacheMisses - kernelsBefore.cacheMisses},
          {"from_kernel_cache", kernels.cacheHits - kernelsBefore.cacheHits},
          {"nvrtc_ms", kernels.compileMillis - kernelsBefore.compileMillis},
          {"tuned_problems", kernels.tunedProblems - kernelsBefore.tunedProblems},
          {"tuning_ms", kernels.tuningMillis - kernelsBefore.tuningMillis},
          {"tuning_from_kernel_cache", kernels.tuningHits - kernelsBefore.tuningHits},
          {"load_ms", kernels.loadMillis - kernelsBefore.loadMillis}}},
        {"latency_ms",
         {{"median", median}, {"p10", p10}, {"p90", p90}, {"min", sorted.front()}, {"max", sorted.back()}, {"mean", mean}}},
        {"throughput_samples_per_s", throughput},
        {"samples_ms", samples}};
    if (!sortedDevice.empty()) {
      j["device_ms"] = {{"median", percentile(sortedDevice, 50)},
                        {"p10", percentile(sortedDevice, 10)},
                        {"p90", percentile(sortedDevice, 90)},
                        {"min", sortedDevice.front()}};
      j["device_samples_ms"] = deviceSamples;
      j["device_bytes_in_use"] = deviceBytes;
      nlohmann::json parts = nlohmann::json::object();
      for (const auto& [what, bytes] : (*session)->deviceMemoryBreakdown()) parts[what] = bytes;
      j["device_bytes_by_holder"] = parts;
    }
    if (options.profile) j["profile"] = profileJson(profile);
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "bench " << pkgDir << (manifest.name.empty() ? "" : " (" + manifest.name + ")") << " on "
            << deviceName;
  if (threads > 0) std::cout << ", " << threads << " thread(s)";
  std::cout << ", batch " << batch << (synthetic ? " (synthetic inputs)" : options.batch > 0 ? " (golden inputs, rows repeated)" : " (golden inputs)") << ": "
            << options.warmup << " warm-up + " << options.iters << " timed runs\n";
  std::cout << formatCompileTime(compileMs, kernelsBefore, kernels, phasesBefore, phasesAfterFirstRun) << "; first run "
            << ms(firstRunMs) << "\n";
  std::cout << "latency: median " << ms(median) << "  p10 " << ms(p10) << "  p90 " << ms(p90) << "  min "
            << ms(sorted.front()) << "  max " << ms(sorted.back()) << "\n";
  if (!sortedDevice.empty())
    std::cout << "device time (inputs resident): median " << ms(percentile(sortedDevice, 50)) << "  p10 "
              << ms(percentile(sortedDevice, 10)) << "  p90 " << ms(percentile(sortedDevice, 90)) << "; device memory "
              << deviceBytes / (1024 * 1024) << " MiB\n";
  if (!sortedDevice.empty()) std::cout << formatMemoryBreakdown((*session)->deviceMemoryBreakdown()) << "\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", throughput);
  std::cout << "throughput: " << buf << " samples/s\n";
  if (options.profile) {
    printProfile(profile);
    printPhaseTimes(phasesBefore, phasesAfterFirstRun);
  }
  return kExitOk;
}

}  // namespace wf::cli
