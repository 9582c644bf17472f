// Model packages (docs/model-package.md): a directory with manifest.json, model.mlir,
// weights.safetensors and optional golden/ tensors.
//
//   auto pkg = wf::Package::open("out/resnet18");          // manifest + model, cross-checked
//   if (!pkg) return pkg.status();                           // "out/resnet18/manifest.json: ..."
//   auto weights = pkg->loadWeights();                       // every weight checked by name
//   auto args = pkg->checkInputs(namedInputs);               // dtype/shape/dynamic dims checked
//
// Package::open refuses a package whose manifest does not match model.mlir: every argument of
// the entry function must be exactly one input or weight, every result exactly one output, with
// the same element type and shape (a manifest dimension named in `dynamic_dims` must be dynamic
// (`?`) in model.mlir; a static one must equal model.mlir's, or be `?` there), and every
// activation must name an SSA value of the entry function's body of the declared type. Every
// error names the file and the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "ir/literal.h"
#include "runtime/safetensors.h"
#include "support/status.h"

namespace wf {

// One dimension of a manifest shape: a static size, or a named dynamic dimension.
struct ManifestDim {
  int64_t size = 0;  // the static size; unused when `name` is set
  std::string name;  // non-empty: a dynamic dimension (a key of Manifest::dynamicDims)
  bool isDynamic() const { return !name.empty(); }
};

// "[batch, 3, 224, 224]"
std::string shapeToString(const std::vector<ManifestDim>& shape);

struct TensorSpec {
  std::string name;
  size_t index = 0;  // the entry argument (inputs, weights) or result (outputs) it is
  ElementType dtype = ElementType::kF32;
  std::vector<ManifestDim> shape;
  std::string kind;  // weights only: parameter | buffer | constant
};

struct ActivationSpec {
  std::string name;   // the module path; the key in the golden activations file
  std::string value;  // the SSA name in the entry function ("%layer1")
  ElementType dtype = ElementType::kF32;
  std::vector<ManifestDim> shape;
};

struct DynamicDimBounds {
  int64_t min = 0;
  std::optional<int64_t> max;  // none: unbounded
};

// How validate judges a result against its golden value.
struct Tolerances {
  enum class Kind { kElementwise, kRelL2 };
  Kind kind = Kind::kElementwise;
  double rtol = 1e-3;  // kElementwise: |a - e| <= atol + rtol * |e|
  double atol = 1e-5;
  double relL2 = 1e-2;  // kRelL2: ||a - e|| / ||e|| <= relL2
  std::string toString() const;  // "rtol=0.001 atol=1e-05" or "rel_l2=0.01"
};

struct Manifest {
  std::string name;
  std::string producer;  // "warpforge.export 0.1.0 (torch 2.15.0)", informational
  std::string entry;     // without '@'
  std::string dtype;     // the compute type the model was exported in: f32, bf16, f16
  std::vector<TensorSpec> inputs;   // in the order forward() takes them
  std::vector<TensorSpec> weights;  // in manifest order
  std::vector<TensorSpec> outputs;  // in result order
  std::vector<ActivationSpec> activations;  // in manifest (layer) order
  std::map<std::string, DynamicDimBounds> dynamicDims;
  // From the manifest; when it has none, the DESIGN.md defaults for `dtype`: rtol 1e-3 / atol 1e-5
  // for f32 (and anything else), rel_l2 1e-2 for bf16 and f16.
  Tolerances tolerances;
  // Paths relative to the package directory; empty when absent. The *64 files hold the same
  // model computed in float64 (fp32 packages), which arbitrates float32 rounding (compare.h).
  std::string goldenInputs, goldenOutputs, goldenActivations;
  std::string goldenOutputs64, goldenActivations64;

  // Parses and checks manifest.json on its own (format, fields, types, names, dynamic dims).
  // `fileName` prefixes every error.
  static Expected<Manifest> parse(std::string_view jsonText, const std::string& fileName);
};

// The sizes that dynamic dimensions took in the tensors checked so far, by name.
using DimBindings = std::map<std::string, int64_t>;

class Package {
 public:
  static constexpr const char* kManifestFile = "manifest.json";
  static constexpr const char* kModelFile = "model.mlir";
  static constexpr const char* kWeightsFile = "weights.safetensors";

  // Reads manifest.json and model.mlir (parsed and verified) and checks them against each other.
  // Weights and golden tensors are read later, on demand.
  static Expected<Package> open(const std::string& dir);

  Package(Package&&) = default;
  Package& operator=(Package&&) = default;

  const std::string& dir() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  const Module& module() const { return *module_; }
  const Operation& entry() const { return *entry_; }
  // `relative` inside the package directory.
  std::string path(std::string_view relative) const;

  // Reads weights.safetensors and checks that it holds every weight of the manifest with the
  // entry argument's dtype and shape; tensors the manifest does not list are ignored. In manifest
  // order (Manifest::weights[i] is result[i]).
  Expected<std::vector<Literal>> loadWeights() const;

  // Checks named inputs against the manifest: each input exactly once, no unknown names, dtype and
  // static dims exact, dynamic dims within bounds and equal wherever a name repeats (`bindings`,
  // if given, receives the sizes). Returns the inputs ordered by argument index, which is the
  // argument order Executable::run takes once every weight is bound.
  Expected<std::vector<Literal>> checkInputs(std::span<const NamedLiteral> inputs,
                                             DimBindings* bindings = nullptr) const;
  // Checks results against the manifest's outputs (dtype, shape; dynamic dims must agree with
  // `bindings` and are added to it). An error here means the backend or the package is wrong.
  Status checkOutputs(std::span<const Literal> outputs, DimBindings& bindings) const;

  // Golden tensors (docs/model-package.md); a NotFound error when the manifest lists none.
  Expected<std::vector<NamedLiteral>> loadGoldenInputs() const;  // in manifest input order
  Expected<SafetensorsFile> loadGoldenOutputs() const;
  Expected<SafetensorsFile> loadGoldenActivations() const;
  // The float64 references, or an empty file when the manifest lists none.
  Expected<SafetensorsFile> loadReference64Outputs() const;
  Expected<SafetensorsFile> loadReference64Activations() const;

 private:
  Package() = default;
  Status checkAgainstModule(const std::string& manifestPath);

  std::string dir_;
  Manifest manifest_;
  std::unique_ptr<Module> module_;
  const Operation* entry_ = nullptr;
};

// Checks one tensor's dtype and shape against a manifest spec, binding or checking dynamic dims.
// `what` names the tensor in errors ("input 'x'", "weight 'fc.bias' in PKG/weights.safetensors").
Status checkTensorAgainstSpec(const Literal& value, ElementType dtype, const std::vector<ManifestDim>& shape,
                              const std::map<std::string, DynamicDimBounds>& dynamicDims, DimBindings& bindings,
                              const std::string& what);

// `spec`'s shape with every dynamic dimension at the smallest size the manifest allows (at
// least 1): a shape every run accepts, for synthetic inputs and compiling ahead of a run.
std::vector<int64_t> smallestShape(const Manifest& manifest, const TensorSpec& spec);

}  // namespace wf
