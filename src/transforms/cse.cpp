// Common-subexpression elimination of pure ops (cse.h).
#include "transforms/cse.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"

namespace wf {
namespace {

}  // namespace

bool isPureOp(OpCode code) {
  switch (code) {
#define X(enumerator, name)
#define X_ELEMENTWISE(enumerator, name, operands) case OpCode::enumerator:
#include "ir/ops.def"
#undef X_ELEMENTWISE
#undef X
    case OpCode::Abs:
    case OpCode::BitcastConvert:
    case OpCode::Broadcast:
    case OpCode::BroadcastInDim:
    case OpCode::Clamp:
    case OpCode::Compare:
    case OpCode::Complex:
    case OpCode::Concatenate:
    case OpCode::Constant:
    case OpCode::Convert:
    case OpCode::Convolution:
    case OpCode::Dot:
    case OpCode::DotGeneral:
    case OpCode::DynamicSlice:
    case OpCode::Gather:
    case OpCode::Imag:
    case OpCode::Iota:
    case OpCode::IsFinite:
    case OpCode::Pad:
    case OpCode::Real:
    case OpCode::Reshape:
    case OpCode::Reverse:
    case OpCode::Select:
    case OpCode::Slice:
    case OpCode::Transpose:
      return true;
    default:
      return false;
  }
}

namespace {

size_t hashOf(const Operation& op) {
  size_t h = std::hash<int>()(static_cast<int>(op.code()));
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const Value* v : op.operands()) mix(std::hash<const void*>()(v));
  for (const auto& r : op.results()) mix(std::hash<std::string>()(r->type().toString()));
  mix(op.attributes().entries().size());
  return h;
}

bool sameComputation(const Operation& a, const Operation& b) {
  if (a.code() != b.code() || a.name() != b.name() || a.operands() != b.operands() ||
      a.numResults() != b.numResults() || a.numRegions() != 0 || b.numRegions() != 0)
    return false;
  for (size_t i = 0; i < a.numResults(); ++i)
    if (a.result(i)->type() != b.result(i)->type()) return false;
  return a.attributes() == b.attributes();
}

int eliminateInBlock(Block& block) {
  int removed = 0;
  // Nested blocks first, each on its own.
  for (auto& op : block.mutableOperations())
    for (const auto& region : op->regions())
      for (const auto& inner : region->blocks()) removed += eliminateInBlock(*inner);

  std::unordered_map<size_t, std::vector<Operation*>> seen;
  std::unordered_map<const Value*, Value*> replacement;
  std::unordered_set<const Operation*> dead;
  for (auto& owned : block.mutableOperations()) {
    Operation& op = *owned;
    // Operands first: an op whose operand was merged away now reads the survivor, so repeats of
    // a chain (reshape, then convert) merge link by link.
    replaceUses(op, replacement);
    if (!isPureOp(op.code()) || op.numRegions() != 0 || op.numResults() == 0) continue;
    std::vector<Operation*>& bucket = seen[hashOf(op)];
    auto match = std::find_if(bucket.begin(), bucket.end(), [&](const Operation* e) { return sameComputation(*e, op); });
    if (match == bucket.end()) {
      bucket.push_back(&op);
      continue;
    }
    for (size_t i = 0; i < op.numResults(); ++i) replacement[op.result(i)] = (*match)->result(i);
    dead.insert(&op);
    ++removed;
  }
  if (!dead.empty()) {
    auto& ops = block.mutableOperations();
    ops.erase(std::remove_if(ops.begin(), ops.end(), [&](const auto& op) { return dead.count(op.get()) != 0; }),
              ops.end());
  }
  return removed;
}

}  // namespace

int eliminateCommonSubexpressions(Operation& function) {
  int removed = 0;
  for (const auto& region : function.regions())
    for (const auto& block : region->blocks()) removed += eliminateInBlock(*block);
  return removed;
}

}  // namespace wf
