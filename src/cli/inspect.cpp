// `warpforge inspect`: functions with their signatures, and how often each op occurs; for a model
// package, first what its manifest declares.
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "backends/cpu/plan.h"
#include "cli/cli.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "runtime/file_io.h"
#include "runtime/package.h"
#include "stablehlo/parser.h"

#ifdef WF_HAVE_CUDA
#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/plan_rewrites.h"
#endif

namespace wf::cli {
namespace {

using json = nlohmann::json;

// Counts the ops nested in `op`'s regions (not `op` itself), by name.
int64_t countNested(const Operation& op, std::map<std::string, int64_t>& counts) {
  int64_t total = 0;
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        ++counts[inner->name()];
        total += 1 + countNested(*inner, counts);
      }
  return total;
}

json dimsJson(const std::vector<ManifestDim>& shape) {
  json dims = json::array();
  for (const ManifestDim& d : shape) dims.push_back(d.isDynamic() ? json(d.name) : json(d.size));
  return dims;
}

json tensorsJson(const std::vector<TensorSpec>& specs, const char* indexKey) {
  json list = json::array();
  for (const TensorSpec& s : specs) {
    json t = {{"name", s.name}, {indexKey, s.index}, {"dtype", elementTypeName(s.dtype)}, {"shape", dimsJson(s.shape)}};
    if (!s.kind.empty()) t["kind"] = s.kind;
    list.push_back(std::move(t));
  }
  return list;
}

// What the manifest of a (checked) package declares; weights are counted from the manifest, not read.
json packageSummary(const Package& pkg) {
  const Manifest& m = pkg.manifest();
  int64_t elements = 0, bytes = 0;
  std::map<std::string, int64_t> kinds;
  for (const TensorSpec& w : m.weights) {
    int64_t n = 1;
    for (const ManifestDim& d : w.shape) n *= d.isDynamic() ? 0 : d.size;
    elements += n;
    bytes += n * storageBytes(w.dtype);
    ++kinds[w.kind];
  }
  json dyn = json::object();
  for (const auto& [name, b] : m.dynamicDims) dyn[name] = {{"min", b.min}, {"max", b.max ? json(*b.max) : json(nullptr)}};
  json activations = json::array();
  for (const ActivationSpec& a : m.activations)
    activations.push_back({{"name", a.name}, {"value", a.value}, {"dtype", elementTypeName(a.dtype)}, {"shape", dimsJson(a.shape)}});
  return {{"dir", pkg.dir()},
          {"name", m.name},
          {"producer", m.producer},
          {"entry", m.entry},
          {"dtype", m.dtype},
          {"tolerances", m.tolerances.toString()},
          {"inputs", tensorsJson(m.inputs, "argument")},
          {"outputs", tensorsJson(m.outputs, "result")},
          {"weights", {{"count", m.weights.size()}, {"elements", elements}, {"bytes", bytes}, {"kinds", kinds}}},
          {"dynamic_dims", dyn},
          {"activations", activations},
          {"golden", {{"inputs", m.goldenInputs}, {"outputs", m.goldenOutputs}, {"activations", m.goldenActivations}}}};
}

std::string describeTensor(const json& t) {
  std::string s = t["name"].get<std::string>() + " " + t["dtype"].get<std::string>() + "[";
  bool first = true;
  for (const json& d : t["shape"]) {
    s += (first ? "" : ", ") + (d.is_string() ? d.get<std::string>() : std::to_string(d.get<int64_t>()));
    first = false;
  }
  return s + "]";
}

void printPackageSummary(const json& p) {
  std::cout << p["dir"].get<std::string>() << ": model package";
  if (!p["name"].get<std::string>().empty()) std::cout << " '" << p["name"].get<std::string>() << "'";
  if (!p["producer"].get<std::string>().empty()) std::cout << " from " << p["producer"].get<std::string>();
  std::cout << ", entry @" << p["entry"].get<std::string>() << ", dtype " << p["dtype"].get<std::string>()
            << ", tolerances " << p["tolerances"].get<std::string>() << "\n";
  for (const char* key : {"inputs", "outputs"}) {
    std::cout << "  " << key << ":";
    bool firstTensor = true;
    for (const json& t : p[key]) {
      std::cout << (firstTensor ? " " : ", ") << describeTensor(t);
      firstTensor = false;
    }
    std::cout << (firstTensor ? " none\n" : "\n");
  }
  const json& w = p["weights"];
  std::cout << "  weights: " << w["count"].get<size_t>() << " tensors, " << w["elements"].get<int64_t>() << " elements, "
            << w["bytes"].get<int64_t>() << " bytes (";
  bool first = true;
  for (const auto& [kind, n] : w["kinds"].items()) {
    std::cout << (first ? "" : ", ") << n.get<int64_t>() << " " << kind;
    first = false;
  }
  std::cout << ")\n";
  if (!p["dynamic_dims"].empty()) {
    std::cout << "  dynamic dims:";
    for (const auto& [name, b] : p["dynamic_dims"].items())
      std::cout << " " << name << " [" << b["min"].get<int64_t>() << ", "
                << (b["max"].is_null() ? std::string("unbounded") : std::to_string(b["max"].get<int64_t>())) << "]";
    std::cout << "\n";
  }
  std::cout << "  activations: " << p["activations"].size();
  for (const json& a : p["activations"]) std::cout << "\n    " << describeTensor(a) << " = " << a["value"].get<std::string>();
  std::cout << "\n  golden:";
  bool any = false;
  for (const auto& [key, path] : p["golden"].items())
    if (!path.get<std::string>().empty()) {
      std::cout << " " << key;
      any = true;
    }
  std::cout << (any ? "" : " none") << "\n";
}

#ifdef WF_HAVE_CUDA
// The fusion plan of a function's body (backends/cuda/codegen/fusion.h): its kernels and the ops that
// keep their own (matrix products, convolutions, gathers, ...).
// `boundArguments`: the weights a Session binds (a package's), whose per-channel work the plan
// computes once (FusionOptions::constantArguments). `mergeProducts`: CompileOptions::mergeProducts.
json fusionPlanJson(const Operation& function, bool withSource, const std::vector<size_t>& boundArguments,
                    bool mergeProducts) {
  // The backend rewrites the entry before it plans (backends/cuda/plan_rewrites.h: batch norms
  // written out, repeated ops merged, bf16/f16 attention outlined): so does the plan shown, on a
  // copy of the function in a module of its own.
  Module scratch;
  cuda::PlanRewrites rewrites;
  const Operation* rewritten = nullptr;
  if (cuda::wantsPlanRewrites(function, /*fuse=*/true)) {
    std::unordered_map<const Value*, Value*> mapping;
    Operation* copy = scratch.append(cloneOperation(function, mapping));
    if (auto r = cuda::rewriteForPlanning(scratch, FuncOp(copy).symName(), /*fuse=*/true, mergeProducts)) {
      rewrites = *r;
      rewritten = copy;
    }
  }
  const Operation& fn = rewritten ? *rewritten : function;
  const Block& body = FuncOp(&fn).body();
  cuda::FusionOptions fusionOptions;
  for (size_t a : boundArguments)
    if (a < body.numArguments()) fusionOptions.constantArguments.insert(body.argument(a));
  cuda::FusionPlan plan = cuda::planFusion(body, {}, fusionOptions);
  json kernels = json::array();
  int64_t fusedOps = 0;
  for (const cuda::FusionGroup& g : plan.groups) {
    std::map<std::string, int64_t> ops;
    for (const Operation* op : g.ops) ++ops[op->name()];
    json inputs = json::array();
    for (const Value* v : g.inputs) inputs.push_back(v->type().toString());
    json kernel = {{"root", g.root()->name()},
                   {"location", g.root()->location().toString()},
                   {"kind", g.hasReduce() ? "row" : "loop"},
                   {"ops", ops},
                   {"num_ops", g.ops.size()},
                   {"inputs", inputs},
                   {"result", g.root()->result(0)->type().toString()}};
    if (!g.sideOutputs.empty()) {
      json sides = json::array();
      for (const Operation* side : g.sideOutputs) sides.push_back(side->result(0)->type().toString());
      kernel["side_outputs"] = sides;  // stored beside the result (a row group's other values)
    }
    if (withSource) {
      Expected<cuda::FusedKernelSource> source =
          cuda::generateFusedKernel(g, "wf_fused_" + std::to_string(kernels.size()), nullptr);
      kernel["source"] = source ? source->code : "// not generated: " + source.status().toString();
      if (source) kernel["launch"] = {{"blocks", source->blocks}, {"threads", source->threads}};
    }
    kernels.push_back(std::move(kernel));
    fusedOps += static_cast<int64_t>(g.ops.size());
  }
  std::map<std::string, int64_t> own;
  for (const auto& op : body.operations())
    if (!plan.absorbed.count(op.get()) && !plan.groupOfRoot.count(op.get()) && op->code() != OpCode::FuncReturn &&
        op->code() != OpCode::Return)
      ++own[op->name()];
  // Composites by name, and whether the backend has a kernel of their own for them (fused
  // attention: one step where its kernel takes the types and shapes, else the decomposition).
  std::map<std::string, int64_t> composites;
  for (const auto& op : body.operations())
    if (op->code() == OpCode::Composite) ++composites[std::string(cuda::compositeName(*op))];
  json compositeList = json::array();
  for (const auto& [name, n] : composites)
    compositeList.push_back(
        {{"name", name}, {"count", n}, {"kernel", cuda::CudaKernelRegistry::instance().findComposite(name) != nullptr}});
  return {{"function", std::string(FuncOp(&fn).symName())},
          {"kernels", kernels},
          {"fused_ops", fusedOps},
          {"ops_with_their_own_step", own},
          {"batch_norms_expanded", rewrites.batchNorms},
          {"attention_outlined", rewrites.attention},
          {"uniform_selects_folded", rewrites.uniformSelects},
          {"causal_masks", rewrites.causalMasks},
          {"attention_layouts", rewrites.attentionLayouts},
          {"round_trips_folded", rewrites.roundTrips},
          {"pools_narrowed", rewrites.narrowedPools},
          {"space_to_depth_convolutions", rewrites.spaceToDepth},
          {"products_merged", rewrites.mergedProducts},
          {"bias_adds_merged", rewrites.mergedBiasAdds},
          {"attention_head_slices", rewrites.attentionHeadSlices},
          {"repeated_ops_merged", rewrites.merged},
          {"composites", compositeList}};
}

void printFusionPlan(const json& plan) {
  std::cout << "fusion plan of @" << plan["function"].get<std::string>() << ": " << plan["kernels"].size()
            << " generated kernels for " << plan["fused_ops"].get<int64_t>() << " ops";
  int64_t writingSides = 0;
  for (const json& k : plan["kernels"]) writingSides += k.contains("side_outputs") ? 1 : 0;
  if (writingSides) std::cout << " (" << writingSides << " of them also writing side outputs)";
  if (const int64_t n = plan["batch_norms_expanded"].get<int64_t>())
    std::cout << " (" << n << " batch-norm ops written out first, as the backend does)";
  if (const int64_t n = plan["repeated_ops_merged"].get<int64_t>()) std::cout << " (" << n << " repeated ops merged)";
  if (const int64_t n = plan["uniform_selects_folded"].get<int64_t>())
    std::cout << " (" << n << " selects on a uniform compile-time predicate folded)";
  if (const int64_t n = plan["attention_outlined"].get<int64_t>())
    std::cout << " (" << n << " attention patterns outlined into fused attention)";
  if (const int64_t n = plan["causal_masks"].get<int64_t>())
    std::cout << " (" << n << " of them with the causal mask)";
  if (const int64_t n = plan["attention_layouts"].get<int64_t>())
    std::cout << " (" << n << " fused attentions reading or writing [B, S, H, D] in place of head transposes)";
  if (const int64_t n = plan["round_trips_folded"].get<int64_t>())
    std::cout << " (" << n << " values widened and narrowed back read as they were)";
  if (const int64_t n = plan["pools_narrowed"].get<int64_t>())
    std::cout << " (" << n << " max/min pools narrowed to the type their reader converts to)";
  if (const int64_t n = plan["products_merged"].get<int64_t>())
    std::cout << " (" << n << " products by weights merged into a sibling product of the same activation)";
  if (const int64_t n = plan["bias_adds_merged"].get<int64_t>())
    std::cout << " (" << n << " bias adds of a merged product's slices merged into one)";
  if (const int64_t n = plan["attention_head_slices"].get<int64_t>())
    std::cout << " (" << n << " fused attentions reading q, k and v as heads of one projection)";
  if (const int64_t n = plan["space_to_depth_convolutions"].get<int64_t>())
    std::cout << " (" << n << " strided convolutions over few channels read 2x2 pixel blocks as channels)";
  std::cout << "\n";
  for (const json& k : plan["kernels"]) {
    std::cout << "  " << k["kind"].get<std::string>() << " " << k["root"].get<std::string>() << " at "
              << k["location"].get<std::string>() << ": " << k["num_ops"].get<size_t>() << " ops (";
    bool first = true;
    for (const auto& [name, n] : k["ops"].items()) {
      std::cout << (first ? "" : ", ") << n.get<int64_t>() << " " << name;
      first = false;
    }
    std::cout << ") -> " << k["result"].get<std::string>();
    if (k.contains("side_outputs"))
      for (const auto& side : k["side_outputs"]) std::cout << " + " << side.get<std::string>();
    std::cout << "\n";
    if (k.contains("source")) {
      if (k.contains("launch"))
        std::cout << "    // " << k["launch"]["blocks"].get<int64_t>() << " blocks of " << k["launch"]["threads"].get<int>()
                  << " threads\n";
      std::istringstream lines(k["source"].get<std::string>());
      for (std::string line; std::getline(lines, line);) std::cout << "    " << line << "\n";
    }
  }
  std::cout << "  ops with a step of their own (constants and reshapes cost none):";
  for (const auto& [name, n] : plan["ops_with_their_own_step"].items()) std::cout << " " << name << " x" << n.get<int64_t>();
  std::cout << "\n";
  for (const json& c : plan["composites"])
    std::cout << "  composite " << c["name"].get<std::string>() << " x" << c["count"].get<int64_t>() << ": "
              << (c["kernel"].get<bool>() ? "a kernel of its own (one step) where it takes the types and shapes, else"
                                          : "runs as")
              << " its decomposition\n";
}
#endif

}  // namespace

int runInspect(const InspectOptions& inspectOptions) {
  InspectOptions options = inspectOptions;
  options.fusion = options.fusion || options.kernelSource;
#ifndef WF_HAVE_CUDA
  if (options.fusion) {
    printError("--fusion: the fusion planner is part of the CUDA backend, which this build does not have");
    return kExitUsage;
  }
#endif
  json package;
  std::string cpuPlan;
  if (options.cpuPlan && !isPackageDirectory(options.file)) {
    printError("--cpu-plan: " + options.file + " is not a model package directory");
    return kExitUsage;
  }
  std::string entryName;             // a package's entry function
  std::vector<size_t> boundWeights;  // and the arguments a Session binds
  if (isPackageDirectory(options.file)) {
    auto pkg = Package::open(options.file);
    if (!pkg) return reportStatus(pkg.status());
    package = packageSummary(*pkg);
    entryName = std::string(FuncOp(&pkg->entry()).symName());
    for (const TensorSpec& w : pkg->manifest().weights) boundWeights.push_back(w.index);
    if (options.cpuPlan) {
      CompileOptions compile = options.compile;  // as a Session compiles it: the weights are bound
      for (const TensorSpec& w : pkg->manifest().weights) compile.boundArguments.push_back(w.index);
      auto plan = cpu::planCpu(pkg->module(), pkg->entry(), compile, {});
      if (!plan) return reportStatus(plan.status());
      const cpu::CpuPlanStats& st = plan->stats;
      cpuPlan = "cpu plan of @" + std::string(FuncOp(&pkg->entry()).symName()) + ": " + std::to_string(st.hoistedSteps) +
                " hoisted steps, " + std::to_string(st.steps) + " steps per run (" + std::to_string(st.fusedGroups) +
                " fused elementwise loops of " + std::to_string(st.fusedOps) + " ops, " + std::to_string(st.fusedConvs) +
                " fused convolutions of " + std::to_string(st.fusedConvOps) + " ops, " +
                std::to_string(st.winogradConvs) + " of them Winograd, " + std::to_string(st.blockedValues) +
                " values passed between them in blocked layouts, " +
                std::to_string(st.fusedMatmuls) + " fused matrix products)\n" +
                plan->describe();
      if (!options.json) std::cout << cpuPlan;
    }
    options.file = pkg->path(Package::kModelFile);
    if (!options.json) printPackageSummary(package);
  }
  auto text = readFileBytes(options.file);
  if (!text) return reportStatus(text.status());

  json functions = json::array();
  json fusion = json::array();
  std::map<std::string, int64_t> counts;
  std::vector<std::string> verifyMessages;
  std::vector<SourceChunk> chunks = splitInputFile(*text);
  for (const SourceChunk& chunk : chunks) {
    ParseOptions parseOptions;
    parseOptions.fileName = options.file;
    parseOptions.firstLine = chunk.firstLine;
    auto module = parseModule(chunk.text, parseOptions);
    if (!module) return reportStatus(module.status());
    if (Status s = verifyModule(*module); !s.isOk()) verifyMessages.push_back(s.message());
    for (const auto& op : module->operations()) {
      if (op->code() != OpCode::FuncFunc) {
        ++counts[op->name()];
        countNested(*op, counts);
        continue;
      }
      FuncOp fn(op.get());
      std::map<std::string, int64_t> own;
      int64_t n = countNested(*op, own);
      for (const auto& [name, c] : own) counts[name] += c;
#ifdef WF_HAVE_CUDA
      if (options.fusion) {
        bool isStatic = true;
        for (const Type& t : fn.functionType().inputs) isStatic = isStatic && t.isTensor() && t.hasStaticShape();
        if (isStatic && !fn.body().operations().empty())
          fusion.push_back(fusionPlanJson(*op, options.kernelSource,
                                          fn.symName() == entryName ? boundWeights : std::vector<size_t>{},
                                          options.compile.mergeProducts));
      }
#endif
      functions.push_back({{"name", std::string(fn.symName())},
                           {"visibility", fn.isPublic() ? "public" : "private"},
                           {"signature", fn.functionType().toString()},
                           {"line", op->location().line},
                           {"ops", n}});
    }
  }

  int64_t total = 0;
  for (const auto& [name, c] : counts) total += c;
  if (options.json) {
    json out{{"file", options.file},
             {"functions", functions},
             {"op_counts", counts},
             {"total_ops", total},
             {"verify", verifyMessages.empty() ? json("ok") : json(verifyMessages)}};
    if (!package.is_null()) out["package"] = package;
    if (options.fusion) out["fusion"] = fusion;
    if (options.cpuPlan) out["cpu_plan"] = cpuPlan;
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << options.file << ": " << functions.size() << " function" << (functions.size() == 1 ? "" : "s");
  if (chunks.size() > 1) std::cout << " in " << chunks.size() << " chunks";
  std::cout << "\n";
  for (const json& f : functions)
    std::cout << "  @" << f["name"].get<std::string>() << " (" << f["visibility"].get<std::string>() << ", line "
              << f["line"].get<int>() << ", " << f["ops"].get<int64_t>() << " ops): " << f["signature"].get<std::string>()
              << "\n";
  std::cout << "ops:\n";
  size_t width = 0;
  for (const auto& [name, c] : counts) width = std::max(width, name.size());
  for (const auto& [name, c] : counts)
    std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << name << "  " << c << "\n";
  std::cout << "total: " << total << " ops\n";
  if (verifyMessages.empty()) {
    std::cout << "verifier: ok\n";
  } else {
    for (const std::string& m : verifyMessages) std::cout << "verifier: " << m << "\n";
  }
#ifdef WF_HAVE_CUDA
  for (const json& plan : fusion) printFusionPlan(plan);
  if (options.fusion && fusion.empty()) std::cout << "fusion plan: no function with static shapes\n";
#endif
  return kExitOk;
}

}  // namespace wf::cli
