// The one typed reader of op attributes: integers, integer lists, dialect-struct fields, with
// defaults where the spec gives them. Every error names the op, its location and the attribute,
// in the verifier's form ("'stablehlo.pad' at f.mlir:3:8: attributes: missing attribute ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// "'stablehlo.add' at f.mlir:3:8: C1: <message>" (no "C1: " when `constraint` is empty): the
// error of a violated spec constraint, a StatusCode::kVerifyError.
Status constraintError(const Operation& op, std::string_view constraint, const std::string& message);

class AttrReader {
 public:
  explicit AttrReader(const Operation& op) : op_(op) {}

  // A list of integers (a dense array or a dense elements attribute); absent is an error.
  Expected<std::vector<int64_t>> ints(std::string_view name) const;
  // Absent is `fallback`.
  Expected<std::vector<int64_t>> ints(std::string_view name, std::vector<int64_t> fallback) const;
  Expected<int64_t> integer(std::string_view name) const;
  Expected<int64_t> integer(std::string_view name, int64_t fallback) const;
  // A dialect struct attribute (dot / gather / scatter / convolution dimension numbers).
  Expected<const Attribute*> dialectStruct(std::string_view name) const;

  // Fields of a dialect struct: absent is empty / nullopt (the MLIR defaults).
  static std::vector<int64_t> fieldInts(const Attribute& s, std::string_view name);
  static std::optional<int64_t> fieldInt(const Attribute& s, std::string_view name);

 private:
  const Operation& op_;
};

}  // namespace wf
