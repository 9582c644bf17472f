#include "ir/attributes.h"

#include <algorithm>
#include <cmath>

#include "ir/fill.h"

namespace wf {

Attribute Attribute::unit() {
  Attribute a;
  a.kind_ = Kind::kUnit;
  return a;
}

Attribute Attribute::boolean(bool v) {
  Attribute a;
  a.kind_ = Kind::kBool;
  a.element_ = ElementType::kI1;
  a.int_ = v;
  return a;
}

Attribute Attribute::integer(int64_t v, ElementType type) {
  Attribute a;
  a.kind_ = Kind::kInteger;
  a.int_ = v;
  a.element_ = type;
  return a;
}

Attribute Attribute::floating(double v, ElementType type) {
  Attribute a;
  a.kind_ = Kind::kFloat;
  a.float_ = v;
  a.element_ = type;
  return a;
}

Attribute Attribute::string(std::string v) {
  Attribute a;
  a.kind_ = Kind::kString;
  a.str_ = std::move(v);
  return a;
}

Attribute Attribute::type(Type t) {
  Attribute a;
  a.kind_ = Kind::kType;
  a.type_ = std::move(t);
  return a;
}

Attribute Attribute::functionType(FunctionType t) {
  Attribute a;
  a.kind_ = Kind::kType;
  a.fn_ = std::make_shared<const FunctionType>(std::move(t));
  return a;
}

Attribute Attribute::symbolRef(std::string name) {
  Attribute a;
  a.kind_ = Kind::kSymbolRef;
  a.str_ = std::move(name);
  return a;
}

Attribute Attribute::array(std::vector<Attribute> elements) {
  Attribute a;
  a.kind_ = Kind::kArray;
  a.elements_ = std::move(elements);
  return a;
}

Attribute Attribute::denseArray(ElementType element, std::vector<int64_t> values) {
  Attribute a;
  a.kind_ = Kind::kDenseArray;
  a.element_ = element;
  a.ints_ = std::move(values);
  return a;
}

Attribute Attribute::denseFloatArray(ElementType element, std::vector<double> values) {
  Attribute a;
  a.kind_ = Kind::kDenseArray;
  a.element_ = element;
  a.floats_ = std::move(values);
  return a;
}

Attribute Attribute::denseElements(Literal value) {
  Attribute a;
  a.kind_ = Kind::kDenseElements;
  a.type_ = value.type();
  a.literal_ = std::make_shared<const Literal>(std::move(value));
  return a;
}

Attribute Attribute::denseSplat(Type type, Literal scalar) {
  Attribute a;
  a.kind_ = Kind::kDenseElements;
  a.type_ = std::move(type);
  auto splat = std::make_shared<Splat>();
  splat->scalar = std::move(scalar);
  a.splat_ = std::move(splat);
  return a;
}

const Literal* Attribute::literal() const {
  if (literal_) return literal_.get();
  if (!splat_) return nullptr;
  std::call_once(splat_->made, [&] {
    auto whole = std::make_unique<Literal>(Literal::uninitialized(type_));
    fillElements(whole->data(), whole->numElements(), splat_->scalar.data(), storageBytes(type_.elementType()));
    splat_->whole = std::move(whole);
  });
  return splat_->whole.get();
}

Attribute Attribute::denseResource(std::string key, Type type, std::optional<Literal> value) {
  Attribute a;
  a.kind_ = Kind::kDenseElements;
  a.isResource_ = true;
  a.name_ = std::move(key);
  a.type_ = std::move(type);
  if (value) a.literal_ = std::make_shared<const Literal>(std::move(*value));
  return a;
}

Attribute Attribute::dictionary(std::vector<NamedAttribute> fields) {
  Attribute a;
  a.kind_ = Kind::kDictionary;
  a.fields_ = std::move(fields);
  return a;
}

Attribute Attribute::enumValue(std::string dialect, std::string enumName, std::string value) {
  Attribute a;
  a.kind_ = Kind::kEnumValue;
  a.dialect_ = std::move(dialect);
  a.name_ = std::move(enumName);
  a.str_ = std::move(value);
  return a;
}

Attribute Attribute::dialectStruct(std::string name, std::vector<NamedAttribute> fields) {
  Attribute a;
  a.kind_ = Kind::kDialectStruct;
  a.name_ = std::move(name);
  a.fields_ = std::move(fields);
  return a;
}

Attribute Attribute::opaque(std::string text) {
  Attribute a;
  a.kind_ = Kind::kOpaque;
  a.str_ = std::move(text);
  return a;
}

const Attribute* Attribute::field(std::string_view key) const {
  for (const auto& [k, v] : fields_)
    if (k == key) return &v;
  return nullptr;
}

std::optional<std::vector<int64_t>> Attribute::asIntList() const {
  switch (kind_) {
    case Kind::kDenseArray:
      if (!floats_.empty()) return std::nullopt;
      return ints_;
    case Kind::kArray: {
      std::vector<int64_t> out;
      for (const Attribute& e : elements_) {
        if (e.kind_ != Kind::kInteger) return std::nullopt;
        out.push_back(e.int_);
      }
      return out;
    }
    case Kind::kDenseElements: {
      const Literal* lit = literal();
      if (!lit || !(isInteger(type_.elementType()) || isBoolean(type_.elementType()))) return std::nullopt;
      std::vector<int64_t> out;
      for (int64_t i = 0; i < lit->numElements(); ++i) out.push_back(lit->getInt(i));
      return out;
    }
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> Attribute::asInt() const {
  if (kind_ == Kind::kInteger || kind_ == Kind::kBool) return int_;
  if (kind_ == Kind::kDenseElements && !splat_ && literal_ && literal_->numElements() == 1) return literal_->getInt(0);
  return std::nullopt;
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Attribute::Kind::kNone:
    case Attribute::Kind::kUnit:
      return true;
    case Attribute::Kind::kBool:
      return a.int_ == b.int_;
    case Attribute::Kind::kInteger:
      return a.int_ == b.int_ && a.element_ == b.element_;
    case Attribute::Kind::kFloat:
      return a.element_ == b.element_ &&
             (a.float_ == b.float_ || (std::isnan(a.float_) && std::isnan(b.float_)));
    case Attribute::Kind::kString:
    case Attribute::Kind::kSymbolRef:
    case Attribute::Kind::kOpaque:
      return a.str_ == b.str_;
    case Attribute::Kind::kType:
      if (a.fn_ || b.fn_) return a.fn_ && b.fn_ && *a.fn_ == *b.fn_;
      return a.type_ == b.type_;
    case Attribute::Kind::kArray:
      return a.elements_ == b.elements_;
    case Attribute::Kind::kDenseArray:
      return a.element_ == b.element_ && a.ints_ == b.ints_ && a.floats_ == b.floats_;
    case Attribute::Kind::kDenseElements:
      if (a.isResource_ != b.isResource_ || a.name_ != b.name_ || a.type_ != b.type_) return false;
      if (a.splat_ && b.splat_) return a.splat_->scalar.bitwiseEqual(b.splat_->scalar);
      if (!a.literal() || !b.literal()) return !a.literal() && !b.literal();
      return a.literal()->bitwiseEqual(*b.literal());
    case Attribute::Kind::kDictionary:
    case Attribute::Kind::kDialectStruct:
      return a.name_ == b.name_ && a.fields_ == b.fields_;
    case Attribute::Kind::kEnumValue:
      return a.dialect_ == b.dialect_ && a.name_ == b.name_ && a.str_ == b.str_;
  }
  return false;
}

const Attribute* AttributeMap::get(std::string_view name) const {
  for (const auto& [k, v] : entries_)
    if (k == name) return &v;
  return nullptr;
}

void AttributeMap::set(std::string name, Attribute value) {
  for (auto& [k, v] : entries_) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

bool AttributeMap::erase(std::string_view name) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == name; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

bool operator==(const AttributeMap& a, const AttributeMap& b) {
  if (a.entries_.size() != b.entries_.size()) return false;
  for (const auto& [k, v] : a.entries_) {
    const Attribute* other = b.get(k);
    if (!other || *other != v) return false;
  }
  return true;
}

}  // namespace wf
