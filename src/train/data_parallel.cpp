#include "train/data_parallel.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "ir/builder.h"
#include "ir/verifier.h"

namespace wf::train {

std::vector<std::vector<size_t>> assignBuckets(std::span<const BucketTensor> tensors, std::span<const int64_t> limits) {
  struct Open {
    std::vector<size_t> members;
    int64_t bytes = 0;
    size_t limit = 0;  // index into `limits`
  };
  std::vector<std::vector<size_t>> result;
  std::vector<ElementType> typeOrder;  // element types by first appearance
  std::map<ElementType, Open> open;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ElementType key = tensors[i].dtype;
    if (!open.count(key)) typeOrder.push_back(key);
    Open& bucket = open[key];
    bucket.members.push_back(i);
    bucket.bytes += tensors[i].bytes;
    const int64_t limit = limits.empty() ? 0 : limits[std::min(bucket.limit, limits.size() - 1)];
    if (bucket.bytes >= limit) {
      result.push_back(std::move(bucket.members));
      const size_t next = bucket.limit + 1 < limits.size() ? bucket.limit + 1 : bucket.limit;
      bucket = Open();
      bucket.limit = next;
    }
  }
  for (ElementType key : typeOrder)
    if (!open[key].members.empty()) result.push_back(std::move(open[key].members));
  return result;
}

std::vector<std::vector<size_t>> gradientBuckets(const TrainingPackage& pkg, const DataParallelOptions& options) {
  // The optimized parameters in registration order (their loss argument numbers ascending), then
  // reversed: the order in which backward produces their gradients, as DDP assumes.
  std::vector<size_t> order(pkg.paramArguments().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return pkg.paramArguments()[a] > pkg.paramArguments()[b]; });
  std::vector<BucketTensor> tensors;
  for (size_t i : order) {
    const LossArgument& a = pkg.lossArguments()[pkg.paramArguments()[i]];
    int64_t elements = 1;
    for (int64_t d : a.shape) elements *= d;
    tensors.push_back({a.dtype, elements * static_cast<int64_t>(storageBytes(a.dtype))});
  }
  std::vector<std::vector<size_t>> buckets = assignBuckets(tensors, options.bucketLimits);
  for (std::vector<size_t>& bucket : buckets)
    for (size_t& member : bucket) member = order[member];
  return buckets;
}

namespace {

const char* kValueAndGrad = "loss_value_and_grad";

// replica_groups of one group holding every rank.
Attribute everyRank(int64_t worldSize) {
  Literal groups = Literal::zeros(Type::tensor({1, worldSize}, ElementType::kSI64));
  for (int64_t r = 0; r < worldSize; ++r) groups.setInt(r, r);
  return Attribute::denseElements(std::move(groups));
}

// DDP's allreduce_hook on one bucket's gradients: each divided by the world size, then one
// all_reduce (sum) of them all. Returns the averaged gradients in the same order (empty when the
// builder failed).
std::vector<Value*> averageBucket(OpBuilder& b, const std::vector<Value*>& grads, int64_t worldSize) {
  std::vector<Value*> scaled;
  // (x / 1 is x exactly: a job of one rank skips the pass over every gradient.)
  for (Value* g : grads)
    scaled.push_back(worldSize == 1 ? g : b.div(g, b.splat(g->type(), static_cast<double>(worldSize))));
  const ElementType element = grads.front()->type().elementType();
  const Location loc = b.location();
  Operation* reduce = b.create("stablehlo.all_reduce", scaled, {{"replica_groups", everyRank(worldSize)}}, {},
                               scaled.size(),
                               [&](Operation* op) { OpBuilder::addBinaryBody(op, "stablehlo.add", element, loc); });
  if (!b.ok()) return {};
  std::vector<Value*> averaged;
  for (size_t k = 0; k < scaled.size(); ++k) averaged.push_back(reduce->result(k));
  return averaged;
}

// DDP's allreduce_hook on every bucket, in bucket order. Returns the averaged gradients, indexed
// like `grads`.
std::vector<Value*> averageBuckets(OpBuilder& b, const std::vector<Value*>& grads,
                                   const std::vector<std::vector<size_t>>& buckets, int64_t worldSize) {
  std::vector<Value*> averaged(grads.size(), nullptr);
  for (const std::vector<size_t>& bucket : buckets) {
    std::vector<Value*> members;
    for (size_t i : bucket) members.push_back(grads[i]);
    std::vector<Value*> out = averageBucket(b, members, worldSize);
    if (!b.ok()) break;
    for (size_t k = 0; k < bucket.size(); ++k) averaged[bucket[k]] = out[k];
  }
  return averaged;
}

// @loss_value_and_grad's results on `operands`, its ops copied into the step (they are one flat
// block: autodiff inlines every call) with each bucket's allreduce_hook emitted right after the op
// that completes the bucket's gradients, buckets in the order they complete. A backend that runs
// the ops in order then starts a bucket's all-reduce while the rest of the backward pass runs, as
// DDP's Reducer launches a bucket once its last gradient is ready; behind a call, every
// all-reduce would wait for the whole backward pass. Fills `averaged` (indexed like the
// parameters) and returns the results (loss, buffer updates..., gradients...).
Expected<std::vector<Value*>> valueAndGradInline(OpBuilder& b, const Module& module, const std::vector<Value*>& operands,
                                                 const std::vector<std::vector<size_t>>& buckets, size_t firstGrad,
                                                 int64_t worldSize, std::vector<Value*>& averaged) {
  const Operation* vg = module.lookupFunction(kValueAndGrad);
  const Block& body = FuncOp(vg).body();
  if (body.numArguments() != operands.size())
    return internalError("data parallel: @" + std::string(kValueAndGrad) + " takes " +
                         std::to_string(body.numArguments()) + " arguments, the step has " +
                         std::to_string(operands.size()));
  const Operation* ret = body.operations().empty() ? nullptr : body.operations().back().get();
  if (!ret || ret->code() != OpCode::FuncReturn || ret->numOperands() < firstGrad + averaged.size())
    return internalError("data parallel: @" + std::string(kValueAndGrad) + " does not end in the return of its gradients");
  std::unordered_map<const Value*, Value*> mapping;
  for (size_t i = 0; i < operands.size(); ++i) mapping[body.argument(i)] = operands[i];

  // Per bucket, its gradients not yet computed; per op of the body, the buckets it computes a
  // gradient of (once per gradient).
  std::vector<size_t> pending(buckets.size(), 0);
  std::unordered_map<const Operation*, std::vector<size_t>> completes;
  for (size_t k = 0; k < buckets.size(); ++k)
    for (size_t i : buckets[k])
      if (const Operation* def = ret->operand(firstGrad + i)->definingOp()) {
        completes[def].push_back(k);
        ++pending[k];
      }
  auto emit = [&](size_t k) {
    std::vector<Value*> members;
    for (size_t i : buckets[k]) members.push_back(mapping.at(ret->operand(firstGrad + i)));
    std::vector<Value*> out = averageBucket(b, members, worldSize);
    for (size_t m = 0; m < out.size(); ++m) averaged[buckets[k][m]] = out[m];
  };
  // Buckets whose gradients are all arguments of the body go first.
  for (size_t k = 0; k < buckets.size(); ++k)
    if (pending[k] == 0) emit(k);
  for (const auto& op : body.operations()) {
    if (op.get() == ret) break;
    b.block()->append(cloneOperation(*op, mapping));
    auto it = completes.find(op.get());
    if (it == completes.end()) continue;
    std::vector<size_t> done;
    for (size_t k : it->second)
      if (--pending[k] == 0) done.push_back(k);
    std::sort(done.begin(), done.end());
    for (size_t k : done) emit(k);
    WF_RETURN_IF_ERROR(b.status());
  }
  WF_RETURN_IF_ERROR(b.status());
  std::vector<Value*> results;
  for (const Value* v : ret->operands()) results.push_back(mapping.at(v));
  return results;
}

// The optimizer update (pkg.optimizerEntry()) of the parameters among `lossArgs` with `grads`:
// (params..., grads..., state..., step, lr) -> (new params..., new state...).
Operation* callOptimizer(OpBuilder& b, const TrainingPackage& pkg, const std::vector<Value*>& lossArgs,
                         const std::vector<Value*>& grads, const std::vector<Value*>& stateArgs, Value* step,
                         Value* lr) {
  std::vector<Value*> operands;
  for (size_t a : pkg.paramArguments()) operands.push_back(lossArgs[a]);
  operands.insert(operands.end(), grads.begin(), grads.end());
  operands.insert(operands.end(), stateArgs.begin(), stateArgs.end());
  operands.push_back(step);
  operands.push_back(lr);
  return b.create("func.call", operands, {{"callee", Attribute::symbolRef(pkg.optimizerEntry())}}, {},
                  pkg.paramArguments().size() + pkg.state().size());
}

struct StepFunction {
  std::unique_ptr<Operation> fn;
  Block* body = nullptr;
  FunctionType type;
  Value* argument(const Type& t, const std::string& name) {
    Value* v = body->addArgument(t);
    v->setNameHint(name);
    type.inputs.push_back(t);
    return v;
  }
};

StepFunction newFunction(const std::string& name, const Location& here) {
  StepFunction f;
  f.fn = std::make_unique<Operation>("func.func", here);
  f.fn->setAttr("sym_name", Attribute::string(name));
  f.body = f.fn->addRegion()->addBlock();
  return f;
}

void finish(Module& module, StepFunction f, const std::vector<Value*>& results, const Location& here) {
  auto ret = std::make_unique<Operation>("func.return", here);
  for (Value* v : results) {
    ret->addOperand(v);
    f.type.results.push_back(v->type());
  }
  f.body->append(std::move(ret));
  f.fn->setAttr("function_type", Attribute::functionType(f.type));
  module.append(std::move(f.fn));
}

// The loss program's operands on this rank: the buffers the loss updates are taken from rank 0
// (DDP's broadcast_buffers, before every forward pass); the RNG state of dropout is not one of
// them (it is the same on every rank, from the same weights, as torch's generator is under one seed).
std::vector<Value*> lossOperands(OpBuilder& b, const TrainingPackage& pkg, const std::vector<Value*>& lossArgs,
                                 int64_t worldSize) {
  std::vector<Value*> operands = lossArgs;
  for (size_t a : pkg.bufferUpdateArguments()) {
    if (static_cast<int64_t>(a) == pkg.rngStateArgument()) continue;
    operands[a] = b.create("stablehlo.collective_broadcast", {lossArgs[a]}, {{"replica_groups", everyRank(worldSize)}})
                      ->result(0);
  }
  return operands;
}

}  // namespace

Status addDataParallelSteps(const TrainingPackage& pkg, Module& module, const DataParallelOptions& options) {
  if (options.worldSize < 1) return invalidArgument("data parallel: the world size must be at least 1");
  for (const char* fn : {kValueAndGrad, "train_step"})
    if (!module.lookupFunction(fn)) return invalidArgument("data parallel: the train-step module has no @" + std::string(fn));
  const int64_t n = options.worldSize;
  const std::vector<std::vector<size_t>> buckets = gradientBuckets(pkg, options);
  const size_t numParams = pkg.paramArguments().size(), numBuffers = pkg.bufferUpdateArguments().size(),
               numState = pkg.state().size();
  Location here;
  here.file = pkg.path(pkg.lossFile());
  here.line = 1;
  here.column = 1;
  const Type i64 = Type::tensor({}, ElementType::kSI64);
  const Type lrType = Type::tensor({static_cast<int64_t>(pkg.numParamGroups())}, ElementType::kF32);
  std::vector<Type> lossTypes;
  for (const LossArgument& a : pkg.lossArguments()) lossTypes.push_back(Type::tensor(a.shape, a.dtype));

  // @train_step_dp(loss args..., state..., step, lr) -> (loss, new params..., new buffers..., new state...)
  {
    StepFunction f = newFunction("train_step_dp", here);
    std::vector<Value*> lossArgs, stateArgs;
    for (size_t i = 0; i < lossTypes.size(); ++i) lossArgs.push_back(f.argument(lossTypes[i], pkg.lossArguments()[i].name));
    for (const StateTensor& s : pkg.state()) stateArgs.push_back(f.argument(Type::tensor(s.shape, s.dtype), s.name));
    Value* step = f.argument(i64, "step");
    Value* lr = f.argument(lrType, "lr");
    OpBuilder b(f.body, here, &module);
    std::vector<Value*> averaged(numParams, nullptr);
    WF_ASSIGN_OR_RETURN(std::vector<Value*> vg, valueAndGradInline(b, module, lossOperands(b, pkg, lossArgs, n), buckets,
                                                                   1 + numBuffers, n, averaged));
    Operation* update = callOptimizer(b, pkg, lossArgs, averaged, stateArgs, step, lr);
    WF_RETURN_IF_ERROR(b.status());
    std::vector<Value*> results = {vg[0]};
    for (size_t i = 0; i < numParams; ++i) results.push_back(update->result(i));
    for (size_t k = 0; k < numBuffers; ++k) results.push_back(vg[1 + k]);
    for (size_t s = 0; s < numState; ++s) results.push_back(update->result(numParams + s));
    finish(module, std::move(f), results, here);
  }

  // @train_step_accumulate_dp(loss args..., state..., grad_acc..., step, lr, micro_batch, micro_batches)
  //     -> (loss, new params..., new buffers..., new state..., new grad_acc...)
  {
    StepFunction f = newFunction("train_step_accumulate_dp", here);
    std::vector<Value*> lossArgs, stateArgs, accArgs;
    for (size_t i = 0; i < lossTypes.size(); ++i) lossArgs.push_back(f.argument(lossTypes[i], pkg.lossArguments()[i].name));
    for (const StateTensor& s : pkg.state()) stateArgs.push_back(f.argument(Type::tensor(s.shape, s.dtype), s.name));
    for (size_t a : pkg.paramArguments()) accArgs.push_back(f.argument(lossTypes[a], "grad_acc." + pkg.lossArguments()[a].name));
    Value* step = f.argument(i64, "step");
    Value* lr = f.argument(lrType, "lr");
    Value* micro = f.argument(i64, "micro_batch");
    Value* micros = f.argument(i64, "micro_batches");
    OpBuilder b(f.body, here, &module);
    Operation* vg = b.create("func.call", lossOperands(b, pkg, lossArgs, n), {{"callee", Attribute::symbolRef(kValueAndGrad)}},
                             {}, 1 + numBuffers + numParams);
    WF_RETURN_IF_ERROR(b.status());
    // grad_acc += grad / K on every micro-batch, as train_step_accumulate does; no communication.
    std::vector<Value*> grads;
    for (size_t i = 0; i < numParams; ++i) grads.push_back(vg->result(1 + numBuffers + i));
    std::vector<Value*> newAcc = accumulateGradients(b, accArgs, grads, micros);
    Value* last = b.compare(micro, b.sub(micros, b.scalar(ElementType::kSI64, 1)), "EQ");
    WF_RETURN_IF_ERROR(b.status());
    // Only the last micro-batch all-reduces and updates (DDP outside no_sync): a branch, so that
    // the others send nothing.
    Status branches = Status::ok();
    auto buildBranches = [&](Operation* op) {
      // then: average the accumulated gradients over the ranks, update, restart the accumulators.
      OpBuilder t(op->addRegion()->addBlock(), here, &module);
      std::vector<Value*> averaged = averageBuckets(t, newAcc, buckets, n);
      Operation* update = callOptimizer(t, pkg, lossArgs, averaged, stateArgs, step, lr);
      std::vector<Value*> thenResults;
      if (t.ok()) {
        for (size_t i = 0; i < numParams + numState; ++i) thenResults.push_back(update->result(i));
        for (Value* acc : newAcc) thenResults.push_back(t.zeros(acc->type()));
      }
      branches = t.status();
      auto thenRet = std::make_unique<Operation>("stablehlo.return", here);
      for (Value* v : thenResults) thenRet->addOperand(v);
      t.block()->append(std::move(thenRet));
      // else: parameters and state as they were, the accumulators carried on.
      Block* otherwise = op->addRegion()->addBlock();
      auto elseRet = std::make_unique<Operation>("stablehlo.return", here);
      for (size_t a : pkg.paramArguments()) elseRet->addOperand(lossArgs[a]);
      for (Value* s : stateArgs) elseRet->addOperand(s);
      for (Value* acc : newAcc) elseRet->addOperand(acc);
      otherwise->append(std::move(elseRet));
    };
    Operation* branch = b.create("stablehlo.if", {last}, {}, {}, 2 * numParams + numState, buildBranches);
    WF_RETURN_IF_ERROR(branches);
    WF_RETURN_IF_ERROR(b.status());
    std::vector<Value*> results = {vg->result(0)};
    for (size_t i = 0; i < numParams; ++i) results.push_back(branch->result(i));
    for (size_t k = 0; k < numBuffers; ++k) results.push_back(vg->result(1 + k));
    for (size_t s = 0; s < numState; ++s) results.push_back(branch->result(numParams + s));
    for (size_t i = 0; i < numParams; ++i) results.push_back(branch->result(numParams + numState + i));
    finish(module, std::move(f), results, here);
  }
  Status verified = verifyModule(module);
  if (!verified.isOk()) return internalError("the data-parallel train-step program does not verify: " + verified.message());
  return Status::ok();
}

}  // namespace wf::train
