// Helpers for elementwise / chlo kernel tests: build one op by hand and run its CPU kernel.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "ir/ir.h"
#include "ir/literal.h"

namespace wf::ewtest {

// One op whose operands are arguments of a scratch block.
class SingleOp {
 public:
  SingleOp(const std::string& name, const std::vector<Type>& operands, const Type& result,
           std::vector<NamedAttribute> attrs = {})
      : op_(std::make_unique<Operation>(name, Location{"test.mlir", 1, 1, ""})) {
    for (const Type& t : operands) op_->addOperand(block_.addArgument(t));
    op_->addResult(result);
    for (auto& [k, v] : attrs) op_->setAttr(k, std::move(v));
  }
  Expected<Literal> run(std::vector<Literal> args) {
    const Kernel* k = KernelRegistry::instance().find(op_->code());
    if (!k) return unimplemented("no kernel for " + op_->name());
    EvalContext ctx;
    auto r = (*k)(*op_, args, ctx);
    if (!r) return r.status();
    if (r->size() != 1) return internalError("expected one result");
    return (*r)[0];
  }

 private:
  Block block_;
  std::unique_ptr<Operation> op_;
};

// Runs `name` on operands (result type given), failing the test on error.
inline Literal runOp(const std::string& name, std::vector<Literal> args, const Type& result,
                     std::vector<NamedAttribute> attrs = {}) {
  std::vector<Type> types;
  for (const Literal& a : args) types.push_back(a.type());
  SingleOp op(name, types, result, std::move(attrs));
  auto r = op.run(std::move(args));
  EXPECT_TRUE(r.hasValue()) << name << ": " << r.status().toString();
  return r ? *r : Literal::zeros(result);
}

inline Literal fromDoubles(ElementType t, const std::vector<double>& v) {
  Literal l = Literal::zeros(Type::tensor({static_cast<int64_t>(v.size())}, t));
  for (size_t i = 0; i < v.size(); ++i) l.setDouble(static_cast<int64_t>(i), v[i]);
  return l;
}
inline Literal fromInts(ElementType t, const std::vector<int64_t>& v) {
  Literal l = Literal::zeros(Type::tensor({static_cast<int64_t>(v.size())}, t));
  for (size_t i = 0; i < v.size(); ++i) l.setInt(static_cast<int64_t>(i), v[i]);
  return l;
}

inline std::vector<double> randomDoubles(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

inline std::vector<int64_t> randomInts(size_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = d(rng);
  return v;
}

}  // namespace wf::ewtest
