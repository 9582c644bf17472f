// Session: a model package compiled for one device, weights resident, ready to run by name.
//
//   wf::SessionOptions options;
//   options.device = wf::DeviceSpec{"cuda", 0};           // or DeviceSpec::parse("cuda:0")
//   options.captureActivations = true;                   // also return the manifest's activations
//   auto session = wf::Session::open("out/resnet18", options);
//   if (!session) { std::cerr << session.status().message(); return; }
//   std::vector<wf::NamedLiteral> inputs = {{"x", image}};
//   auto result = (*session)->run(inputs);               // checked against the manifest first
//   const wf::Literal* logits = result->find("output");
//
// open(): reads and cross-checks the package (package.h), creates the backend for `device` from
// the registry (the program registers its backends first: backends/registry.h), compiles the entry function, then reads weights.safetensors,
// checks every weight and binds it once; only the inputs travel on each run().
// run(): inputs by manifest name; a missing, unknown, mis-typed or mis-shaped input is an
// InvalidArgument error naming it, and nothing runs. Outputs come back by manifest name, in
// manifest order. A Session is not safe to run from several threads at once.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/package.h"
#include "runtime/safetensors.h"

namespace wf {

struct SessionOptions {
  DeviceSpec device;  // cpu by default
  // Also return the package's activations (Manifest::activations, tapped by SSA name).
  bool captureActivations = false;
  // Passed to the backend; tapValues is filled from the manifest when captureActivations is set.
  CompileOptions compile;
  // Shape specialization, for a package with dynamic dimensions on a backend that takes static
  // shapes only (cuda): each run's input shapes pick an executable compiled for exactly those
  // shapes (the module refined by transforms/refine_shapes.h, weights bound to it). At most this
  // many are kept, the least recently used dropped; each holds its own device copy of the
  // weights (the host keeps one copy, read once). Not available with captureActivations (refinement renames the tapped values).
  int maxSpecializations = 4;
  // Specialize even where the backend takes the dynamic module itself (tests of the mechanism).
  bool forceSpecialization = false;
};

struct SessionResult {
  std::vector<NamedLiteral> outputs;      // Manifest::outputs order
  std::vector<NamedLiteral> activations;  // Manifest::activations order; empty unless captured
  RunReport report;

  const Literal* find(std::string_view name) const;  // an output by name
};

class Session {
 public:
  static Expected<std::unique_ptr<Session>> open(const std::string& packageDir, const SessionOptions& options = {});
  static Expected<std::unique_ptr<Session>> create(Package package, const SessionOptions& options = {});

  Expected<SessionResult> run(std::span<const NamedLiteral> inputs);

  // The two halves of run(), for callers that run the same inputs many times (bench): check once,
  // then run the argument list checkInputs returned.
  Expected<std::vector<Literal>> prepareInputs(std::span<const NamedLiteral> inputs) const;
  Expected<SessionResult> runPrepared(std::span<const Literal> arguments);

  const Package& package() const { return package_; }
  const Manifest& manifest() const { return package_.manifest(); }
  const DeviceSpec& device() const { return device_; }
  std::string deviceName() const;
  size_t deviceBytesInUse() const;
  // deviceBytesInUse() by what holds the bytes (summed over specializations).
  std::vector<std::pair<std::string, size_t>> deviceMemoryBreakdown() const;
  bool capturesActivations() const { return captureActivations_; }
  // Executables compiled for particular input shapes (0 when the backend runs the package's own
  // module; see SessionOptions::maxSpecializations).
  size_t specializations() const { return specializations_.size(); }

 private:
  Session(Package package, DeviceSpec device) : package_(std::move(package)), device_(std::move(device)) {}
  Expected<SessionResult> runChecked(std::span<const Literal> arguments, DimBindings& bindings);
  // The executable for these run arguments: the one compiled module, or the specialization for
  // their shapes (compiled and bound on first use).
  Expected<Executable*> executableFor(std::span<const Literal> arguments);
  Status bindWeights(Executable& executable);

  struct Specialization {
    std::string key;                  // the entry's argument types
    std::unique_ptr<Module> module;   // refined to those types; outlives the executable
    std::unique_ptr<Executable> executable;
    uint64_t lastUse = 0;
  };

  // Declared in this order so that the executable goes before the backend and the package.
  Package package_;
  DeviceSpec device_;
  bool captureActivations_ = false;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Executable> executable_;  // null when specializing
  CompileOptions compile_;
  int maxSpecializations_ = 4;
  uint64_t useClock_ = 0;
  std::vector<Specialization> specializations_;
  std::vector<Literal> hostWeights_;  // specializing only: the weights, read once
};

}  // namespace wf
