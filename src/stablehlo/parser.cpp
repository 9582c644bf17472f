// Parser entry points, cursor helpers, module / func / region structure and the generic op form.
#include "stablehlo/parser.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "stablehlo/parser_impl.h"
#include "support/phase_timer.h"

namespace wf {

using parser_detail::Parser;

Expected<Module> parseModule(std::string_view text, const ParseOptions& options) {
  PhaseTimer phase("parse");
  Parser parser(text, options);
  return parser.run();
}

std::vector<SourceChunk> splitInputFile(std::string_view text) {
  std::vector<SourceChunk> chunks;
  size_t chunkStart = 0;
  int chunkLine = 1;
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view lineText = text.substr(pos, end - pos);
    if (!lineText.empty() && lineText.back() == '\r') lineText.remove_suffix(1);
    if (lineText == "// -----") {
      chunks.push_back({text.substr(chunkStart, pos - chunkStart), chunkLine});
      chunkStart = std::min(end + 1, text.size());
      chunkLine = line + 1;
    }
    if (end == text.size()) break;
    pos = end + 1;
    ++line;
  }
  chunks.push_back({text.substr(chunkStart), chunkLine});
  return chunks;
}

namespace parser_detail {
namespace {

bool isIdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '-';
}
// Characters of SSA names, block labels and alias names: MLIR's suffix-id.
bool isSuffixIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '-';
}

}  // namespace

Parser::Parser(std::string_view text, const ParseOptions& options) : text_(text), options_(options) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') lineStarts_.push_back(i + 1);
}

// ---------------------------------------------------------------------------------------------
// Cursor helpers

void Parser::skipWs() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end;
    } else {
      break;
    }
  }
}

bool Parser::consumeIf(char c) {
  skipWs();
  if (peekChar() != c) return false;
  ++pos_;
  return true;
}

bool Parser::consumeIf(std::string_view s) {
  skipWs();
  if (text_.substr(pos_, s.size()) != s) return false;
  pos_ += s.size();
  return true;
}

bool Parser::peekKeyword(std::string_view kw) {
  skipWs();
  if (text_.substr(pos_, kw.size()) != kw) return false;
  return !isIdChar(peekChar(kw.size()));
}

bool Parser::consumeKeyword(std::string_view kw) {
  if (!peekKeyword(kw)) return false;
  pos_ += kw.size();
  return true;
}

std::string Parser::describeNext() {
  skipWs();
  if (pos_ >= text_.size()) return "end of input";
  size_t end = pos_ + 1;
  if (isIdChar(text_[pos_]) || text_[pos_] == '%' || text_[pos_] == '@' || text_[pos_] == '#' ||
      text_[pos_] == '^' || text_[pos_] == '!') {
    while (end < text_.size() && isIdChar(text_[end]) && end - pos_ < 40) ++end;
  }
  std::string tok(text_.substr(pos_, end - pos_));
  for (char& c : tok)
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  return "'" + tok + "'";
}

Status Parser::expect(char c, std::string_view context) {
  if (consumeIf(c)) return Status::ok();
  return errorHere("expected '" + std::string(1, c) + "' " + std::string(context) + ", found " +
                   describeNext());
}

Status Parser::expect(std::string_view s, std::string_view context) {
  if (consumeIf(s)) return Status::ok();
  return errorHere("expected '" + std::string(s) + "' " + std::string(context) + ", found " +
                   describeNext());
}

Status Parser::expectKeyword(std::string_view kw, std::string_view context) {
  if (consumeKeyword(kw)) return Status::ok();
  return errorHere("expected '" + std::string(kw) + "' " + std::string(context) + ", found " +
                   describeNext());
}

std::string_view Parser::peekBareId() {
  skipWs();
  if (!isIdStart(peekChar())) return {};
  size_t end = pos_ + 1;
  while (end < text_.size() && isIdChar(text_[end])) ++end;
  // A trailing '-' belongs to `->`, never to an identifier.
  while (end > pos_ + 1 && text_[end - 1] == '-') --end;
  return text_.substr(pos_, end - pos_);
}

std::string_view Parser::parseBareId() {
  std::string_view id = peekBareId();
  pos_ += id.size();
  return id;
}

bool Parser::parseString(std::string* out, Status* status) {
  skipWs();
  if (peekChar() != '"') return false;
  size_t start = pos_;
  ++pos_;
  out->clear();
  while (true) {
    if (pos_ >= text_.size()) {
      *status = errorAt(start, "unterminated string literal");
      return true;
    }
    char c = text_[pos_++];
    if (c == '"') break;
    if (c == '\n') {
      *status = errorAt(start, "unterminated string literal (newline in string)");
      return true;
    }
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (pos_ >= text_.size()) continue;
    char e = text_[pos_++];
    switch (e) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      default:
        if (std::isxdigit(static_cast<unsigned char>(e)) && pos_ < text_.size() &&
            std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
          char hex[3] = {e, text_[pos_++], 0};
          out->push_back(static_cast<char>(std::strtol(hex, nullptr, 16)));
        } else {
          *status = errorAt(pos_ - 2, "unknown escape sequence in string literal");
          return true;
        }
    }
  }
  *status = Status::ok();
  return true;
}

Status Parser::parseStringLiteral(std::string* out) {
  Status st;
  if (!parseString(out, &st)) return errorHere("expected string literal, found " + describeNext());
  return st;
}

Status Parser::parseSymbolName(std::string* out) {
  if (!consumeIf('@')) return errorHere("expected symbol name '@...', found " + describeNext());
  if (peekChar() == '"') return parseStringLiteral(out);
  size_t start = pos_;
  while (pos_ < text_.size() && isSuffixIdChar(text_[pos_])) ++pos_;
  if (pos_ == start) return errorAt(start, "expected symbol name after '@'");
  *out = std::string(text_.substr(start, pos_ - start));
  // Nested references `@a::@b` are kept as one name.
  while (text_.substr(pos_, 3) == "::@") {
    size_t s = pos_;
    pos_ += 3;
    while (pos_ < text_.size() && isSuffixIdChar(text_[pos_])) ++pos_;
    *out += std::string(text_.substr(s, pos_ - s));
  }
  return Status::ok();
}

Status Parser::skipBalanced(std::string_view* text) {
  skipWs();
  size_t start = pos_;
  std::vector<char> stack;
  auto closerOf = [](char c) { return c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : '}'; };
  char first = peekChar();
  if (first != '<' && first != '(' && first != '[' && first != '{')
    return errorHere("expected a bracketed group, found " + describeNext());
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      std::string ignored;
      Status st;
      parseString(&ignored, &st);
      WF_RETURN_IF_ERROR(st);
      continue;
    }
    if (c == '-' && peekChar(1) == '>') {
      pos_ += 2;
      continue;
    }
    ++pos_;
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (stack.size() >= 4 * kMaxDepth) return errorAt(pos_ - 1, "nesting too deep");
      stack.push_back(closerOf(c));
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (stack.empty() || stack.back() != c)
        return errorAt(pos_ - 1, std::string("unbalanced '") + c + "'");
      stack.pop_back();
      if (stack.empty()) {
        *text = text_.substr(start, pos_ - start);
        return Status::ok();
      }
    }
  }
  return errorAt(start, std::string("unterminated '") + first + "' group");
}

std::string_view Parser::parseNumberToken() {
  skipWs();
  size_t start = pos_;
  size_t p = pos_;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) ++p;
  if (p >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[p]))) return {};
  if (text_[p] == '0' && p + 1 < text_.size() && (text_[p + 1] == 'x' || text_[p + 1] == 'X') &&
      p + 2 < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[p + 2]))) {
    p += 2;
    while (p < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[p]))) ++p;
  } else {
    while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    if (p < text_.size() && text_[p] == '.') {
      ++p;
      while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    }
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      size_t q = p + 1;
      if (q < text_.size() && (text_[q] == '+' || text_[q] == '-')) ++q;
      if (q < text_.size() && std::isdigit(static_cast<unsigned char>(text_[q]))) {
        p = q;
        while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
      }
    }
  }
  pos_ = p;
  return text_.substr(start, p - start);
}

Status Parser::parseIntegerValue(int64_t* out) {
  size_t start = pos_;
  std::string_view tok = parseNumberToken();
  if (tok.empty()) return errorHere("expected integer, found " + describeNext());
  bool neg = tok[0] == '-';
  std::string_view digits = (tok[0] == '-' || tok[0] == '+') ? tok.substr(1) : tok;
  bool hex = digits.size() > 2 && digits[1] == 'x';
  if (!hex && digits.find_first_of(".eE") != std::string_view::npos)
    return errorAt(start, "expected integer, found floating-point number '" + std::string(tok) + "'");
  uint64_t v = 0;
  for (char c : hex ? digits.substr(2) : digits) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
    uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / base)
      return errorAt(start, "integer literal '" + std::string(tok) + "' is too large");
    v = v * base + static_cast<uint64_t>(d);
  }
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return Status::ok();
}

Location Parser::locationAt(size_t pos) const {
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), pos);
  size_t lineIndex = static_cast<size_t>(it - lineStarts_.begin()) - 1;
  Location loc;
  loc.file = options_.fileName;
  loc.line = static_cast<int>(lineIndex) + options_.firstLine;
  loc.column = static_cast<int>(pos - lineStarts_[lineIndex]) + 1;
  return loc;
}

Status Parser::errorAt(size_t pos, const std::string& message) const {
  Location loc = locationAt(std::min(pos, text_.size()));
  std::string file = options_.fileName.empty() ? "<input>" : options_.fileName;
  return parseError(file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": " +
                    message);
}

// ---------------------------------------------------------------------------------------------
// Module structure

Expected<Module> Parser::run() {
  // Prepass: aliases (`#loc3 = loc(...)`, `#map = ...`, `!t = ...`) may be defined after their
  // first use (JAX prints location aliases at the end), and `dense_resource` blobs always come
  // after the module. Collect both before the main parse; errors here are reported by the main
  // parse when it reaches the same text.
  prepass_ = true;
  for (size_t ls : lineStarts_) {
    if (ls >= text_.size() || (text_[ls] != '#' && text_[ls] != '!')) continue;
    pos_ = ls;
    (void)parseAliasDefinition();
  }
  for (size_t ls : lineStarts_) {
    if (text_.substr(ls, 3) != "{-#") continue;
    pos_ = ls;
    Module scratch;
    (void)parseResourceSection(&scratch);
  }
  prepass_ = false;
  pos_ = text_.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // UTF-8 byte order mark
  depth_ = 0;

  Module module;
  module.sourceFile = options_.fileName;
  Status st = parseTopLevel(&module);
  if (!st.isOk()) return st;
  for (auto& [key, blob] : resources_) module.resources[key] = blob;
  return module;
}

Status Parser::parseTopLevel(Module* module) {
  bool sawModule = false;
  scopes_.push_back(Scope{{}, true});
  while (!atEnd()) {
    char c = peekChar();
    if (c == '#' || c == '!') {
      WF_RETURN_IF_ERROR(parseAliasDefinition());
    } else if (peekIs("{-#")) {
      WF_RETURN_IF_ERROR(parseResourceSection(module));
    } else if (peekKeyword("module") || peekKeyword("builtin.module")) {
      if (sawModule || !module->operations().empty())
        return errorHere("only one module per input is supported");
      sawModule = true;
      size_t pos = pos_;
      parseBareId();
      WF_RETURN_IF_ERROR(parseModuleOp(module, pos));
    } else {
      if (sawModule) return errorHere("unexpected " + describeNext() + " after the module");
      WF_RETURN_IF_ERROR(parseOperation(nullptr, module));
    }
  }
  scopes_.pop_back();
  return Status::ok();
}

Status Parser::parseModuleOp(Module* module, size_t pos) {
  if (peekIs('@')) WF_RETURN_IF_ERROR(parseSymbolName(&module->name));
  if (consumeKeyword("attributes")) WF_RETURN_IF_ERROR(parseAttrDictInto(&module->attributes));
  WF_RETURN_IF_ERROR(expect('{', "to begin the module body"));
  while (!peekIs('}')) {
    if (atEnd()) return errorAt(pos, "module body is not closed by '}'");
    WF_RETURN_IF_ERROR(parseOperation(nullptr, module));
  }
  WF_RETURN_IF_ERROR(expect('}', "to end the module body"));
  std::string ignored;
  return parseTrailingLocation(&ignored);
}

Status Parser::parseAliasDefinition() {
  skipWs();
  size_t start = pos_;
  char sigil = peekChar();
  ++pos_;
  size_t nameStart = pos_;
  while (pos_ < text_.size() && isSuffixIdChar(text_[pos_])) ++pos_;
  if (pos_ == nameStart) return errorAt(start, "expected alias name after '" + std::string(1, sigil) + "'");
  std::string name(text_.substr(start, pos_ - start));
  WF_RETURN_IF_ERROR(expect('=', "in alias definition"));
  if (sigil == '!') {
    Type t;
    WF_RETURN_IF_ERROR(parseType(&t));
    typeAliases_[name] = t;
    return Status::ok();
  }
  if (consumeKeyword("loc")) {
    std::string source;
    WF_RETURN_IF_ERROR(parseLocationBody(&source));
    locAliases_[name] = source;
    return Status::ok();
  }
  Attribute a;
  WF_RETURN_IF_ERROR(parseAttribute(&a));
  attrAliases_[name] = a;
  return Status::ok();
}

// {-# dialect_resources: { builtin: { key: "0x04000000..." } } #-}
Status Parser::parseResourceSection(Module* module) {
  size_t start = pos_;
  WF_RETURN_IF_ERROR(expect("{-#", "to begin the resource section"));
  while (!consumeIf("#-}")) {
    if (atEnd()) return errorAt(start, "resource section is not closed by '#-}'");
    std::string_view group = parseBareId();
    if (group.empty()) return errorHere("expected resource group name, found " + describeNext());
    WF_RETURN_IF_ERROR(expect(':', "after resource group name"));
    WF_RETURN_IF_ERROR(expect('{', "to begin resource group"));
    while (!consumeIf('}')) {
      std::string_view dialect = parseBareId();
      if (dialect.empty()) return errorHere("expected dialect name in resources, found " + describeNext());
      WF_RETURN_IF_ERROR(expect(':', "after resource dialect name"));
      WF_RETURN_IF_ERROR(expect('{', "to begin resource entries"));
      while (!consumeIf('}')) {
        std::string key;
        if (peekIs('"')) {
          WF_RETURN_IF_ERROR(parseStringLiteral(&key));
        } else {
          key = std::string(parseBareId());
          if (key.empty()) return errorHere("expected resource key, found " + describeNext());
        }
        WF_RETURN_IF_ERROR(expect(':', "after resource key"));
        size_t valuePos = pos_;
        std::string value;
        if (peekIs('"')) {
          WF_RETURN_IF_ERROR(parseStringLiteral(&value));
        } else {
          std::string_view skipped;
          if (peekIs('{') || peekIs('[')) {
            WF_RETURN_IF_ERROR(skipBalanced(&skipped));
          } else if (parseBareId().empty() && parseNumberToken().empty()) {
            return errorHere("expected resource value, found " + describeNext());
          }
        }
        if (group == "dialect_resources" && value.size() >= 2 && value[0] == '0' && value[1] == 'x') {
          if ((value.size() - 2) % 2 != 0 || value.size() < 10)
            return errorAt(valuePos, "resource blob '" + key + "' must hold a 4-byte alignment and whole bytes");
          ResourceBlob blob;
          std::vector<uint8_t> bytes;
          bytes.reserve((value.size() - 2) / 2);
          for (size_t i = 2; i + 1 < value.size(); i += 2) {
            auto hexVal = [](char c) -> int {
              if (c >= '0' && c <= '9') return c - '0';
              c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
              return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            };
            int hi = hexVal(value[i]), lo = hexVal(value[i + 1]);
            if (hi < 0 || lo < 0) return errorAt(valuePos, "invalid hex digit in resource blob '" + key + "'");
            bytes.push_back(static_cast<uint8_t>(hi * 16 + lo));
          }
          blob.alignment = static_cast<uint32_t>(bytes[0]) | static_cast<uint32_t>(bytes[1]) << 8 |
                           static_cast<uint32_t>(bytes[2]) << 16 | static_cast<uint32_t>(bytes[3]) << 24;
          blob.bytes.assign(bytes.begin() + 4, bytes.end());
          resources_[key] = blob;
          module->resources[key] = std::move(blob);
        }
        if (!consumeIf(',')) {
          WF_RETURN_IF_ERROR(expect('}', "to end resource entries"));
          break;
        }
      }
      if (!consumeIf(',')) {
        WF_RETURN_IF_ERROR(expect('}', "to end resource group"));
        break;
      }
    }
    consumeIf(',');
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// SSA values

Status Parser::parseValueRef(ValueRef* out) {
  skipWs();
  out->pos = pos_;
  if (peekChar() != '%') return errorHere("expected SSA value '%...', found " + describeNext());
  size_t start = pos_++;
  while (pos_ < text_.size() && isSuffixIdChar(text_[pos_])) ++pos_;
  if (pos_ == start + 1) return errorAt(start, "expected SSA value name after '%'");
  out->name = std::string(text_.substr(start, pos_ - start));
  out->index = -1;
  if (peekChar() == '#' && std::isdigit(static_cast<unsigned char>(peekChar(1)))) {
    ++pos_;
    size_t numPos = pos_;
    int64_t idx = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      idx = idx * 10 + (text_[pos_++] - '0');
      if (idx > 1000000) return errorAt(numPos, "result index too large");
    }
    out->index = static_cast<int>(idx);
  }
  return Status::ok();
}

Status Parser::parseValueRefList(std::vector<ValueRef>* out) {
  do {
    ValueRef r;
    WF_RETURN_IF_ERROR(parseValueRef(&r));
    out->push_back(std::move(r));
  } while (consumeIf(','));
  return Status::ok();
}

Status Parser::resolve(const ValueRef& ref, Value** out) {
  for (size_t i = scopes_.size(); i-- > 0;) {
    auto it = scopes_[i].values.find(ref.name);
    if (it != scopes_[i].values.end()) {
      const std::vector<Value*>& group = it->second;
      if (ref.index < 0) {
        if (group.size() != 1)
          return errorAt(ref.pos, "value '" + ref.name + "' has " + std::to_string(group.size()) +
                                      " results; use '" + ref.name + "#N'");
        *out = group[0];
      } else {
        if (static_cast<size_t>(ref.index) >= group.size())
          return errorAt(ref.pos, "result index " + std::to_string(ref.index) + " out of range: '" +
                                      ref.name + "' has " + std::to_string(group.size()) + " results");
        *out = group[static_cast<size_t>(ref.index)];
      }
      return Status::ok();
    }
    if (scopes_[i].isolated) break;
  }
  return errorAt(ref.pos, "use of undefined value '" + ref.name + "'");
}

Status Parser::resolveOperands(Operation* op, const std::vector<ValueRef>& refs) {
  for (const ValueRef& r : refs) {
    Value* v = nullptr;
    WF_RETURN_IF_ERROR(resolve(r, &v));
    op->addOperand(v);
  }
  return Status::ok();
}

Status Parser::defineValue(const std::string& name, std::vector<Value*> values, size_t pos) {
  for (size_t i = scopes_.size(); i-- > 0;) {
    if (scopes_[i].values.count(name)) return errorAt(pos, "redefinition of value '" + name + "'");
    if (scopes_[i].isolated) break;
  }
  for (Value* v : values) v->setNameHint(name);
  scopes_.back().values[name] = std::move(values);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Locations

Status Parser::parseLocationBody(std::string* source) {
  skipWs();
  if (peekChar() != '(') return errorHere("expected '(' after 'loc', found " + describeNext());
  std::string_view text;
  WF_RETURN_IF_ERROR(skipBalanced(&text));
  std::string_view inner = text.substr(1, text.size() - 2);
  // `loc(#loc3)`: resolve the alias (one level is enough for a readable source location).
  if (!inner.empty() && inner[0] == '#') {
    auto it = locAliases_.find(inner);
    if (it != locAliases_.end()) {
      *source = it->second;
      return Status::ok();
    }
  }
  *source = std::string(inner);
  return Status::ok();
}

Status Parser::parseTrailingLocation(std::string* source) {
  if (!consumeKeyword("loc")) return Status::ok();
  return parseLocationBody(source);
}

// ---------------------------------------------------------------------------------------------
// Regions and blocks

Status Parser::parseArgDecl(ArgDecl* arg, bool allowAttrs) {
  ValueRef ref;
  WF_RETURN_IF_ERROR(parseValueRef(&ref));
  if (ref.index >= 0) return errorAt(ref.pos, "argument name cannot have a '#' result index");
  arg->name = ref.name;
  arg->pos = ref.pos;
  WF_RETURN_IF_ERROR(expect(':', "after argument name"));
  WF_RETURN_IF_ERROR(parseType(&arg->type));
  if (allowAttrs && peekIs('{')) WF_RETURN_IF_ERROR(parseAttrDict(&arg->attrs));
  std::string ignored;
  return parseTrailingLocation(&ignored);
}

Status Parser::parseBlockArgs(std::vector<ArgDecl>* args) {
  WF_RETURN_IF_ERROR(expect('(', "to begin argument list"));
  if (consumeIf(')')) return Status::ok();
  do {
    ArgDecl a;
    WF_RETURN_IF_ERROR(parseArgDecl(&a, true));
    args->push_back(std::move(a));
  } while (consumeIf(','));
  return expect(')', "to end argument list");
}

Status Parser::parseRegion(Region* region, const std::vector<ArgDecl>* entryArgs, bool isolated) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  size_t start = pos_;
  WF_RETURN_IF_ERROR(expect('{', "to begin a region"));
  scopes_.push_back(Scope{{}, isolated});
  Block* block = nullptr;
  auto addArgs = [&](Block* b, const std::vector<ArgDecl>& args) -> Status {
    for (const ArgDecl& a : args) {
      Value* v = b->addArgument(a.type);
      WF_RETURN_IF_ERROR(defineValue(a.name, {v}, a.pos));
    }
    return Status::ok();
  };
  if (entryArgs) {
    block = region->addBlock();
    WF_RETURN_IF_ERROR(addArgs(block, *entryArgs));
  }
  while (!peekIs('}')) {
    if (atEnd()) return errorAt(start, "region is not closed by '}'");
    if (peekIs('^')) {
      size_t labelPos = pos_;
      ++pos_;
      size_t nameStart = pos_;
      while (pos_ < text_.size() && isSuffixIdChar(text_[pos_])) ++pos_;
      if (pos_ == nameStart) return errorAt(labelPos, "expected block label after '^'");
      std::string label(text_.substr(labelPos, pos_ - labelPos));
      std::vector<ArgDecl> args;
      if (peekIs('(')) WF_RETURN_IF_ERROR(parseBlockArgs(&args));
      WF_RETURN_IF_ERROR(expect(':', "after block label"));
      // The label of the entry block of a region with implicit arguments names that block.
      bool reuse = block && block->operations().empty() && block->label.empty() &&
                   region->blocks().size() == 1 && (args.empty() || block->numArguments() == 0);
      if (!reuse) block = region->addBlock();
      block->label = label;
      WF_RETURN_IF_ERROR(addArgs(block, args));
      continue;
    }
    if (!block) block = region->addBlock();
    WF_RETURN_IF_ERROR(parseOperation(block, nullptr));
  }
  ++pos_;  // '}'
  scopes_.pop_back();
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Operations

Status Parser::parseOperation(Block* block, Module* module) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  skipWs();
  size_t start = pos_;

  // Result names: `%a, %b:2 =`.
  struct LhsGroup {
    std::string name;
    size_t count;
    size_t pos;
  };
  std::vector<LhsGroup> lhs;
  size_t numLhs = 0;
  if (peekChar() == '%') {
    do {
      ValueRef r;
      WF_RETURN_IF_ERROR(parseValueRef(&r));
      if (r.index >= 0) return errorAt(r.pos, "result name cannot have a '#' index");
      size_t count = 1;
      if (peekChar() == ':') {
        ++pos_;
        int64_t n = 0;
        size_t npos = pos_;
        WF_RETURN_IF_ERROR(parseIntegerValue(&n));
        if (n < 1 || n > 100000) return errorAt(npos, "invalid result count");
        count = static_cast<size_t>(n);
      }
      lhs.push_back({r.name, count, r.pos});
      numLhs += count;
    } while (consumeIf(','));
    WF_RETURN_IF_ERROR(expect('=', "after result names"));
  }

  skipWs();
  size_t namePos = pos_;
  std::string name;
  bool generic = false;
  if (peekChar() == '"') {
    WF_RETURN_IF_ERROR(parseStringLiteral(&name));
    generic = true;
    if (name.empty()) return errorAt(namePos, "empty operation name");
  } else {
    name = std::string(parseBareId());
    if (name.empty()) return errorHere("expected operation name, found " + describeNext());
    // Inside func.func the func dialect is the default one: `return`, `call`.
    if (name.find('.') == std::string::npos) {
      if (name == "return" || name == "call" || name == "func") name = "func." + name;
      else if (name == "module") return errorAt(namePos, "nested modules are not supported");
      else return errorAt(namePos, "unknown operation '" + name + "' (expected 'dialect.op')");
    }
  }
  if (name == "builtin.module") return errorAt(namePos, "nested modules are not supported");

  auto op = std::make_unique<Operation>(name, locationAt(numLhs ? start : namePos));
  std::vector<Type> resultTypes;
  if (generic) {
    WF_RETURN_IF_ERROR(parseGenericBody(op.get(), numLhs, &resultTypes));
  } else if (name == "func.func") {
    WF_RETURN_IF_ERROR(parseFunc(op.get(), namePos));
  } else if (!hasKnownSyntax(name)) {
    // The custom syntax of another dialect's op (`sdy.mesh @mesh = <["x"=1]>`,
    // `arith.index_cast %0 : index to i64`): keep its text so that it prints back. Its results
    // get the types after the last ':' when those parse, else an opaque type.
    size_t textStart = 0;
    std::string textOut;
    WF_RETURN_IF_ERROR(skipUnknownOpSyntax(&textOut, &textStart));
    op->setAttr("custom_assembly", Attribute::string(textOut));
    if (numLhs > 0) {
      size_t end = pos_;
      bool typed = false;
      size_t colon = textOut.rfind(':');
      if (colon != std::string::npos) {
        pos_ = textStart + colon + 1;
        {
          TypeSpec spec;
          Status st = parseTypeSpec(&spec);
          size_t typeEnd = pos_;
          pos_ = end;
          skipWs();
          if (st.isOk() && (typeEnd == end || typeEnd == pos_)) {
            std::vector<Type> types = spec.functional ? spec.results : spec.inputs;
            if (types.size() == numLhs) resultTypes = types;
            else if (!types.empty() && numLhs == 1) resultTypes = {types.back()};
            typed = !resultTypes.empty();
          }
        }
      }
      pos_ = end;
      if (!typed) resultTypes.assign(numLhs, Type::opaque("none"));
    }
  } else {
    WF_RETURN_IF_ERROR(parsePrettyBody(op.get(), numLhs, &resultTypes));
  }
  std::string source;
  WF_RETURN_IF_ERROR(parseTrailingLocation(&source));
  if (!source.empty()) {
    Location loc = op->location();
    loc.source = std::move(source);
    op->setLocation(std::move(loc));
  }

  if (numLhs != 0 && numLhs != resultTypes.size())
    return errorAt(start, "'" + name + "' names " + std::to_string(numLhs) + " results but its type has " +
                              std::to_string(resultTypes.size()));
  for (Type& t : resultTypes) op->addResult(std::move(t));
  size_t next = 0;
  for (const LhsGroup& g : lhs) {
    std::vector<Value*> vals;
    for (size_t i = 0; i < g.count; ++i) vals.push_back(op->result(next++));
    WF_RETURN_IF_ERROR(defineValue(g.name, std::move(vals), g.pos));
  }
  if (block) {
    block->append(std::move(op));
  } else {
    if (!op->results().empty()) return errorAt(start, "top-level operation '" + name + "' cannot have results");
    module->append(std::move(op));
  }
  return Status::ok();
}

bool Parser::hasKnownSyntax(std::string_view name) {
  for (std::string_view prefix : {"stablehlo.", "mhlo.", "chlo.", "check.", "interpreter.", "func."})
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// The rest of an op in an unknown custom syntax: up to the end of its line at bracket depth 0
// (regions continue over further lines), or up to the '}' closing the enclosing region.
Status Parser::skipUnknownOpSyntax(std::string* out, size_t* startOut) {
  while (peekChar() == ' ' || peekChar() == '\t') ++pos_;
  size_t start = pos_;
  *startOut = start;
  int depth = 0;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      std::string ignored;
      Status st;
      parseString(&ignored, &st);
      WF_RETURN_IF_ERROR(st);
      continue;
    }
    if (c == '-' && peekChar(1) == '>') {
      pos_ += 2;
      continue;
    }
    if (c == '/' && peekChar(1) == '/') break;
    if (depth == 0 && (c == '\n' || c == '}')) break;
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > 4 * kMaxDepth) return errorAt(pos_, "nesting too deep");
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (--depth < 0) break;
    }
    ++pos_;
  }
  if (depth > 0) return errorAt(start, "unterminated operation");
  std::string_view text = text_.substr(start, pos_ - start);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  // A trailing location belongs to the op, not to its custom text.
  size_t locPos = text.rfind(" loc(");
  if (locPos != std::string_view::npos && text.back() == ')') {
    pos_ = start + locPos;
    text = text.substr(0, locPos);
  }
  *out = std::string(text);
  return Status::ok();
}

// "name"(%a, %b) [^succ] <{props}> ({regions}) {attrs} : (types) -> types
Status Parser::parseGenericBody(Operation* op, size_t numLhs, std::vector<Type>* resultTypes) {
  std::vector<ValueRef> operands;
  WF_RETURN_IF_ERROR(expect('(', "to begin the operand list of '" + op->name() + "'"));
  if (!consumeIf(')')) {
    WF_RETURN_IF_ERROR(parseValueRefList(&operands));
    WF_RETURN_IF_ERROR(expect(')', "to end the operand list of '" + op->name() + "'"));
  }
  WF_RETURN_IF_ERROR(resolveOperands(op, operands));
  if (peekIs('[')) {  // successors: branch targets are not modelled; keep them as text
    std::string_view succ;
    WF_RETURN_IF_ERROR(skipBalanced(&succ));
    op->setAttr("successors", Attribute::opaque(std::string(succ)));
  }
  if (consumeIf("<{")) {
    --pos_;  // parse the dictionary starting at '{'
    WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
    WF_RETURN_IF_ERROR(expect('>', "to end the properties of '" + op->name() + "'"));
  }
  if (consumeIf('(')) {
    if (!consumeIf(')')) {
      do {
        Region* r = op->addRegion();
        WF_RETURN_IF_ERROR(parseRegion(r, nullptr, op->name() == "func.func"));
      } while (consumeIf(','));
      WF_RETURN_IF_ERROR(expect(')', "to end the region list of '" + op->name() + "'"));
    }
  }
  if (peekIs('{')) WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
  WF_RETURN_IF_ERROR(expect(':', "before the type of '" + op->name() + "'"));
  skipWs();
  size_t typePos = pos_;
  TypeSpec spec;
  WF_RETURN_IF_ERROR(parseTypeSpec(&spec));
  if (!spec.functional)
    return errorAt(typePos, "expected a function type '(operand types) -> result types' for '" + op->name() + "'");
  if (spec.inputs.size() != operands.size())
    return errorAt(typePos, "'" + op->name() + "' has " + std::to_string(operands.size()) +
                                " operands but its type lists " + std::to_string(spec.inputs.size()));
  *resultTypes = std::move(spec.results);
  (void)numLhs;
  return Status::ok();
}

// func.func [visibility] @name(%arg: type {attrs}, ...) [-> results] [attributes {...}] [{ body }]
Status Parser::parseFunc(Operation* op, size_t namePos) {
  for (std::string_view vis : {"public", "private", "nested"}) {
    if (consumeKeyword(vis)) {
      if (vis != "public") op->setAttr("sym_visibility", Attribute::string(std::string(vis)));
      break;
    }
  }
  std::string symName;
  WF_RETURN_IF_ERROR(parseSymbolName(&symName));
  op->setAttr("sym_name", Attribute::string(symName));
  std::vector<ArgDecl> args;
  WF_RETURN_IF_ERROR(parseBlockArgs(&args));
  FunctionType fnType;
  bool anyArgAttrs = false, anyResAttrs = false;
  std::vector<Attribute> argAttrs, resAttrs;
  for (const ArgDecl& a : args) {
    fnType.inputs.push_back(a.type);
    anyArgAttrs |= !a.attrs.empty();
    argAttrs.push_back(Attribute::dictionary(a.attrs));
  }
  if (consumeIf("->")) {
    // Result attributes only exist in the parenthesised form: `-> t {` opens the body.
    auto parseResult = [&](bool allowAttrs) -> Status {
      Type t;
      WF_RETURN_IF_ERROR(parseType(&t));
      std::vector<NamedAttribute> attrs;
      if (allowAttrs && peekIs('{')) WF_RETURN_IF_ERROR(parseAttrDict(&attrs));
      std::string ignored;
      WF_RETURN_IF_ERROR(parseTrailingLocation(&ignored));
      anyResAttrs |= !attrs.empty();
      resAttrs.push_back(Attribute::dictionary(std::move(attrs)));
      fnType.results.push_back(std::move(t));
      return Status::ok();
    };
    if (consumeIf('(')) {
      if (!consumeIf(')')) {
        do {
          WF_RETURN_IF_ERROR(parseResult(true));
        } while (consumeIf(','));
        WF_RETURN_IF_ERROR(expect(')', "to end the result list of '@" + symName + "'"));
      }
    } else {
      WF_RETURN_IF_ERROR(parseResult(false));
    }
  }
  op->setAttr("function_type", Attribute::functionType(fnType));
  if (anyArgAttrs) op->setAttr("arg_attrs", Attribute::array(std::move(argAttrs)));
  if (anyResAttrs) op->setAttr("res_attrs", Attribute::array(std::move(resAttrs)));
  if (consumeKeyword("attributes")) WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
  Region* body = op->addRegion();
  if (peekIs('{')) WF_RETURN_IF_ERROR(parseRegion(body, &args, /*isolated=*/true));
  (void)namePos;
  return Status::ok();
}

}  // namespace parser_detail
}  // namespace wf
