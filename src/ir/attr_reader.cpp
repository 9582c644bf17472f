// The typed attribute reader (attr_reader.h).
#include "ir/attr_reader.h"

#include "ir/printer.h"

namespace wf {

Status constraintError(const Operation& op, std::string_view constraint, const std::string& message) {
  std::string text = op.describe() + ": ";
  if (!constraint.empty()) text += std::string(constraint) + ": ";
  return verifyError(text + message);
}

namespace {
Status missing(const Operation& op, std::string_view name) {
  return constraintError(op, "attributes", "missing attribute '" + std::string(name) + "'");
}
}  // namespace

Expected<std::vector<int64_t>> AttrReader::ints(std::string_view name) const {
  const Attribute* a = op_.attr(name);
  if (!a) return missing(op_, name);
  auto list = a->asIntList();
  if (!list)
    return constraintError(op_, "attributes",
                           "attribute '" + std::string(name) + "' is not a list of integers: " + printAttribute(*a));
  return std::move(*list);
}

Expected<std::vector<int64_t>> AttrReader::ints(std::string_view name, std::vector<int64_t> fallback) const {
  if (!op_.attr(name)) return fallback;
  return ints(name);
}

Expected<int64_t> AttrReader::integer(std::string_view name) const {
  const Attribute* a = op_.attr(name);
  if (!a) return missing(op_, name);
  auto v = a->asInt();
  if (!v)
    return constraintError(op_, "attributes", "attribute '" + std::string(name) + "' is not an integer: " + printAttribute(*a));
  return *v;
}

Expected<int64_t> AttrReader::integer(std::string_view name, int64_t fallback) const {
  if (!op_.attr(name)) return fallback;
  return integer(name);
}

Expected<const Attribute*> AttrReader::dialectStruct(std::string_view name) const {
  const Attribute* a = op_.attr(name);
  if (!a || a->kind() != Attribute::Kind::kDialectStruct) return missing(op_, name);
  return a;
}

std::vector<int64_t> AttrReader::fieldInts(const Attribute& s, std::string_view name) {
  const Attribute* f = s.field(name);
  if (!f) return {};
  return f->asIntList().value_or(std::vector<int64_t>{});
}

std::optional<int64_t> AttrReader::fieldInt(const Attribute& s, std::string_view name) {
  const Attribute* f = s.field(name);
  return f ? f->asInt() : std::nullopt;
}

}  // namespace wf
