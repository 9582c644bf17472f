// Dead-code removal (dead_ops.h).
#include "transforms/dead_ops.h"

#include <cstddef>
#include <unordered_map>

namespace wf {

bool hasSideEffects(const Operation& op) {
  switch (op.code()) {
    case OpCode::CustomCall: case OpCode::Rng: case OpCode::RngBitGenerator: case OpCode::Infeed:
    case OpCode::Outfeed: case OpCode::Send: case OpCode::Recv: case OpCode::AllGather:
    case OpCode::AllReduce: case OpCode::AllToAll: case OpCode::CollectiveBroadcast:
    case OpCode::CollectivePermute: case OpCode::CollectiveReduce: case OpCode::ReduceScatter:
    case OpCode::AfterAll: case OpCode::CreateToken: case OpCode::AsyncStart: case OpCode::AsyncDone:
    case OpCode::FuncCall: case OpCode::FuncReturn: case OpCode::Return: case OpCode::Composite:
    case OpCode::OptimizationBarrier: case OpCode::kUnknown:
    case OpCode::CheckExpectEq: case OpCode::CheckExpectEqConst: case OpCode::CheckExpectAlmostEq:
    case OpCode::CheckExpectAlmostEqConst: case OpCode::CheckExpectClose: case OpCode::CheckExpectSerializedEq:
    case OpCode::InterpreterRunParallel: case OpCode::InterpreterProbe: case OpCode::InterpreterPrint:
      return true;
    default:
      return op.numRegions() > 0;
  }
}

namespace {

// Counts the uses of every value under `block`.
void countUses(const Block& block, std::unordered_map<const Value*, int>& uses) {
  for (const auto& op : block.operations()) {
    for (const Value* v : op->operands()) ++uses[v];
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks()) countUses(*b, uses);
  }
}

void removeDeadOps(Block& block, std::unordered_map<const Value*, int>& uses) {
  for (const auto& op : block.operations())
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks()) removeDeadOps(*b, uses);
  auto& ops = block.mutableOperations();
  for (size_t i = ops.size(); i-- > 0;) {
    const Operation& op = *ops[i];
    if (hasSideEffects(op) || op.numResults() == 0) continue;
    bool used = false;
    for (const auto& r : op.results()) used = used || uses[r.get()] > 0;
    if (used) continue;
    for (const Value* v : op.operands()) --uses[v];
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace

void removeDeadOps(Block& block) {
  std::unordered_map<const Value*, int> uses;
  countUses(block, uses);
  removeDeadOps(block, uses);
}

}  // namespace wf
