// Literal: a host tensor (type + row-major bytes), the value of `dense<...>` attributes and
// the runtime value of the CPU backend. Storage is shared: copying a Literal is cheap and
// aliases; call clone() for a deep copy.
//
// Storage per element type (storageBytes()):
//   i1 -> uint8 0/1; si2/si4/si8 -> int8 sign-extended; ui2/ui4/ui8 -> uint8;
//   si16..si64 / ui16..ui64 -> native ints; f4/f6/f8 -> one uint8 code; bf16/f16 -> uint16 bits;
//   f32/f64 -> float/double; complex<f32>/complex<f64> -> (re, im) pairs; index -> int64.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/types.h"

namespace wf {

class Literal {
 public:
  Literal() = default;
  // A zero-filled tensor of a static-shaped tensor type.
  static Literal zeros(const Type& type);
  // A tensor whose bytes are not initialised, for kernels that write every element (elementwise
  // maps, GEMM outputs): it saves a pass over memory per op. Never hand one out unwritten.
  static Literal uninitialized(const Type& type);
  static Literal tuple(std::vector<Literal> elements);
  static Literal token();
  // Scalars, convenient for tests and constants.
  static Literal scalarDouble(ElementType t, double v);
  static Literal scalarInt(ElementType t, int64_t v);

  const Type& type() const { return type_; }
  ElementType elementType() const { return type_.elementType(); }
  const std::vector<int64_t>& shape() const { return type_.shape(); }
  int64_t numElements() const { return numElements_; }
  size_t sizeBytes() const { return sizeBytes_; }
  bool isTuple() const { return type_.isTuple(); }
  bool isToken() const { return type_.isToken(); }

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  // Whether no other Literal shares this one's storage (copies share it): writing through data()
  // then changes no other value.
  bool ownsStorageAlone() const { return data_.use_count() == 1; }
  template <typename T>
  T* dataAs() { return reinterpret_cast<T*>(data_.get()); }
  template <typename T>
  const T* dataAs() const { return reinterpret_cast<const T*>(data_.get()); }

  // Element access by linear (row-major) index, converting through double / int64 / complex.
  // Slow generic paths for constants, printing and tests; kernels use dataAs<T>().
  double getDouble(int64_t i) const;                // ints, bools, floats; complex: real part
  int64_t getInt(int64_t i) const;                  // ints (ui64 reinterpreted), bools, floats (truncated)
  uint64_t getBits(int64_t i) const;                // raw storage bits, zero-extended
  std::complex<double> getComplex(int64_t i) const;
  void setDouble(int64_t i, double v);              // rounds to the element type (RNE)
  void setInt(int64_t i, int64_t v);                // wraps to the element's bit width
  void setBits(int64_t i, uint64_t bits);           // raw storage bits
  void setComplex(int64_t i, std::complex<double> v);

  const std::vector<Literal>& tupleElements() const { return tuple_; }

  // Same storage seen with another static shape of the same element count.
  Literal reshaped(std::vector<int64_t> shape) const;
  Literal clone() const;
  // Same type and identical bytes (NaNs with the same payload compare equal).
  bool bitwiseEqual(const Literal& other) const;

  // Human-readable: "tensor<2xf32> [1, 2]" (values as MLIR would print them, truncated when long).
  std::string toString(int64_t maxElements = 64) const;

 private:
  Type type_;
  int64_t numElements_ = 0;
  size_t sizeBytes_ = 0;
  std::shared_ptr<std::byte> data_;
  std::vector<Literal> tuple_;
};

// Row-major strides (in elements) of a shape.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape);

}  // namespace wf
