// Types, attributes and dense literals of the MLIR text format.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "stablehlo/parser_impl.h"

namespace wf::parser_detail {
namespace {

bool startsWithDigit(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
}

bool isHexToken(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

bool isFloatToken(std::string_view s) {
  return !isHexToken(s) && s.find_first_of(".eE") != std::string_view::npos;
}

// Integer text (decimal or hex, optionally negative) to its 64-bit two's complement pattern.
bool parseIntToken(std::string_view s, uint64_t* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (hex) s.remove_prefix(2);
  if (s.empty()) return false;
  uint64_t v = 0;
  const uint64_t base = hex ? 16 : 10;
  for (char c : s) {
    int d;
    if (std::isdigit(static_cast<unsigned char>(c))) d = c - '0';
    else if (hex && std::isxdigit(static_cast<unsigned char>(c))) d = std::tolower(c) - 'a' + 10;
    else return false;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / base) return false;
    v = v * base + static_cast<uint64_t>(d);
  }
  *out = neg ? 0 - v : v;
  return true;
}

// A decimal float or integer token, or inf/nan words, to double (f32 values through strtof so
// that the single rounding matches MLIR's).
bool parseFloatToken(std::string_view s, ElementType t, double* out) {
  std::string str(s);
  if (str == "inf" || str == "+inf") { *out = std::numeric_limits<double>::infinity(); return true; }
  if (str == "-inf") { *out = -std::numeric_limits<double>::infinity(); return true; }
  if (str == "nan" || str == "+nan") { *out = std::numeric_limits<double>::quiet_NaN(); return true; }
  if (str == "-nan") { *out = -std::numeric_limits<double>::quiet_NaN(); return true; }
  if (!startsWithDigit(str)) return false;
  char* end = nullptr;
  if (t == ElementType::kF32 || t == ElementType::kComplexF32) *out = std::strtof(str.c_str(), &end);
  else *out = std::strtod(str.c_str(), &end);
  return end == str.c_str() + str.size();
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// One scalar of a dense literal: a token, or a (real, imag) pair for complex types.
struct DenseScalar {
  std::string_view a, b;
  bool isPair = false;
  size_t pos = 0;
};

int64_t signExtend(uint64_t bits, int width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  if (bits >> (width - 1)) bits |= ~mask;
  return static_cast<int64_t>(bits);
}

double bitsToDouble(uint64_t bits, ElementType part) {
  if (part == ElementType::kF32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Types

bool Parser::atTypeStart() {
  skipWs();
  char c = peekChar();
  if (c == '!' || c == '(') return true;
  std::string_view id = peekBareId();
  if (id.empty()) return false;
  ElementType et;
  return id == "tensor" || id == "tuple" || id == "complex" || id == "memref" || id == "vector" ||
         id == "none" || id == "index" || parseElementTypeName(id, &et) ||
         (id.size() > 2 && id[0] == 's' && id[1] == 'i' && parseElementTypeName(id.substr(1), &et));
}

Status Parser::parseDialectTypeText(std::string* text, const char* what) {
  size_t start = pos_;
  ++pos_;  // '!'
  if (parseBareId().empty()) return errorAt(start, std::string("expected ") + what + " after '!'");
  if (peekChar() == '<') {
    std::string_view body;
    WF_RETURN_IF_ERROR(skipBalanced(&body));
  }
  *text = std::string(text_.substr(start, pos_ - start));
  return Status::ok();
}

Status Parser::parseElementType(ElementType* out, std::string* quantized) {
  skipWs();
  size_t start = pos_;
  if (peekChar() == '!') {
    // Quantized element types: !quant.uniform<i8:f32, 0.1:-30>; kept verbatim.
    std::string text;
    WF_RETURN_IF_ERROR(parseDialectTypeText(&text, "element type"));
    auto alias = typeAliases_.find(text);
    if (alias != typeAliases_.end() && alias->second.isTensor() && alias->second.rank() == 0) {
      *out = alias->second.elementType();
      *quantized = alias->second.quantizedSpelling();
      return Status::ok();
    }
    if (text.rfind("!quant.", 0) != 0) return errorAt(start, "unsupported element type '" + text + "'");
    *out = ElementType::kQuantized;
    *quantized = text;
    return Status::ok();
  }
  std::string_view id = parseBareId();
  if (id.empty()) return errorAt(start, "expected element type, found " + describeNext());
  std::string name(id);
  if (name == "complex") {
    WF_RETURN_IF_ERROR(expect('<', "after 'complex'"));
    std::string_view part = parseBareId();
    WF_RETURN_IF_ERROR(expect('>', "to end 'complex<'"));
    name = "complex<" + std::string(part) + ">";
  }
  if (parseElementTypeName(name, out)) return Status::ok();
  // Explicitly signed integers (si8, si32) are the spec's names for MLIR's signless ones.
  if (name.size() > 2 && name[0] == 's' && name[1] == 'i' && parseElementTypeName(name.substr(1), out))
    return Status::ok();
  return errorAt(start, "unknown element type '" + name + "'");
}

Status Parser::parseType(Type* out) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  skipWs();
  size_t start = pos_;
  if (peekChar() == '!') {
    std::string text;
    WF_RETURN_IF_ERROR(parseDialectTypeText(&text, "type name"));
    if (text == "!stablehlo.token" || text == "!mhlo.token") {
      *out = Type::token();
      return Status::ok();
    }
    auto alias = typeAliases_.find(text);
    if (alias != typeAliases_.end()) {
      *out = alias->second;
      return Status::ok();
    }
    *out = Type::opaque(text);
    return Status::ok();
  }
  std::string_view id = peekBareId();
  if (id == "tensor") {
    pos_ += id.size();
    WF_RETURN_IF_ERROR(expect('<', "after 'tensor'"));
    std::vector<int64_t> shape;
    while (true) {
      skipWs();
      char c = peekChar();
      if (c == '?') {
        ++pos_;
        shape.push_back(kDynamic);
      } else if (c == '*') {
        // Unranked tensors are outside StableHLO's static/dynamic model: keep verbatim.
        pos_ = start;
        pos_ += id.size();
        std::string_view body;
        WF_RETURN_IF_ERROR(skipBalanced(&body));
        *out = Type::opaque(std::string(text_.substr(start, pos_ - start)));
        return Status::ok();
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t dimPos = pos_;
        int64_t d = 0;
        while (std::isdigit(static_cast<unsigned char>(peekChar()))) {
          d = d * 10 + (peekChar() - '0');
          if (d > (int64_t{1} << 40)) return errorAt(dimPos, "tensor dimension too large");
          ++pos_;
        }
        shape.push_back(d);
      } else {
        break;
      }
      if (peekChar() != 'x') return errorHere("expected 'x' after tensor dimension, found " + describeNext());
      ++pos_;
      if (shape.size() > 64) return errorAt(start, "tensor rank too large");
    }
    ElementType et;
    std::string quantized;
    WF_RETURN_IF_ERROR(parseElementType(&et, &quantized));
    Type t = Type::tensor(std::move(shape), et);
    if (!quantized.empty()) t.setQuantizedSpelling(quantized);
    if (consumeIf(',')) {
      skipWs();
      size_t encStart = pos_;
      Attribute ignored;
      WF_RETURN_IF_ERROR(parseAttribute(&ignored));
      std::string_view enc = text_.substr(encStart, pos_ - encStart);
      while (!enc.empty() && std::isspace(static_cast<unsigned char>(enc.back()))) enc.remove_suffix(1);
      t.setEncoding(std::string(enc));
    }
    WF_RETURN_IF_ERROR(expect('>', "to end tensor type"));
    *out = std::move(t);
    return Status::ok();
  }
  if (id == "tuple") {
    pos_ += id.size();
    WF_RETURN_IF_ERROR(expect('<', "after 'tuple'"));
    std::vector<Type> elems;
    if (!consumeIf('>')) {
      WF_RETURN_IF_ERROR(parseTypeList(&elems));
      WF_RETURN_IF_ERROR(expect('>', "to end tuple type"));
    }
    *out = Type::tuple(std::move(elems));
    return Status::ok();
  }
  if (id == "memref" || id == "vector" || id == "complex") {
    pos_ += id.size();
    std::string_view body;
    WF_RETURN_IF_ERROR(skipBalanced(&body));
    *out = Type::opaque(std::string(text_.substr(start, pos_ - start)));
    return Status::ok();
  }
  ElementType et;
  std::string sid(id);
  if (!id.empty() && (id == "none" || id == "index" || parseElementTypeName(id, &et) ||
                      (sid.size() > 2 && sid[0] == 's' && sid[1] == 'i' && parseElementTypeName(sid.substr(1), &et)))) {
    // A scalar non-tensor type (i32, index): not a StableHLO value type, kept verbatim.
    pos_ += id.size();
    *out = Type::opaque(sid);
    return Status::ok();
  }
  if (!id.empty()) return errorAt(start, "unknown type '" + sid + "'");
  return errorHere("expected type, found " + describeNext());
}

Status Parser::parseTypeList(std::vector<Type>* out) {
  do {
    Type t;
    WF_RETURN_IF_ERROR(parseType(&t));
    out->push_back(std::move(t));
    if (out->size() > 100000) return errorHere("type list too long");
  } while (consumeIf(','));
  return Status::ok();
}

Status Parser::parseParenTypeList(std::vector<Type>* out) {
  WF_RETURN_IF_ERROR(expect('(', "to begin a type list"));
  if (consumeIf(')')) return Status::ok();
  WF_RETURN_IF_ERROR(parseTypeList(out));
  return expect(')', "to end a type list");
}

Status Parser::parseFunctionResults(std::vector<Type>* out) {
  if (peekIs('(')) return parseParenTypeList(out);
  Type t;
  WF_RETURN_IF_ERROR(parseType(&t));
  out->push_back(std::move(t));
  return Status::ok();
}

Status Parser::parseTypeSpec(TypeSpec* out) {
  if (peekIs('(')) {
    WF_RETURN_IF_ERROR(parseParenTypeList(&out->inputs));
    if (consumeIf("->")) {
      out->functional = true;
      return parseFunctionResults(&out->results);
    }
    return Status::ok();
  }
  Type t;
  WF_RETURN_IF_ERROR(parseType(&t));
  out->inputs.push_back(std::move(t));
  if (consumeIf("->")) {
    out->functional = true;
    return parseFunctionResults(&out->results);
  }
  while (consumeIf(',')) {
    Type more;
    WF_RETURN_IF_ERROR(parseType(&more));
    out->inputs.push_back(std::move(more));
    if (out->inputs.size() > 100000) return errorHere("type list too long");
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Attributes

Status Parser::parseAttrDict(std::vector<NamedAttribute>* out) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  WF_RETURN_IF_ERROR(expect('{', "to begin an attribute dictionary"));
  if (consumeIf('}')) return Status::ok();
  do {
    skipWs();
    std::string key;
    if (peekChar() == '"') {
      WF_RETURN_IF_ERROR(parseStringLiteral(&key));
    } else {
      key = std::string(parseBareId());
      if (key.empty()) return errorHere("expected attribute name, found " + describeNext());
    }
    Attribute value = Attribute::unit();
    if (consumeIf('=')) WF_RETURN_IF_ERROR(parseAttribute(&value));
    out->emplace_back(std::move(key), std::move(value));
  } while (consumeIf(','));
  return expect('}', "to end an attribute dictionary");
}

Status Parser::parseAttrDictInto(AttributeMap* out) {
  std::vector<NamedAttribute> attrs;
  WF_RETURN_IF_ERROR(parseAttrDict(&attrs));
  for (auto& [k, v] : attrs) out->set(k, std::move(v));
  return Status::ok();
}

Status Parser::parseIntList(std::vector<int64_t>* out) {
  WF_RETURN_IF_ERROR(expect('[', "to begin an integer list"));
  if (consumeIf(']')) return Status::ok();
  do {
    int64_t v;
    WF_RETURN_IF_ERROR(parseIntegerValue(&v));
    out->push_back(v);
    if (out->size() > 1000000) return errorHere("integer list too long");
  } while (consumeIf(','));
  return expect(']', "to end an integer list");
}

Status Parser::parseNumberAttribute(Attribute* out) {
  skipWs();
  size_t start = pos_;
  std::string_view tok = parseNumberToken();
  if (tok.empty()) return errorHere("expected number, found " + describeNext());
  ElementType type = isFloatToken(tok) ? ElementType::kF64 : ElementType::kSI64;
  bool typed = false;
  // `1 : i32` is a typed number; in `tolerance = 0.1 : tensor<f64>` the type belongs to the op.
  size_t beforeColon = pos_;
  bool hasElementType = false;
  if (consumeIf(':')) {
    ElementType probe;
    std::string_view id = peekBareId();
    hasElementType = id == "index" || parseElementTypeName(id, &probe) ||
                     (id.size() > 2 && id[0] == 's' && id[1] == 'i' && parseElementTypeName(id.substr(1), &probe));
    pos_ = beforeColon;
  }
  if (hasElementType && consumeIf(':')) {
    // `1 : i32`, `1.0 : f32`, `0x7FC00000 : f32`, `true : i1` never reaches here.
    skipWs();
    if (peekKeyword("index")) {
      parseBareId();
      type = ElementType::kIndex;
    } else {
      std::string q;
      WF_RETURN_IF_ERROR(parseElementType(&type, &q));
      if (type == ElementType::kQuantized) return errorAt(start, "number attribute cannot have a quantized type");
    }
    typed = true;
  }
  (void)typed;
  if (isFloat(type) || isComplex(type)) {
    double v;
    if (isHexToken(tok)) {
      uint64_t bits;
      if (!parseIntToken(tok, &bits)) return errorAt(start, "invalid hexadecimal float '" + std::string(tok) + "'");
      Literal l = Literal::zeros(Type::scalar(type));
      l.setBits(0, bits);
      v = l.getDouble(0);
    } else if (!parseFloatToken(tok, type, &v)) {
      return errorAt(start, "invalid floating-point literal '" + std::string(tok) + "'");
    }
    *out = Attribute::floating(v, type);
    return Status::ok();
  }
  if (isFloatToken(tok)) return errorAt(start, "floating-point literal '" + std::string(tok) + "' with integer type");
  uint64_t bits;
  if (!parseIntToken(tok, &bits)) return errorAt(start, "integer literal '" + std::string(tok) + "' is too large");
  *out = type == ElementType::kI1 ? Attribute::boolean(bits != 0)
                                  : Attribute::integer(static_cast<int64_t>(bits), type);
  return Status::ok();
}

Status Parser::parseAttribute(Attribute* out) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  skipWs();
  size_t start = pos_;
  char c = peekChar();
  if (c == '"') {
    std::string s;
    WF_RETURN_IF_ERROR(parseStringLiteral(&s));
    *out = Attribute::string(std::move(s));
    return Status::ok();
  }
  if (c == '@') {
    std::string s;
    WF_RETURN_IF_ERROR(parseSymbolName(&s));
    *out = Attribute::symbolRef(std::move(s));
    return Status::ok();
  }
  if (c == '[') {
    ++pos_;
    std::vector<Attribute> elems;
    if (!consumeIf(']')) {
      do {
        Attribute e;
        WF_RETURN_IF_ERROR(parseAttribute(&e));
        elems.push_back(std::move(e));
        if (elems.size() > 1000000) return errorHere("attribute array too long");
      } while (consumeIf(','));
      WF_RETURN_IF_ERROR(expect(']', "to end an attribute array"));
    }
    *out = Attribute::array(std::move(elems));
    return Status::ok();
  }
  if (c == '{') {
    std::vector<NamedAttribute> fields;
    WF_RETURN_IF_ERROR(parseAttrDict(&fields));
    *out = Attribute::dictionary(std::move(fields));
    return Status::ok();
  }
  if (c == '#') return parseHashAttribute(out);
  if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) return parseNumberAttribute(out);
  if (c == '(') {
    std::vector<Type> inputs;
    WF_RETURN_IF_ERROR(parseParenTypeList(&inputs));
    WF_RETURN_IF_ERROR(expect("->", "in function type"));
    std::vector<Type> results;
    WF_RETURN_IF_ERROR(parseFunctionResults(&results));
    *out = Attribute::functionType(FunctionType{std::move(inputs), std::move(results)});
    return Status::ok();
  }
  std::string_view id = peekBareId();
  if (id == "dense") {
    pos_ += id.size();
    return parseDenseElements(out);
  }
  if (id == "dense_resource") {
    pos_ += id.size();
    return parseDenseResource(out);
  }
  if (id == "array") {
    pos_ += id.size();
    return parseDenseArray(out);
  }
  if (id == "true" || id == "false") {
    pos_ += id.size();
    *out = Attribute::boolean(id == "true");
    if (consumeIf(':')) {  // `true : i1`
      Type ignored;
      WF_RETURN_IF_ERROR(parseType(&ignored));
    }
    return Status::ok();
  }
  if (id == "unit") {
    pos_ += id.size();
    *out = Attribute::unit();
    return Status::ok();
  }
  if (id == "inf" || id == "nan") {
    pos_ += id.size();
    *out = Attribute::floating(id == "inf" ? std::numeric_limits<double>::infinity()
                                           : std::numeric_limits<double>::quiet_NaN());
    if (consumeIf(':')) {
      ElementType et;
      std::string q;
      WF_RETURN_IF_ERROR(parseElementType(&et, &q));
      *out = Attribute::floating(out->floatValue(), et);
    }
    return Status::ok();
  }
  if (c == '!' || id == "tensor" || id == "tuple" || id == "complex") {
    Type t;
    WF_RETURN_IF_ERROR(parseType(&t));
    *out = Attribute::type(std::move(t));
    return Status::ok();
  }
  if (!id.empty()) {
    ElementType et;
    std::string sid(id);
    if (parseElementTypeName(id, &et)) {
      // A bare element type as a type attribute (e.g. `accumulation_type = f32`).
      pos_ += id.size();
      *out = Attribute::type(Type::scalar(et));
      return Status::ok();
    }
    pos_ += id.size();
    if (peekChar() == '<' || peekChar() == '(') {
      // affine_map<...>, sparse<...>, distinct[0]<...>, other builtin forms: kept verbatim.
      std::string_view body;
      WF_RETURN_IF_ERROR(skipBalanced(&body));
      *out = Attribute::opaque(std::string(text_.substr(start, pos_ - start)));
      return Status::ok();
    }
    // A bare word: enum values inside dialect attributes, unknown keywords.
    *out = Attribute::opaque(sid);
    return Status::ok();
  }
  return errorAt(start, "expected attribute value, found " + describeNext());
}

Status Parser::parseHashAttribute(Attribute* out) {
  skipWs();
  size_t start = pos_;
  ++pos_;  // '#'
  size_t nameStart = pos_;
  while (pos_ < text_.size() &&
         (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
          text_[pos_] == '.' || text_[pos_] == '$' || text_[pos_] == '-'))
    ++pos_;
  if (pos_ == nameStart) return errorAt(start, "expected attribute name after '#'");
  std::string name(text_.substr(nameStart, pos_ - nameStart));
  if (peekChar() != '<') {
    std::string alias = "#" + name;
    auto it = attrAliases_.find(alias);
    if (it != attrAliases_.end()) {
      *out = it->second;
      return Status::ok();
    }
    if (prepass_) {
      *out = Attribute::opaque(alias);
      return Status::ok();
    }
    return errorAt(start, "undefined attribute alias '" + alias + "'");
  }
  size_t dot = name.find('.');
  if (dot == std::string::npos) {
    // `#stablehlo<comparison_direction EQ>`: an enum of a dialect.
    size_t save = pos_;
    ++pos_;  // '<'
    std::string_view enumName = parseBareId();
    std::string_view value = parseBareId();
    if (!enumName.empty() && !value.empty() && consumeIf('>')) {
      *out = Attribute::enumValue(name, std::string(enumName), std::string(value));
      return Status::ok();
    }
    pos_ = save;
    std::string_view body;
    WF_RETURN_IF_ERROR(skipBalanced(&body));
    *out = Attribute::opaque(std::string(text_.substr(start, pos_ - start)));
    return Status::ok();
  }
  // `#dialect.name<...>`: a struct of named fields when it parses as one, else verbatim.
  size_t save = pos_;
  Status st = parseDialectStructBody(name, out);
  if (st.isOk()) return st;
  if (depth_ > kMaxDepth) return st;
  pos_ = save;
  // `#stablehlo.result_accuracy_mode<DEFAULT>`-style enums.
  ++pos_;
  std::string_view word = parseBareId();
  if (!word.empty() && consumeIf('>')) {
    *out = Attribute::enumValue(name.substr(0, dot), name.substr(dot + 1), std::string(word));
    return Status::ok();
  }
  pos_ = save;
  std::string_view body;
  WF_RETURN_IF_ERROR(skipBalanced(&body));
  *out = Attribute::opaque(std::string(text_.substr(start, pos_ - start)));
  return Status::ok();
}

Status Parser::parseConvDimensionNumbers(std::vector<NamedAttribute>* fields) {
  // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]: each list names, per position, which dimension
  // of the tensor plays which role.
  struct Part {
    const char* batch;    // role letter for the batch / output-feature dimension
    const char* feature;  // role letter for the feature / input-feature dimension
    const char* batchField;
    const char* featureField;
    const char* spatialField;
  };
  const Part parts[3] = {
      {"b", "f", "input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions"},
      {"o", "i", "kernel_output_feature_dimension", "kernel_input_feature_dimension", "kernel_spatial_dimensions"},
      {"b", "f", "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions"},
  };
  std::vector<NamedAttribute> byPart[3];
  for (int p = 0; p < 3; ++p) {
    if (p == 1) WF_RETURN_IF_ERROR(expect('x', "between convolution input and kernel dimensions"));
    if (p == 2) WF_RETURN_IF_ERROR(expect("->", "before convolution output dimensions"));
    size_t listPos = pos_;
    WF_RETURN_IF_ERROR(expect('[', "to begin convolution dimensions"));
    int64_t batch = -1, feature = -1;
    std::vector<std::pair<int64_t, int64_t>> spatial;  // (spatial index, tensor dim)
    int64_t dim = 0;
    if (!consumeIf(']')) {
      do {
        skipWs();
        if (std::isdigit(static_cast<unsigned char>(peekChar()))) {
          int64_t s;
          WF_RETURN_IF_ERROR(parseIntegerValue(&s));
          if (s < 0 || s > 64) return errorAt(listPos, "invalid spatial dimension index");
          spatial.push_back({s, dim});
        } else {
          std::string_view role = parseBareId();
          if (role == parts[p].batch && batch < 0) batch = dim;
          else if (role == parts[p].feature && feature < 0) feature = dim;
          else return errorAt(listPos, "unexpected convolution dimension '" + std::string(role) + "'");
        }
        if (++dim > 64) return errorAt(listPos, "too many convolution dimensions");
      } while (consumeIf(','));
      WF_RETURN_IF_ERROR(expect(']', "to end convolution dimensions"));
    }
    if (batch < 0 || feature < 0)
      return errorAt(listPos, std::string("convolution dimensions must name '") + parts[p].batch + "' and '" +
                                  parts[p].feature + "'");
    std::vector<Attribute> sp(spatial.size());
    std::vector<bool> seen(spatial.size(), false);
    for (auto [s, d] : spatial) {
      if (static_cast<size_t>(s) >= spatial.size() || seen[static_cast<size_t>(s)])
        return errorAt(listPos, "spatial dimensions must be 0..N-1, each once");
      seen[static_cast<size_t>(s)] = true;
      sp[static_cast<size_t>(s)] = Attribute::integer(d);
    }
    // MLIR's field order: kernel input feature comes before kernel output feature.
    if (p == 1) byPart[p].emplace_back(parts[p].featureField, Attribute::integer(feature));
    byPart[p].emplace_back(parts[p].batchField, Attribute::integer(batch));
    if (p != 1) byPart[p].emplace_back(parts[p].featureField, Attribute::integer(feature));
    byPart[p].emplace_back(parts[p].spatialField, Attribute::array(std::move(sp)));
  }
  for (auto& part : byPart)
    for (auto& f : part) fields->push_back(std::move(f));
  return Status::ok();
}

// `[1, ?, 3]`: integers where `?` is a dynamic size (type_extensions bounds).
Status Parser::parseBoundsList(std::vector<int64_t>* out) {
  WF_RETURN_IF_ERROR(expect('[', "to begin an integer list"));
  if (consumeIf(']')) return Status::ok();
  do {
    int64_t v = kDynamic;
    if (!consumeIf('?')) WF_RETURN_IF_ERROR(parseIntegerValue(&v));
    out->push_back(v);
    if (out->size() > 1000000) return errorHere("integer list too long");
  } while (consumeIf(','));
  return expect(']', "to end an integer list");
}

Status Parser::parseDialectStructBody(const std::string& name, Attribute* out) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  WF_RETURN_IF_ERROR(expect('<', "to begin attribute '#" + name + "'"));
  std::vector<NamedAttribute> fields;
  if (name == "stablehlo.conv" || name == "mhlo.conv") {
    if (consumeKeyword("raw")) {
      // raw form: key = value fields like the other structs
    } else {
      WF_RETURN_IF_ERROR(parseConvDimensionNumbers(&fields));
      WF_RETURN_IF_ERROR(expect('>', "to end '#" + name + "'"));
      *out = Attribute::dialectStruct(name, std::move(fields));
      return Status::ok();
    }
  }
  if (!consumeIf('>')) {
    do {
      std::string_view key = parseBareId();
      if (key.empty()) return errorHere("expected field name in '#" + name + "', found " + describeNext());
      WF_RETURN_IF_ERROR(expect('=', "after field name in '#" + name + "'"));
      Attribute value;
      skipWs();
      if (peekChar() == '[') {
        // Integer lists ([0, 1]) and nested lists; `?` marks dynamic bounds.
        size_t save = pos_;
        std::vector<int64_t> ints;
        if (parseBoundsList(&ints).isOk()) {
          std::vector<Attribute> elems;
          for (int64_t v : ints) elems.push_back(Attribute::integer(v));
          value = Attribute::array(std::move(elems));
        } else {
          pos_ = save;
          WF_RETURN_IF_ERROR(parseAttribute(&value));
        }
      } else {
        WF_RETURN_IF_ERROR(parseAttribute(&value));
      }
      fields.emplace_back(std::string(key), std::move(value));
    } while (consumeIf(','));
    WF_RETURN_IF_ERROR(expect('>', "to end '#" + name + "'"));
  }
  *out = Attribute::dialectStruct(name, std::move(fields));
  return Status::ok();
}

Status Parser::parseDenseArray(Attribute* out) {
  // array<i64: 1, 2>, array<i1: true, false>, array<f32: 1.0>, array<i64>
  WF_RETURN_IF_ERROR(expect('<', "after 'array'"));
  ElementType et;
  std::string q;
  skipWs();
  size_t typePos = pos_;
  WF_RETURN_IF_ERROR(parseElementType(&et, &q));
  if (et == ElementType::kQuantized || isComplex(et)) return errorAt(typePos, "unsupported array element type");
  std::vector<int64_t> ints;
  std::vector<double> floats;
  if (consumeIf(':')) {
    do {
      skipWs();
      size_t vpos = pos_;
      if (et == ElementType::kI1) {
        if (consumeKeyword("true")) ints.push_back(1);
        else if (consumeKeyword("false")) ints.push_back(0);
        else return errorAt(vpos, "expected 'true' or 'false' in array<i1>");
      } else {
        std::string_view tok = parseNumberToken();
        if (tok.empty()) {
          std::string_view w = parseBareId();
          if (isFloat(et) && (w == "inf" || w == "nan")) tok = w;
          else return errorAt(vpos, "expected number in array<...>, found " + describeNext());
        }
        if (isFloat(et)) {
          double v;
          if (isHexToken(tok)) {
            uint64_t bits;
            if (!parseIntToken(tok, &bits)) return errorAt(vpos, "invalid hex float");
            Literal l = Literal::zeros(Type::scalar(et));
            l.setBits(0, bits);
            v = l.getDouble(0);
          } else if (!parseFloatToken(tok, et, &v)) {
            return errorAt(vpos, "invalid float '" + std::string(tok) + "'");
          }
          floats.push_back(v);
        } else {
          uint64_t bits;
          if (isFloatToken(tok) || !parseIntToken(tok, &bits))
            return errorAt(vpos, "invalid integer '" + std::string(tok) + "'");
          ints.push_back(static_cast<int64_t>(bits));
        }
      }
      if (ints.size() + floats.size() > 10000000) return errorAt(vpos, "array too long");
    } while (consumeIf(','));
  }
  WF_RETURN_IF_ERROR(expect('>', "to end 'array<'"));
  *out = isFloat(et) ? Attribute::denseFloatArray(et, std::move(floats)) : Attribute::denseArray(et, std::move(ints));
  return Status::ok();
}

Status Parser::checkConstantSize(const Type& type, size_t pos) {
  if (!type.isTensor()) return errorAt(pos, "dense literal needs a tensor type, got " + type.toString());
  if (!type.hasStaticShape()) return errorAt(pos, "dense literal needs a static shape, got " + type.toString());
  if (type.elementType() == ElementType::kQuantized)
    return errorAt(pos, "dense literal of quantized type " + type.toString() + " is not supported");
  int64_t n = 1;
  for (int64_t d : type.shape()) {
    if (d != 0 && n > options_.maxConstantElements / d)
      return errorAt(pos, "constant of type " + type.toString() + " is too large");
    n *= d;
  }
  if (n > options_.maxConstantElements) return errorAt(pos, "constant of type " + type.toString() + " is too large");
  return Status::ok();
}

// Constants are user input: a huge splat must be an error, never an uncaught bad_alloc.
Status Parser::allocateConstant(const Type& type, Literal* out, size_t pos) {
  try {
    *out = Literal::zeros(type);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted,
                  errorAt(pos, "out of memory allocating a constant of type " + type.toString()).message());
  }
  return Status::ok();
}

Status Parser::parseDenseElements(Attribute* out, Type* typeOut) {
  skipWs();
  size_t bodyPos = pos_;
  if (peekChar() != '<') return errorHere("expected '<' after 'dense', found " + describeNext());
  std::string_view body;
  WF_RETURN_IF_ERROR(skipBalanced(&body));
  body = body.substr(1, body.size() - 2);
  WF_RETURN_IF_ERROR(expect(':', "and a type after 'dense<...>'"));
  skipWs();
  size_t typePos = pos_;
  Type type;
  WF_RETURN_IF_ERROR(parseType(&type));
  if (typeOut) *typeOut = type;
  if (type.isTensor() && type.elementType() == ElementType::kQuantized) {
    // Quantized constants are not computed; keep the text so it prints back.
    *out = Attribute::opaque("dense<" + std::string(body) + "> : " + type.toString());
    return Status::ok();
  }
  WF_RETURN_IF_ERROR(checkConstantSize(type, typePos));
  return buildDense(body, bodyPos + 1, type, out);
}

Status Parser::buildDense(std::string_view body, size_t bodyPos, const Type& type, Attribute* out) {
  const ElementType et = type.elementType();
  const int64_t n = type.numElements();
  // A splat of more than one element keeps its one value (Attribute::denseSplat); anything else
  // is allocated whole.
  const Type scalarType = Type::tensor({}, et);
  Literal lit;
  auto allocate = [&](bool splat) { return allocateConstant(splat && n > 1 ? scalarType : type, &lit, bodyPos); };
  auto finish = [&](bool splat) {
    return splat && n > 1 ? Attribute::denseSplat(type, std::move(lit)) : Attribute::denseElements(std::move(lit));
  };
  // Re-scan the body with the parser's own cursor so that errors point into the text.
  size_t savePos = pos_;
  size_t bodyEnd = bodyPos + body.size();
  pos_ = bodyPos;
  auto restore = [&](Status st) {
    pos_ = savePos;
    return st;
  };
  skipWs();
  if (pos_ >= bodyEnd) {
    if (n != 0) return restore(errorAt(bodyPos, "empty dense literal for " + type.toString()));
    if (Status allocated = allocate(false); !allocated.isOk()) return restore(allocated);
    *out = Attribute::denseElements(std::move(lit));
    return restore(Status::ok());
  }
  if (peekChar() == '"') {
    // Hex string: the raw little-endian bytes of the element storage (or of one element, a splat).
    std::string hex;
    Status st = parseStringLiteral(&hex);
    if (!st.isOk()) return restore(st);
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') || hex.size() % 2 != 0)
      return restore(errorAt(bodyPos, "dense hex string must be \"0x\" followed by whole bytes"));
    std::vector<uint8_t> bytes;
    for (size_t i = 2; i + 1 < hex.size(); i += 2) {
      int hi = hexDigit(hex[i]), lo = hexDigit(hex[i + 1]);
      if (hi < 0 || lo < 0) return restore(errorAt(bodyPos, "invalid hex digit in dense literal"));
      bytes.push_back(static_cast<uint8_t>(hi * 16 + lo));
    }
    const size_t elemBytes = static_cast<size_t>(storageBytes(et));
    const size_t total = elemBytes * static_cast<size_t>(n);
    bool splat = false;
    if (et == ElementType::kI1 && n > 1 && bytes.size() == static_cast<size_t>((n + 7) / 8) && bytes.size() != total) {
      if (Status allocated = allocate(false); !allocated.isOk()) return restore(allocated);
      for (int64_t i = 0; i < n; ++i) lit.setBits(i, (bytes[static_cast<size_t>(i / 8)] >> (i % 8)) & 1);
    } else if (bytes.size() == total || (bytes.size() == elemBytes && n > 0)) {
      splat = bytes.size() != total;
      if (Status allocated = allocate(splat); !allocated.isOk()) return restore(allocated);
      for (int64_t i = 0; i < (splat ? 1 : n); ++i) {
        const uint8_t* p = bytes.data() + (splat ? 0 : static_cast<size_t>(i) * elemBytes);
        if (isComplex(et)) {
          std::memcpy(lit.data() + static_cast<size_t>(i) * elemBytes, p, elemBytes);
          continue;
        }
        uint64_t bits = 0;
        for (size_t b = 0; b < elemBytes; ++b) bits |= static_cast<uint64_t>(p[b]) << (8 * b);
        if (isInteger(et) && bitWidth(et) < 8) lit.setInt(i, isSignedInteger(et) ? signExtend(bits, bitWidth(et)) : static_cast<int64_t>(bits));
        else if (et == ElementType::kI1) lit.setBits(i, bits != 0);
        else lit.setBits(i, bits);
      }
    } else if (n == 0 && bytes.empty()) {
      if (Status allocated = allocate(false); !allocated.isOk()) return restore(allocated);  // empty tensor
    } else {
      return restore(errorAt(bodyPos, "dense hex literal has " + std::to_string(bytes.size()) + " bytes; " +
                                          type.toString() + " needs " + std::to_string(total)));
    }
    *out = finish(splat);
    return restore(Status::ok());
  }

  // Nested lists of scalars. Record each level's length to check the shape.
  std::vector<DenseScalar> scalars;
  std::vector<int64_t> dims;  // list shape as parsed
  bool sawList = false;
  struct Frame {
    int64_t count = 0;
  };
  std::vector<Frame> stack;
  size_t leafDepth = SIZE_MAX;  // nesting level of the scalars, once the first one is seen
  auto parseScalar = [&](DenseScalar* s) -> Status {
    skipWs();
    s->pos = pos_;
    if (peekChar() == '(') {
      ++pos_;
      skipWs();
      size_t p = pos_;
      s->a = parseNumberToken();
      if (s->a.empty()) s->a = parseBareId();
      if (s->a.empty()) return errorAt(p, "expected number in complex literal, found " + describeNext());
      WF_RETURN_IF_ERROR(expect(',', "in complex literal"));
      skipWs();
      p = pos_;
      s->b = parseNumberToken();
      if (s->b.empty()) s->b = parseBareId();
      if (s->b.empty()) return errorAt(p, "expected number in complex literal, found " + describeNext());
      WF_RETURN_IF_ERROR(expect(')', "to end complex literal"));
      s->isPair = true;
      return Status::ok();
    }
    s->a = parseNumberToken();
    if (s->a.empty()) s->a = parseBareId();
    if (s->a.empty()) return errorHere("expected dense element, found " + describeNext());
    return Status::ok();
  };
  // Iterative walk over nested brackets (no recursion: depth is bounded by the rank check).
  while (true) {
    skipWs();
    if (pos_ >= bodyEnd) return restore(errorAt(bodyPos, "unterminated dense literal"));
    if (peekChar() == '[') {
      if (leafDepth != SIZE_MAX && stack.size() + 1 > leafDepth)
        return restore(errorHere("inconsistent dense literal shape"));
      ++pos_;
      sawList = true;
      stack.push_back({});
      if (stack.size() > 64) return restore(errorAt(pos_ - 1, "dense literal nested too deeply"));
      skipWs();
      if (peekChar() == ']') {
        // Empty list: this level has length 0.
        ++pos_;
        size_t level = stack.size() - 1;
        if (dims.size() <= level) dims.resize(level + 1, -1);
        if (dims[level] == -1) dims[level] = 0;
        else if (dims[level] != 0) return restore(errorAt(pos_ - 1, "inconsistent dense literal shape"));
        stack.pop_back();
        if (stack.empty()) break;
        ++stack.back().count;
        goto afterElement;
      }
      continue;
    }
    {
      DenseScalar s;
      Status st = parseScalar(&s);
      if (!st.isOk()) return restore(st);
      if (!stack.empty()) {
        size_t level = stack.size() - 1;
        if (level < dims.size() && dims[level] >= 0 && stack.back().count >= dims[level])
          return restore(errorAt(s.pos, "inconsistent dense literal shape"));
      }
      if (scalars.size() >= static_cast<size_t>(std::max<int64_t>(n, 1)))
        return restore(errorAt(s.pos, "dense literal has more elements than " + type.toString() + " holds"));
      scalars.push_back(s);
      if (stack.empty()) break;  // scalar splat
      ++stack.back().count;
      if (leafDepth == SIZE_MAX) leafDepth = stack.size();
      else if (leafDepth != stack.size()) return restore(errorAt(s.pos, "inconsistent dense literal shape"));
    }
  afterElement:
    while (true) {
      skipWs();
      if (peekChar() == ',') {
        ++pos_;
        break;
      }
      if (peekChar() == ']') {
        ++pos_;
        size_t level = stack.size() - 1;
        if (dims.size() <= level) dims.resize(level + 1, -1);
        if (dims[level] == -1) dims[level] = stack.back().count;
        else if (dims[level] != stack.back().count)
          return restore(errorAt(pos_ - 1, "inconsistent dense literal shape"));
        stack.pop_back();
        if (stack.empty()) goto done;
        ++stack.back().count;
        continue;
      }
      return restore(errorHere("expected ',' or ']' in dense literal, found " + describeNext()));
    }
  }
done:
  skipWs();
  if (pos_ != bodyEnd) return restore(errorHere("unexpected " + describeNext() + " in dense literal"));
  {
    const bool splat = scalars.size() == 1 && (!sawList || n != 1);
    if (!splat) {
      if (dims != type.shape() && !(static_cast<int64_t>(scalars.size()) == n && type.rank() == 0))
        return restore(errorAt(bodyPos, "dense literal shape does not match " + type.toString()));
    }
    if (static_cast<int64_t>(scalars.size()) != n && !splat)
      return restore(errorAt(bodyPos, "dense literal has " + std::to_string(scalars.size()) + " elements; " +
                                          type.toString() + " needs " + std::to_string(n)));
    if (Status allocated = allocate(splat); !allocated.isOk()) return restore(allocated);
    const int64_t count = splat ? std::min<int64_t>(n, 1) : n;
    for (int64_t i = 0; i < count; ++i) {
      const DenseScalar& s = scalars[static_cast<size_t>(i)];
      auto bad = [&](const std::string& what) {
        return restore(errorAt(s.pos, what + " for element type " + std::string(elementTypeName(et))));
      };
      if (isComplex(et)) {
        ElementType part = complexPartType(et);
        double re, im;
        auto conv = [&](std::string_view tok, double* v) {
          if (isHexToken(tok)) {
            uint64_t bits;
            if (!parseIntToken(tok, &bits)) return false;
            *v = bitsToDouble(bits, part);
            return true;
          }
          return parseFloatToken(tok, part, v);
        };
        if (!s.isPair) {
          if (!conv(s.a, &re)) return bad("invalid complex literal '" + std::string(s.a) + "'");
          im = 0;
        } else if (!conv(s.a, &re) || !conv(s.b, &im)) {
          return bad("invalid complex literal");
        }
        lit.setComplex(i, {re, im});
        continue;
      }
      if (s.isPair) return bad("complex literal");
      std::string_view tok = s.a;
      if (et == ElementType::kI1) {
        if (tok == "true" || tok == "1") lit.setBits(i, 1);
        else if (tok == "false" || tok == "0") lit.setBits(i, 0);
        else return bad("invalid boolean '" + std::string(tok) + "'");
        continue;
      }
      if (isFloat(et)) {
        if (isHexToken(tok)) {
          uint64_t bits;
          if (!parseIntToken(tok, &bits)) return bad("invalid hex literal '" + std::string(tok) + "'");
          lit.setBits(i, bits);
          continue;
        }
        double v;
        if (!parseFloatToken(tok, et, &v)) return bad("invalid floating-point literal '" + std::string(tok) + "'");
        lit.setDouble(i, v);
        continue;
      }
      // Integers and index.
      uint64_t bits;
      if (tok == "true" || tok == "false") return bad("boolean literal");
      if (isFloatToken(tok) || !parseIntToken(tok, &bits)) return bad("invalid integer literal '" + std::string(tok) + "'");
      lit.setInt(i, static_cast<int64_t>(bits));
    }
    *out = finish(splat);
  }
  return restore(Status::ok());
}

Status Parser::makeResourceLiteral(const std::string& key, const Type& type, std::optional<Literal>* out,
                                   size_t pos) {
  auto it = resources_.find(key);
  if (it == resources_.end()) return Status::ok();
  Literal lit;
  WF_RETURN_IF_ERROR(allocateConstant(type, &lit, pos));
  const ResourceBlob& blob = it->second;
  if (blob.bytes.size() != lit.sizeBytes())
    return errorAt(pos, "resource '" + key + "' has " + std::to_string(blob.bytes.size()) + " bytes; " +
                            type.toString() + " needs " + std::to_string(lit.sizeBytes()));
  if (!blob.bytes.empty()) std::memcpy(lit.data(), blob.bytes.data(), blob.bytes.size());
  *out = std::move(lit);
  return Status::ok();
}

Status Parser::parseDenseResource(Attribute* out) {
  skipWs();
  size_t start = pos_;
  WF_RETURN_IF_ERROR(expect('<', "after 'dense_resource'"));
  skipWs();
  std::string key;
  if (peekChar() == '"') {
    WF_RETURN_IF_ERROR(parseStringLiteral(&key));
  } else {
    key = std::string(parseBareId());
    if (key.empty()) return errorHere("expected resource key in 'dense_resource<', found " + describeNext());
  }
  WF_RETURN_IF_ERROR(expect('>', "to end 'dense_resource<'"));
  WF_RETURN_IF_ERROR(expect(':', "and a type after 'dense_resource<...>'"));
  skipWs();
  size_t typePos = pos_;
  Type type;
  WF_RETURN_IF_ERROR(parseType(&type));
  WF_RETURN_IF_ERROR(checkConstantSize(type, typePos));
  std::optional<Literal> value;
  WF_RETURN_IF_ERROR(makeResourceLiteral(key, type, &value, start));
  *out = Attribute::denseResource(key, type, std::move(value));
  return Status::ok();
}

}  // namespace wf::parser_detail
