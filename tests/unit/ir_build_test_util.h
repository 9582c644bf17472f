// Building small IR modules by hand in tests (independent of the parser), plus custom_call
// targets that give such tests arithmetic without depending on other kernel families.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "eval/custom_call.h"
#include "eval/interpreter.h"
#include "ir/ir.h"

namespace wf::testing {

inline Type i64() { return Type::scalar(ElementType::kSI64); }
inline Type i1() { return Type::scalar(ElementType::kI1); }
inline Type tensorOf(std::vector<int64_t> shape, ElementType e = ElementType::kSI64) {
  return Type::tensor(std::move(shape), e);
}

inline Literal ints(std::vector<int64_t> shape, const std::vector<int64_t>& values,
                    ElementType e = ElementType::kSI64) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), e));
  for (size_t i = 0; i < values.size(); ++i) l.setInt(static_cast<int64_t>(i), values[i]);
  return l;
}

inline std::vector<int64_t> valuesOf(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.numElements(); ++i) v.push_back(l.getInt(i));
  return v;
}

// Appends an op to `block`; returns it. Each op gets a distinct line so errors name it.
inline Operation* addOp(Block* block, const std::string& name, std::vector<Value*> operands,
                        std::vector<Type> results, std::vector<NamedAttribute> attrs = {}) {
  static int line = 1;
  auto op = std::make_unique<Operation>(name, Location{"test.mlir", ++line, 3, ""});
  for (Value* v : operands) op->addOperand(v);
  for (Type& t : results) op->addResult(std::move(t));
  for (auto& [k, v] : attrs) op->setAttr(k, std::move(v));
  return block->append(std::move(op));
}

inline Block* addRegion(Operation* op, std::vector<Type> args = {}) {
  Block* b = op->addRegion()->addBlock();
  for (Type& t : args) b->addArgument(std::move(t));
  return b;
}

inline Value* constant(Block* block, Literal value) {
  Type t = value.type();
  return addOp(block, "stablehlo.constant", {}, {t}, {{"value", Attribute::denseElements(std::move(value))}})
      ->result(0);
}

inline void ret(Block* block, std::vector<Value*> values, const char* name = "stablehlo.return") {
  addOp(block, name, std::move(values), {});
}

// A custom_call of one of the test targets below.
inline Value* call(Block* block, const std::string& target, std::vector<Value*> operands, Type result) {
  return addOp(block, "stablehlo.custom_call", std::move(operands), {std::move(result)},
               {{"call_target_name", Attribute::string(target)}})
      ->result(0);
}

// func.func @name(args) -> results, with an empty body block.
inline Operation* addFunction(Module& m, const std::string& name, std::vector<Type> args,
                              std::vector<Type> results) {
  auto op = std::make_unique<Operation>("func.func", Location{"test.mlir", 1, 1, ""});
  op->setAttr("sym_name", Attribute::string(name));
  op->setAttr("function_type", Attribute::functionType(FunctionType{args, results}));
  Block* body = op->addRegion()->addBlock();
  for (Type& t : args) body->addArgument(std::move(t));
  return m.append(std::move(op));
}
inline Block* bodyOf(Operation* func) { return &func->region(0).front(); }

// Elementwise integer helpers as custom_call targets: test.add, test.mul, test.lt (-> i1),
// test.fail (always an error).
inline void registerTestTargets() {
  auto binary = [](auto f, bool boolResult) {
    return [f, boolResult](const Operation& op, std::span<const Literal> in, EvalContext&)
               -> Expected<std::vector<Literal>> {
      Type t = boolResult ? in[0].type().withElementType(ElementType::kI1) : in[0].type();
      Literal out = Literal::zeros(t);
      for (int64_t i = 0; i < out.numElements(); ++i) out.setInt(i, f(in[0].getInt(i), in[1].getInt(i)));
      return std::vector<Literal>{out};
    };
  };
  registerCustomCall("test.add", binary([](int64_t a, int64_t b) { return a + b; }, false));
  registerCustomCall("test.mul", binary([](int64_t a, int64_t b) { return a * b; }, false));
  registerCustomCall("test.lt", binary([](int64_t a, int64_t b) -> int64_t { return a < b; }, true));
  registerCustomCall("test.fail", [](const Operation& op, std::span<const Literal>, EvalContext&)
                                      -> Expected<std::vector<Literal>> {
    return invalidArgument(op.describe() + ": test.fail called");
  });
}

// Runs @name of `m` as a single process.
inline Expected<std::vector<Literal>> runFunction(const Module& m, const std::string& name,
                                                  std::vector<Literal> args = {}) {
  EvalContext ctx;
  ctx.module = &m;
  const Operation* f = m.lookupFunction(name);
  if (!f) return notFound("no function @" + name);
  return Interpreter::callFunction(*f, std::move(args), ctx);
}

}  // namespace wf::testing
