// Hand-built IR for the printer and verifier tests (independent of the parser).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace wf::irtest {

inline Type t(std::vector<int64_t> shape, ElementType e = ElementType::kF32) { return Type::tensor(std::move(shape), e); }

// Builds ops into one block; every op gets its own line in "test.mlir" so errors can name it.
class BlockBuilder {
 public:
  explicit BlockBuilder(Block* block) : block_(block) {}
  Block* block() const { return block_; }

  Operation* op(const std::string& name, std::vector<Value*> operands, std::vector<Type> results,
                std::vector<NamedAttribute> attrs = {}) {
    auto o = std::make_unique<Operation>(name, Location{"test.mlir", nextLine_++, 5, ""});
    for (Value* v : operands) o->addOperand(v);
    for (Type& r : results) o->addResult(std::move(r));
    for (auto& [k, v] : attrs) o->setAttr(k, std::move(v));
    lastLine_ = nextLine_ - 1;
    return block_->append(std::move(o));
  }
  Value* value(const std::string& name, std::vector<Value*> operands, Type result,
               std::vector<NamedAttribute> attrs = {}) {
    return op(name, std::move(operands), {std::move(result)}, std::move(attrs))->result(0);
  }
  // The line the most recent op was given.
  int lastLine() const { return lastLine_; }

  static inline int nextLine_ = 10;

 private:
  Block* block_;
  int lastLine_ = 0;
};

// func.func @name(args) -> results with an empty entry block.
inline Operation* addFunction(Module& m, const std::string& name, std::vector<Type> args, std::vector<Type> results) {
  auto op = std::make_unique<Operation>("func.func", Location{"test.mlir", 1, 1, ""});
  op->setAttr("sym_name", Attribute::string(name));
  op->setAttr("function_type", Attribute::functionType(FunctionType{args, results}));
  Block* body = op->addRegion()->addBlock();
  for (Type& a : args) body->addArgument(std::move(a));
  return m.append(std::move(op));
}

inline Block* entry(Operation* func) { return &func->region(0).front(); }

// A region on `op` with one block taking `args`.
inline Block* addBlockRegion(Operation* op, std::vector<Type> args) {
  Block* b = op->addRegion()->addBlock();
  for (Type& a : args) b->addArgument(std::move(a));
  return b;
}

inline Attribute i64s(std::vector<int64_t> v) { return Attribute::denseArray(ElementType::kSI64, std::move(v)); }
inline Attribute intList(const std::vector<int64_t>& v) {
  std::vector<Attribute> elems;
  for (int64_t x : v) elems.push_back(Attribute::integer(x));
  return Attribute::array(std::move(elems));
}

}  // namespace wf::irtest
