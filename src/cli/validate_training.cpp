// `warpforge validate PKG --training`: replays a training package's golden run (PyTorch's own
// steps, recorded by warpforge.export_training or a reference script) on the Trainer and checks
// each step under DESIGN.md's training tolerances: the loss of every step, the gradients of
// every step recorded, the weights and optimizer state after step 1 and after the last step. The
// first step and tensor that diverge are named.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <filesystem>
#include <limits>
#include <map>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "runtime/compare.h"
#include "runtime/safetensors.h"
#include "train/trainer.h"

namespace wf::cli {
namespace {

using json = nlohmann::json;

struct Check {
  int64_t step = 0;
  std::string what;  // loss | gradient | weight | optimizer_state
  std::string name;
  Tolerances tol;
  Comparison cmp;
  std::string arbitrated;  // why a comparison outside `tol` passes (noise-level gradients under Adam)
  // A mixed-precision package's verdict (lowPrecisionReplay): the relative L2 error against the
  // float64 reference, PyTorch's own, and the limit; `rule` says how it was judged.
  struct LowPrecision {
    std::string rule;
    double relL2 = 0, torchRelL2 = 0, limit = 0;
  } low;
};

// A mixed-precision (autocast) package passes a check when WarpForge's relative L2 error against
// the float64 reference is within this factor of PyTorch's own error in the same precision
// (validate.cpp's rule for inference packages, with room for two implementations rounding
// independently), or when it passes the float32 tolerance row against the reference outright.
constexpr double kLowPrecisionFactor = 2.0;

json number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

class GoldenRun {
 public:
  // The package's golden run (training.golden), or with `rank` >= 0 that rank's part of its
  // data-parallel golden run (training.golden_ddp.ranks[rank], for a job of `worldSize` ranks).
  static Expected<GoldenRun> open(const train::TrainingPackage& pkg, const std::string& goldenDir, int rank = -1,
                                  int worldSize = 1) {
    GoldenRun g;
    const json& m = pkg.manifest()["training"];
    const std::string mpath = pkg.path("manifest.json");
    if (rank >= 0) {
      if (!m.contains("golden_ddp") || !m["golden_ddp"].is_object())
        return notFound(mpath + ": training.golden_ddp is missing: the package records no data-parallel golden run "
                        "(export_training(..., world_size=N, golden_data=...))");
      const json& ddp = m["golden_ddp"];
      const int64_t recorded = ddp.value("world_size", int64_t{0});
      if (recorded != worldSize || !ddp.contains("ranks") || !ddp["ranks"].is_array() ||
          static_cast<int64_t>(ddp["ranks"].size()) != recorded)
        return invalidArgument(mpath + ": the data-parallel golden run was made by " + std::to_string(recorded) +
                               " rank(s), this job has " + std::to_string(worldSize));
      g.spec_ = ddp["ranks"][static_cast<size_t>(rank)];
      g.spec_["steps"] = ddp.value("steps", int64_t{0});
    } else {
      if (!m.contains("golden") || !m["golden"].is_object())
        return notFound(mpath + ": training.golden is missing: the package records no golden run");
      g.spec_ = m["golden"];
    }
    g.pkg_ = &pkg;
    g.dir_ = goldenDir;
    if (!g.spec_.contains("steps") || !g.spec_["steps"].is_number_integer() || g.spec_["steps"].get<int64_t>() < 1)
      return invalidArgument(pkg.path("manifest.json") + ": training.golden.steps must be a positive integer");
    g.steps_ = g.spec_["steps"].get<int64_t>();
    return g;
  }
  int64_t steps() const { return steps_; }
  // The file of a golden entry ("loss", "grads", ...); "" when the run has none.
  std::string file(const char* key) const {
    if (!spec_.contains(key) || !spec_[key].is_string()) return "";
    std::string rel = spec_[key].get<std::string>();
    if (dir_.empty()) return pkg_->path(rel);
    return (std::filesystem::path(dir_) / std::filesystem::path(rel).filename()).string();
  }
  Expected<SafetensorsFile> read(const char* key) const {
    std::string f = file(key);
    if (f.empty()) return notFound("the golden run has no '" + std::string(key) + "' file");
    return readSafetensors(f);
  }
  // A file the golden run names by its package-relative path (the mixed-precision reference).
  std::string resolve(const std::string& rel) const {
    if (dir_.empty()) return pkg_->path(rel);
    return (std::filesystem::path(dir_) / std::filesystem::path(rel).filename()).string();
  }
  const json& spec() const { return spec_; }

 private:
  json spec_;
  const train::TrainingPackage* pkg_ = nullptr;
  std::string dir_;
  int64_t steps_ = 0;
};

// The golden batch cut into `k` micro-batches of equal size along the first dimension.
Expected<std::vector<std::vector<Literal>>> splitMicroBatches(const std::vector<Literal>& batch, int64_t k,
                                                              const std::string& file) {
  std::vector<std::vector<Literal>> out(static_cast<size_t>(k));
  for (const Literal& t : batch) {
    if (k == 1) {
      out[0].push_back(t);
      continue;
    }
    if (t.shape().empty() || t.shape()[0] % k != 0)
      return invalidArgument(file + ": a batch tensor of shape " + t.type().toString() + " does not split into " +
                             std::to_string(k) + " micro-batches along its first dimension");
    std::vector<int64_t> shape = t.shape();
    shape[0] /= k;
    const size_t bytes = t.sizeBytes() / static_cast<size_t>(k);
    for (int64_t m = 0; m < k; ++m) {
      Literal part = Literal::uninitialized(Type::tensor(shape, t.elementType()));
      std::memcpy(part.data(), t.data() + static_cast<size_t>(m) * bytes, bytes);
      out[static_cast<size_t>(m)].push_back(std::move(part));
    }
  }
  return out;
}

// loss_value_and_grad over the micro-batches of an update: the gradients summed as the train step
// accumulates them (each times 1/K), the loss and buffer updates those of the last micro-batch
// (only the gradients are read from it).
Expected<std::vector<Literal>> accumulatedValueAndGrad(train::Trainer& t, const std::vector<std::vector<Literal>>& microBatches) {
  if (microBatches.size() == 1) return t.valueAndGrad(microBatches[0]);
  const size_t first = 1 + t.package().bufferUpdateArguments().size();
  const double scale = 1.0 / static_cast<double>(microBatches.size());
  std::vector<Literal> sum;
  for (const std::vector<Literal>& mb : microBatches) {
    WF_ASSIGN_OR_RETURN(std::vector<Literal> vg, t.valueAndGrad(mb));
    if (sum.empty()) {
      sum = std::move(vg);
      for (size_t i = first; i < sum.size(); ++i)
        for (int64_t e = 0; e < sum[i].numElements(); ++e) sum[i].setDouble(e, sum[i].getDouble(e) * scale);
      continue;
    }
    for (size_t i = first; i < sum.size(); ++i)
      for (int64_t e = 0; e < sum[i].numElements(); ++e)
        sum[i].setDouble(e, sum[i].getDouble(e) + vg[i].getDouble(e) * scale);
  }
  return sum;
}

// ||have - ref|| / ||ref|| in double, both taken as changes from `base` when given; 0 where both
// are zero, infinity where only ref is, NaN where have is not finite; elements in `skip` left out.
double relL2(const Literal& have, const Literal& ref, const Literal* base, const std::vector<bool>* skip = nullptr) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.numElements(); ++i) {
    if (skip && (*skip)[static_cast<size_t>(i)]) continue;
    const double b = base ? base->getDouble(i) : 0.0;
    const double h = have.getDouble(i) - b, r = ref.getDouble(i) - b;
    num += (h - r) * (h - r);
    den += r * r;
  }
  if (std::isnan(num)) return std::numeric_limits<double>::quiet_NaN();
  if (den == 0) return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

// How far one Adam step can move a weight element whose gradient is rounding noise, in units of
// lr: max(1, (1 - beta1) / sqrt(1 - beta2)) over the groups; 0 for optimizers outside the Adam
// family (their update is proportional to the gradient, so noise moves the weight by noise).
double adamStepFactor(const train::TrainingPackage& pkg) {
  if (pkg.optimizerKind() != "adam" && pkg.optimizerKind() != "adamw") return 0;
  double factor = 1;
  for (const json& g : pkg.manifest()["training"]["optimizer"]["param_groups"])
    if (g.contains("betas") && g["betas"].is_array() && g["betas"].size() == 2) {
      double b1 = g["betas"][0].get<double>(), b2 = g["betas"][1].get<double>();
      if (b2 < 1) factor = std::max(factor, (1 - b1) / std::sqrt(1 - b2));
    }
  return factor;
}

// The replay of a mixed-precision package (an autocast loss, float32 master weights): the loss of
// every step, the gradients of step 1, the weights (as updates from the initial ones) and the
// optimizer state after step 1 and after the last step, each judged against the float64 run that
// export_training recorded, by PyTorch's own error in the same precision (kLowPrecisionFactor).
// `batchesOf(step)`: the micro-batches of a step (the same for every step of a single-process
// golden run; a data-parallel rank's own share of each step, judged against that rank's float64
// run of the same data-parallel steps). `stop()`: whether to judge no further (after the first
// divergence, unless --keep-going).
Status lowPrecisionReplay(train::Trainer& t, const GoldenRun& golden,
                          const std::function<const std::vector<std::vector<Literal>>&(int64_t)>& batchesOf,
                          const std::function<void(Check)>& record, const std::function<bool()>& stop) {
  const train::TrainingPackage& pkg = t.package();
  const json& lp = golden.spec()["low_precision"];
  const std::string where = pkg.path("manifest.json") + ": training.golden.low_precision";
  if (!lp.is_object() || !lp.contains("torch_error") || !lp["torch_error"].is_object())
    return invalidArgument(where + ": no `torch_error`");
  const json& te = lp["torch_error"];
  // PyTorch's typical relative loss error at the initial weights (torch_error.loss_noise: the RMS
  // over draws of the weights scaled by 1 + 1e-2 N(0, 1), python/warpforge/training.py
  // _loss_rounding_noise); 0 where the package does not say. Each step's loss is one draw of the
  // rounding, PyTorch's error on it another: the limit is at least twice the typical error.
  if (te.contains("loss_noise") && !te["loss_noise"].is_number())
    return invalidArgument(where + ": torch_error.loss_noise must be a number");
  const double lossNoise = te.contains("loss_noise") ? te["loss_noise"].get<double>() : 0;
  if (!(lossNoise >= 0) || !std::isfinite(lossNoise))
    return invalidArgument(where + ": torch_error.loss_noise must be a finite number >= 0");
  double torchReached = 0;  // the loss's: PyTorch's largest distance so far, as a fraction of this step's loss
  auto readRef = [&](const char* key) -> Expected<SafetensorsFile> {
    if (!lp.contains(key) || !lp[key].is_string()) return invalidArgument(where + ": no `" + key + "` file");
    return readSafetensors(golden.resolve(lp[key].get<std::string>()));
  };
  // PyTorch's error on one tensor of a group, and over the whole group ("*").
  auto torchError = [&](const char* group, const std::string& name, double& tensor, double& all) {
    tensor = all = 0;
    if (!te.contains(group) || !te[group].is_object()) return;
    const json& g = te[group];
    if (g.contains(name) && g[name].is_number()) tensor = g[name].get<double>();
    if (g.contains("*") && g["*"].is_number()) all = g["*"].get<double>();
  };
  // Elements of a weight whose exact gradient is 0 (`zeroGrad`, from step 1's float64 gradient):
  // Adam's update there is lr times the sign of rounding noise, arbitrary in any precision, so
  // the weight may differ by up to `zeroGradAllowance` there, and the rest is judged without them.
  auto judge = [&](int64_t step, const char* what, const std::string& name, const Literal& have, const Literal& ref,
                   const Literal* base, double torchTensor, double torchAll, const Tolerances& fp32,
                   const std::vector<bool>* zeroGrad = nullptr, double zeroGradAllowance = 0) {
    Check c{step, what, name, fp32, compareTensors(have, ref, fp32), "", {}};
    Check::LowPrecision& v = c.low;
    v.relL2 = relL2(have, ref, base, zeroGrad);
    v.torchRelL2 = torchTensor;
    v.limit = kLowPrecisionFactor * std::max(torchTensor, torchAll);
    char why[320];
    if (c.cmp.passed) {
      std::snprintf(why, sizeof why, "within the float32 tolerance of the float64 reference");
    } else {
      int64_t zeros = 0;
      double worst = 0;
      for (int64_t i = 0; zeroGrad && i < have.numElements(); ++i)
        if ((*zeroGrad)[static_cast<size_t>(i)]) {
          ++zeros;
          worst = std::max(worst, std::abs(have.getDouble(i) - ref.getDouble(i)));
        }
      const bool zerosPass = worst <= zeroGradAllowance;  // NaN fails
      c.cmp.passed = std::isfinite(v.relL2) && v.relL2 <= v.limit && zerosPass;
      const bool loss = std::string_view(what) == "loss";
      const char* cmp = v.relL2 <= v.limit ? "<=" : ">";
      int n = loss ? std::snprintf(why, sizeof why,
                                   "rel_l2 %.3g vs float64 %s %.3g = %.3g x PyTorch's own (%.3g at this step; the largest "
                                   "distance its run reached so far, %.3g of this loss; typical at the initial weights, "
                                   "%.3g)",
                                   v.relL2, cmp, v.limit, kLowPrecisionFactor, torchTensor, torchReached, lossNoise)
                   : std::snprintf(why, sizeof why, "rel_l2 %.3g vs float64 %s %.3g = %.3g x PyTorch's own (%.3g, its whole %s %.3g)",
                                   v.relL2, cmp, v.limit, kLowPrecisionFactor, torchTensor, what, torchAll);
      if (zeros > 0 && n > 0 && static_cast<size_t>(n) < sizeof why)
        std::snprintf(why + n, sizeof why - static_cast<size_t>(n),
                      " without the %lld element(s) whose gradient is exactly 0 (Adam's update there is arbitrary: "
                      "largest |dw| %.3g %s %.3g)",
                      static_cast<long long>(zeros), worst, zerosPass ? "<=" : ">", zeroGradAllowance);
    }
    v.rule = why;
    record(std::move(c));
  };
  WF_ASSIGN_OR_RETURN(SafetensorsFile refLoss, readRef("reference_loss"));
  const Literal* refLosses = refLoss.find("loss");
  if (!refLosses || refLosses->numElements() < golden.steps())
    return invalidArgument(where + ": the reference 'loss' must hold one value per golden step");
  if (!te.contains("loss") || !te["loss"].is_array() || static_cast<int64_t>(te["loss"].size()) < golden.steps())
    return invalidArgument(where + ": torch_error.loss must hold one value per golden step");
  WF_ASSIGN_OR_RETURN(SafetensorsFile initial, readSafetensors(pkg.path(pkg.weightsFile())));
  const Tolerances lossTol = pkg.tolerance("loss"), gradTol = pkg.tolerance("gradients"),
                   weightTol = pkg.tolerance("weights"), stateTol = pkg.tolerance("optimizer_state");
  const size_t numBuffers = pkg.bufferUpdateArguments().size();

  // Step 1's gradients against the float64 ones. Elements whose float64 gradient is zero to
  // float64's precision (1e-12 of the largest) are exact zeros of the model's structure: softmax
  // cancels a shift of its input, so a QA head's or attention key's bias has a gradient of 0 at
  // every step.
  std::map<std::string, std::vector<bool>> zeroGrads;
  const double adamFactor = adamStepFactor(pkg);
  {
    WF_ASSIGN_OR_RETURN(SafetensorsFile refGrads, readRef("reference_grads_step1"));
    double largest = 0;
    for (const NamedLiteral& g : refGrads.tensors)
      for (int64_t e = 0; e < g.value.numElements(); ++e) largest = std::max(largest, std::abs(g.value.getDouble(e)));
    for (const NamedLiteral& g : refGrads.tensors) {
      std::vector<bool> mask(static_cast<size_t>(g.value.numElements()));
      bool any = false;
      for (int64_t e = 0; e < g.value.numElements(); ++e)
        any |= mask[static_cast<size_t>(e)] = std::abs(g.value.getDouble(e)) <= 1e-12 * largest;
      if (any && adamFactor > 0) zeroGrads[g.name] = std::move(mask);
    }
    WF_ASSIGN_OR_RETURN(std::vector<Literal> vg, accumulatedValueAndGrad(t, batchesOf(1)));
    for (size_t i = 0; i < pkg.paramArguments().size(); ++i) {
      const std::string& name = pkg.lossArguments()[pkg.paramArguments()[i]].name;
      const Literal* ref = refGrads.find(name);
      if (!ref) continue;
      double tensor, all;
      torchError("gradients", name, tensor, all);
      judge(1, "gradient", name, vg[1 + numBuffers + i], *ref, nullptr, tensor, all, gradTol);
    }
  }
  struct Snapshot {
    int64_t step;
    const char *weights, *state, *weightsError, *stateError;
  };
  const Snapshot snapshots[] = {
      {1, "reference_weights_step1", "reference_optimizer_state_step1", "weights_step1", "optimizer_state_step1"},
      {golden.steps(), "reference_weights_final", "reference_optimizer_state_final", "weights_final", "optimizer_state_final"}};
  double lrSum = 0;  // the largest group lr, summed over the steps so far
  double torchLossReached = 0;  // PyTorch's largest |loss - float64 loss| over the steps so far
  for (int64_t s = 1; s <= golden.steps() && !stop(); ++s) {
    WF_ASSIGN_OR_RETURN(train::StepResult r, t.step(std::span<const std::vector<Literal>>(batchesOf(s))));
    lrSum += r.lrs.empty() ? 0.0 : *std::max_element(r.lrs.begin(), r.lrs.end());
    // The loss by the largest distance from float64 that PyTorch's run has reached by this step
    // (as a fraction of this step's reference loss): after the first steps each low-precision
    // run drifts from the float64 trajectory by rounding noise that training amplifies, and once
    // the loss nears 0 its relative error measures only that drift. On BERT-large bf16 (one
    // H100, 20 steps of one batch) a rerun of PyTorch eager reached 1.7x, torch.compile 4.1x the
    // golden run's largest relative loss error, all three within 1.5x of its largest distance
    // (docs/training.md).
    const double refLoss = refLosses->getDouble(s - 1);
    const double torchLoss = te["loss"][static_cast<size_t>(s - 1)].is_number() ? te["loss"][static_cast<size_t>(s - 1)].get<double>() : 0;
    torchLossReached = std::max(torchLossReached, torchLoss * std::abs(refLoss));
    torchReached = refLoss != 0 ? torchLossReached / std::abs(refLoss) : 0;
    judge(s, "loss", "loss", Literal::scalarDouble(ElementType::kF64, r.loss), Literal::scalarDouble(ElementType::kF64, refLoss),
          nullptr, torchLoss, std::max(torchReached, lossNoise), lossTol);
    for (const Snapshot& snap : snapshots) {
      if (snap.step != s || stop()) continue;
      WF_ASSIGN_OR_RETURN(SafetensorsFile refWeights, readRef(snap.weights));
      WF_ASSIGN_OR_RETURN(std::vector<NamedLiteral> have, t.weights());
      for (const NamedLiteral& w : have) {
        const Literal* ref = refWeights.find(w.name);
        const Literal* base = initial.find(w.name);
        if (!ref || !isFloat(ref->elementType()) || !base) continue;
        double tensor, all;
        torchError(snap.weightsError, w.name, tensor, all);
        auto zero = zeroGrads.find(w.name);
        const bool masked = zero != zeroGrads.end() && static_cast<int64_t>(zero->second.size()) == w.value.numElements();
        judge(s, "weight", w.name, w.value, *ref, base, tensor, all, weightTol, masked ? &zero->second : nullptr,
              weightTol.atol + 2 * adamFactor * lrSum);
      }
      WF_ASSIGN_OR_RETURN(SafetensorsFile refState, readRef(snap.state));
      WF_ASSIGN_OR_RETURN(std::vector<NamedLiteral> state, t.optimizerState());
      for (const NamedLiteral& st : state) {
        const Literal* ref = refState.find(st.name);
        if (!ref) continue;
        double tensor, all;
        torchError(snap.stateError, st.name, tensor, all);
        judge(s, "optimizer_state", st.name, st.value, *ref, nullptr, tensor, all, stateTol);
      }
    }
  }
  return Status::ok();
}

}  // namespace

int runValidateTraining(const ValidateOptions& options) {
  auto device = resolveDevice(options.device);
  if (!device) return reportStatus(device.status());
  train::TrainerOptions topts;
  topts.device = *device;
  topts.compile = options.compile;
  topts.withEval = false;
  {
    // The golden run was made with dropout off (PyTorch's masks cannot be shared): so is the replay.
    auto pkg = train::TrainingPackage::open(options.package);
    if (!pkg) return reportStatus(pkg.status());
    topts.dropout = !pkg->goldenWithoutDropout();
  }
  auto trainer = train::Trainer::open(options.package, topts);
  if (!trainer) return reportStatus(trainer.status());
  train::Trainer& t = **trainer;
  const train::TrainingPackage& pkg = t.package();
  // One rank of a job: this rank's part of the package's data-parallel golden run (PyTorch DDP),
  // replayed by the data-parallel step; the gradients checked are this rank's own, before the
  // all-reduce, and the losses this rank's.
  const bool dataParallel = t.dataParallel();
  auto golden = GoldenRun::open(pkg, options.golden, dataParallel ? t.rank() : -1, t.worldSize());
  if (!golden) return reportStatus(golden.status());

  // The golden inputs and expectations, all read before the first step: one batch for every step
  // (export_training's example batch), or a batch per step ("batches": `<step>.<name>`, a
  // data-parallel rank's share of each step).
  const bool perStep = golden->spec().contains("batches");
  const char* batchKey = perStep ? "batches" : "batch";
  auto batchFile = golden->read(batchKey);
  if (!batchFile) return reportStatus(batchFile.status());
  // With gradient accumulation a golden batch is the whole update's: K micro-batches along the
  // first dimension, in order.
  const int64_t micro = t.accumulation();
  std::vector<std::vector<std::vector<Literal>>> stepBatches;  // [step - 1 or 0][micro-batch][tensor]
  for (int64_t s = 1; s <= (perStep ? golden->steps() : 1); ++s) {
    std::vector<Literal> batch;
    for (size_t i = 0; i < pkg.numBatchArguments(); ++i) {
      const std::string name = (perStep ? std::to_string(s) + "." : std::string()) + pkg.lossArguments()[i].name;
      const Literal* v = batchFile->find(name);
      if (!v) return reportStatus(notFound(golden->file(batchKey) + ": no batch tensor '" + name + "'"));
      batch.push_back(*v);
    }
    auto split = splitMicroBatches(batch, micro, golden->file(batchKey));
    if (!split) return reportStatus(split.status());
    stepBatches.push_back(std::move(*split));
  }
  auto batchesOf = [&](int64_t step) -> const std::vector<std::vector<Literal>>& {
    return stepBatches[perStep ? static_cast<size_t>(step - 1) : 0];
  };
  auto lossFile = golden->read("loss");
  if (!lossFile) return reportStatus(lossFile.status());
  const Literal* losses = lossFile->find("loss");
  if (!losses || losses->numElements() < golden->steps())
    return reportStatus(invalidArgument(golden->file("loss") + ": 'loss' must hold one value per golden step"));
  // The loss of each micro-batch, [steps, K], where the golden run accumulated gradients.
  const Literal* microLosses = micro > 1 ? lossFile->find("micro_loss") : nullptr;
  if (micro > 1 && (!microLosses || microLosses->numElements() != golden->steps() * micro))
    return reportStatus(invalidArgument(golden->file("loss") + ": 'micro_loss' must hold " + std::to_string(micro) +
                                        " micro-batch losses per golden step (the trainer accumulates " +
                                        std::to_string(micro) + ")"));
  std::optional<SafetensorsFile> grads;
  if (!golden->file("grads").empty()) {
    auto g = golden->read("grads");
    if (!g) return reportStatus(g.status());
    grads = std::move(*g);
  } else if (!golden->file("grads_step1").empty()) {
    auto g = golden->read("grads_step1");
    if (!g) return reportStatus(g.status());
    for (NamedLiteral& n : g->tensors) n.name = "1." + n.name;
    grads = std::move(*g);
  }
  // Step 1's gradients in float64, where the golden run has them: the arbiter where PyTorch's
  // float32 gradient is itself off (compare.h's float64 rule).
  std::optional<SafetensorsFile> grads64;
  if (!golden->file("grads_step1_f64").empty()) {
    auto g = golden->read("grads_step1_f64");
    if (!g) return reportStatus(g.status());
    grads64 = std::move(*g);
  }
  // The golden steps rerun in float64 (fp32 packages, training.golden.float64): PyTorch's own
  // distance from that run, per step, for the loss and each gradient, and for each final weight.
  // After step 1 both float32 runs carry their own rounding forward (a ReLU or BatchNorm can
  // amplify it), so a value outside the tolerance passes when it is within the tolerance plus
  // twice PyTorch's own error there (compare.h's float64 rule, at the later steps).
  std::optional<SafetensorsFile> float64Run;
  std::map<std::string, size_t> float64Param;  // parameter -> column of grad_error
  if (golden->spec().contains("float64") && golden->spec()["float64"].is_object()) {
    const json& f = golden->spec()["float64"];
    const std::string where = pkg.path("manifest.json") + ": training.golden.float64";
    if (!f.contains("file") || !f["file"].is_string() || !f.contains("params") || !f["params"].is_array())
      return reportStatus(invalidArgument(where + " needs `file` and `params`"));
    auto r = readSafetensors(golden->resolve(f["file"].get<std::string>()));
    if (!r) return reportStatus(r.status());
    for (size_t j = 0; j < f["params"].size(); ++j) float64Param[f["params"][j].get<std::string>()] = j;
    const Literal* le = r->find("loss_error");
    const Literal* ge = r->find("grad_error");
    if (!le || le->numElements() < golden->steps() || !ge || ge->shape().size() != 2 ||
        ge->shape()[0] < golden->steps() || ge->shape()[1] != static_cast<int64_t>(float64Param.size()))
      return reportStatus(invalidArgument(golden->resolve(f["file"].get<std::string>()) +
                                          ": needs loss_error [steps] and grad_error [steps, params]"));
    float64Run = std::move(*r);
  }
  // PyTorch's own float32 error at `step` on a loss ("loss"), a gradient ("gradient", parameter
  // name) or a final weight ("weight"); -1 where the float64 run does not say.
  auto torchError = [&](const std::string& what, int64_t step, const std::string& name) -> double {
    if (!float64Run) return -1;
    if (what == "loss") return float64Run->find("loss_error")->getDouble(step - 1);
    if (what == "gradient") {
      auto j = float64Param.find(name);
      if (j == float64Param.end()) return -1;
      const Literal* ge = float64Run->find("grad_error");
      return ge->getDouble((step - 1) * ge->shape()[1] + static_cast<int64_t>(j->second));
    }
    // weight_error.<name>, state_error.<name>: after the last step
    const Literal* we = float64Run->find((what == "weight" ? "weight_error." : "state_error.") + name);
    return we && step == golden->steps() ? we->getDouble(0) : -1;
  };
  // Passes `c` when every element is within its tolerance plus twice PyTorch's own error.
  auto arbitrateByFloat64 = [&](Check& c, const Literal& have, const Literal& want) {
    if (c.cmp.passed || !c.cmp.problem.empty() || c.cmp.nanCount > 0 || have.numElements() != want.numElements())
      return;
    const double torchErr = torchError(c.what, c.step, c.name);
    if (torchErr < 0) return;
    for (int64_t i = 0; i < have.numElements(); ++i) {
      const double e = want.getDouble(i), err = std::abs(have.getDouble(i) - e);
      if (!(err <= c.tol.atol + c.tol.rtol * std::abs(e) + 2 * torchErr)) return;
    }
    char why[200];
    std::snprintf(why, sizeof why, "within the tolerance plus twice PyTorch's own float32 error (%.3g) against the "
                  "float64 run of the golden steps", torchErr);
    c.arbitrated = why;
    c.cmp.passed = true;
  };
  struct Snapshot {
    int64_t step;
    const char* weights;
    const char* state;
  };
  std::vector<Snapshot> snapshots = {{1, "weights_step1", "optimizer_state_step1"},
                                     {golden->steps(), "weights_final", "optimizer_state_final"}};

  // The gradients the update used, where they differ from the ones checked: a data-parallel run's
  // averaged over the ranks (the rounding-noise rule below is about those).
  std::optional<SafetensorsFile> updateGrads;
  if (!golden->file("averaged_grads").empty()) {
    auto g = golden->read("averaged_grads");
    if (!g) return reportStatus(g.status());
    updateGrads = std::move(*g);
  }

  std::vector<Check> checks;
  bool failed = false;
  std::string firstFailure;
  // Whether to stop at this point: at the first divergence, unless --keep-going asks for every
  // step to be judged (the verdict and the divergence named stay the first one's).
  auto stop = [&] { return failed && !options.keepGoing; };
  auto record = [&](Check c) {
    if (!c.cmp.passed && !failed) {
      failed = true;
      firstFailure = "step " + std::to_string(c.step) + ": " + c.what + " '" + c.name + "' diverges: " +
                     (c.low.rule.empty() ? c.cmp.summary(c.tol) : c.low.rule);
    }
    checks.push_back(std::move(c));
  };
  const Tolerances lossTol = pkg.tolerance("loss"), gradTol = pkg.tolerance("gradients"),
                   weightTol = pkg.tolerance("weights"), stateTol = pkg.tolerance("optimizer_state");
  const size_t numBuffers = pkg.bufferUpdateArguments().size();

  // Gradients at rounding-noise level. Softmax cancels a constant shift of its input, so the bias
  // of attention keys or of a QA head's logits has an exact gradient of 0, and what backward
  // leaves there (1e-9) is summation noise that differs between any two correct implementations;
  // single elements of other gradients can be that small too. Adam divides by the gradient's own
  // magnitude, so the update of such an element has an arbitrary sign and a size up to about lr
  // in a step where its gradient is that small, and the difference stays in the weight. Where a
  // golden gradient of an element lay within the gradient tolerance's atol of zero at some step
  // so far (the gradient check, which compares every step's gradients, cannot tell it from any
  // other value there), its weight may differ by that much:
  //   |w - w_golden| <= atol + 2 * sum over steps of lr_s * max(1, (1 - beta1) / sqrt(1 - beta2)).
  std::map<std::string, std::vector<float>> minGoldenGrad;  // parameter -> per element, min |g| over the steps so far
  auto addGoldenGrads = [&](int64_t step) {
    const std::optional<SafetensorsFile>& used = updateGrads ? updateGrads : grads;
    if (!used) return;
    const std::string prefix = std::to_string(step) + ".";
    for (const NamedLiteral& g : used->tensors) {
      if (g.name.rfind(prefix, 0) != 0) continue;
      std::vector<float>& m = minGoldenGrad[g.name.substr(prefix.size())];
      m.resize(static_cast<size_t>(g.value.numElements()), std::numeric_limits<float>::infinity());
      for (int64_t i = 0; i < g.value.numElements(); ++i)
        m[i] = std::min(m[i], static_cast<float>(std::abs(g.value.getDouble(i))));
    }
  };
  const double adamFactor = adamStepFactor(pkg);  // 0: not an Adam-family optimizer
  double sgdMomentum = 0;  // the largest group momentum (SGD)
  for (const json& g : pkg.manifest()["training"]["optimizer"]["param_groups"])
    if (g.contains("momentum") && g["momentum"].is_number()) sgdMomentum = std::max(sgdMomentum, g["momentum"].get<double>());
  double lrSum = 0;  // sum over the steps so far of the largest group lr
  auto weightCheck = [&](int64_t step, const std::string& name, const Literal& have, const Literal& want) {
    // Buffers a train step updates (BatchNorm's running statistics) are averages of activations:
    // judged by the activations row.
    bool isBuffer = false;
    for (const train::LossArgument& a : pkg.lossArguments())
      if (a.name == name && a.kind == "buffer") isBuffer = true;
    const Tolerances tol = isBuffer ? pkg.tolerance("activations") : weightTol;
    Check c{step, "weight", name, tol, compareTensors(have, want, tol), "", {}};
    std::string param = name;  // a tied name's gradient is its primary's
    for (const train::LossArgument& a : pkg.lossArguments())
      if (a.name == name && a.tiedTo >= 0) param = pkg.lossArguments()[static_cast<size_t>(a.tiedTo)].name;
    auto g = minGoldenGrad.find(param);
    if (!c.cmp.passed && c.cmp.problem.empty() && c.cmp.nanCount == 0 && adamFactor > 0 && g != minGoldenGrad.end() &&
        static_cast<int64_t>(g->second.size()) == have.numElements()) {
      const double allowed = weightTol.atol + 2 * adamFactor * lrSum;
      int64_t noisy = 0, real = 0;
      double worstNoisy = 0;
      for (int64_t i = 0; i < have.numElements(); ++i) {
        const double a = have.getDouble(i), e = want.getDouble(i), err = std::abs(a - e);
        if (err <= weightTol.atol + weightTol.rtol * std::abs(e)) continue;
        if (g->second[i] <= gradTol.atol && err <= allowed) {
          ++noisy;
          worstNoisy = std::max(worstNoisy, err);
        } else {
          ++real;
        }
      }
      if (real == 0) {
        char why[240];
        std::snprintf(why, sizeof why,
                      "%lld element(s) whose gradient was rounding noise at a step (golden |g| <= %.2g): Adam's update is "
                      "arbitrary there; largest |dw| %.3g <= %.3g",
                      static_cast<long long>(noisy), gradTol.atol, worstNoisy, allowed);
        c.arbitrated = why;
        c.cmp.passed = true;
      }
    }
    // Step 1 of a non-Adam optimizer (SGD): the update is lr * (1 + momentum at most) times the
    // gradient (plus weight decay), so where PyTorch's float32 gradient is itself off the float64
    // one (a ReLU input within rounding of zero decided the other way moves ResNet-50's conv1
    // gradient by 10%), the weight is off by lr times as much: the state check's rule, scaled.
    const Literal* g32 = grads ? grads->find("1." + param) : nullptr;
    const Literal* g64 = grads64 ? grads64->find(param) : nullptr;
    if (!c.cmp.passed && step == 1 && adamFactor == 0 && !isBuffer && c.cmp.problem.empty() && c.cmp.nanCount == 0 &&
        g32 && g64 && g32->numElements() == have.numElements() && g64->numElements() == have.numElements()) {
      double gradError = 0;
      for (int64_t i = 0; i < have.numElements(); ++i)
        gradError = std::max(gradError, std::abs(g32->getDouble(i) - g64->getDouble(i)));
      const double allowance = 2 * gradError * lrSum * (1 + sgdMomentum);
      int64_t arbitrated = 0, real = 0;
      for (int64_t i = 0; i < have.numElements(); ++i) {
        const double err = std::abs(have.getDouble(i) - want.getDouble(i));
        const double bound = tol.atol + tol.rtol * std::abs(want.getDouble(i));
        if (err <= bound) continue;
        if (err <= bound + allowance) ++arbitrated;
        else ++real;
      }
      if (real == 0) {
        char why[240];
        std::snprintf(why, sizeof why,
                      "%lld element(s) within lr x (1 + momentum) x twice the golden float32 gradient's own error "
                      "(against float64) of step 1 (%.3g)",
                      static_cast<long long>(arbitrated), allowance);
        c.arbitrated = why;
        c.cmp.passed = true;
      }
    }
    arbitrateByFloat64(c, have, want);
    record(std::move(c));
  };

  // After step 1 the optimizer state is a function of step 1's gradient (SGD's momentum buffer is
  // the gradient plus weight decay, Adam's moments (1 - beta) g and (1 - beta2) g^2), so where
  // PyTorch's float32 gradient is itself off the float64 one, its state is off by as much. The
  // gradient passes within twice the golden gradient's own largest float32 error of the float64
  // one (compare.h's float64 rule), and the golden state is itself up to that error away from the
  // float64 state, so the two states may differ by three times it: an element passes within the
  // tolerance plus three times the golden gradient's largest float32 error (the float64 rule,
  // applied to what the state is made of, measured against the golden state).
  std::map<std::string, std::string> stateParam;
  for (const train::StateTensor& st : pkg.state()) stateParam[st.name] = st.param;
  auto stateCheck = [&](int64_t step, const std::string& name, const Literal& have, const Literal& want) {
    Check c{step, "optimizer_state", name, stateTol, compareTensors(have, want, stateTol), "", {}};
    const Literal* g32 = grads ? grads->find("1." + stateParam[name]) : nullptr;
    const Literal* g64 = grads64 ? grads64->find(stateParam[name]) : nullptr;
    if (!c.cmp.passed && step == 1 && c.cmp.problem.empty() && c.cmp.nanCount == 0 && g32 && g64 &&
        g32->numElements() == have.numElements() && g64->numElements() == have.numElements()) {
      int64_t arbitrated = 0, real = 0;
      double gradError = 0;  // the golden gradient's own float32 error, as compare.h measures it
      for (int64_t i = 0; i < have.numElements(); ++i)
        gradError = std::max(gradError, std::abs(g32->getDouble(i) - g64->getDouble(i)));
      for (int64_t i = 0; i < have.numElements(); ++i) {
        const double a = have.getDouble(i), e = want.getDouble(i), err = std::abs(a - e);
        const double bound = stateTol.atol + stateTol.rtol * std::abs(e);
        if (err <= bound) continue;
        if (err <= bound + 3 * gradError) ++arbitrated;
        else ++real;
      }
      if (real == 0) {
        c.arbitrated = std::to_string(arbitrated) +
                       " element(s) within three times the golden float32 gradient's own error (against float64) "
                       "of step 1: the gradient's float64 rule plus the golden state's own error";
        c.cmp.passed = true;
      }
    }
    arbitrateByFloat64(c, have, want);
    record(std::move(c));
  };

  // A mixed-precision package: judged against the float64 reference by PyTorch's own error.
  const bool lowPrecision = golden->spec().contains("low_precision") && golden->spec()["low_precision"].is_object();
  if (lowPrecision) {
    Status st = lowPrecisionReplay(t, *golden, batchesOf, record, stop);
    if (!st.isOk()) return reportStatus(st);
  }
  for (int64_t s = 1; s <= golden->steps() && !stop() && !lowPrecision; ++s) {
    addGoldenGrads(s);
    // The gradients at this step's starting weights, where the golden run recorded them.
    bool haveGrads = false;
    if (grads)
      for (size_t a : pkg.paramArguments())
        if (grads->find(std::to_string(s) + "." + pkg.lossArguments()[a].name)) haveGrads = true;
    if (haveGrads) {
      auto vg = accumulatedValueAndGrad(t, batchesOf(s));
      if (!vg) return reportStatus(vg.status().withContext("step " + std::to_string(s)));
      for (size_t i = 0; i < pkg.paramArguments().size(); ++i) {
        const std::string& name = pkg.lossArguments()[pkg.paramArguments()[i]].name;
        const Literal* g = grads->find(std::to_string(s) + "." + name);
        if (!g) continue;
        const Literal& mine = (*vg)[1 + numBuffers + i];
        const Literal* ref64 = s == 1 && grads64 ? grads64->find(name) : nullptr;
        if (ref64 && ref64->type().shape() != g->type().shape()) ref64 = nullptr;
        Check c{s, "gradient", name, gradTol, compareTensors(mine, *g, gradTol, ref64), "", {}};
        if (!ref64) arbitrateByFloat64(c, mine, *g);
        record(std::move(c));
      }
      if (stop()) break;
    }
    auto r = t.step(std::span<const std::vector<Literal>>(batchesOf(s)));
    if (!r) return reportStatus(r.status());
    lrSum += r->lrs.empty() ? 0.0 : *std::max_element(r->lrs.begin(), r->lrs.end());
    for (int64_t m = 0; microLosses && m < micro; ++m) {
      Literal mine = Literal::scalarDouble(ElementType::kF64, r->microLosses[static_cast<size_t>(m)]);
      Literal expected = Literal::scalarDouble(ElementType::kF64, microLosses->getDouble((s - 1) * micro + m));
      record({s, "loss", "micro-batch " + std::to_string(m), lossTol, compareTensors(mine, expected, lossTol), "", {}});
    }
    Literal mine = Literal::scalarDouble(ElementType::kF64, r->loss);
    Literal expected = Literal::scalarDouble(ElementType::kF64, losses->getDouble(s - 1));
    Check lossCheck{s, "loss", "loss", lossTol, compareTensors(mine, expected, lossTol), "", {}};
    arbitrateByFloat64(lossCheck, mine, expected);
    record(std::move(lossCheck));
    for (const Snapshot& snap : snapshots) {
      if (snap.step != s || stop()) continue;
      if (!golden->file(snap.weights).empty()) {
        auto want = golden->read(snap.weights);
        if (!want) return reportStatus(want.status());
        auto have = t.weights();
        if (!have) return reportStatus(have.status());
        for (const NamedLiteral& w : *have)
          if (const Literal* e = want->find(w.name)) weightCheck(s, w.name, w.value, *e);
      }
      if (!golden->file(snap.state).empty()) {
        auto want = golden->read(snap.state);
        if (!want) return reportStatus(want.status());
        auto have = t.optimizerState();
        if (!have) return reportStatus(have.status());
        for (const NamedLiteral& w : *have)
          if (const Literal* e = want->find(w.name))
            stateCheck(s, w.name, w.value, *e);
      }
    }
  }

  // Report: the loss curve side by side, then a count per kind of check.
  std::map<std::string, std::pair<int, int>> counts;  // what -> (passed, total)
  for (const Check& c : checks) {
    auto& [p, n] = counts[c.what];
    p += c.cmp.passed;
    ++n;
  }
  if (options.json) {
    json j = {{"package", options.package}, {"device", t.deviceName()}, {"training", true},
              {"steps", golden->steps()}, {"pass", !failed}};
    if (dataParallel) {
      j["rank"] = t.rank();
      j["world_size"] = t.worldSize();
    }
    json rows = json::array();
    for (const Check& c : checks) {
      json row = {{"step", c.step}, {"kind", c.what}, {"name", c.name}, {"pass", c.cmp.passed},
                  {"max_abs_err", number(c.cmp.maxAbsErr)}, {"max_rel_err", number(c.cmp.maxRelErr)},
                  {"rtol", c.tol.rtol}, {"atol", c.tol.atol}};
      if (c.what == "loss") {
        row["loss"] = number(c.cmp.worstActual);
        row["golden"] = number(c.cmp.worstExpected);
      }
      if (!c.cmp.problem.empty()) row["problem"] = c.cmp.problem;
      if (!c.low.rule.empty()) {
        row["rel_l2"] = number(c.low.relL2);
        row["torch_rel_l2"] = number(c.low.torchRelL2);
        row["rel_l2_limit"] = number(c.low.limit);
        row["rule"] = c.low.rule;
      }
      if (!c.arbitrated.empty()) row["arbitrated"] = c.arbitrated;
      rows.push_back(std::move(row));
    }
    j["checks"] = std::move(rows);
    if (failed) j["first_divergence"] = firstFailure;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "validate --training " << options.package << " on " << t.deviceName() << ": " << golden->steps()
              << (dataParallel ? " data-parallel golden steps of rank " + std::to_string(t.rank()) + " of " +
                                     std::to_string(t.worldSize())
                               : std::string(" golden steps"))
              << "\n";
    std::cout << "  step  loss (warpforge)   loss (golden)      rel err\n";
    for (const Check& c : checks) {
      if (c.what != "loss" || c.name != "loss") continue;  // the step losses (micro-batches counted below)
      char line[160];
      double rel = c.cmp.worstExpected != 0 ? std::abs(c.cmp.worstActual - c.cmp.worstExpected) / std::abs(c.cmp.worstExpected) : 0;
      std::snprintf(line, sizeof line, "  %4lld  %-17.9g  %-17.9g  %.2e%s\n", static_cast<long long>(c.step),
                    c.cmp.worstActual, c.cmp.worstExpected, rel, c.cmp.passed ? "" : "  FAIL");
      std::cout << line;
    }
    for (const auto& [what, pn] : counts) {
      const Tolerances tol = what == "loss" ? lossTol : what == "gradient" ? gradTol : what == "weight" ? weightTol : stateTol;
      double worst = 0;
      std::string worstName;
      for (const Check& c : checks)
        if (c.what == what && c.cmp.maxAbsErr >= worst) {
          worst = c.cmp.maxAbsErr;
          worstName = "step " + std::to_string(c.step) + " '" + c.name + "'";
        }
      std::cout << "  " << (what == "loss" ? "losses" : what + "s") << ": " << pn.first << "/" << pn.second << " pass (" << tol.toString()
                << "; largest abs error " << worst << " at " << worstName << ")\n";
      for (const Check& c : checks)
        if (c.what == what && !c.arbitrated.empty())
          std::cout << "    step " << c.step << " '" << c.name << "': passes as " << c.arbitrated << "\n";
    }
    if (failed) std::cout << "FAIL: " << firstFailure << "\n";
    else std::cout << "PASS\n";
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace wf::cli
