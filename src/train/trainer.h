// The Trainer: a training package's train-step program compiled once for one device, with the
// parameters, buffers and optimizer state bound to it and kept there between steps.
//
//   auto trainer = wf::train::Trainer::open("out/bert-qa", {.device = cuda});
//   for (...) { auto r = trainer->step(batch); if (!r) ...; log(r->loss); }
//   trainer->saveCheckpoint("ckpt/checkpoint.safetensors", {});   // atomic
//
// A step runs @train_step (value and grad, then the optimizer update: one program, so a
// backend fuses and schedules it as a whole) with the batch, the update number and the learning
// rates of this step as the only inputs; the new weights and state stay on the device
// (CompileOptions::carriedResults) and only the loss comes back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/safetensors.h"
#include "train/data_parallel.h"
#include "train/training_package.h"

namespace wf::dist {
class Communicator;
}  // namespace wf::dist

namespace wf::train {

struct TrainerOptions {
  DeviceSpec device;
  CompileOptions compile;  // fuse, TF32, graphs, threads (boundArguments and carried results are the trainer's)
  bool withEval = true;    // compile the eval program too, when the package has one
  // Update parameters and optimizer state in place where the backend can (CompileOptions::
  // carryInPlace): one copy of them on the device, as PyTorch's optimizers hold, instead of two.
  // A step that then fails on the device leaves them half updated: the trainer refuses further
  // steps until a checkpoint is loaded.
  bool updateInPlace = true;
  // Micro-batches per optimizer update (gradient accumulation); 0: the package's
  // `training.accumulation_steps`.
  int64_t accumulation = 0;
  // Dropout in train steps (packages whose loss has dropout); off computes every dropout as the
  // identity, as the golden run does. The RNG state advances either way.
  bool dropout = true;
  // Data parallel: with compile.job set (one rank of a distributed job, world size 1 included)
  // the trainer runs @train_step_dp (train/data_parallel.h): gradients averaged over the ranks
  // in DDP's buckets before the update; the initial weights and optimizer state are rank 0's
  // (broadcast when the trainer opens); checkpoints are written by rank 0 only.
  DataParallelOptions dataParallel;
};

struct StepResult {
  int64_t step = 0;         // the update just made (1 for the first)
  // The loss of the update: with gradient accumulation, the mean of its micro-batches' losses
  // (what a PyTorch loop that adds up (loss / K).item() reports).
  double loss = 0;
  std::vector<double> microLosses;  // each micro-batch's loss, in order (one without accumulation)
  std::vector<double> lrs;  // the lr of each param group used by this update
  // Data parallel: every rank's `loss`, in rank order (`loss` is this rank's).
  std::vector<double> rankLosses;
  RunReport report;
};

class Trainer {
 public:
  static Expected<std::unique_ptr<Trainer>> open(const std::string& packageDir, const TrainerOptions& options);
  ~Trainer();

  const TrainingPackage& package() const { return package_; }
  const Module& module() const { return module_; }
  std::string deviceName() const;
  // Device memory the trainer's executables hold (weights, state, intermediates, workspaces).
  size_t deviceBytesInUse() const;
  // The train-step executable's memory by holder and its stats (memory plan, fusion), for
  // `train --profile`.
  std::vector<std::pair<std::string, size_t>> deviceMemoryBreakdown() const { return trainStep_->deviceMemoryBreakdown(); }
  ExecutableStats trainStepStats() const { return trainStep_->stats(); }
  // Updates made so far (0 before the first step, or the checkpoint's count after loading one).
  int64_t stepsDone() const { return stepsDone_; }
  // Micro-batches per update (TrainerOptions::accumulation, or the package's).
  int64_t accumulation() const { return accumulation_; }
  // Data parallel (TrainerOptions::compile.job): this rank and the world size; 0 and 1 otherwise.
  bool dataParallel() const { return hostComm_ != nullptr; }
  int rank() const;
  int worldSize() const;
  // The gradient buckets of the data-parallel step (indices into package().paramArguments()).
  const std::vector<std::vector<size_t>>& gradientBuckets() const { return buckets_; }
  // Data parallel: waits until every rank gets here (host communicator); nothing otherwise.
  Status barrier();

  // The batch tensors the loss program takes, in its argument order (names: package().lossArguments()).
  Status checkBatch(std::span<const Literal> batch) const;
  // One update on `batch`. A bad batch is refused before anything runs; a device error leaves
  // the weights and state as they were, or, with updateInPlace, possibly half updated (further
  // steps are then refused until loadCheckpoint()); a non-finite loss is reported as an error naming the step, and the weights are
  // then those of the failed update (inspect them with firstNonFinite()).
  Expected<StepResult> step(std::span<const Literal> batch);
  // One update over accumulation() micro-batches (each a batch as above): the gradients of each
  // are accumulated on the device (grad / K added to a carried accumulator), then one update.
  // Every micro-batch is checked before the first runs. A failure in a later micro-batch leaves
  // the weights and optimizer state as they were and clears the accumulators (buffers that the
  // earlier micro-batches updated, BatchNorm's running statistics, keep those updates).
  Expected<StepResult> step(std::span<const std::vector<Literal>> microBatches);
  // The loss, buffer updates and gradients (loss_value_and_grad) at the current weights, without
  // updating anything: for validation.
  Expected<std::vector<Literal>> valueAndGrad(std::span<const Literal> batch);
  // The eval program's outputs on an eval batch (the eval program's batch arguments, in order).
  Expected<std::vector<Literal>> evaluate(std::span<const Literal> evalBatch);

  // Current values, by name: every weight of the loss program (parameters, buffers, constants)
  // and the optimizer state. Copied to the host.
  Expected<std::vector<NamedLiteral>> weights();
  Expected<std::vector<NamedLiteral>> optimizerState();
  // The first weight or state tensor (in package order) holding a NaN or an infinity, "" if none.
  Expected<std::string> firstNonFinite();

  // Checkpoints: one safetensors file with every mutable weight ("weight.<name>"), the optimizer
  // state ("state.<name>"), the update count ("trainer.step") and `extra` integers of the caller
  // ("trainer.<key>": data position, RNG state), written atomically (temporary file, fsync,
  // rename, fsync of the directory): a crash during a save leaves the previous file intact.
  // Data parallel: rank 0 writes it (the ranks hold the same weights and state), and every rank
  // returns after a barrier, once the file is in place.
  Status saveCheckpoint(const std::string& path, const std::map<std::string, int64_t>& extra);
  // Writes a model package (docs/model-package.md) of the eval program with the current weights
  // to `dir`, which must not exist: `warpforge run`, `serve` and `bench` take it. Written into a
  // temporary directory renamed at the end, so a failure leaves nothing.
  Status exportInference(const std::string& dir);
  // Restores a checkpoint of this package; returns its `extra` integers.
  Expected<std::map<std::string, int64_t>> loadCheckpoint(const std::string& path);

 private:
  Trainer() = default;
  Status bindInitialState();
  // Data parallel: rank 0's values of `tensors` on every rank (in place).
  Status broadcastFromRankZero(std::vector<Literal*> tensors);
  // Data parallel: every rank's loss into r.rankLosses.
  Status gatherLosses(StepResult& r);
  // Data parallel: an error naming the first rank whose loss is not finite.
  Status otherRanksFinite(const StepResult& r);
  Status clearAccumulators();
  Status nonFiniteLoss(const StepResult& r);
  Expected<Literal> readBound(size_t trainStepArgument);

  TrainingPackage package_;
  TrainerOptions options_;
  Module module_;
  std::unique_ptr<Module> flatTrainStep_;  // @train_step with its calls inlined (what trainStep_ runs)
  Module evalModule_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Executable> trainStep_;
  std::unique_ptr<Executable> valueAndGrad_;  // compiled on first use
  std::unique_ptr<Executable> eval_;
  bool evalWeightsStale_ = true;
  // Bound arguments that no step changes (frozen parameters, constants, buffers the loss does
  // not update), as bound: a backend may release its copy once weight preprocessing has read it.
  std::map<size_t, Literal> fixedValues_;
  int64_t stepsDone_ = 0;
  // Set when a step failed after it may have written weights in place (updateInPlace): the
  // error, repeated by later steps until a checkpoint is loaded.
  std::string halfUpdated_;
  int64_t accumulation_ = 1;
  // Data parallel: the host communicator for broadcasts, loss gathering and barriers (the job's
  // world when it is gloo; a gloo communicator of the job's store beside an nccl world).
  std::shared_ptr<dist::Communicator> hostComm_;
  std::vector<std::vector<size_t>> buckets_;
};

}  // namespace wf::train
