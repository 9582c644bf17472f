#include "ir/literal.h"

#include <cmath>
#include <cstring>
#include <new>
#include <sstream>

#include "ir/float_types.h"

namespace wf {
namespace {

std::shared_ptr<std::byte> allocate(size_t bytes, bool zeroed = true) {
  // 64-byte alignment so that kernels can use aligned vector loads.
  size_t n = bytes == 0 ? 64 : bytes;
  auto* p = static_cast<std::byte*>(::operator new(n, std::align_val_t{64}));
  if (zeroed) std::memset(p, 0, n);
  return std::shared_ptr<std::byte>(p, [](std::byte* q) { ::operator delete(q, std::align_val_t{64}); });
}

// Sign-extends or masks `v` to the bit width of an integer element type.
int64_t wrapInteger(ElementType t, int64_t v) {
  int bits = bitWidth(t);
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (isSignedInteger(t) && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

}  // namespace

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Literal Literal::zeros(const Type& type) {
  Literal l;
  l.type_ = type;
  if (type.isTensor()) {
    l.numElements_ = type.numElements() < 0 ? 0 : type.numElements();
    l.sizeBytes_ = static_cast<size_t>(l.numElements_) * static_cast<size_t>(storageBytes(type.elementType()));
    l.data_ = allocate(l.sizeBytes_);
  }
  return l;
}

Literal Literal::uninitialized(const Type& type) {
  Literal l;
  l.type_ = type;
  if (type.isTensor()) {
    l.numElements_ = type.numElements() < 0 ? 0 : type.numElements();
    l.sizeBytes_ = static_cast<size_t>(l.numElements_) * static_cast<size_t>(storageBytes(type.elementType()));
    l.data_ = allocate(l.sizeBytes_, /*zeroed=*/false);
  }
  return l;
}

Literal Literal::tuple(std::vector<Literal> elements) {
  std::vector<Type> types;
  for (const Literal& e : elements) types.push_back(e.type());
  Literal l;
  l.type_ = Type::tuple(std::move(types));
  l.tuple_ = std::move(elements);
  return l;
}

Literal Literal::token() {
  Literal l;
  l.type_ = Type::token();
  return l;
}

Literal Literal::scalarDouble(ElementType t, double v) {
  Literal l = zeros(Type::scalar(t));
  l.setDouble(0, v);
  return l;
}

Literal Literal::scalarInt(ElementType t, int64_t v) {
  Literal l = zeros(Type::scalar(t));
  l.setInt(0, v);
  return l;
}

uint64_t Literal::getBits(int64_t i) const {
  const std::byte* p = data_.get() + i * storageBytes(elementType());
  switch (storageBytes(elementType())) {
    case 1: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

void Literal::setBits(int64_t i, uint64_t bits) {
  std::byte* p = data_.get() + i * storageBytes(elementType());
  switch (storageBytes(elementType())) {
    case 1: { auto v = static_cast<uint8_t>(bits); std::memcpy(p, &v, 1); break; }
    case 2: { auto v = static_cast<uint16_t>(bits); std::memcpy(p, &v, 2); break; }
    case 4: { auto v = static_cast<uint32_t>(bits); std::memcpy(p, &v, 4); break; }
    default: std::memcpy(p, &bits, 8); break;
  }
}

double Literal::getDouble(int64_t i) const {
  const ElementType t = elementType();
  switch (t) {
    case ElementType::kF32: return dataAs<float>()[i];
    case ElementType::kF64: return dataAs<double>()[i];
    case ElementType::kBF16: return bf16ToFloat(dataAs<uint16_t>()[i]);
    case ElementType::kF16: return f16ToFloat(dataAs<uint16_t>()[i]);
    case ElementType::kComplexF32: return dataAs<float>()[2 * i];
    case ElementType::kComplexF64: return dataAs<double>()[2 * i];
    default: break;
  }
  if (isF8OrSmaller(t)) return minifloatToDouble(t, dataAs<uint8_t>()[i]);
  if (t == ElementType::kUI64) return static_cast<double>(static_cast<uint64_t>(getInt(i)));
  return static_cast<double>(getInt(i));
}

int64_t Literal::getInt(int64_t i) const {
  const ElementType t = elementType();
  if (isFloat(t) || isComplex(t)) return static_cast<int64_t>(getDouble(i));
  switch (storageBytes(t)) {
    case 1: return isSignedInteger(t) ? dataAs<int8_t>()[i] : dataAs<uint8_t>()[i];
    case 2: return isSignedInteger(t) ? dataAs<int16_t>()[i] : dataAs<uint16_t>()[i];
    case 4: return isSignedInteger(t) ? int64_t{dataAs<int32_t>()[i]} : int64_t{dataAs<uint32_t>()[i]};
    default: return dataAs<int64_t>()[i];
  }
}

std::complex<double> Literal::getComplex(int64_t i) const {
  if (elementType() == ElementType::kComplexF32)
    return {dataAs<float>()[2 * i], dataAs<float>()[2 * i + 1]};
  if (elementType() == ElementType::kComplexF64)
    return {dataAs<double>()[2 * i], dataAs<double>()[2 * i + 1]};
  return {getDouble(i), 0.0};
}

void Literal::setDouble(int64_t i, double v) {
  const ElementType t = elementType();
  switch (t) {
    case ElementType::kF32: dataAs<float>()[i] = static_cast<float>(v); return;
    case ElementType::kF64: dataAs<double>()[i] = v; return;
    // Round through float: double rounding is harmless for these widths except in rare
    // halfway cases; constants in MLIR text are already representable.
    case ElementType::kBF16: dataAs<uint16_t>()[i] = floatToBf16(static_cast<float>(v)); return;
    case ElementType::kF16: dataAs<uint16_t>()[i] = floatToF16(static_cast<float>(v)); return;
    case ElementType::kComplexF32: setComplex(i, {v, 0.0}); return;
    case ElementType::kComplexF64: setComplex(i, {v, 0.0}); return;
    default: break;
  }
  if (isF8OrSmaller(t)) {
    dataAs<uint8_t>()[i] = doubleToMinifloat(t, v);
    return;
  }
  if (isBoolean(t)) {
    dataAs<uint8_t>()[i] = v != 0.0;
    return;
  }
  setInt(i, static_cast<int64_t>(v));
}

void Literal::setInt(int64_t i, int64_t v) {
  const ElementType t = elementType();
  if (isFloat(t) || isComplex(t)) {
    setDouble(i, t == ElementType::kUI64 ? static_cast<double>(static_cast<uint64_t>(v)) : static_cast<double>(v));
    return;
  }
  if (isBoolean(t)) {
    dataAs<uint8_t>()[i] = (v & 1) != 0;
    return;
  }
  setBits(i, static_cast<uint64_t>(wrapInteger(t, v)));
}

void Literal::setComplex(int64_t i, std::complex<double> v) {
  if (elementType() == ElementType::kComplexF32) {
    dataAs<float>()[2 * i] = static_cast<float>(v.real());
    dataAs<float>()[2 * i + 1] = static_cast<float>(v.imag());
  } else if (elementType() == ElementType::kComplexF64) {
    dataAs<double>()[2 * i] = v.real();
    dataAs<double>()[2 * i + 1] = v.imag();
  } else {
    setDouble(i, v.real());
  }
}

Literal Literal::reshaped(std::vector<int64_t> shape) const {
  Literal l = *this;
  l.type_ = type_.withShape(std::move(shape));
  return l;
}

Literal Literal::clone() const {
  if (isTuple()) {
    std::vector<Literal> elements;
    for (const Literal& e : tuple_) elements.push_back(e.clone());
    return tuple(std::move(elements));
  }
  Literal l = zeros(type_);
  if (sizeBytes_) std::memcpy(l.data(), data(), sizeBytes_);
  return l;
}

bool Literal::bitwiseEqual(const Literal& other) const {
  if (type_ != other.type_) return false;
  if (isTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!tuple_[i].bitwiseEqual(other.tuple_[i])) return false;
    return true;
  }
  return sizeBytes_ == other.sizeBytes_ && (sizeBytes_ == 0 || std::memcmp(data(), other.data(), sizeBytes_) == 0);
}

std::string Literal::toString(int64_t maxElements) const {
  std::ostringstream out;
  out << type_.toString();
  if (!type_.isTensor()) {
    if (isTuple()) {
      out << " (";
      for (size_t i = 0; i < tuple_.size(); ++i) out << (i ? ", " : "") << tuple_[i].toString(maxElements);
      out << ")";
    }
    return out.str();
  }
  out << " [";
  out.precision(9);
  const ElementType t = elementType();
  for (int64_t i = 0; i < numElements_ && i < maxElements; ++i) {
    if (i) out << ", ";
    if (isComplex(t)) {
      auto c = getComplex(i);
      out << "(" << c.real() << ", " << c.imag() << ")";
    } else if (isBoolean(t)) {
      out << (getInt(i) ? "true" : "false");
    } else if (t == ElementType::kUI64) {
      out << static_cast<uint64_t>(getInt(i));
    } else if (isInteger(t)) {
      out << getInt(i);
    } else {
      out << getDouble(i);
    }
  }
  if (numElements_ > maxElements) out << ", ...";
  out << "]";
  return out.str();
}

}  // namespace wf
