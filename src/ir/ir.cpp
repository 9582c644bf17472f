#include "ir/ir.h"

#include <array>

namespace wf {
namespace {

constexpr std::array<std::string_view, kNumOpCodes> kOpNames = {
#define X(e, name) name,
#include "ir/ops.def"
#undef X
};

}  // namespace

std::string_view opCodeName(OpCode code) {
  auto i = static_cast<size_t>(code);
  return i < kOpNames.size() ? kOpNames[i] : std::string_view("<unknown>");
}

OpCode opCodeFromName(std::string_view name) {
  static const std::map<std::string_view, OpCode> byName = [] {
    std::map<std::string_view, OpCode> m;
    for (size_t i = 0; i < kOpNames.size(); ++i) m.emplace(kOpNames[i], static_cast<OpCode>(i));
    return m;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? OpCode::kUnknown : it->second;
}

std::string Location::toString() const {
  std::string s = file.empty() ? "<input>" : file;
  if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(column);
  return s;
}

Value* Block::addArgument(Type type) {
  arguments_.push_back(std::make_unique<Value>(std::move(type), nullptr, this, static_cast<int>(arguments_.size())));
  return arguments_.back().get();
}

Operation* Block::append(std::unique_ptr<Operation> op) {
  op->setParentBlock(this);
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

Block* Region::addBlock() {
  blocks_.push_back(std::make_unique<Block>(this));
  return blocks_.back().get();
}

Operation::Operation(std::string name, Location loc)
    : name_(std::move(name)), code_(opCodeFromName(name_)), loc_(std::move(loc)) {}

Operation::~Operation() = default;

Operation* Operation::parentOp() const {
  if (!parent_ || !parent_->parent()) return nullptr;
  return parent_->parent()->parent();
}

Value* Operation::addResult(Type type) {
  results_.push_back(std::make_unique<Value>(std::move(type), this, nullptr, static_cast<int>(results_.size())));
  return results_.back().get();
}

Region* Operation::addRegion() {
  regions_.push_back(std::make_unique<Region>(this));
  return regions_.back().get();
}

std::string Operation::describe() const { return "'" + name_ + "' at " + loc_.toString(); }

std::string_view FuncOp::symName() const {
  const Attribute* a = op_->attr("sym_name");
  return a ? std::string_view(a->stringValue()) : std::string_view();
}

FunctionType FuncOp::functionType() const {
  const Attribute* a = op_->attr("function_type");
  if (a && a->isFunctionType()) return a->functionTypeValue();
  return {};
}

bool FuncOp::isPublic() const {
  const Attribute* a = op_->attr("sym_visibility");
  return !a || a->stringValue() != "private";
}

Operation* Module::append(std::unique_ptr<Operation> op) {
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

std::vector<FuncOp> Module::functions() const {
  std::vector<FuncOp> out;
  for (const auto& op : ops_)
    if (op->code() == OpCode::FuncFunc) out.emplace_back(op.get());
  return out;
}

const Operation* Module::lookupFunction(std::string_view symName) const {
  for (const auto& op : ops_)
    if (op->code() == OpCode::FuncFunc && FuncOp(op.get()).symName() == symName) return op.get();
  return nullptr;
}

Operation* Module::lookupFunction(std::string_view symName) {
  return const_cast<Operation*>(static_cast<const Module&>(*this).lookupFunction(symName));
}

}  // namespace wf
