// Element and tensor types of the IR, as the StableHLO spec defines them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wf {

// Every element type the StableHLO spec names. The X-macro keeps the enum, the MLIR spelling
// and the storage size in one place.
//   X(enumerator, mlir spelling, storage bytes on the host, bit width)
// Sub-byte and f8 types are stored one element per byte (see literal.h); bf16/f16 as uint16 bits.
#define WF_ELEMENT_TYPES(X)              \
  X(kI1, "i1", 1, 1)                     \
  X(kSI2, "i2", 1, 2)                    \
  X(kSI4, "i4", 1, 4)                    \
  X(kSI8, "i8", 1, 8)                    \
  X(kSI16, "i16", 2, 16)                 \
  X(kSI32, "i32", 4, 32)                 \
  X(kSI64, "i64", 8, 64)                 \
  X(kUI2, "ui2", 1, 2)                   \
  X(kUI4, "ui4", 1, 4)                   \
  X(kUI8, "ui8", 1, 8)                   \
  X(kUI16, "ui16", 2, 16)                \
  X(kUI32, "ui32", 4, 32)                \
  X(kUI64, "ui64", 8, 64)                \
  X(kF4E2M1FN, "f4E2M1FN", 1, 4)         \
  X(kF6E2M3FN, "f6E2M3FN", 1, 6)         \
  X(kF6E3M2FN, "f6E3M2FN", 1, 6)         \
  X(kF8E3M4, "f8E3M4", 1, 8)             \
  X(kF8E4M3, "f8E4M3", 1, 8)             \
  X(kF8E4M3FN, "f8E4M3FN", 1, 8)         \
  X(kF8E4M3FNUZ, "f8E4M3FNUZ", 1, 8)     \
  X(kF8E4M3B11FNUZ, "f8E4M3B11FNUZ", 1, 8) \
  X(kF8E5M2, "f8E5M2", 1, 8)             \
  X(kF8E5M2FNUZ, "f8E5M2FNUZ", 1, 8)     \
  X(kF8E8M0FNU, "f8E8M0FNU", 1, 8)       \
  X(kBF16, "bf16", 2, 16)                \
  X(kF16, "f16", 2, 16)                  \
  X(kF32, "f32", 4, 32)                  \
  X(kF64, "f64", 8, 64)                  \
  X(kComplexF32, "complex<f32>", 8, 64)  \
  X(kComplexF64, "complex<f64>", 16, 128) \
  X(kIndex, "index", 8, 64)

enum class ElementType : uint8_t {
#define WF_ENUM(e, name, bytes, bits) e,
  WF_ELEMENT_TYPES(WF_ENUM)
#undef WF_ENUM
  kQuantized,  // !quant.uniform<...>: parsed and printed, not computed (see README support table)
};

std::string_view elementTypeName(ElementType t);  // MLIR spelling, e.g. "f32", "ui8", "complex<f32>"
// Parses an MLIR element-type spelling ("f32", "i64", "complex<f64>"); false if unknown.
bool parseElementTypeName(std::string_view name, ElementType* out);
int storageBytes(ElementType t);  // bytes one element takes in a Literal / host buffer
int bitWidth(ElementType t);

bool isBoolean(ElementType t);          // i1
bool isSignedInteger(ElementType t);    // si2..si64 (MLIR spells them i2..i64)
bool isUnsignedInteger(ElementType t);  // ui2..ui64
bool isInteger(ElementType t);          // signed or unsigned, not i1
bool isFloat(ElementType t);            // f4..f64, bf16
bool isComplex(ElementType t);
bool isF8OrSmaller(ElementType t);      // f4/f6/f8 families
// For complex types, the element type of the real and imaginary parts.
ElementType complexPartType(ElementType t);

// A tensor type: shape (kDynamic for '?') plus element type. Tokens and tuples are also Types.
inline constexpr int64_t kDynamic = INT64_MIN;

class Type {
 public:
  enum class Kind : uint8_t { kTensor, kToken, kTuple, kOpaque };

  Type() = default;
  static Type tensor(std::vector<int64_t> shape, ElementType element);
  static Type scalar(ElementType element) { return tensor({}, element); }
  static Type token();
  static Type tuple(std::vector<Type> elements);
  // A type WarpForge does not interpret (e.g. an unknown dialect type); printed back verbatim.
  static Type opaque(std::string text);

  Kind kind() const { return kind_; }
  bool isTensor() const { return kind_ == Kind::kTensor; }
  bool isToken() const { return kind_ == Kind::kToken; }
  bool isTuple() const { return kind_ == Kind::kTuple; }

  // Tensor accessors.
  ElementType elementType() const { return element_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  bool hasStaticShape() const;
  int64_t numElements() const;  // product of dims; -1 if any is dynamic
  Type withShape(std::vector<int64_t> shape) const;
  Type withElementType(ElementType element) const;

  // Optional extras kept for round-tripping: the quantized element spelling, and a tensor
  // encoding such as `#stablehlo.bounds<...>`.
  const std::string& quantizedSpelling() const { return quantized_; }
  void setQuantizedSpelling(std::string s) { quantized_ = std::move(s); }
  const std::string& encoding() const { return encoding_; }
  void setEncoding(std::string e) { encoding_ = std::move(e); }

  // Tuple accessors.
  const std::vector<Type>& tupleElements() const { return tuple_; }
  // Opaque text.
  const std::string& opaqueText() const { return quantized_; }

  // MLIR spelling: "tensor<2x?xf32>", "!stablehlo.token", "tuple<tensor<f32>, !stablehlo.token>".
  std::string toString() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kTensor;
  ElementType element_ = ElementType::kF32;
  std::vector<int64_t> shape_;
  std::vector<Type> tuple_;
  std::string quantized_;
  std::string encoding_;
};

// (inputs) -> results
struct FunctionType {
  std::vector<Type> inputs;
  std::vector<Type> results;
  std::string toString() const;
  friend bool operator==(const FunctionType&, const FunctionType&) = default;
};

}  // namespace wf
