// `warpforge train PKG --data D`: trains a training package on a prepared data file with the
// Trainer (src/train/trainer.h): batches in the sampler's order (src/train/sampler.h), a
// progress line, loss_curve.json and metrics.json rewritten as the run goes, evaluation on
// --eval-data every --eval-every steps, atomic checkpoints, and --resume from the last one
// (which reproduces the uninterrupted run exactly: the data order is a function of the seed
// and the step).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/profile.h"
#include "runtime/file_io.h"
#include "train/dataset.h"
#include "train/sampler.h"
#include "train/squad_metrics.h"
#include "train/trainer.h"

namespace wf::cli {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string formatSeconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  long t = std::lround(s);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

Status writeJson(const std::string& path, const json& j) { return writeFileAtomically(path, j.dump(1) + "\n"); }

// Runs the eval program over every example of `data` (the last partial batch padded by
// repeating its last example, the padding's outputs dropped) and computes the metric.
Expected<json> evaluate(train::Trainer& trainer, const train::Dataset& data, const TrainOptions& options) {
  const train::TrainingPackage& pkg = trainer.package();
  int64_t batch = 0;
  for (const auto& a : pkg.evalArguments())
    if (a.isBatch) batch = a.shape.empty() ? 0 : a.shape[0];
  if (batch <= 0) return invalidArgument("the eval program takes no batched input");
  const int64_t n = data.size();
  std::vector<std::vector<double>> outputs(pkg.evalOutputs().size());
  std::vector<int64_t> outShape0;
  for (int64_t start = 0; start < n; start += batch) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < batch; ++i) idx.push_back(std::min(start + i, n - 1));
    WF_ASSIGN_OR_RETURN(std::vector<Literal> inputs, data.batch(idx));
    WF_ASSIGN_OR_RETURN(std::vector<Literal> out, trainer.evaluate(inputs));
    const int64_t real = std::min(batch, n - start);
    for (size_t o = 0; o < out.size() && o < outputs.size(); ++o) {
      const int64_t per = out[o].numElements() / batch;
      for (int64_t i = 0; i < real * per; ++i) outputs[o].push_back(out[o].getDouble(i));
    }
  }
  json metrics = json::object();
  metrics["examples"] = n;
  if (options.metric == "accuracy") {
    if (outputs.empty()) return invalidArgument("--metric accuracy: the eval program has no outputs");
    WF_ASSIGN_OR_RETURN(Literal labels, data.tensor(options.labelName));
    const int64_t classes = static_cast<int64_t>(outputs[0].size()) / n;
    int64_t right = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (outputs[0][i * classes + c] > outputs[0][i * classes + best]) best = c;
      right += best == labels.getInt(i);
    }
    metrics["accuracy"] = static_cast<double>(right) / static_cast<double>(n);
  } else if (options.metric == "squad") {
    if (outputs.size() < 2) return invalidArgument("--metric squad: the eval program must return start and end logits");
    WF_ASSIGN_OR_RETURN(train::SquadEvalSet set, train::SquadEvalSet::load(data));
    const int64_t seq = set.seqLen();
    auto logits = [&](const std::vector<double>& v) -> Expected<Literal> {
      if (static_cast<int64_t>(v.size()) != n * seq)
        return invalidArgument("--metric squad: the eval program's logits are not [examples, " + std::to_string(seq) + "]");
      Literal l = Literal::zeros(Type::tensor({n, seq}, ElementType::kF32));
      float* p = l.dataAs<float>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
      return l;
    };
    WF_ASSIGN_OR_RETURN(Literal start, logits(outputs[0]));
    WF_ASSIGN_OR_RETURN(Literal end, logits(outputs[1]));
    WF_ASSIGN_OR_RETURN(train::SquadScores scores, set.evaluate(start, end));
    metrics["exact_match"] = scores.exactMatch;
    metrics["f1"] = scores.f1;
    metrics["questions"] = scores.questions;
  }
  return metrics;
}

// Steps left out of --profile: the first runs compile kernels, build CUDA graphs and warm caches.
constexpr int64_t kProfileWarmupSteps = 3;

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

void printTrainProfile(const train::Trainer& trainer, const Profile& profile) {
  if (profile.runs == 0) {
    std::cout << "profile: fewer than " << kProfileWarmupSteps + 1 << " steps ran; no timings\n";
  } else {
    std::cout << "train step profile over " << profile.runs << " steps:\n";
    printProfile(profile);
  }
  const ExecutableStats st = trainer.trainStepStats();
  std::cout << "memory plan: " << st.slots << " slots, arena " << mib(st.slotBytes) << ", peak live intermediates "
            << mib(st.peakLiveBytes) << ", all intermediates " << mib(st.intermediateBytes) << ", largest workspace "
            << mib(st.workspaceBytes) << "; " << st.deviceSteps << " device steps, " << st.fusedKernels
            << " fused kernels, " << st.hostSteps << " host steps\n";
  if (st.multiTensorSteps > 0)
    std::cout << "multi-tensor steps (one launch for the same loop over several tensors: the optimizer's updates): "
              << st.multiTensorSteps << ", running " << st.multiTensorLoops << " loops\n";
  if (st.fusedComposites + st.decomposedComposites > 0)
    std::cout << "composites with a kernel of their own (fused attention): " << st.fusedComposites
              << " run as that kernel, " << st.decomposedComposites << " as their decomposition\n";
  if (st.convolutionBackwardData + st.convolutionBackwardFilter > 0)
    std::cout << "convolution gradients on cuDNN's backward kernels: " << st.convolutionBackwardData << " data, "
              << st.convolutionBackwardFilter << " filter; channels-last values: " << st.channelsLastValues << "\n";
  std::cout << formatMemoryBreakdown(trainer.deviceMemoryBreakdown()) << "\n";
}

}  // namespace

int runTrain(const TrainOptions& options) {
  namespace fs = std::filesystem;
  auto device = resolveDevice(options.device);
  if (!device) return reportStatus(device.status());
  if (options.steps > 0 && options.epochs > 0)
    return reportStatus(invalidArgument("give --steps or --epochs, not both"));
  if (!options.exportDir.empty() && std::filesystem::exists(options.exportDir))
    return reportStatus(invalidArgument("--export " + options.exportDir + ": already exists; give a new directory"));
  if (options.resume && options.checkpointDir.empty())
    return reportStatus(invalidArgument("--resume needs --checkpoint-dir, where the checkpoint is"));
  const std::string ckptDir = options.checkpointDir;
  const std::string ckptPath = ckptDir.empty() ? "" : (fs::path(ckptDir) / "checkpoint.safetensors").string();
  if (options.resume && !fs::exists(ckptPath))
    return reportStatus(notFound(ckptPath + ": no checkpoint to resume from"));

  train::TrainerOptions topts;
  topts.device = *device;
  topts.compile = options.compile;
  topts.compile.recordTimings = topts.compile.recordTimings || options.profile;
  topts.accumulation = options.accumulate;
  topts.dropout = options.dropout;
  const GeneratedKernelStats kernelsBefore = generatedKernelStats();
  const std::vector<PhaseTime> phasesBefore = phaseTimes();
  const auto openStart = Clock::now();
  auto opened = train::Trainer::open(options.package, topts);
  if (!opened) return reportStatus(opened.status());
  const double openMs = std::chrono::duration<double, std::milli>(Clock::now() - openStart).count();
  train::Trainer& trainer = **opened;
  const train::TrainingPackage& pkg = trainer.package();
  // Data parallel (one rank of a job, WORLD_SIZE set): every rank trains on its share of each
  // epoch; rank 0 alone writes the loss curve, metrics, checkpoints and the exported package, and
  // prints progress. The loss it reports is its own, as DDP scripts log rank 0's; the curve also
  // holds every rank's (`rank_losses`).
  const int rank = trainer.rank(), world = trainer.worldSize();
  const bool lead = rank == 0;
  // Loading and compiling the programs, and the generated kernels that took (a warm kernel cache
  // skips NVRTC).
  const std::vector<PhaseTime> phasesOpened = phaseTimes();
  if (lead)
    std::cerr << "warpforge: " << formatCompileTime(openMs, kernelsBefore, generatedKernelStats(), phasesBefore, phasesOpened)
              << "\n";
  auto writeOut = [&](const std::string& path, const json& j) { return lead ? writeJson(path, j) : Status::ok(); };

  // The data, checked against the program's batch arguments.
  const int64_t batch = pkg.lossArguments()[0].shape.empty() ? 0 : pkg.lossArguments()[0].shape[0];
  if (options.batch > 0 && options.batch != batch)
    return reportStatus(invalidArgument("--batch " + std::to_string(options.batch) + ": the package's programs were exported for batch " +
                                        std::to_string(batch) + " (export it again with that batch size)"));
  auto data = train::Dataset::open(options.data);
  if (!data) return reportStatus(data.status());
  std::vector<train::BatchArgument> batchArgs;
  for (size_t i = 0; i < pkg.numBatchArguments(); ++i) {
    const train::LossArgument& a = pkg.lossArguments()[i];
    if (a.shape.empty() || a.shape[0] != batch)
      return reportStatus(invalidArgument(pkg.path(pkg.lossFile()) + ": batch argument '" + a.name +
                                          "' does not have the batch size as its first dimension"));
    auto arg = train::BatchArgument::fromProgramArgument(a.name, a.dtype, a.shape);
    if (!arg) return reportStatus(arg.status());
    batchArgs.push_back(std::move(*arg));
  }
  if (Status s = data->bind(std::move(batchArgs)); !s.isOk()) return reportStatus(s);
  const int64_t n = data->size();
  // An update takes `micro` batches (gradient accumulation); an epoch has n / batch batches
  // (drop_last, as the reference loops do) and the updates whole groups of them make. Under data
  // parallelism each rank takes its share of the epoch's order as torch's DistributedSampler does
  // (ceil(n / world) examples, padded from the start), then batches of it.
  const int64_t micro = trainer.accumulation();
  const int64_t perUpdate = batch * micro;
  const int64_t perRank = (n + world - 1) / world;
  const int64_t perEpoch = perRank / batch / micro;
  if (perEpoch == 0)
    return reportStatus(invalidArgument(options.data + ": " + std::to_string(n) + " examples" +
                                        (world > 1 ? ", " + std::to_string(perRank) + " per rank of " + std::to_string(world) : "") +
                                        ", fewer than one update of " + std::to_string(micro) + " batch(es) of " +
                                        std::to_string(batch)));
  const int64_t total = options.steps > 0 ? options.steps : perEpoch * std::max<int64_t>(options.epochs, 1);
  std::optional<train::Dataset> evalData;
  if (!options.evalData.empty()) {
    if (!pkg.hasEval()) return reportStatus(invalidArgument("--eval-data: the package has no eval program (training.eval)"));
    auto e = train::Dataset::open(options.evalData);
    if (!e) return reportStatus(e.status());
    std::vector<train::BatchArgument> evalArgs;
    for (const auto& a : pkg.evalArguments()) {
      if (!a.isBatch) continue;
      auto arg = train::BatchArgument::fromProgramArgument(a.name, a.dtype, a.shape);
      if (!arg) return reportStatus(arg.status());
      evalArgs.push_back(std::move(*arg));
    }
    if (Status s = e->bind(std::move(evalArgs)); !s.isOk()) return reportStatus(s);
    evalData = std::move(*e);
  }

  // Outputs, and the run so far when resuming.
  const std::string outDir = ckptDir.empty() ? "." : ckptDir;
  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec) return reportStatus(invalidArgument(outDir + ": cannot create directory: " + ec.message()));
  const std::string curvePath = (fs::path(outDir) / "loss_curve.json").string();
  const std::string metricsPath = (fs::path(outDir) / "metrics.json").string();
  json curve = {{"package", pkg.name()}, {"device", trainer.deviceName()}, {"batch", batch}, {"accumulation", micro},
                {"seed", options.seed}, {"world_size", world}, {"steps", json::array()}};
  json metrics = {{"package", pkg.name()}, {"metric", options.metric}, {"evaluations", json::array()}};
  if (trainer.dataParallel()) {
    // The gradient buckets of the all-reduce (DDP's assignment), by parameter name.
    json buckets = json::array();
    for (const std::vector<size_t>& bucket : trainer.gradientBuckets()) {
      json names = json::array();
      for (size_t i : bucket) names.push_back(pkg.lossArguments()[pkg.paramArguments()[i]].name);
      buckets.push_back(std::move(names));
    }
    curve["gradient_buckets"] = std::move(buckets);
  }
  if (options.resume) {
    auto extra = trainer.loadCheckpoint(ckptPath);
    if (!extra) return reportStatus(extra.status());
    if (extra->count("seed") && static_cast<uint64_t>((*extra)["seed"]) != options.seed)
      return reportStatus(invalidArgument(ckptPath + ": the checkpoint was made with --seed " + std::to_string((*extra)["seed"]) +
                                          "; resume with the same seed to keep the data order"));
    if (extra->count("accumulation") && (*extra)["accumulation"] != micro)
      return reportStatus(invalidArgument(ckptPath + ": the checkpoint was made with --accumulate " +
                                          std::to_string((*extra)["accumulation"]) + ", this run takes " + std::to_string(micro) +
                                          " micro-batches per update; resume with the same to keep the data order"));
    if (extra->count("world_size") && (*extra)["world_size"] != world)
      return reportStatus(invalidArgument(ckptPath + ": the checkpoint was made by " + std::to_string((*extra)["world_size"]) +
                                          " rank(s), this job has " + std::to_string(world) +
                                          "; resume with as many to keep the data order"));
    // Keep what the earlier run recorded up to the checkpoint.
    for (auto [path, doc] : {std::pair{curvePath, &curve}, std::pair{metricsPath, &metrics}}) {
      auto text = readFileBytes(path);
      if (!text) continue;
      json old = json::parse(*text, nullptr, false);
      const char* key = doc == &curve ? "steps" : "evaluations";
      if (!old.is_object() || !old.contains(key)) continue;
      for (const json& row : old[key])
        if (row.contains("step") && row["step"].get<int64_t>() <= trainer.stepsDone()) (*doc)[key].push_back(row);
    }
    if (lead) std::cerr << "warpforge: resumed " << pkg.name() << " from " << ckptPath << " at step " << trainer.stepsDone() << "\n";
  }
  if (trainer.stepsDone() >= total) {
    if (lead) std::cerr << "warpforge: " << trainer.stepsDone() << " steps already done (of " << total << ")\n";
    return kExitOk;
  }

  auto save = [&]() -> Status {
    if (ckptPath.empty()) return Status::ok();
    return trainer.saveCheckpoint(ckptPath, {{"seed", static_cast<int64_t>(options.seed)},
                                             {"examples", n},
                                             {"batch", batch},
                                             {"accumulation", micro},
                                             {"world_size", world}});
  };
  auto runEval = [&](int64_t step) -> Status {
    if (!evalData || !lead) return Status::ok();  // rank 0 evaluates; the ranks hold the same weights
    auto t0 = Clock::now();
    WF_ASSIGN_OR_RETURN(json m, evaluate(trainer, *evalData, options));
    m["step"] = step;
    m["seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
    metrics["evaluations"].push_back(m);
    std::cerr << (isatty(2) ? "\n" : "") << "warpforge: eval at step " << step << ": " << m.dump() << "\n";
    return writeOut(metricsPath, metrics);
  };

  if (lead)
    std::cerr << "warpforge: training " << pkg.name() << " on " << trainer.deviceName() << ": " << n << " examples, batch "
              << batch << (micro > 1 ? " x " + std::to_string(micro) + " micro-batches" : std::string())
              << (trainer.dataParallel() ? " on each of " + std::to_string(world) + " rank(s)" : std::string()) << ", "
              << perEpoch << " steps per epoch, steps " << trainer.stepsDone() + 1 << ".." << total << "\n";
  const bool tty = isatty(2);
  Profile profile;
  const auto start = Clock::now();
  const int64_t first = trainer.stepsDone() + 1;
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
  for (int64_t s = first; s <= total; ++s) {
    const int64_t epoch = (s - 1) / perEpoch, within = (s - 1) % perEpoch;
    if (epoch != orderEpoch) {
      order = train::shardIndices(train::epochPermutation(options.seed, static_cast<uint64_t>(epoch), n, options.shuffle),
                                  rank, world);
      orderEpoch = epoch;
    }
    std::vector<std::vector<Literal>> inputs;
    for (int64_t m = 0; m < micro; ++m) {
      const int64_t start = within * perUpdate + m * batch;
      std::vector<int64_t> idx(order.begin() + start, order.begin() + start + batch);
      auto b = data->batch(idx);
      if (!b) return reportStatus(b.status());
      inputs.push_back(std::move(*b));
    }
    auto t0 = Clock::now();
    auto r = trainer.step(std::span<const std::vector<Literal>>(inputs));
    if (r && options.profile && s >= first + kProfileWarmupSteps) profile.add(r->report);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!r) {
      if (tty) std::cerr << "\n";
      (void)writeOut(curvePath, curve);
      printError(r.status().message());
      return kExitFailure;
    }
    json row = {{"step", s}, {"epoch", epoch}, {"loss", number(r->loss)}, {"lr", r->lrs}, {"ms", ms}};
    if (micro > 1) {
      json losses = json::array();
      for (double l : r->microLosses) losses.push_back(number(l));
      row["micro_losses"] = std::move(losses);
    }
    if (trainer.dataParallel()) {
      json losses = json::array();
      for (double l : r->rankLosses) losses.push_back(number(l));
      row["rank_losses"] = std::move(losses);
    }
    curve["steps"].push_back(std::move(row));
    if (s == first) curve["device_bytes_in_use"] = trainer.deviceBytesInUse();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double perStep = elapsed / static_cast<double>(s - first + 1);
    const bool log = s == total || s == first || (options.logEvery > 0 && s % options.logEvery == 0);
    if (lead && (tty || log)) {
      char line[256];
      std::snprintf(line, sizeof line, "step %lld/%lld  epoch %lld  loss %.6f  lr %.3g  %.1f examples/s  ETA %s",
                    static_cast<long long>(s), static_cast<long long>(total), static_cast<long long>(epoch + 1), r->loss,
                    r->lrs.empty() ? 0.0 : r->lrs[0], static_cast<double>(perUpdate) / perStep,
                    formatSeconds(perStep * static_cast<double>(total - s)).c_str());
      std::cerr << (tty ? "\r" : "") << line << (tty && !log ? "" : "\n") << std::flush;
    }
    if (log || s % 10 == 0)
      if (Status st = writeOut(curvePath, curve); !st.isOk()) return reportStatus(st);
    if (options.checkpointEvery > 0 && s % options.checkpointEvery == 0 && s != total)
      if (Status st = save(); !st.isOk()) return reportStatus(st);
    if (options.evalEvery > 0 && s % options.evalEvery == 0 && s != total)
      if (Status st = runEval(s); !st.isOk()) return reportStatus(st);
  }
  if (Status st = writeOut(curvePath, curve); !st.isOk()) return reportStatus(st);
  if (Status st = save(); !st.isOk()) return reportStatus(st);
  if (Status st = runEval(total); !st.isOk()) return reportStatus(st);
  if (!options.exportDir.empty() && lead) {
    if (Status st = trainer.exportInference(options.exportDir); !st.isOk()) return reportStatus(st);
    std::cerr << "warpforge: exported the trained model to " << options.exportDir << "\n";
  }
  if (options.profile && lead) {
    // Every op's time, for tools: profile.json beside the loss curve.
    const std::string profilePath = (fs::path(outDir) / "profile.json").string();
    if (Status st = writeOut(profilePath, profileJson(profile, SIZE_MAX)); !st.isOk()) return reportStatus(st);
    printTrainProfile(trainer, profile);
    printPhaseTimes(phasesBefore, phaseTimes());  // opening, compiling, and the first step's graph capture
  }
  if (lead) std::cerr << "warpforge: done: " << total << " steps; " << curvePath << (ckptPath.empty() ? "" : ", " + ckptPath) << "\n";
  return kExitOk;
}

}  // namespace wf::cli
