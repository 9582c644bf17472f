// Builders for the reduction-family kernel tests: ops with their regions made by hand, so the
// kernels are tested without the parser, and helpers to run a kernel and make random Literals.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "eval/reduce_util.h"

namespace wf::testing_util {

inline std::unique_ptr<Operation> newOp(const std::string& name) {
  return std::make_unique<Operation>(name, Location{"test.mlir", 1, 1, ""});
}

// Appends `%r = name(a, b) : resultType` to `block`; returns %r.
inline Value* emit(Block* block, const std::string& name, std::vector<Value*> operands, Type resultType,
                   std::vector<NamedAttribute> attrs = {}) {
  auto op = newOp(name);
  for (Value* v : operands) op->addOperand(v);
  for (auto& [k, a] : attrs) op->setAttr(k, a);
  Value* r = op->addResult(std::move(resultType));
  block->append(std::move(op));
  return r;
}

inline void emitReturn(Block* block, std::vector<Value*> values) {
  auto ret = newOp("stablehlo.return");
  for (Value* v : values) ret->addOperand(v);
  block->append(std::move(ret));
}

inline Attribute cmpDir(const std::string& d) { return Attribute::enumValue("stablehlo", "comparison_direction", d); }
inline Attribute cmpType(const std::string& t) { return Attribute::enumValue("stablehlo", "comparison_type", t); }

// Adds a region computing `bodyOp(arg0, arg1)` on scalars of type t.
inline void addBinaryRegion(Operation& op, const std::string& bodyOp, ElementType t) {
  Block* b = op.addRegion()->addBlock();
  Value* a0 = b->addArgument(Type::scalar(t));
  Value* a1 = b->addArgument(Type::scalar(t));
  emitReturn(b, {emit(b, bodyOp, {a0, a1}, Type::scalar(t))});
}

// Adds a region `compare dir, arg(lhs), arg(rhs)` over `numArgs` scalar arguments of the given types.
inline void addCompareRegion(Operation& op, const std::vector<ElementType>& argTypes, size_t lhs, size_t rhs,
                             const std::string& dir, const std::string& compareType = "") {
  Block* b = op.addRegion()->addBlock();
  std::vector<Value*> args;
  for (ElementType t : argTypes) args.push_back(b->addArgument(Type::scalar(t)));
  std::vector<NamedAttribute> attrs{{"comparison_direction", cmpDir(dir)}};
  if (!compareType.empty()) attrs.push_back({"compare_type", cmpType(compareType)});
  emitReturn(b, {emit(b, "stablehlo.compare", {args[lhs], args[rhs]}, Type::scalar(ElementType::kI1), attrs)});
}

inline Expected<std::vector<Literal>> runKernel(const Operation& op, std::vector<Literal> operands) {
  const Kernel* k = KernelRegistry::instance().find(op.code());
  if (!k) return unimplemented("no kernel for " + op.name());
  EvalContext ctx;
  return (*k)(op, operands, ctx);
}

// True when the elementwise kernels a general-path region needs are registered.
inline bool haveKernels(std::initializer_list<OpCode> codes) {
  for (OpCode c : codes)
    if (!KernelRegistry::instance().find(c)) return false;
  return true;
}

// Runs with fast paths off for the scope's duration.
struct GeneralPathOnly {
  GeneralPathOnly() { reduce_detail::setFastPathsEnabled(false); }
  ~GeneralPathOnly() { reduce_detail::setFastPathsEnabled(true); }
};

inline Literal randomLiteral(const std::vector<int64_t>& shape, ElementType t, std::mt19937& rng, double lo = -1,
                             double hi = 1) {
  Literal l = Literal::zeros(Type::tensor(shape, t));
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
  for (int64_t i = 0; i < l.numElements(); ++i) {
    if (isFloat(t)) l.setDouble(i, real(rng));
    else l.setInt(i, integer(rng));
  }
  return l;
}

inline std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

inline int64_t ravel(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + c[d];
  return i;
}

}  // namespace wf::testing_util
