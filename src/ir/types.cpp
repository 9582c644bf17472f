#include "ir/types.h"

#include <array>

namespace wf {
namespace {

struct ElementInfo {
  std::string_view name;
  int bytes;
  int bits;
};

constexpr std::array kElementInfo = {
#define WF_INFO(e, name, bytes, bits) ElementInfo{name, bytes, bits},
    WF_ELEMENT_TYPES(WF_INFO)
#undef WF_INFO
};

const ElementInfo* info(ElementType t) {
  auto i = static_cast<size_t>(t);
  return i < kElementInfo.size() ? &kElementInfo[i] : nullptr;
}

}  // namespace

std::string_view elementTypeName(ElementType t) {
  if (t == ElementType::kQuantized) return "!quant.uniform";
  return info(t)->name;
}

bool parseElementTypeName(std::string_view name, ElementType* out) {
  for (size_t i = 0; i < kElementInfo.size(); ++i) {
    if (kElementInfo[i].name == name) {
      *out = static_cast<ElementType>(i);
      return true;
    }
  }
  // MLIR also spells signed integers with an explicit "si" prefix.
  if (name.size() > 2 && name.substr(0, 2) == "si") {
    std::string alt = "i" + std::string(name.substr(2));
    return parseElementTypeName(alt, out);
  }
  return false;
}

int storageBytes(ElementType t) {
  const ElementInfo* i = info(t);
  return i ? i->bytes : 1;
}

int bitWidth(ElementType t) {
  const ElementInfo* i = info(t);
  return i ? i->bits : 8;
}

bool isBoolean(ElementType t) { return t == ElementType::kI1; }
bool isSignedInteger(ElementType t) { return t >= ElementType::kSI2 && t <= ElementType::kSI64; }
bool isUnsignedInteger(ElementType t) { return t >= ElementType::kUI2 && t <= ElementType::kUI64; }
bool isInteger(ElementType t) { return isSignedInteger(t) || isUnsignedInteger(t); }
bool isFloat(ElementType t) { return t >= ElementType::kF4E2M1FN && t <= ElementType::kF64; }
bool isComplex(ElementType t) { return t == ElementType::kComplexF32 || t == ElementType::kComplexF64; }
bool isF8OrSmaller(ElementType t) { return t >= ElementType::kF4E2M1FN && t <= ElementType::kF8E8M0FNU; }
ElementType complexPartType(ElementType t) {
  return t == ElementType::kComplexF64 ? ElementType::kF64 : ElementType::kF32;
}

Type Type::tensor(std::vector<int64_t> shape, ElementType element) {
  Type t;
  t.kind_ = Kind::kTensor;
  t.shape_ = std::move(shape);
  t.element_ = element;
  return t;
}

Type Type::token() {
  Type t;
  t.kind_ = Kind::kToken;
  return t;
}

Type Type::tuple(std::vector<Type> elements) {
  Type t;
  t.kind_ = Kind::kTuple;
  t.tuple_ = std::move(elements);
  return t;
}

Type Type::opaque(std::string text) {
  Type t;
  t.kind_ = Kind::kOpaque;
  t.quantized_ = std::move(text);
  return t;
}

bool Type::hasStaticShape() const {
  if (kind_ != Kind::kTensor) return false;
  for (int64_t d : shape_)
    if (d == kDynamic) return false;
  return true;
}

int64_t Type::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_) {
    if (d == kDynamic) return -1;
    n *= d;
  }
  return n;
}

Type Type::withShape(std::vector<int64_t> shape) const {
  Type t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Type Type::withElementType(ElementType element) const {
  Type t = *this;
  t.element_ = element;
  if (element != ElementType::kQuantized) t.quantized_.clear();
  return t;
}

std::string Type::toString() const {
  switch (kind_) {
    case Kind::kToken:
      return "!stablehlo.token";
    case Kind::kOpaque:
      return quantized_;
    case Kind::kTuple: {
      std::string s = "tuple<";
      for (size_t i = 0; i < tuple_.size(); ++i) {
        if (i) s += ", ";
        s += tuple_[i].toString();
      }
      return s + ">";
    }
    case Kind::kTensor: {
      std::string s = "tensor<";
      for (int64_t d : shape_) {
        s += d == kDynamic ? "?" : std::to_string(d);
        s += "x";
      }
      s += element_ == ElementType::kQuantized ? quantized_ : std::string(elementTypeName(element_));
      if (!encoding_.empty()) s += ", " + encoding_;
      return s + ">";
    }
  }
  return "<invalid type>";
}

bool operator==(const Type& a, const Type& b) {
  return a.kind_ == b.kind_ && a.element_ == b.element_ && a.shape_ == b.shape_ &&
         a.tuple_ == b.tuple_ && a.quantized_ == b.quantized_ && a.encoding_ == b.encoding_;
}

std::string FunctionType::toString() const {
  std::string s = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ", ";
    s += inputs[i].toString();
  }
  s += ") -> ";
  if (results.size() == 1 && !results[0].isTuple()) return s + results[0].toString();
  s += "(";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i) s += ", ";
    s += results[i].toString();
  }
  return s + ")";
}

}  // namespace wf
