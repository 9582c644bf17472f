// The IR printer: MLIR text in the generic op form (func.func in its standard form), chosen so
// that the parser reads the output back to an equal module. Exactness matters more than
// brevity: floats are printed with the fewest digits that round back to the same bits, and
// values decimal cannot express (NaN, infinities) switch the whole constant to a hex blob.
#include "ir/printer.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "ir/float_types.h"

namespace wf {
namespace {

// ---------------------------------------------------------------------------------------------
// Scalars.

// Makes sure a decimal float spelling has a '.', as MLIR's float literal grammar requires
// ("1" -> "1.0", "1e+20" -> "1.0e+20").
std::string ensureDecimalPoint(std::string s) {
  if (s.find_first_of(".ni") != std::string::npos) return s;  // has a point, or nan/inf
  size_t e = s.find_first_of("eE");
  if (e == std::string::npos) return s + ".0";
  return s.substr(0, e) + ".0" + s.substr(e);
}

std::string shortestDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return ensureDecimalPoint(std::string(buf, r.ptr));
}

// The raw bits of `v` rounded to the float type `t` (the way Literal::setDouble rounds).
uint64_t floatBits(ElementType t, double v) {
  switch (t) {
    case ElementType::kF64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case ElementType::kF32: {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case ElementType::kBF16:
      return floatToBf16(static_cast<float>(v));
    case ElementType::kF16:
      return floatToF16(static_cast<float>(v));
    default:
      return doubleToMinifloat(t, v);
  }
}

// Fewest decimal digits that read back (strtod, then rounding to `t`) as exactly `v`, which
// must be a finite value of type `t`.
std::string formatFloatElement(ElementType t, double v) {
  if (t == ElementType::kF64) return shortestDouble(v);
  uint64_t want = floatBits(t, v);
  if (t == ElementType::kF32) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v));
    std::string s(buf, r.ptr);
    if (floatBits(t, std::strtod(s.c_str(), nullptr)) == want) return ensureDecimalPoint(s);
    return shortestDouble(v);
  }
  for (int precision = 1; precision <= 17; ++precision) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (floatBits(t, std::strtod(buf, nullptr)) == want) return ensureDecimalPoint(buf);
  }
  return shortestDouble(v);
}

std::string hexBits(uint64_t bits, int bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*" PRIX64, bytes * 2, bits);
  return buf;
}

std::string hexBytes(const uint8_t* data, size_t n) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "0x";
  s.reserve(2 + 2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += digits[data[i] >> 4];
    s += digits[data[i] & 15];
  }
  return s;
}

bool isBareIdentifier(std::string_view s) {
  if (s.empty()) return false;
  auto ok0 = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto ok = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; };
  if (!ok0(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(), ok);
}

std::string quoteString(std::string_view s) {
  static const char* digits = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7F) {
      out += '\\';
      out += digits[c >> 4];
      out += digits[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string symbolName(std::string_view s) {
  return "@" + (isBareIdentifier(s) ? std::string(s) : quoteString(s));
}

std::string attrKey(std::string_view s) { return isBareIdentifier(s) ? std::string(s) : quoteString(s); }

// ---------------------------------------------------------------------------------------------
// Dense elements.

bool isFloatLike(ElementType t) { return isFloat(t) || isComplex(t); }

std::string formatElement(const Literal& lit, int64_t i) {
  ElementType t = lit.elementType();
  if (isBoolean(t)) return lit.getInt(i) ? "true" : "false";
  if (isUnsignedInteger(t)) return std::to_string(static_cast<uint64_t>(lit.getInt(i)));
  if (isComplex(t)) {
    std::complex<double> c = lit.getComplex(i);
    ElementType part = complexPartType(t);
    return "(" + formatFloatElement(part, c.real()) + ", " + formatFloatElement(part, c.imag()) + ")";
  }
  if (isFloat(t)) return formatFloatElement(t, lit.getDouble(i));
  return std::to_string(lit.getInt(i));
}

bool allElementsFinite(const Literal& lit) {
  ElementType t = lit.elementType();
  if (!isFloatLike(t)) return true;
  for (int64_t i = 0; i < lit.numElements(); ++i) {
    if (isComplex(t)) {
      std::complex<double> c = lit.getComplex(i);
      if (!std::isfinite(c.real()) || !std::isfinite(c.imag())) return false;
    } else if (!std::isfinite(lit.getDouble(i))) {
      return false;
    }
  }
  return true;
}

bool isSplat(const Literal& lit) {
  size_t bytes = static_cast<size_t>(storageBytes(lit.elementType()));
  if (lit.elementType() == ElementType::kQuantized) return false;
  const std::byte* d = lit.data();
  for (int64_t i = 1; i < lit.numElements(); ++i)
    if (std::memcmp(d, d + static_cast<size_t>(i) * bytes, bytes) != 0) return false;
  return true;
}

void printNested(const Literal& lit, size_t dim, int64_t& index, std::string& out) {
  const auto& shape = lit.shape();
  if (dim == shape.size()) {
    out += formatElement(lit, index++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    printNested(lit, dim + 1, index, out);
  }
  out += ']';
}

// The `<...>` contents of `dense<...>` (without the trailing type).
std::string denseBody(const Literal& lit) {
  if (lit.numElements() == 0) return "";
  bool splat = isSplat(lit);
  if (!allElementsFinite(lit) || lit.elementType() == ElementType::kQuantized) {
    // Raw little-endian storage bytes; a single element's bytes mean a splat, as in MLIR.
    size_t bytes = splat ? static_cast<size_t>(storageBytes(lit.elementType())) : lit.sizeBytes();
    return "\"" + hexBytes(reinterpret_cast<const uint8_t*>(lit.data()), bytes) + "\"";
  }
  if (splat) return formatElement(lit, 0);
  std::string out;
  int64_t index = 0;
  printNested(lit, 0, index, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The printer proper.

class Printer {
 public:
  Printer(const PrintOptions& options, const Module* module) : options_(options), module_(module) {}

  std::string attribute(const Attribute& a);
  std::string attributeDictionary(const std::vector<NamedAttribute>& entries, bool sorted);

  void printModule(const Module& m);
  void printTopLevelOp(const Operation& op);
  void printFunction(const Operation& op);
  void printGenericOp(const Operation& op);
  // `entryBlockLabel`: print `^bb0(args):` for an entry block with arguments (not for functions).
  void printRegion(const Region& region, bool entryBlockLabel = true);
  void printResources();

  // Assigns names to every value defined in `op` and its regions, in textual order.
  void nameValuesIn(const Operation& op);
  void nameResults(const Operation& op);
  void nameRegionValues(const Operation& op);
  std::string valueName(const Value* v) const;
  void resetNames() {
    names_.clear();
    nextValue_ = 0;
    nextArg_ = 0;
  }

  std::string& out() { return out_; }

 private:
  void line() {
    out_ += '\n';
    out_.append(static_cast<size_t>(indent_) * 2, ' ');
  }
  void printLocation(const Operation& op) {
    if (!options_.printLocations) return;
    const Location& loc = op.location();
    out_ += " loc(" + quoteString(loc.file.empty() ? "<input>" : loc.file) + ":" + std::to_string(loc.line) +
            ":" + std::to_string(loc.column) + ")";
  }

  PrintOptions options_;
  const Module* module_;
  std::string out_;
  int indent_ = 0;
  std::unordered_map<const Value*, std::string> names_;
  int nextValue_ = 0;
  int nextArg_ = 0;
  // Resource blobs referenced by printed dense_resource attributes, by key.
  std::map<std::string, ResourceBlob> resources_;
};

std::string Printer::attributeDictionary(const std::vector<NamedAttribute>& entries, bool sorted) {
  std::vector<const NamedAttribute*> order;
  for (const auto& e : entries)
    if (!e.second.isNone()) order.push_back(&e);
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->first < b->first; });
  std::string s = "{";
  for (size_t i = 0; i < order.size(); ++i) {
    if (i) s += ", ";
    s += attrKey(order[i]->first);
    if (order[i]->second.kind() != Attribute::Kind::kUnit) s += " = " + attribute(order[i]->second);
  }
  return s + "}";
}

std::string Printer::attribute(const Attribute& a) {
  switch (a.kind()) {
    case Attribute::Kind::kNone:
      return "<<none>>";
    case Attribute::Kind::kUnit:
      return "unit";
    case Attribute::Kind::kBool:
      return a.boolValue() ? "true" : "false";
    case Attribute::Kind::kInteger: {
      ElementType t = a.elementType();
      std::string v = isUnsignedInteger(t) ? std::to_string(static_cast<uint64_t>(a.intValue()))
                                           : std::to_string(a.intValue());
      if (t == ElementType::kSI64) return v;  // an untyped integer reads back as i64
      return v + " : " + std::string(elementTypeName(t));
    }
    case Attribute::Kind::kFloat: {
      ElementType t = a.elementType();
      double v = a.floatValue();
      std::string text = std::isfinite(v) ? shortestDouble(v) : hexBits(floatBits(t, v), storageBytes(t));
      return text + " : " + std::string(elementTypeName(t));
    }
    case Attribute::Kind::kString:
      return quoteString(a.stringValue());
    case Attribute::Kind::kType:
      return a.isFunctionType() ? a.functionTypeValue().toString() : a.typeValue().toString();
    case Attribute::Kind::kSymbolRef:
      return symbolName(a.stringValue());
    case Attribute::Kind::kArray: {
      std::string s = "[";
      for (size_t i = 0; i < a.elements().size(); ++i) {
        if (i) s += ", ";
        s += attribute(a.elements()[i]);
      }
      return s + "]";
    }
    case Attribute::Kind::kDenseArray: {
      ElementType t = a.elementType();
      std::string s = "array<" + std::string(elementTypeName(t));
      size_t n = a.floatValues().empty() ? a.intValues().size() : a.floatValues().size();
      for (size_t i = 0; i < n; ++i) {
        s += i ? ", " : ": ";
        if (!a.floatValues().empty()) {
          double v = a.floatValues()[i];
          s += std::isfinite(v) ? shortestDouble(v) : hexBits(floatBits(t, v), storageBytes(t));
        } else if (isBoolean(t)) {
          s += a.intValues()[i] ? "true" : "false";
        } else if (isUnsignedInteger(t)) {
          s += std::to_string(static_cast<uint64_t>(a.intValues()[i]));
        } else {
          s += std::to_string(a.intValues()[i]);
        }
      }
      return s + ">";
    }
    case Attribute::Kind::kDenseElements: {
      if (a.isResource()) {
        // Remember the blob so that the dialect_resources section can carry it.
        const ResourceBlob* known = nullptr;
        if (module_) {
          auto it = module_->resources.find(a.name());
          if (it != module_->resources.end()) known = &it->second;
        }
        if (known) {
          resources_[a.name()] = *known;
        } else if (const Literal* lit = a.literal()) {
          ResourceBlob blob;
          blob.alignment = static_cast<uint32_t>(storageBytes(lit->elementType()));
          const auto* p = reinterpret_cast<const uint8_t*>(lit->data());
          blob.bytes.assign(p, p + lit->sizeBytes());
          resources_[a.name()] = std::move(blob);
        }
        std::string key = isBareIdentifier(a.name()) ? a.name() : quoteString(a.name());
        return "dense_resource<" + key + "> : " + a.typeValue().toString();
      }
      if (const Literal* v = a.splatValue()) return "dense<" + denseBody(*v) + "> : " + a.typeValue().toString();
      if (!a.literal()) return "dense<> : " + a.typeValue().toString();
      return "dense<" + denseBody(*a.literal()) + "> : " + a.typeValue().toString();
    }
    case Attribute::Kind::kDictionary:
      return attributeDictionary(a.fields(), /*sorted=*/true);
    case Attribute::Kind::kEnumValue:
      return "#" + a.dialect() + "<" + a.name() + " " + a.stringValue() + ">";
    case Attribute::Kind::kDialectStruct: {
      // Every struct prints field by field; `#stablehlo.conv` needs the `raw` keyword for that
      // (its default syntax is the compact `[b, 0, 1, f]x[...]->[...]` form).
      std::string s = "#" + a.name() + "<";
      if (a.name() == "stablehlo.conv") s += "raw ";
      for (size_t i = 0; i < a.fields().size(); ++i) {
        if (i) s += ", ";
        s += a.fields()[i].first + " = " + attribute(a.fields()[i].second);
      }
      return s + ">";
    }
    case Attribute::Kind::kOpaque:
      return a.stringValue();
  }
  return "<<invalid attribute>>";
}

void Printer::nameResults(const Operation& op) {
  if (op.numResults() == 0) return;
  std::string base = "%" + std::to_string(nextValue_++);
  if (op.numResults() == 1) {
    names_[op.result(0)] = base;
    return;
  }
  for (size_t i = 0; i < op.numResults(); ++i) names_[op.result(i)] = base + "#" + std::to_string(i);
}

void Printer::nameRegionValues(const Operation& op) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks()) {
      for (const auto& arg : block->arguments()) names_[arg.get()] = "%arg" + std::to_string(nextArg_++);
      for (const auto& inner : block->operations()) nameValuesIn(*inner);
    }
}

void Printer::nameValuesIn(const Operation& op) {
  nameResults(op);
  nameRegionValues(op);
}

std::string Printer::valueName(const Value* v) const {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  // A value defined outside what is being printed (printOperation of a nested op).
  if (v && !v->nameHint().empty()) return v->nameHint();
  return "<<UNKNOWN SSA VALUE>>";
}

void Printer::printGenericOp(const Operation& op) {
  if (op.numResults() > 0) {
    std::string name = valueName(op.result(0));
    if (op.numResults() > 1) name = name.substr(0, name.find('#')) + ":" + std::to_string(op.numResults());
    out_ += name + " = ";
  }
  out_ += quoteString(op.name()) + "(";
  for (size_t i = 0; i < op.numOperands(); ++i) {
    if (i) out_ += ", ";
    out_ += valueName(op.operand(i));
  }
  out_ += ")";
  if (op.numRegions() > 0) {
    out_ += " (";
    for (size_t i = 0; i < op.numRegions(); ++i) {
      if (i) out_ += ", ";
      printRegion(op.region(i));
    }
    out_ += ")";
  }
  if (!op.attributes().empty()) out_ += " " + attributeDictionary(op.attributes().entries(), /*sorted=*/true);
  out_ += " : (";
  for (size_t i = 0; i < op.numOperands(); ++i) {
    if (i) out_ += ", ";
    out_ += op.operand(i) ? op.operand(i)->type().toString() : "<<null>>";
  }
  out_ += ") -> ";
  if (op.numResults() == 1) {
    out_ += op.result(0)->type().toString();
  } else {
    out_ += "(";
    for (size_t i = 0; i < op.numResults(); ++i) {
      if (i) out_ += ", ";
      out_ += op.result(i)->type().toString();
    }
    out_ += ")";
  }
  printLocation(op);
}

void Printer::printRegion(const Region& region, bool entryBlockLabel) {
  out_ += "{";
  ++indent_;
  for (size_t b = 0; b < region.blocks().size(); ++b) {
    const Block& block = *region.blocks()[b];
    if (b > 0 || (entryBlockLabel && block.numArguments() > 0)) {
      // Block labels sit one level left of the block's ops, as in MLIR.
      --indent_;
      line();
      ++indent_;
      out_ += "^bb" + std::to_string(b);
      if (block.numArguments() > 0) {
        out_ += "(";
        for (size_t i = 0; i < block.numArguments(); ++i) {
          if (i) out_ += ", ";
          out_ += valueName(block.argument(i)) + ": " + block.argument(i)->type().toString();
        }
        out_ += ")";
      }
      out_ += ":";
    }
    for (const auto& op : block.operations()) {
      line();
      printGenericOp(*op);
    }
  }
  --indent_;
  line();
  out_ += "}";
}

void Printer::printFunction(const Operation& op) {
  FuncOp fn(&op);
  FunctionType type = fn.functionType();
  const Attribute* visibility = op.attr("sym_visibility");
  const Attribute* argAttrs = op.attr("arg_attrs");
  const Attribute* resAttrs = op.attr("res_attrs");
  bool hasBody = op.numRegions() > 0 && !op.region(0).empty();

  resetNames();
  if (hasBody) {
    const Block& entry = op.region(0).front();
    for (const auto& arg : entry.arguments()) names_[arg.get()] = "%arg" + std::to_string(nextArg_++);
    for (const auto& b : op.region(0).blocks()) {
      if (b.get() != &entry)
        for (const auto& arg : b->arguments()) names_[arg.get()] = "%arg" + std::to_string(nextArg_++);
      for (const auto& inner : b->operations()) nameValuesIn(*inner);
    }
  }

  // A signature entry: the type plus its `{...}` attribute dictionary when non-empty.
  auto withAttrs = [&](std::string text, const Attribute* attrs, size_t i) {
    if (attrs && attrs->kind() == Attribute::Kind::kArray && i < attrs->elements().size()) {
      const Attribute& d = attrs->elements()[i];
      if (d.kind() == Attribute::Kind::kDictionary && !d.fields().empty())
        text += " " + attributeDictionary(d.fields(), /*sorted=*/true);
    }
    return text;
  };

  out_ += "func.func ";
  if (visibility && visibility->kind() == Attribute::Kind::kString) out_ += visibility->stringValue() + " ";
  out_ += symbolName(fn.symName()) + "(";
  for (size_t i = 0; i < type.inputs.size(); ++i) {
    if (i) out_ += ", ";
    std::string entry = type.inputs[i].toString();
    if (hasBody && i < op.region(0).front().numArguments())
      entry = valueName(op.region(0).front().argument(i)) + ": " + entry;
    out_ += withAttrs(entry, argAttrs, i);
  }
  out_ += ")";
  if (!type.results.empty()) {
    std::string results;
    bool needParens = type.results.size() > 1;
    for (size_t i = 0; i < type.results.size(); ++i) {
      std::string entry = withAttrs(type.results[i].toString(), resAttrs, i);
      if (entry.size() != type.results[i].toString().size()) needParens = true;
      results += (i ? ", " : "") + entry;
    }
    out_ += " -> " + (needParens ? "(" + results + ")" : results);
  }
  std::vector<NamedAttribute> extra;
  for (const auto& [k, v] : op.attributes().entries())
    if (k != "sym_name" && k != "function_type" && k != "sym_visibility" && k != "arg_attrs" && k != "res_attrs")
      extra.emplace_back(k, v);
  if (!extra.empty()) out_ += " attributes " + attributeDictionary(extra, /*sorted=*/true);
  if (hasBody) {
    out_ += " ";
    printRegion(op.region(0), /*entryBlockLabel=*/false);  // the signature names the entry arguments
  }
  printLocation(op);
}

void Printer::printTopLevelOp(const Operation& op) {
  if (op.code() == OpCode::FuncFunc) {
    printFunction(op);
    return;
  }
  resetNames();
  nameValuesIn(op);
  printGenericOp(op);
}

void Printer::printResources() {
  if (resources_.empty()) return;
  out_ += "\n{-#\n  dialect_resources: {\n    builtin: {";
  bool first = true;
  for (const auto& [key, blob] : resources_) {
    if (!first) out_ += ",";
    first = false;
    uint8_t align[4];
    std::memcpy(align, &blob.alignment, 4);  // little-endian hosts only, like the blob bytes
    std::string hex = hexBytes(align, 4) + hexBytes(blob.bytes.data(), blob.bytes.size()).substr(2);
    out_ += "\n      " + (isBareIdentifier(key) ? key : quoteString(key)) + ": \"" + hex + "\"";
  }
  out_ += "\n    }\n  }\n#-}\n";
}

void Printer::printModule(const Module& m) {
  out_ += "module";
  if (!m.name.empty()) out_ += " " + symbolName(m.name);
  if (!m.attributes.empty()) out_ += " attributes " + attributeDictionary(m.attributes.entries(), /*sorted=*/true);
  out_ += " {";
  ++indent_;
  for (const auto& op : m.operations()) {
    line();
    printTopLevelOp(*op);
  }
  --indent_;
  out_ += "\n}\n";
  // Blobs the module carries but no printed attribute named still travel with it.
  for (const auto& [key, blob] : m.resources) resources_.emplace(key, blob);
  printResources();
}

// ---------------------------------------------------------------------------------------------
// Structural equivalence.

class Equivalence {
 public:
  bool modules(const Module& a, const Module& b);
  std::string why;

 private:
  bool fail(std::string message) {
    if (why.empty()) why = std::move(message);
    return false;
  }
  bool ops(const Operation& a, const Operation& b, const std::string& where);
  bool regions(const Region& a, const Region& b, const std::string& where);
  bool attributeMaps(const AttributeMap& a, const AttributeMap& b, bool isFunc, const std::string& where);
  bool bind(const Value* a, const Value* b, const std::string& where);

  std::unordered_map<const Value*, const Value*> map_;
};

// Attribute equality where dictionary entry order does not matter (MLIR sorts dictionaries).
bool attributesEqual(const Attribute& a, const Attribute& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Attribute::Kind::kArray: {
      if (a.elements().size() != b.elements().size()) return false;
      for (size_t i = 0; i < a.elements().size(); ++i)
        if (!attributesEqual(a.elements()[i], b.elements()[i])) return false;
      return true;
    }
    case Attribute::Kind::kDictionary: {
      if (a.fields().size() != b.fields().size()) return false;
      for (const auto& [k, v] : a.fields()) {
        const Attribute* other = b.field(k);
        if (!other || !attributesEqual(v, *other)) return false;
      }
      return true;
    }
    case Attribute::Kind::kDialectStruct: {
      if (a.name() != b.name() || a.fields().size() != b.fields().size()) return false;
      for (size_t i = 0; i < a.fields().size(); ++i)
        if (a.fields()[i].first != b.fields()[i].first || !attributesEqual(a.fields()[i].second, b.fields()[i].second))
          return false;
      return true;
    }
    default:
      return a == b;
  }
}

// arg_attrs / res_attrs made only of empty dictionaries say nothing; treat them as absent.
bool isEmptyAttrList(const Attribute* a) {
  if (!a) return true;
  if (a->kind() != Attribute::Kind::kArray) return false;
  return std::all_of(a->elements().begin(), a->elements().end(), [](const Attribute& d) {
    return d.kind() == Attribute::Kind::kDictionary && d.fields().empty();
  });
}

bool Equivalence::attributeMaps(const AttributeMap& a, const AttributeMap& b, bool isFunc, const std::string& where) {
  auto ignorable = [&](const std::string& key, const Attribute& v) {
    return v.isNone() || (isFunc && (key == "arg_attrs" || key == "res_attrs") && isEmptyAttrList(&v));
  };
  Printer printer({}, nullptr);
  for (const auto& [k, v] : a.entries()) {
    const Attribute* other = b.get(k);
    if (ignorable(k, v) && (!other || ignorable(k, *other))) continue;
    if (!other) return fail(where + ": attribute '" + k + "' missing in the second module");
    if (!attributesEqual(v, *other))
      return fail(where + ": attribute '" + k + "' differs: " + printer.attribute(v) + " vs " + printer.attribute(*other));
  }
  for (const auto& [k, v] : b.entries())
    if (!a.get(k) && !ignorable(k, v)) return fail(where + ": attribute '" + k + "' missing in the first module");
  return true;
}

bool Equivalence::bind(const Value* a, const Value* b, const std::string& where) {
  if (a->type() != b->type())
    return fail(where + ": value types differ: " + a->type().toString() + " vs " + b->type().toString());
  map_[a] = b;
  return true;
}

bool Equivalence::regions(const Region& a, const Region& b, const std::string& where) {
  if (a.blocks().size() != b.blocks().size()) return fail(where + ": block counts differ");
  for (size_t i = 0; i < a.blocks().size(); ++i) {
    const Block& ba = *a.blocks()[i];
    const Block& bb = *b.blocks()[i];
    std::string at = where + ", block " + std::to_string(i);
    if (ba.numArguments() != bb.numArguments()) return fail(at + ": argument counts differ");
    for (size_t j = 0; j < ba.numArguments(); ++j)
      if (!bind(ba.argument(j), bb.argument(j), at + ", argument " + std::to_string(j))) return false;
    if (ba.operations().size() != bb.operations().size())
      return fail(at + ": op counts differ (" + std::to_string(ba.operations().size()) + " vs " +
                  std::to_string(bb.operations().size()) + ")");
    for (size_t j = 0; j < ba.operations().size(); ++j)
      if (!ops(*ba.operations()[j], *bb.operations()[j], at)) return false;
  }
  return true;
}

bool Equivalence::ops(const Operation& a, const Operation& b, const std::string& where) {
  std::string at = where + ", op " + a.describe();
  if (a.name() != b.name()) return fail(at + ": op names differ ('" + a.name() + "' vs '" + b.name() + "')");
  if (a.numOperands() != b.numOperands()) return fail(at + ": operand counts differ");
  for (size_t i = 0; i < a.numOperands(); ++i) {
    auto it = map_.find(a.operand(i));
    if (it == map_.end() || it->second != b.operand(i))
      return fail(at + ": operand " + std::to_string(i) + " refers to a different value");
  }
  if (!attributeMaps(a.attributes(), b.attributes(), a.code() == OpCode::FuncFunc, at)) return false;
  if (a.numRegions() != b.numRegions()) return fail(at + ": region counts differ");
  for (size_t i = 0; i < a.numRegions(); ++i)
    if (!regions(a.region(i), b.region(i), at + ", region " + std::to_string(i))) return false;
  if (a.numResults() != b.numResults()) return fail(at + ": result counts differ");
  for (size_t i = 0; i < a.numResults(); ++i)
    if (!bind(a.result(i), b.result(i), at + ", result " + std::to_string(i))) return false;
  return true;
}

bool Equivalence::modules(const Module& a, const Module& b) {
  if (a.name != b.name) return fail("module names differ ('" + a.name + "' vs '" + b.name + "')");
  if (!attributeMaps(a.attributes, b.attributes, false, "module")) return false;
  if (a.operations().size() != b.operations().size()) return fail("module: top-level op counts differ");
  for (size_t i = 0; i < a.operations().size(); ++i)
    if (!ops(*a.operations()[i], *b.operations()[i], "module")) return false;
  if (a.resources.size() != b.resources.size()) return fail("module: resource counts differ");
  for (const auto& [key, blob] : a.resources) {
    auto it = b.resources.find(key);
    if (it == b.resources.end()) return fail("module: resource '" + key + "' missing in the second module");
    if (it->second.alignment != blob.alignment || it->second.bytes != blob.bytes)
      return fail("module: resource '" + key + "' differs");
  }
  return true;
}

}  // namespace

std::string printModule(const Module& module, const PrintOptions& options) {
  Printer p(options, &module);
  p.printModule(module);
  return std::move(p.out());
}

std::string printOperation(const Operation& op, const PrintOptions& options) {
  Printer p(options, nullptr);
  p.printTopLevelOp(op);
  return std::move(p.out());
}

std::string printAttribute(const Attribute& attr) {
  Printer p({}, nullptr);
  return p.attribute(attr);
}

bool modulesEquivalent(const Module& a, const Module& b, std::string* why) {
  Equivalence eq;
  bool same = eq.modules(a, b);
  if (!same && why) *why = eq.why;
  return same;
}

}  // namespace wf
