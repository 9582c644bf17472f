// Helpers for the data-movement and indexing kernel tests: random tensors of any element type
// (filled with random bytes; these kernels only move bytes), running one kernel directly, and a
// byte-level element accessor for the nested-loop reference implementations.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "ir/ir.h"

namespace wf::testing {

// Element types exercised by the byte-moving kernels: every storage size and the odd ones.
inline const std::vector<ElementType>& movedTypes() {
  static const std::vector<ElementType> types = {
      ElementType::kI1,   ElementType::kSI4,  ElementType::kUI8,        ElementType::kF8E4M3FN,
      ElementType::kBF16, ElementType::kSI32, ElementType::kF32,        ElementType::kF64,
      ElementType::kSI64, ElementType::kComplexF32, ElementType::kComplexF64};
  return types;
}

inline Literal randomTensor(const std::vector<int64_t>& shape, ElementType t, std::mt19937_64& rng) {
  Literal l = Literal::zeros(Type::tensor(shape, t));
  auto* p = reinterpret_cast<unsigned char*>(l.data());
  for (size_t i = 0; i < l.sizeBytes(); ++i) p[i] = static_cast<unsigned char>(rng());
  return l;
}

inline Literal intTensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values,
                         ElementType t = ElementType::kSI64) {
  Literal l = Literal::zeros(Type::tensor(shape, t));
  for (size_t i = 0; i < values.size(); ++i) l.setInt(static_cast<int64_t>(i), values[i]);
  return l;
}

inline int64_t randInt(std::mt19937_64& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

inline std::vector<int64_t> randomShape(std::mt19937_64& rng, int64_t rank, int64_t maxDim = 5) {
  std::vector<int64_t> s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(randInt(rng, rng() % 8 == 0 ? 0 : 1, maxDim));
  return s;
}

// A standalone op (no operand Values: kernels only read the operand Literals).
inline std::unique_ptr<Operation> makeOp(const std::string& name, std::vector<Type> results,
                                         std::vector<NamedAttribute> attrs = {}) {
  auto op = std::make_unique<Operation>(name, Location{"test.mlir", 1, 1, ""});
  for (Type& t : results) op->addResult(std::move(t));
  for (auto& [k, v] : attrs) op->setAttr(k, std::move(v));
  return op;
}

inline Expected<std::vector<Literal>> runKernel(const Operation& op, const std::vector<Literal>& operands) {
  const Kernel* k = KernelRegistry::instance().find(op.code());
  if (!k) return unimplemented("no kernel for " + op.name());
  EvalContext ctx;
  return (*k)(op, operands, ctx);
}

inline Attribute i64s(std::vector<int64_t> v) { return Attribute::denseArray(ElementType::kSI64, std::move(v)); }
inline Attribute i64(int64_t v) { return Attribute::integer(v); }

inline int64_t linearIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx) {
  int64_t l = 0;
  for (size_t d = 0; d < shape.size(); ++d) l = l * shape[d] + idx[d];
  return l;
}

// Copies element `src[srcIdx]` to `dst[dstIdx]` byte for byte.
inline void copyElement(Literal& dst, const std::vector<int64_t>& dstIdx, const Literal& src,
                        const std::vector<int64_t>& srcIdx) {
  const int e = storageBytes(src.elementType());
  std::memcpy(dst.data() + linearIndex(dst.shape(), dstIdx) * e, src.data() + linearIndex(src.shape(), srcIdx) * e,
              static_cast<size_t>(e));
}

// Calls fn(index) for every multi-index of `shape` (row-major), independently of the kernels.
template <typename F>
void forAllIndices(const std::vector<int64_t>& shape, F&& fn) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  std::vector<int64_t> idx(shape.size());
  for (int64_t l = 0; l < total; ++l) {
    int64_t rem = l;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
    }
    fn(idx);
  }
}

inline void expectSame(const Literal& actual, const Literal& expected, const std::string& what) {
  ASSERT_EQ(actual.type(), expected.type()) << what;
  EXPECT_TRUE(actual.bitwiseEqual(expected)) << what << "\nactual:   " << actual.toString(32)
                                             << "\nexpected: " << expected.toString(32);
}

}  // namespace wf::testing
