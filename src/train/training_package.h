// Training packages (docs/training.md): what `warpforge.export_training` writes, read and
// cross-checked against its programs.
//
//   auto pkg = wf::train::TrainingPackage::open("out/bert-qa");   // manifest + programs checked
//   auto module = pkg->buildTrainModule();                          // @train_step and friends
//
// A model package (inference) or a directory that is no package is refused with an error that
// says what it is and how to make a training package.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/ir.h"
#include "runtime/package.h"
#include "train/lr_schedule.h"
#include "support/status.h"

namespace wf {
class OpBuilder;
}

namespace wf::train {

// grad_acc + grad / micro_batches for each gradient: one micro-batch of gradient accumulation
// (train_step_accumulate's, and the data-parallel step's). `microBatches`: tensor<i64>.
std::vector<Value*> accumulateGradients(OpBuilder& b, const std::vector<Value*>& accumulators,
                                        const std::vector<Value*>& grads, Value* microBatches);

// One argument of the loss program (`training.loss.arguments`).
struct LossArgument {
  std::string name;
  size_t index = 0;
  std::string kind;  // batch | parameter | buffer | constant
  bool trainable = false;  // parameters the optimizer updates
  // A tied parameter's other name (GPT-2's lm_head.weight): the loss argument number of the
  // parameter it is; the trainer passes that one's value here. -1: not tied.
  int64_t tiedTo = -1;
  ElementType dtype = ElementType::kF32;
  std::vector<int64_t> shape;
};

// One tensor of the optimizer state (`training.optimizer.state`).
struct StateTensor {
  std::string name;  // "<slot>.<param>"
  std::string param;
  ElementType dtype = ElementType::kF32;
  std::vector<int64_t> shape;
};

struct EvalArgument {
  std::string name;
  bool isBatch = false;
  bool isConstant = false;  // a tensor of the eval trace only, in the eval constants file
  size_t weight = 0;  // a weight: the loss argument number
  ElementType dtype = ElementType::kF32;
  std::vector<int64_t> shape;
};

class TrainingPackage {
 public:
  static constexpr const char* kManifestFile = "manifest.json";
  static constexpr const char* kFormat = "warpforge.training-package";

  // Reads manifest.json and checks it: the format, every list it names, the loss and optimizer
  // programs' signatures against it. Errors name the file and the entry.
  static Expected<TrainingPackage> open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& relative) const;
  const std::string& name() const { return name_; }
  const nlohmann::json& manifest() const { return manifest_; }

  const std::vector<LossArgument>& lossArguments() const { return lossArguments_; }
  size_t numBatchArguments() const { return numBatch_; }  // the loss program's first arguments
  // The argument whose value weight argument `i` has: itself, or the parameter it is tied to.
  size_t valueArgument(size_t i) const {
    return lossArguments_[i].tiedTo >= 0 ? static_cast<size_t>(lossArguments_[i].tiedTo) : i;
  }
  // Loss argument numbers of the optimized parameters, in the update program's order.
  const std::vector<size_t>& paramArguments() const { return paramArguments_; }
  // Loss argument numbers of the buffers the loss program updates, in its result order (after the loss).
  const std::vector<size_t>& bufferUpdateArguments() const { return bufferUpdateArguments_; }
  const std::vector<StateTensor>& state() const { return state_; }
  size_t numParamGroups() const { return numGroups_; }
  const LrSchedule& schedule() const { return schedule_; }
  const std::string& optimizerKind() const { return optimizerKind_; }
  const std::string& lossFile() const { return lossFile_; }
  const std::string& lossEntry() const { return lossEntry_; }
  const std::string& optimizerFile() const { return optimizerFile_; }
  const std::string& optimizerEntry() const { return optimizerEntry_; }
  const std::string& weightsFile() const { return weightsFile_; }
  const std::string& stateFile() const { return stateFile_; }
  // The eval program (`training.eval`), when the package has one: the model in eval mode on a
  // batch, e.g. `(input_ids, token_type_ids, attention_mask, weights...) -> (start_logits,
  // end_logits)`. Its arguments are batch tensors (by name) and weights of the loss program.
  bool hasEval() const { return !evalFile_.empty(); }
  const std::string& evalFile() const { return evalFile_; }
  const std::string& evalEntry() const { return evalEntry_; }
  const std::vector<EvalArgument>& evalArguments() const { return evalArguments_; }
  const std::vector<std::string>& evalOutputs() const { return evalOutputs_; }
  const std::string& evalConstantsFile() const { return evalConstantsFile_; }
  // Tolerances by row name ("loss", "gradients", "weights"), DESIGN.md's table by default.
  Tolerances tolerance(const std::string& row) const;
  // Micro-batches per optimizer update the golden run was made with (`training.accumulation_steps`,
  // 1 when absent); the trainer's default.
  int64_t accumulationSteps() const { return accumulationSteps_; }
  // Dropout (`training.dropout`): the loss argument holding the RNG state (tensor<2xui64>, a buffer
  // each step advances) and the dropout switch (tensor<i1>, a constant: true in the weights file),
  // -1 when the loss has no dropout; whether the golden run was made with dropout off.
  int64_t rngStateArgument() const { return rngStateArgument_; }
  int64_t dropoutSwitchArgument() const { return dropoutSwitchArgument_; }
  bool goldenWithoutDropout() const { return goldenWithoutDropout_; }

  // The loss and optimizer programs in one module with
  //   @loss_value_and_grad(loss args...) -> (loss, buffer updates..., grads of the params...)
  //   @train_step(loss args..., state..., step: tensor<i64>, lr: tensor<Gxf32>)
  //       -> (loss, new params..., new buffers..., new state...)
  //   @train_step_accumulate(loss args..., state..., grad_acc..., step: tensor<i64>,
  //                          lr: tensor<Gxf32>, micro_batch: tensor<i64>, micro_batches: tensor<i64>)
  //       -> (loss, new params..., new buffers..., new state..., new grad_acc...)
  // (one micro-batch of gradient accumulation: grad_acc += grad / micro_batches; at the last
  // micro-batch, micro_batch == micro_batches - 1, the update with grad_acc, which then restarts
  // at zero; before it the parameters and state come back unchanged).
  // The package's train_step.mlir when it has one (checked against this layout), else derived
  // from loss.mlir and optimizer.mlir (what `warpforge autodiff PKG` writes). Verified.
  Expected<Module> buildTrainModule() const;
  // Always derived from loss.mlir and optimizer.mlir, whatever the package holds.
  Expected<Module> deriveTrainModule() const;

  // train_step's layout: the argument each carried result replaces, for Executable binding.
  size_t trainStepStateArgument(size_t stateIndex) const { return lossArguments_.size() + stateIndex; }
  size_t trainStepStepArgument() const { return lossArguments_.size() + state_.size(); }
  size_t trainStepLrArgument() const { return trainStepStepArgument() + 1; }
  // (result, argument) pairs of train_step: new params, new buffers, new state.
  std::vector<std::pair<size_t, size_t>> trainStepCarried() const;
  // train_step_accumulate's layout: the state at the same places as train_step's, then one
  // gradient accumulator per optimized parameter, then step, lr, micro_batch, micro_batches.
  size_t accumulatorArgument(size_t paramIndex) const { return lossArguments_.size() + state_.size() + paramIndex; }
  // (result, argument) pairs of train_step_accumulate: train_step's, then the accumulators.
  std::vector<std::pair<size_t, size_t>> trainStepAccumulateCarried() const;

 private:
  Status addAccumulateStep(Module& module, const std::vector<Type>& lossArgTypes, const std::string& valueAndGrad,
                           const Location& here) const;

  std::string dir_, name_;
  nlohmann::json manifest_;
  std::vector<LossArgument> lossArguments_;
  size_t numBatch_ = 0;
  std::vector<size_t> paramArguments_, bufferUpdateArguments_;
  std::vector<StateTensor> state_;
  size_t numGroups_ = 0;
  int64_t accumulationSteps_ = 1;
  int64_t rngStateArgument_ = -1, dropoutSwitchArgument_ = -1;
  bool goldenWithoutDropout_ = false;
  LrSchedule schedule_;
  std::string optimizerKind_, lossFile_, lossEntry_, optimizerFile_, optimizerEntry_, weightsFile_, stateFile_;
  std::string evalFile_, evalEntry_, evalConstantsFile_;
  std::string trainStepFile_;  // train_step.mlir when the package has it (else derived)
  std::vector<EvalArgument> evalArguments_;
  std::vector<std::string> evalOutputs_;
};

}  // namespace wf::train
