// Attributes: the compile-time data attached to ops, one recursive value type.
//
// Canonical forms (the parser normalises every spelling to these, the printer prints them in
// MLIR generic syntax, and semantic accessors accept all of them):
//   unit            `unit` / a bare key in an attribute dictionary
//   bool            `true`, `false`
//   integer         `3 : i32`, `3` (i64 when untyped)
//   float           `1.5 : f32`, hex `0x7FC00000 : f32`
//   string          `"text"`
//   type            `tensor<2xf32>`, `(tensor<f32>) -> tensor<f32>` (function types as kType with fn)
//   symbolRef       `@callee`
//   array           `[a, b, ...]`
//   denseArray      `array<i64: 1, 2>` (element type + values)
//   denseElements   `dense<...> : tensor<...>`, `dense_resource<key> : tensor<...>`
//   dictionary      `{a = 1, b}`
//   enumValue       `#stablehlo<comparison_direction EQ>` (dialect, enum name, value)
//   dialectStruct   `#stablehlo.dot<lhs_batching_dimensions = [0], ...>`, `#stablehlo.gather<...>`,
//                   `#stablehlo.scatter<...>`, `#stablehlo.conv<...>`, `#stablehlo.precision_config`,
//                   `#stablehlo.result_accuracy<...>`... (name + ordered fields)
//   opaque          anything else, kept verbatim so it prints back unchanged
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/literal.h"
#include "ir/types.h"

namespace wf {

class Attribute;
using NamedAttribute = std::pair<std::string, Attribute>;

class Attribute {
 public:
  enum class Kind : uint8_t {
    kNone,  // an absent attribute (default-constructed)
    kUnit,
    kBool,
    kInteger,
    kFloat,
    kString,
    kType,
    kSymbolRef,
    kArray,
    kDenseArray,
    kDenseElements,
    kDictionary,
    kEnumValue,
    kDialectStruct,
    kOpaque,
  };

  Attribute() = default;
  static Attribute unit();
  static Attribute boolean(bool v);
  static Attribute integer(int64_t v, ElementType type = ElementType::kSI64);
  static Attribute floating(double v, ElementType type = ElementType::kF64);
  static Attribute string(std::string v);
  static Attribute type(Type t);
  static Attribute functionType(FunctionType t);
  static Attribute symbolRef(std::string name);  // without '@'
  static Attribute array(std::vector<Attribute> elements);
  static Attribute denseArray(ElementType element, std::vector<int64_t> values);  // ints and bools
  static Attribute denseFloatArray(ElementType element, std::vector<double> values);
  static Attribute denseElements(Literal value);
  // dense<v> : T where T holds more than one element: `scalar` is v (one element of T's element
  // type). literal() makes the whole T on first use; splatValue() never does. Exported programs
  // splat scalars to activation shapes (a BERT-large train step holds gigabytes of them), which
  // the backends fuse as one value each.
  static Attribute denseSplat(Type type, Literal scalar);
  // `dense_resource<key>`: the blob may be absent (its `dialect_resources` entry missing).
  static Attribute denseResource(std::string key, Type type, std::optional<Literal> value);
  static Attribute dictionary(std::vector<NamedAttribute> fields);
  static Attribute enumValue(std::string dialect, std::string enumName, std::string value);
  static Attribute dialectStruct(std::string name, std::vector<NamedAttribute> fields);
  static Attribute opaque(std::string text);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::kNone; }

  bool boolValue() const { return int_ != 0; }
  int64_t intValue() const { return int_; }
  double floatValue() const { return float_; }
  ElementType elementType() const { return element_; }   // integer, float, denseArray
  const std::string& stringValue() const { return str_; } // string, symbolRef, opaque, enum value
  const std::string& name() const { return name_; }       // enum name, dialect struct name, resource key
  const std::string& dialect() const { return dialect_; } // enum dialect
  const Type& typeValue() const { return type_; }          // kType, denseElements type
  bool isFunctionType() const { return fn_ != nullptr; }
  const FunctionType& functionTypeValue() const { return *fn_; }
  const std::vector<Attribute>& elements() const { return elements_; }  // array
  const std::vector<int64_t>& intValues() const { return ints_; }        // denseArray (ints, bools)
  const std::vector<double>& floatValues() const { return floats_; }     // denseArray (floats)
  const std::vector<NamedAttribute>& fields() const { return fields_; }  // dictionary, struct
  bool isResource() const { return isResource_; }
  // denseElements: the value; null for a dense_resource whose blob is missing. A splat's is made
  // on the first call (thread-safe) and kept.
  const Literal* literal() const;
  // denseElements known to be one value repeated (denseSplat): that value, one element of the
  // element type; null otherwise (also for a literal whose elements happen to be equal).
  const Literal* splatValue() const { return splat_ ? &splat_->scalar : nullptr; }

  // Field of a dictionary or dialect struct; nullptr if absent.
  const Attribute* field(std::string_view key) const;

  // Semantic helpers: accept every canonical spelling of the same data.
  // A list of integers from [1, 2], array<i64: 1, 2> or dense<[1, 2]> : tensor<2xi64>.
  std::optional<std::vector<int64_t>> asIntList() const;
  // A scalar integer from `3 : i64`, or a one-element dense.
  std::optional<int64_t> asInt() const;

  friend bool operator==(const Attribute& a, const Attribute& b);
  friend bool operator!=(const Attribute& a, const Attribute& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kNone;
  ElementType element_ = ElementType::kSI64;
  bool isResource_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::string name_;
  std::string dialect_;
  Type type_;
  std::shared_ptr<const FunctionType> fn_;
  std::vector<Attribute> elements_;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
  std::vector<NamedAttribute> fields_;
  std::shared_ptr<const Literal> literal_;
  struct Splat {
    Literal scalar;
    mutable std::once_flag made;
    mutable std::unique_ptr<const Literal> whole;  // literal(), once asked for
  };
  std::shared_ptr<const Splat> splat_;
};

// An ordered attribute dictionary (MLIR keeps them sorted by name; we keep insertion order and
// print sorted).
class AttributeMap {
 public:
  const Attribute* get(std::string_view name) const;
  void set(std::string name, Attribute value);  // replaces an existing entry
  bool erase(std::string_view name);
  const std::vector<NamedAttribute>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  friend bool operator==(const AttributeMap& a, const AttributeMap& b);

 private:
  std::vector<NamedAttribute> entries_;
};

}  // namespace wf
