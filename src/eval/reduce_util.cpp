#include "eval/reduce_util.h"

#include <atomic>
#include <bit>

#include "support/thread_pool.h"

namespace wf::reduce_detail {

namespace {
std::atomic<bool> gFastPaths{true};
}  // namespace

bool fastPathsEnabled() { return gFastPaths.load(std::memory_order_relaxed); }
void setFastPathsEnabled(bool enabled) { gFastPaths.store(enabled, std::memory_order_relaxed); }

void parallelRanges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  parallelFor(n, std::max<int64_t>(1, grain), fn);
}

namespace {

// The single op of a two-op block `%r = OP(...) ; return %r`, or nullptr.
const Operation* singleOpReturned(const Region& region) {
  if (region.empty() || region.blocks().size() != 1) return nullptr;
  const Block& block = region.front();
  if (block.operations().size() != 2) return nullptr;
  const Operation* op = block.operations()[0].get();
  const Operation* ret = block.operations()[1].get();
  if (ret->code() != OpCode::Return && ret->code() != OpCode::FuncReturn) return nullptr;
  if (ret->numOperands() != 1 || op->numResults() != 1 || ret->operand(0) != op->result(0)) return nullptr;
  return op;
}

bool isArg(const Value* v, const Block& block, size_t i) {
  return i < block.numArguments() && v == block.argument(i);
}

}  // namespace

BinaryKind matchBinaryBody(const Region& region, size_t lhsArg, size_t rhsArg) {
  const Operation* op = singleOpReturned(region);
  if (!op || op->numOperands() != 2) return BinaryKind::kNone;
  const Block& block = region.front();
  bool direct = isArg(op->operand(0), block, lhsArg) && isArg(op->operand(1), block, rhsArg);
  bool swapped = isArg(op->operand(0), block, rhsArg) && isArg(op->operand(1), block, lhsArg);
  if (!direct && !swapped) return BinaryKind::kNone;
  // The op must compute in the arguments' own type (no implicit promotion inside the body).
  if (op->result(0)->type() != op->operand(0)->type()) return BinaryKind::kNone;
  switch (op->code()) {
    case OpCode::Add: return BinaryKind::kAdd;
    case OpCode::Multiply: return BinaryKind::kMul;
    case OpCode::Maximum: return BinaryKind::kMax;
    case OpCode::Minimum: return BinaryKind::kMin;
    case OpCode::And: return BinaryKind::kAnd;
    case OpCode::Or: return BinaryKind::kOr;
    case OpCode::Xor: return BinaryKind::kXor;
    default: return BinaryKind::kNone;
  }
}

std::optional<CompareMatch> matchCompareBody(const Region& region, size_t lhsArg, size_t rhsArg) {
  const Operation* op = singleOpReturned(region);
  if (!op || op->code() != OpCode::Compare || op->numOperands() != 2) return std::nullopt;
  const Block& block = region.front();
  bool direct = isArg(op->operand(0), block, lhsArg) && isArg(op->operand(1), block, rhsArg);
  bool swapped = isArg(op->operand(0), block, rhsArg) && isArg(op->operand(1), block, lhsArg);
  if (!direct && !swapped) return std::nullopt;
  const Attribute* dirAttr = op->attr("comparison_direction");
  if (!dirAttr) return std::nullopt;
  const std::string& d = dirAttr->stringValue();
  CompareDir dir;
  if (d == "EQ") dir = CompareDir::kEQ;
  else if (d == "NE") dir = CompareDir::kNE;
  else if (d == "LT") dir = CompareDir::kLT;
  else if (d == "LE") dir = CompareDir::kLE;
  else if (d == "GT") dir = CompareDir::kGT;
  else if (d == "GE") dir = CompareDir::kGE;
  else return std::nullopt;
  if (swapped) {
    switch (dir) {
      case CompareDir::kLT: dir = CompareDir::kGT; break;
      case CompareDir::kLE: dir = CompareDir::kGE; break;
      case CompareDir::kGT: dir = CompareDir::kLT; break;
      case CompareDir::kGE: dir = CompareDir::kLE; break;
      default: break;
    }
  }
  bool totalOrder = false;
  if (const Attribute* t = op->attr("compare_type")) {
    const std::string& ct = t->stringValue();
    if (ct == "TOTALORDER") totalOrder = true;
    else if (ct != "FLOAT" && ct != "SIGNED" && ct != "UNSIGNED" && ct != "NOTYPE") return std::nullopt;
    // A SIGNED compare of unsigned data (or the reverse) reinterprets bits: leave it to the
    // general path.
    ElementType et = op->operand(0)->type().elementType();
    if ((ct == "SIGNED" && isUnsignedInteger(et)) || (ct == "UNSIGNED" && isSignedInteger(et))) return std::nullopt;
  }
  return CompareMatch{dir, totalOrder};
}

Expected<std::vector<int64_t>> intListAttr(const Operation& op, const char* name, size_t rank, int64_t fallback) {
  const Attribute* a = op.attr(name);
  if (!a || a->isNone()) return std::vector<int64_t>(rank, fallback);
  auto list = a->asIntList();
  if (!list) return invalidArgument(op.describe() + ": attribute '" + name + "' is not a list of integers");
  if (list->size() != rank)
    return invalidArgument(op.describe() + ": attribute '" + name + "' has " + std::to_string(list->size()) +
                           " entries, expected " + std::to_string(rank));
  return *list;
}

Expected<std::vector<std::pair<int64_t, int64_t>>> paddingAttr(const Operation& op, size_t rank) {
  std::vector<std::pair<int64_t, int64_t>> pad(rank, {0, 0});
  const Attribute* a = op.attr("padding");
  if (!a || a->isNone()) return pad;
  auto list = a->asIntList();
  if (!list || list->size() != 2 * rank)
    return invalidArgument(op.describe() + ": attribute 'padding' must be " + std::to_string(rank) +
                           "x2 integers");
  for (size_t i = 0; i < rank; ++i) pad[i] = {(*list)[2 * i], (*list)[2 * i + 1]};
  return pad;
}

Literal scalarAt(const Literal& src, int64_t i) {
  Literal s = Literal::zeros(Type::scalar(src.elementType()));
  size_t bytes = static_cast<size_t>(storageBytes(src.elementType()));
  std::memcpy(s.data(), src.data() + static_cast<size_t>(i) * bytes, bytes);
  return s;
}

Literal scalarAtAs(const Literal& src, int64_t i, ElementType to) {
  ElementType from = src.elementType();
  if (from == to) return scalarAt(src, i);
  Literal s = Literal::zeros(Type::scalar(to));
  if (isComplex(to)) {
    s.setComplex(0, src.getComplex(i));
  } else if (isFloat(to)) {
    s.setDouble(0, src.getDouble(i));
  } else {
    s.setInt(0, src.getInt(i));
  }
  return s;
}

void storeScalar(Literal& dst, int64_t i, const Literal& scalar) {
  size_t bytes = static_cast<size_t>(storageBytes(dst.elementType()));
  std::memcpy(dst.data() + static_cast<size_t>(i) * bytes, scalar.data(), bytes);
}

Status checkRegionResults(const Operation& op, const std::vector<Literal>& results,
                          const std::vector<ElementType>& types) {
  if (results.size() != types.size())
    return invalidArgument(op.describe() + ": region returned " + std::to_string(results.size()) +
                           " values, expected " + std::to_string(types.size()));
  for (size_t i = 0; i < results.size(); ++i) {
    const Literal& r = results[i];
    if (!r.type().isTensor() || r.numElements() != 1 || r.elementType() != types[i])
      return invalidArgument(op.describe() + ": region result #" + std::to_string(i) + " is " +
                             r.type().toString() + ", expected tensor<" +
                             std::string(elementTypeName(types[i])) + ">");
  }
  return Status::ok();
}

ElementType regionArgType(const Region& region, size_t i) {
  return region.front().argument(i)->type().elementType();
}

int64_t totalOrderKey(double v) {
  // Sign-magnitude bits to a two's-complement order: negative values reverse their magnitude.
  auto bits = std::bit_cast<int64_t>(v);
  return bits < 0 ? static_cast<int64_t>(static_cast<uint64_t>(bits) ^ 0x7FFFFFFFFFFFFFFFull) : bits;
}

}  // namespace wf::reduce_detail
