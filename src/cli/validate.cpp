// `warpforge validate PKG`: runs a model package on its golden inputs and compares the outputs
// (and the recorded activations) with the golden tensors under the manifest's tolerances.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "runtime/compare.h"
#include "runtime/package.h"
#include "runtime/session.h"

namespace wf::cli {
namespace {

using json = nlohmann::json;

struct Row {
  std::string kind;  // "output" | "activation"
  std::string name;
  std::string value;  // activations: the SSA value
  std::string type;   // tensor<...> of the computed value
  std::string goldenType;
  bool hasGolden = true;
  Comparison cmp;
};

json number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
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
  if (r.cmp.worstIndex >= 0)
    j["worst"] = {{"index", r.cmp.worstMultiIndex}, {"actual", number(r.cmp.worstActual)},
                  {"expected", number(r.cmp.worstExpected)}};
  return j;
}

std::string padRight(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }

// Compares the activations of `result` with the golden ones, in manifest order.
std::vector<Row> compareActivations(const Package& pkg, const SessionResult& result, const SafetensorsFile& golden,
                                    const SafetensorsFile& reference64) {
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
    outputsPass = outputsPass && row.cmp.passed;
    outputs.push_back(std::move(row));
  }

  std::vector<Row> activations;
  if (capture) {
    activations = compareActivations((*session)->package(), *result, *goldenActivations, *reference64Activations);
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
    activations = compareActivations((*tapped)->package(), *tappedResult, *goldenActivations, *reference64Activations);
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

  if (options.json) {
    json j;
    j["package"] = pkgDir;
    j["name"] = manifest.name;
    j["device"] = deviceName;
    j["tolerances"] = manifest.tolerances.kind == Tolerances::Kind::kRelL2
                          ? json{{"rel_l2", manifest.tolerances.relL2}}
                          : json{{"rtol", manifest.tolerances.rtol}, {"atol", manifest.tolerances.atol}};
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
            << deviceName << ", tolerances " << manifest.tolerances.toString() << "\n";
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
    std::cout << verdict << "\n";
  };
  for (const Row& r : outputs) printRow(r);
  if (options.activations)
    for (const Row& r : activations) printRow(r);

  if (pass) {
    std::cout << "PASS: " << outputs.size() << " output(s)";
    if (options.activations && !activations.empty()) std::cout << " and " << activations.size() << " activation(s)";
    std::cout << " within " << manifest.tolerances.toString() << "\n";
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
