// Model packages: manifest parsing, the manifest/model cross-check, weights, inputs and golden
// tensors (package.h, docs/model-package.md).
#include "runtime/package.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "ir/verifier.h"
#include "runtime/backend.h"
#include "runtime/file_io.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

using json = nlohmann::json;

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Typed access to a JSON object with errors naming the file and the field path
// ("PKG/manifest.json: inputs[0].shape[1]: expected an integer or a string").
class Field {
 public:
  Field(const json& value, std::string path, const std::string& file) : v_(value), path_(std::move(path)), file_(file) {}

  const json& value() const { return v_; }
  const std::string& path() const { return path_; }
  Status error(const std::string& message) const {
    return invalidArgument(file_ + ": " + (path_.empty() ? "" : path_ + ": ") + message);
  }
  bool has(const char* key) const { return v_.is_object() && v_.contains(key) && !v_.at(key).is_null(); }
  Field at(const char* key) const {
    static const json kNull;
    return Field(has(key) ? v_.at(key) : kNull, path_.empty() ? key : path_ + "." + key, file_);
  }
  Field at(size_t i) const { return Field(v_.at(i), path_ + "[" + std::to_string(i) + "]", file_); }

  Expected<std::string> str() const {
    if (v_.is_null()) return error("missing (expected a string)");
    if (!v_.is_string()) return error("expected a string, got " + std::string(v_.type_name()));
    return v_.get<std::string>();
  }
  Expected<int64_t> integer() const {
    if (v_.is_null()) return error("missing (expected an integer)");
    if (!v_.is_number_integer()) return error("expected an integer, got " + v_.dump());
    return v_.get<int64_t>();
  }
  Expected<double> number() const {
    if (v_.is_null()) return error("missing (expected a number)");
    if (!v_.is_number()) return error("expected a number, got " + v_.dump());
    double d = v_.get<double>();
    if (!std::isfinite(d) || d < 0) return error("expected a finite number >= 0, got " + v_.dump());
    return d;
  }
  Expected<size_t> arraySize(bool required = true) const {
    if (v_.is_null() && !required) return size_t{0};
    if (!v_.is_array()) return error(v_.is_null() ? "missing (expected an array)" : "expected an array, got " + std::string(v_.type_name()));
    return v_.size();
  }
  Expected<ElementType> dtype() const {
    WF_ASSIGN_OR_RETURN(std::string name, str());
    ElementType t;
    if (!parseElementTypeName(name, &t)) return error("unknown element type '" + name + "'");
    return t;
  }
  Expected<std::vector<ManifestDim>> shape() const {
    WF_ASSIGN_OR_RETURN(size_t n, arraySize());
    std::vector<ManifestDim> dims;
    for (size_t i = 0; i < n; ++i) {
      Field d = at(i);
      ManifestDim dim;
      if (d.value().is_string()) {
        dim.name = d.value().get<std::string>();
        if (dim.name.empty()) return d.error("a dynamic dimension needs a non-empty name");
      } else if (d.value().is_number_integer() && d.value().get<int64_t>() >= 0) {
        dim.size = d.value().get<int64_t>();
      } else {
        return d.error("expected a size >= 0 or the name of a dynamic dimension, got " + d.value().dump());
      }
      dims.push_back(std::move(dim));
    }
    return dims;
  }

 private:
  const json& v_;
  std::string path_;
  const std::string& file_;
};

Expected<std::vector<TensorSpec>> parseTensorList(const Field& list, const char* indexKey, bool isWeight) {
  WF_ASSIGN_OR_RETURN(size_t n, list.arraySize());
  std::vector<TensorSpec> specs;
  std::set<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    Field f = list.at(i);
    if (!f.value().is_object()) return f.error("expected an object");
    TensorSpec spec;
    WF_ASSIGN_OR_RETURN(spec.name, f.at("name").str());
    if (spec.name.empty()) return f.at("name").error("must not be empty");
    if (!names.insert(spec.name).second) return f.at("name").error("'" + spec.name + "' appears twice");
    WF_ASSIGN_OR_RETURN(int64_t index, f.at(indexKey).integer());
    if (index < 0) return f.at(indexKey).error("must be >= 0");
    spec.index = static_cast<size_t>(index);
    WF_ASSIGN_OR_RETURN(spec.dtype, f.at("dtype").dtype());
    WF_ASSIGN_OR_RETURN(spec.shape, f.at("shape").shape());
    if (isWeight) {
      spec.kind = "parameter";
      if (f.has("kind")) {
        WF_ASSIGN_OR_RETURN(spec.kind, f.at("kind").str());
        if (spec.kind != "parameter" && spec.kind != "buffer" && spec.kind != "constant")
          return f.at("kind").error("expected parameter, buffer or constant, got '" + spec.kind + "'");
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// `declared` (model.mlir) against a manifest shape and dtype. Returns "" when they agree, else why not.
std::string typeMismatch(const Type& declared, ElementType dtype, const std::vector<ManifestDim>& shape) {
  if (!declared.isTensor()) return "is " + declared.toString() + ", not a tensor";
  if (declared.elementType() != dtype)
    return "has element type " + std::string(elementTypeName(declared.elementType())) + " (" + declared.toString() +
           "), the manifest says " + std::string(elementTypeName(dtype));
  if (static_cast<size_t>(declared.rank()) != shape.size())
    return "is " + declared.toString() + ", the manifest's shape " + shapeToString(shape) + " has another rank";
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t m = declared.dim(static_cast<int64_t>(d));
    if (shape[d].isDynamic() && m != kDynamic)
      return "is " + declared.toString() + ": dimension " + std::to_string(d) + " is static there, the manifest's " +
             shapeToString(shape) + " makes it dynamic ('" + shape[d].name + "')";
    if (!shape[d].isDynamic() && m != kDynamic && m != shape[d].size)
      return "is " + declared.toString() + ", the manifest says " + shapeToString(shape);
  }
  return "";
}

bool isSafeRelativePath(const std::string& p) {
  std::filesystem::path path(p);
  if (p.empty() || path.is_absolute()) return false;
  for (const auto& part : path)
    if (part == "..") return false;
  return true;
}

}  // namespace

std::string shapeToString(const std::vector<ManifestDim>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].isDynamic() ? shape[i].name : std::to_string(shape[i].size);
  }
  return s + "]";
}

std::string Tolerances::toString() const {
  if (kind == Kind::kRelL2) return "rel_l2=" + formatDouble(relL2);
  return "rtol=" + formatDouble(rtol) + " atol=" + formatDouble(atol);
}

Expected<Manifest> Manifest::parse(std::string_view jsonText, const std::string& fileName) {
  json root;
  try {
    root = json::parse(jsonText);
  } catch (const json::exception& e) {
    return invalidArgument(fileName + ": not valid JSON: " + e.what());
  }
  Field top(root, "", fileName);
  if (!root.is_object()) return top.error("expected a JSON object at the top level");

  WF_ASSIGN_OR_RETURN(std::string format, top.at("format").str());
  if (format != "warpforge.package")
    return top.at("format").error("expected \"warpforge.package\", got \"" + format + "\"");
  WF_ASSIGN_OR_RETURN(int64_t version, top.at("format_version").integer());
  if (version != 1)
    return top.at("format_version").error("this WarpForge reads version 1, got " + std::to_string(version));

  Manifest m;
  if (top.has("name")) {
    WF_ASSIGN_OR_RETURN(m.name, top.at("name").str());
  }
  if (top.has("producer")) {
    const json& p = root.at("producer");
    if (p.is_object()) {
      for (const char* key : {"name", "version"})
        if (p.contains(key) && p.at(key).is_string()) m.producer += (m.producer.empty() ? "" : " ") + p.at(key).get<std::string>();
      if (p.contains("torch") && p.at("torch").is_string()) m.producer += " (torch " + p.at("torch").get<std::string>() + ")";
    } else if (p.is_string()) {
      m.producer = p.get<std::string>();
    }
  }
  WF_ASSIGN_OR_RETURN(m.entry, top.at("entry").str());
  if (!m.entry.empty() && m.entry[0] == '@') m.entry.erase(0, 1);
  if (m.entry.empty()) return top.at("entry").error("must name a function");
  m.dtype = "f32";
  if (top.has("dtype")) {
    WF_ASSIGN_OR_RETURN(m.dtype, top.at("dtype").str());
  }

  WF_ASSIGN_OR_RETURN(m.inputs, parseTensorList(top.at("inputs"), "argument", false));
  if (top.has("weights")) {
    WF_ASSIGN_OR_RETURN(m.weights, parseTensorList(top.at("weights"), "argument", true));
  }
  WF_ASSIGN_OR_RETURN(m.outputs, parseTensorList(top.at("outputs"), "result", false));
  {
    std::set<std::string> inputNames;
    for (const TensorSpec& s : m.inputs) inputNames.insert(s.name);
    for (size_t i = 0; i < m.weights.size(); ++i)
      if (inputNames.count(m.weights[i].name))
        return top.at("weights").at(i).error("'" + m.weights[i].name + "' is also an input");
  }

  if (top.has("dynamic_dims")) {
    Field dd = top.at("dynamic_dims");
    if (!dd.value().is_object()) return dd.error("expected an object of {\"min\", \"max\"} by dimension name");
    for (auto it = dd.value().begin(); it != dd.value().end(); ++it) {
      Field f(it.value(), dd.path() + "." + it.key(), fileName);
      if (!it.value().is_object()) return f.error("expected {\"min\": N, \"max\": N or null}");
      DynamicDimBounds b;
      if (f.has("min")) {
        WF_ASSIGN_OR_RETURN(b.min, f.at("min").integer());
      }
      if (f.has("max")) {
        WF_ASSIGN_OR_RETURN(b.max, f.at("max").integer());
      }
      if (b.min < 0) return f.at("min").error("must be >= 0");
      if (b.max && *b.max < b.min) return f.at("max").error("is below min " + std::to_string(b.min));
      m.dynamicDims[it.key()] = b;
    }
  }
  auto checkDims = [&](const std::vector<ManifestDim>& shape, const Field& where) -> Status {
    for (const ManifestDim& d : shape)
      if (d.isDynamic() && !m.dynamicDims.count(d.name))
        return where.error("dynamic dimension '" + d.name + "' is not declared in dynamic_dims");
    return Status::ok();
  };
  for (size_t i = 0; i < m.inputs.size(); ++i) WF_RETURN_IF_ERROR(checkDims(m.inputs[i].shape, top.at("inputs").at(i).at("shape")));
  for (size_t i = 0; i < m.weights.size(); ++i) WF_RETURN_IF_ERROR(checkDims(m.weights[i].shape, top.at("weights").at(i).at("shape")));
  for (size_t i = 0; i < m.outputs.size(); ++i) WF_RETURN_IF_ERROR(checkDims(m.outputs[i].shape, top.at("outputs").at(i).at("shape")));

  if (m.dtype == "bf16" || m.dtype == "f16") m.tolerances.kind = Tolerances::Kind::kRelL2;
  if (top.has("tolerances")) {
    Field t = top.at("tolerances");
    if (!t.value().is_object()) return t.error("expected {\"rtol\", \"atol\"} or {\"rel_l2\"}");
    bool elementwise = t.has("rtol") || t.has("atol");
    if (elementwise && t.has("rel_l2")) return t.error("give either rtol/atol or rel_l2, not both");
    if (t.has("rel_l2")) {
      m.tolerances.kind = Tolerances::Kind::kRelL2;
      WF_ASSIGN_OR_RETURN(m.tolerances.relL2, t.at("rel_l2").number());
    } else if (elementwise) {
      m.tolerances.kind = Tolerances::Kind::kElementwise;
      m.tolerances.rtol = 0;
      m.tolerances.atol = 0;
      if (t.has("rtol")) {
        WF_ASSIGN_OR_RETURN(m.tolerances.rtol, t.at("rtol").number());
      }
      if (t.has("atol")) {
        WF_ASSIGN_OR_RETURN(m.tolerances.atol, t.at("atol").number());
      }
    } else {
      return t.error("expected rtol/atol or rel_l2");
    }
  }

  if (top.has("golden")) {
    Field g = top.at("golden");
    if (!g.value().is_object()) return g.error("expected an object of paths");
    std::pair<const char*, std::string*> keys[] = {
        {"inputs", &m.goldenInputs},           {"outputs", &m.goldenOutputs},
        {"activations", &m.goldenActivations}, {"outputs64", &m.goldenOutputs64},
        {"activations64", &m.goldenActivations64}};
    for (auto& [key, out] : keys) {
      if (!g.has(key)) continue;
      WF_ASSIGN_OR_RETURN(*out, g.at(key).str());
      if (!isSafeRelativePath(*out)) return g.at(key).error("'" + *out + "' must be a path inside the package");
    }
    if (m.goldenInputs.empty() != m.goldenOutputs.empty())
      return g.error("inputs and outputs go together: give both or neither");
  }

  if (top.has("activations")) {
    Field list = top.at("activations");
    WF_ASSIGN_OR_RETURN(size_t n, list.arraySize());
    std::set<std::string> names;
    for (size_t i = 0; i < n; ++i) {
      Field f = list.at(i);
      if (!f.value().is_object()) return f.error("expected an object");
      ActivationSpec a;
      WF_ASSIGN_OR_RETURN(a.name, f.at("name").str());
      if (a.name.empty()) return f.at("name").error("must not be empty");
      if (!names.insert(a.name).second) return f.at("name").error("'" + a.name + "' appears twice");
      WF_ASSIGN_OR_RETURN(a.value, f.at("value").str());
      WF_ASSIGN_OR_RETURN(a.dtype, f.at("dtype").dtype());
      WF_ASSIGN_OR_RETURN(a.shape, f.at("shape").shape());
      WF_RETURN_IF_ERROR(checkDims(a.shape, f.at("shape")));
      m.activations.push_back(std::move(a));
    }
  }
  return m;
}

std::string Package::path(std::string_view relative) const {
  return (std::filesystem::path(dir_) / std::filesystem::path(relative)).string();
}

Expected<Package> Package::open(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return notFound(dir + ": no such package directory");
  if (!fs::is_directory(dir, ec)) return invalidArgument(dir + ": a model package is a directory, this is a file");
  Package pkg;
  pkg.dir_ = dir;
  std::string manifestPath = pkg.path(kManifestFile);
  if (!fs::exists(manifestPath, ec)) return notFound(manifestPath + ": missing; " + dir + " is not a model package");
  WF_ASSIGN_OR_RETURN(std::string manifestText, readFileBytes(manifestPath));
  WF_ASSIGN_OR_RETURN(pkg.manifest_, Manifest::parse(manifestText, manifestPath));

  std::string modelPath = pkg.path(kModelFile);
  WF_ASSIGN_OR_RETURN(std::string modelText, readFileBytes(modelPath));
  ParseOptions options;
  options.fileName = modelPath;
  WF_ASSIGN_OR_RETURN(Module module, parseModule(modelText, options));
  WF_RETURN_IF_ERROR(verifyModule(module));
  pkg.module_ = std::make_unique<Module>(std::move(module));
  WF_RETURN_IF_ERROR(pkg.checkAgainstModule(manifestPath));
  return pkg;
}

Status Package::checkAgainstModule(const std::string& manifestPath) {
  const Manifest& m = manifest_;
  std::string modelPath = path(kModelFile);
  auto mismatch = [&](const std::string& message) {
    return invalidArgument(manifestPath + " does not match " + modelPath + ": " + message);
  };
  entry_ = module_->lookupFunction(m.entry);
  if (!entry_) return mismatch("entry @" + m.entry + " is not a function of the model");
  FuncOp fn(entry_);
  if (entry_->numRegions() == 0 || entry_->region(0).empty()) return mismatch("entry @" + m.entry + " has no body");
  const Block& body = fn.body();
  size_t numArgs = body.numArguments();
  std::string fnName = "@" + m.entry;

  std::vector<std::string> owner(numArgs);
  auto claim = [&](const TensorSpec& s, const char* what) -> Status {
    std::string who = std::string(what) + " '" + s.name + "'";
    if (s.index >= numArgs)
      return mismatch(who + " is argument " + std::to_string(s.index) + ", but " + fnName + " takes " +
                      std::to_string(numArgs) + " arguments");
    if (!owner[s.index].empty())
      return mismatch(who + " and " + owner[s.index] + " are both argument " + std::to_string(s.index));
    owner[s.index] = who;
    std::string why = typeMismatch(body.argument(s.index)->type(), s.dtype, s.shape);
    if (!why.empty()) return mismatch(who + ": argument " + std::to_string(s.index) + " of " + fnName + " " + why);
    return Status::ok();
  };
  for (const TensorSpec& s : m.inputs) WF_RETURN_IF_ERROR(claim(s, "input"));
  for (const TensorSpec& s : m.weights) WF_RETURN_IF_ERROR(claim(s, "weight"));
  for (size_t i = 0; i < numArgs; ++i)
    if (owner[i].empty())
      return mismatch("argument " + std::to_string(i) + " of " + fnName + " (" + body.argument(i)->type().toString() +
                      ") is neither an input nor a weight");

  // Result types: from the terminator's operands (function_type can be absent in generic text).
  std::vector<Type> results;
  if (const Operation* ret = body.terminator(); ret && ret->code() == OpCode::FuncReturn)
    for (const Value* v : ret->operands()) results.push_back(v->type());
  else
    results = fn.functionType().results;
  std::vector<bool> seen(results.size());
  for (const TensorSpec& s : m.outputs) {
    std::string who = "output '" + s.name + "'";
    if (s.index >= results.size())
      return mismatch(who + " is result " + std::to_string(s.index) + ", but " + fnName + " returns " +
                      std::to_string(results.size()) + " results");
    if (seen[s.index]) return mismatch(who + ": result " + std::to_string(s.index) + " is named twice");
    seen[s.index] = true;
    std::string why = typeMismatch(results[s.index], s.dtype, s.shape);
    if (!why.empty()) return mismatch(who + ": result " + std::to_string(s.index) + " of " + fnName + " " + why);
  }
  for (size_t i = 0; i < results.size(); ++i)
    if (!seen[i]) return mismatch("result " + std::to_string(i) + " of " + fnName + " has no output in the manifest");

  for (const ActivationSpec& a : m.activations) {
    std::string who = "activation '" + a.name + "'";
    auto value = findEntryValue(*entry_, a.value);
    if (!value) return mismatch(who + ": " + value.status().message());
    std::string why = typeMismatch((*value)->type(), a.dtype, a.shape);
    if (!why.empty()) return mismatch(who + ": value " + a.value + " " + why);
  }
  return Status::ok();
}

Status checkTensorAgainstSpec(const Literal& value, ElementType dtype, const std::vector<ManifestDim>& shape,
                              const std::map<std::string, DynamicDimBounds>& dynamicDims, DimBindings& bindings,
                              const std::string& what) {
  if (!value.type().isTensor()) return invalidArgument(what + ": expected a tensor, got " + value.type().toString());
  if (value.elementType() != dtype)
    return invalidArgument(what + ": expected dtype " + std::string(elementTypeName(dtype)) + ", got " +
                           std::string(elementTypeName(value.elementType())) + " (" + value.type().toString() + ")");
  if (value.shape().size() != shape.size())
    return invalidArgument(what + ": expected shape " + shapeToString(shape) + ", got " + value.type().toString() +
                           " (rank " + std::to_string(value.shape().size()) + ")");
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t size = value.shape()[d];
    if (!shape[d].isDynamic()) {
      if (size != shape[d].size)
        return invalidArgument(what + ": expected shape " + shapeToString(shape) + ", got " + value.type().toString());
      continue;
    }
    const std::string& name = shape[d].name;
    auto it = bindings.find(name);
    if (it != bindings.end()) {
      if (it->second != size)
        return invalidArgument(what + ": dimension " + std::to_string(d) + " ('" + name + "') is " +
                               std::to_string(size) + ", but another tensor already made '" + name + "' " +
                               std::to_string(it->second));
      continue;
    }
    if (auto b = dynamicDims.find(name); b != dynamicDims.end()) {
      if (size < b->second.min)
        return invalidArgument(what + ": dimension " + std::to_string(d) + " ('" + name + "') is " +
                               std::to_string(size) + ", below its minimum " + std::to_string(b->second.min));
      if (b->second.max && size > *b->second.max)
        return invalidArgument(what + ": dimension " + std::to_string(d) + " ('" + name + "') is " +
                               std::to_string(size) + ", above its maximum " + std::to_string(*b->second.max));
    }
    bindings[name] = size;
  }
  return Status::ok();
}

Expected<std::vector<Literal>> Package::loadWeights() const {
  std::string file = path(kWeightsFile);
  std::vector<Literal> out;
  if (manifest_.weights.empty()) return out;
  WF_ASSIGN_OR_RETURN(SafetensorsFile st, readSafetensors(file));
  DimBindings bindings;
  for (const TensorSpec& w : manifest_.weights) {
    const Literal* value = st.find(w.name);
    if (!value) return notFound("weight '" + w.name + "' is missing from " + file);
    WF_RETURN_IF_ERROR(checkTensorAgainstSpec(*value, w.dtype, w.shape, manifest_.dynamicDims, bindings,
                                              "weight '" + w.name + "' in " + file));
    out.push_back(*value);
  }
  return out;
}

Expected<std::vector<Literal>> Package::checkInputs(std::span<const NamedLiteral> inputs, DimBindings* bindings) const {
  DimBindings local;
  DimBindings& dims = bindings ? *bindings : local;
  std::vector<const Literal*> byInput(manifest_.inputs.size(), nullptr);
  std::string expected;
  for (const TensorSpec& s : manifest_.inputs) expected += (expected.empty() ? "'" : ", '") + s.name + "'";
  for (const NamedLiteral& given : inputs) {
    size_t i = 0;
    while (i < manifest_.inputs.size() && manifest_.inputs[i].name != given.name) ++i;
    if (i == manifest_.inputs.size())
      return invalidArgument("input '" + given.name + "' is not an input of " + dir_ + "; its inputs are " +
                             (expected.empty() ? "none" : expected));
    if (byInput[i]) return invalidArgument("input '" + given.name + "' is given twice");
    byInput[i] = &given.value;
  }
  std::string missing;
  for (size_t i = 0; i < byInput.size(); ++i)
    if (!byInput[i])
      missing += (missing.empty() ? "'" : ", '") + manifest_.inputs[i].name + "' " + std::string(elementTypeName(manifest_.inputs[i].dtype)) +
                 shapeToString(manifest_.inputs[i].shape);
  if (!missing.empty()) return invalidArgument(dir_ + " is missing inputs: " + missing);

  std::vector<size_t> order(manifest_.inputs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return manifest_.inputs[a].index < manifest_.inputs[b].index; });
  std::vector<Literal> out;
  for (size_t i = 0; i < manifest_.inputs.size(); ++i) {
    const TensorSpec& s = manifest_.inputs[i];
    WF_RETURN_IF_ERROR(checkTensorAgainstSpec(*byInput[i], s.dtype, s.shape, manifest_.dynamicDims, dims,
                                              "input '" + s.name + "'"));
  }
  for (size_t i : order) out.push_back(*byInput[i]);
  return out;
}

Status Package::checkOutputs(std::span<const Literal> outputs, DimBindings& bindings) const {
  if (outputs.size() != manifest_.outputs.size())
    return internalError("@" + manifest_.entry + " returned " + std::to_string(outputs.size()) +
                         " results, the manifest lists " + std::to_string(manifest_.outputs.size()) + " outputs");
  for (const TensorSpec& s : manifest_.outputs) {
    Status st = checkTensorAgainstSpec(outputs[s.index], s.dtype, s.shape, manifest_.dynamicDims, bindings,
                                       "output '" + s.name + "'");
    if (!st.isOk()) return internalError(st.message());
  }
  return Status::ok();
}

Expected<std::vector<NamedLiteral>> Package::loadGoldenInputs() const {
  if (manifest_.goldenInputs.empty()) return notFound(dir_ + ": the manifest lists no golden inputs");
  std::string file = path(manifest_.goldenInputs);
  WF_ASSIGN_OR_RETURN(SafetensorsFile st, readSafetensors(file));
  std::vector<NamedLiteral> out;
  for (const TensorSpec& s : manifest_.inputs) {
    const Literal* v = st.find(s.name);
    if (!v) return notFound("golden input '" + s.name + "' is missing from " + file);
    out.push_back({s.name, *v});
  }
  return out;
}

Expected<SafetensorsFile> Package::loadGoldenOutputs() const {
  if (manifest_.goldenOutputs.empty()) return notFound(dir_ + ": the manifest lists no golden outputs");
  return readSafetensors(path(manifest_.goldenOutputs));
}

Expected<SafetensorsFile> Package::loadGoldenActivations() const {
  if (manifest_.goldenActivations.empty()) return notFound(dir_ + ": the manifest lists no golden activations");
  return readSafetensors(path(manifest_.goldenActivations));
}

Expected<SafetensorsFile> Package::loadReference64Outputs() const {
  if (manifest_.goldenOutputs64.empty()) return SafetensorsFile{};
  return readSafetensors(path(manifest_.goldenOutputs64));
}

Expected<SafetensorsFile> Package::loadReference64Activations() const {
  if (manifest_.goldenActivations64.empty()) return SafetensorsFile{};
  return readSafetensors(path(manifest_.goldenActivations64));
}

std::vector<int64_t> smallestShape(const Manifest& manifest, const TensorSpec& spec) {
  std::vector<int64_t> shape;
  for (const ManifestDim& d : spec.shape) {
    if (!d.isDynamic()) {
      shape.push_back(d.size);
      continue;
    }
    auto b = manifest.dynamicDims.find(d.name);
    shape.push_back(std::max<int64_t>(1, b == manifest.dynamicDims.end() ? 1 : b->second.min));
  }
  return shape;
}

}  // namespace wf
