// `warpforge validate PKG`: runs a model package on its golden inputs and compares the outputs
// (and the recorded activations) with the golden tensors under the manifest's tolerances.
//
// Low-precision packages (bf16/f16, judged by relative L2 error against the fp32 model) whose
// manifest records PyTorch's own error in that precision (`torch_low_precision_error`, written
// by the exporter) are judged as bench/gpu_models.py judges its bf16 rows: a tensor passes when
// its rel_l2 is within the manifest's limit, or, where PyTorch's own rel_l2 already exceeds that
// limit (random weights can amplify rounding through the layers), within kTorchErrorFactor times
// PyTorch's own. A NaN never passes. Packages without the field are judged by the limit alone.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "runtime/compare.h"
#include "runtime/file_io.h"
#include "runtime/package.h"
#include "runtime/session.h"

namespace wf::cli {
namespace {

using json = nlohmann::json;

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

json number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// WarpForge passes within this factor of PyTorch's own low-precision error (bench/gpu_models.py's
// LOW_EAGER_FACTOR) where that error exceeds the manifest's rel_l2 limit.
constexpr double kTorchErrorFactor = 1.25;

// PyTorch's own error on one tensor in the package's low precision, from the manifest.
struct TorchError {
  std::optional<double> relL2, maxAbsErr;
};

// `torch_low_precision_error` of the manifest: per output and per activation; empty when absent.
struct TorchErrors {
  std::string dtype;
  std::map<std::string, TorchError> outputs, activations;
  bool present = false;
};

TorchErrors readTorchErrors(const std::string& manifestPath) {
  TorchErrors out;
  auto text = readFileBytes(manifestPath);
  if (!text) return out;
  json m = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("torch_low_precision_error")) return out;
  const json& e = m.at("torch_low_precision_error");
  if (!e.is_object()) return out;
  out.present = true;
  if (e.contains("dtype") && e.at("dtype").is_string()) out.dtype = e.at("dtype").get<std::string>();
  auto readMap = [](const json& j, std::map<std::string, TorchError>& into) {
    if (!j.is_object()) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
      TorchError t;
      if (it.value().is_object()) {
        if (it.value().contains("rel_l2") && it.value().at("rel_l2").is_number())
          t.relL2 = it.value().at("rel_l2").get<double>();
        if (it.value().contains("max_abs_err") && it.value().at("max_abs_err").is_number())
          t.maxAbsErr = it.value().at("max_abs_err").get<double>();
      }
      into[it.key()] = t;
    }
  };
  if (e.contains("outputs")) readMap(e.at("outputs"), out.outputs);
  if (e.contains("activations")) readMap(e.at("activations"), out.activations);
  return out;
}

struct Row {
  std::string kind;  // "output" | "activation"
  std::string name;
  std::string value;  // activations: the SSA value
  std::string type;   // tensor<...> of the computed value
  std::string goldenType;
  bool hasGolden = true;
  Comparison cmp;
  std::optional<TorchError> torchError;  // low-precision packages that record it
  bool byTorchError = false;             // passed within kTorchErrorFactor x PyTorch's own error
};

// Applies the low-precision rule (top of file) to a compared row of a rel_l2 package.
void judgeLowPrecision(Row& r, const Tolerances& tol, const std::map<std::string, TorchError>& errors) {
  auto it = errors.find(r.name);
  if (tol.kind != Tolerances::Kind::kRelL2 || it == errors.end() || !r.hasGolden) return;
  r.torchError = it->second;
  const Comparison& c = r.cmp;
  if (c.passed || !c.problem.empty() || c.nanCount > 0 || !it->second.relL2) return;
  double torchRel = *it->second.relL2;
  if (torchRel > tol.relL2 && std::isfinite(c.relL2) && c.relL2 <= kTorchErrorFactor * torchRel) {
    r.cmp.passed = true;
    r.byTorchError = true;
  }
}

json torchErrorJson(const TorchError& e) {
  return {{"rel_l2", e.relL2 ? number(*e.relL2) : json(nullptr)},
          {"max_abs_err", e.maxAbsErr ? number(*e.maxAbsErr) : json(nullptr)}};
}


json rowJson(const Row& r) {
  json j = {{"name", r.name}, {"type", r.type}};
  if (!r.value.empty()) j["value"] = r.value;
  if (!r.hasGolden) {
    j["pass"] = nullptr;
    j["problem"] = "no golden tensor";
    return j;
  }
  j["golden_type"] = r.goldenType;
  j["pass"] = r.cmp.passed;
  if (!r.cmp.problem.empty()) {
    j["problem"] = r.cmp.problem;
    return j;
  }
  j["elements"] = r.cmp.numElements;
  j["max_abs_err"] = number(r.cmp.maxAbsErr);
  j["max_rel_err"] = number(r.cmp.maxRelErr);
  j["rel_l2"] = number(r.cmp.relL2);
  j["mismatches"] = r.cmp.mismatches;
  j["nan_count"] = r.cmp.nanCount;
  j["arbitrated_by_float64"] = r.cmp.arbitrated;
  if (r.torchError) {
    j["torch_low_precision_error"] = torchErrorJson(*r.torchError);
    j["rule"] = r.byTorchError ? "within_torch_error" : "rel_l2_limit";
  }
  if (r.cmp.worstIndex >= 0)
    j["worst"] = {{"index", r.cmp.worstMultiIndex}, {"actual", number(r.cmp.worstActual)},
                  {"expected", number(r.cmp.worstExpected)}};
  return j;
}

std::string padRight(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }

// Compares the activations of `result` with the golden ones, in manifest order.
std::vector<Row> compareActivations(const Package& pkg, const SessionResult& result, const SafetensorsFile& golden,
                                    const SafetensorsFile& reference64, const TorchErrors& torchErrors) {
  std::vector<Row> rows;
  const Manifest& m = pkg.manifest();
  for (size_t i = 0; i < result.activations.size(); ++i) {
    Row row;
    row.kind = "activation";
    row.name = result.activations[i].name;
    row.value = m.activations[i].value;
    row.type = result.activations[i].value.type().toString();
    const Literal* expected = golden.find(row.name);
    if (!expected) {
      row.hasGolden = false;
    } else {
      row.goldenType = expected->type().toString();
      row.cmp = compareTensors(result.activations[i].value, *expected, m.tolerances, reference64.find(row.name));
      judgeLowPrecision(row, m.tolerances, torchErrors.activations);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

int runValidate(const ValidateOptions& options) {
  auto device = resolveDevice(options.device);
  if (!device) {
    printError(device.status().message());
    return kExitUsage;
  }
  auto pkg = Package::open(options.package);
  if (!pkg) return reportStatus(pkg.status());
  const Manifest manifest = pkg->manifest();
  const TorchErrors torchErrors = readTorchErrors(pkg->path(Package::kManifestFile));
  if (manifest.goldenInputs.empty() || manifest.goldenOutputs.empty()) {
    printError(options.package + ": the manifest lists no golden inputs and outputs to validate against");
    return kExitUsage;
  }
  auto inputs = pkg->loadGoldenInputs();
  if (!inputs) return reportStatus(inputs.status());
  auto goldenOutputs = pkg->loadGoldenOutputs();
  if (!goldenOutputs) return reportStatus(goldenOutputs.status());
  for (const TensorSpec& o : manifest.outputs)
    if (!goldenOutputs->find(o.name)) {
      printError("golden output '" + o.name + "' is missing from " + pkg->path(manifest.goldenOutputs));
      return kExitUsage;
    }
  auto reference64Outputs = pkg->loadReference64Outputs();
  if (!reference64Outputs) return reportStatus(reference64Outputs.status());
  auto reference64Activations = pkg->loadReference64Activations();
  if (!reference64Activations) return reportStatus(reference64Activations.status());
  bool haveActivations = !manifest.activations.empty() && !manifest.goldenActivations.empty();
  std::optional<SafetensorsFile> goldenActivations;
  if (haveActivations) {
    auto g = pkg->loadGoldenActivations();
    if (!g) return reportStatus(g.status());
    goldenActivations = std::move(*g);
  } else if (options.activations) {
    std::cerr << "warpforge: note: " << options.package
              << " records no activations; comparing the outputs only\n";
  }
  if (auto checked = pkg->checkInputs(*inputs); !checked)
    return reportStatus(checked.status().withContext("golden inputs " + pkg->path(manifest.goldenInputs)));

  // Activations are captured on the first run when asked for; otherwise only after a mismatch.
  bool capture = options.activations && haveActivations;
  SessionOptions sessionOptions;
  sessionOptions.device = *device;
  sessionOptions.compile = options.compile;
  sessionOptions.captureActivations = capture;
  std::string pkgDir = pkg->dir();
  auto session = Session::create(std::move(*pkg), sessionOptions);
  if (!session) return reportStatus(session.status());
  std::string deviceName = (*session)->deviceName();
  auto result = (*session)->run(*inputs);
  if (!result) {
    printError(result.status().message());
    return kExitFailure;
  }

  printHostFallback(result->report);
  std::vector<std::string> hostFallbackOps = result->report.hostFallbackOps;

  std::vector<Row> outputs;
  bool outputsPass = true;
  for (const NamedLiteral& o : result->outputs) {
    Row row;
    row.kind = "output";
    row.name = o.name;
    row.type = o.value.type().toString();
    const Literal* expected = goldenOutputs->find(o.name);
    row.goldenType = expected->type().toString();
    row.cmp = compareTensors(o.value, *expected, manifest.tolerances, reference64Outputs->find(o.name));
    judgeLowPrecision(row, manifest.tolerances, torchErrors.outputs);
    outputsPass = outputsPass && row.cmp.passed;
    outputs.push_back(std::move(row));
  }

  std::vector<Row> activations;
  if (capture) {
    activations = compareActivations((*session)->package(), *result, *goldenActivations, *reference64Activations,
                                     torchErrors);
  } else if (!outputsPass && haveActivations) {
    // Find the first diverging layer: run again, capturing the activations.
    session->reset();
    sessionOptions.captureActivations = true;
    auto tapped = Session::open(pkgDir, sessionOptions);
    if (!tapped) return reportStatus(tapped.status());
    auto tappedResult = (*tapped)->run(*inputs);
    if (!tappedResult) {
      printError(tappedResult.status().message());
      return kExitFailure;
    }
    activations = compareActivations((*tapped)->package(), *tappedResult, *goldenActivations, *reference64Activations,
                                     torchErrors);
  }

  const Row* firstDiverging = nullptr;
  for (const Row& r : activations)
    if (r.hasGolden && !r.cmp.passed) {
      firstDiverging = &r;
      break;
    }
  const Row* firstFailingOutput = nullptr;
  for (const Row& r : outputs)
    if (!r.cmp.passed) {
      firstFailingOutput = &r;
      break;
    }
  bool pass = outputsPass && (!options.activations || !firstDiverging);

  const bool lowRule = torchErrors.present && manifest.tolerances.kind == Tolerances::Kind::kRelL2;
  const std::string lowDtype = torchErrors.dtype.empty() ? manifest.dtype : torchErrors.dtype;
  if (options.json) {
    json j;
    j["package"] = pkgDir;
    j["name"] = manifest.name;
    j["device"] = deviceName;
    j["tolerances"] = manifest.tolerances.kind == Tolerances::Kind::kRelL2
                          ? json{{"rel_l2", manifest.tolerances.relL2}}
                          : json{{"rtol", manifest.tolerances.rtol}, {"atol", manifest.tolerances.atol}};
    if (lowRule)
      j["low_precision_rule"] = {{"dtype", lowDtype},
                                 {"rel_l2_limit", manifest.tolerances.relL2},
                                 {"torch_error_factor", kTorchErrorFactor},
                                 {"rule", "pass when rel_l2 <= rel_l2_limit, or, where PyTorch's own rel_l2 in "
                                          "this precision exceeds rel_l2_limit, when rel_l2 <= torch_error_factor "
                                          "x PyTorch's own rel_l2; a NaN never passes"}};
    j["outputs"] = json::array();
    for (const Row& r : outputs) j["outputs"].push_back(rowJson(r));
    j["activations"] = json::array();
    if (options.activations)
      for (const Row& r : activations) j["activations"].push_back(rowJson(r));
    j["host_fallback_ops"] = hostFallbackOps;
    j["pass"] = pass;
    j["first_failing_output"] = firstFailingOutput ? json(firstFailingOutput->name) : json(nullptr);
    j["first_diverging_activation"] = firstDiverging ? json(firstDiverging->name) : json(nullptr);
    std::cout << j.dump(2) << "\n";
    return pass ? kExitOk : kExitFailure;
  }

  std::cout << "validate " << pkgDir << (manifest.name.empty() ? "" : " (" + manifest.name + ")") << " on "
            << deviceName << ", tolerances " << manifest.tolerances.toString();
  if (lowRule)
    std::cout << ", or within " << formatDouble(kTorchErrorFactor) << "x PyTorch's own " << lowDtype
              << " rel_l2 where that exceeds it";
  std::cout << "\n";
  size_t nameWidth = 8, typeWidth = 8;
  for (const auto* rows : {&outputs, &activations})
    for (const Row& r : *rows) {
      nameWidth = std::max(nameWidth, r.name.size());
      typeWidth = std::max(typeWidth, r.type.size());
    }
  auto printRow = [&](const Row& r) {
    std::string verdict = !r.hasGolden ? "no golden tensor" : r.cmp.passed ? "ok" : "FAIL";
    std::cout << "  " << padRight(r.kind, 10) << " " << padRight(r.name, nameWidth) << "  "
              << padRight(r.type, typeWidth) << "  ";
    if (r.hasGolden) std::cout << r.cmp.summary(manifest.tolerances) << "  ";
    if (r.torchError) {
      std::cout << "(PyTorch " << lowDtype << ": rel_l2 "
                << (r.torchError->relL2 ? formatDouble(*r.torchError->relL2) : std::string("n/a")) << " max_abs "
                << (r.torchError->maxAbsErr ? formatDouble(*r.torchError->maxAbsErr) : std::string("n/a")) << ")  ";
      if (r.byTorchError) verdict += " (rel_l2 within " + formatDouble(kTorchErrorFactor) + "x PyTorch's own)";
    }
    std::cout << verdict << "\n";
  };
  for (const Row& r : outputs) printRow(r);
  if (options.activations)
    for (const Row& r : activations) printRow(r);

  if (pass) {
    std::cout << "PASS: " << outputs.size() << " output(s)";
    if (options.activations && !activations.empty()) std::cout << " and " << activations.size() << " activation(s)";
    std::cout << " within " << manifest.tolerances.toString();
    size_t relaxed = 0;
    for (const auto* rows : {&outputs, &activations})
      for (const Row& r : *rows) relaxed += r.byTorchError ? 1 : 0;
    if (relaxed)
      std::cout << " (" << relaxed << " of them only within " << formatDouble(kTorchErrorFactor) << "x PyTorch's own "
                << lowDtype << " error, which exceeds that limit)";
    std::cout << "\n";
    return kExitOk;
  }
  std::cout << "FAIL: ";
  if (firstFailingOutput) std::cout << "output '" << firstFailingOutput->name << "' differs from the golden output";
  else std::cout << "the outputs match";
  if (firstDiverging) {
    std::cout << "; first diverging activation: '" << firstDiverging->name << "' (" << firstDiverging->value << ")";
  } else if (haveActivations) {
    std::cout << "; every recorded activation matches, so the difference arises after '"
              << manifest.activations.back().name << "'";
  }
  std::cout << "\n";
  return kExitFailure;
}

}  // namespace wf::cli
