// Internal to the StableHLO text parser: the Parser class shared by parser.cpp (module, func,
// regions, generic op form), parse_attributes.cpp (types, attributes, dense literals) and
// parse_pretty_ops.cpp (the custom assembly formats of StableHLO, CHLO and check ops).
//
// The parser works directly on characters rather than on a token stream: MLIR's grammar is
// context sensitive (`2x?xf32` inside `tensor<>`, `0x2xi8` is not a hex number there, `->`
// inside `#stablehlo.conv<>`), and a cursor with small scanning helpers handles those cases
// without lexer modes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "stablehlo/parser.h"
#include "support/status.h"

namespace wf::parser_detail {

// A use of an SSA value as written: `%name` or `%name#3`.
struct ValueRef {
  std::string name;
  int index = -1;  // -1: no `#index`
  size_t pos = 0;  // offset in the text, for error messages
};

// The type list after `:` of an op: either a function type `(a, b) -> (c)` / `a -> b`,
// or a plain comma-separated list.
struct TypeSpec {
  bool functional = false;
  std::vector<Type> inputs;   // the plain list when !functional
  std::vector<Type> results;
};

// A block argument or function argument as written: `%name: type {attrs} loc(...)`.
struct ArgDecl {
  std::string name;
  Type type;
  size_t pos = 0;
  std::vector<NamedAttribute> attrs;
};

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options);
  Expected<Module> run();

  // ---- Cursor helpers (parser.cpp) ----
  void skipWs();  // whitespace and `//` comments
  bool atEnd() {
    skipWs();
    return pos_ >= text_.size();
  }
  char peekChar(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  // After skipping whitespace: is the next character `c` / the text `s`?
  bool peekIs(char c) {
    skipWs();
    return peekChar() == c;
  }
  bool peekIs(std::string_view s) {
    skipWs();
    return text_.substr(pos_, s.size()) == s;
  }
  bool consumeIf(char c);
  bool consumeIf(std::string_view s);
  // An identifier exactly equal to `kw` (not a prefix of a longer identifier).
  bool peekKeyword(std::string_view kw);
  bool consumeKeyword(std::string_view kw);
  Status expect(char c, std::string_view context);
  Status expect(std::string_view s, std::string_view context);
  Status expectKeyword(std::string_view kw, std::string_view context);
  // [A-Za-z_][A-Za-z0-9_$.-]*  (empty when the next character cannot start one)
  std::string_view parseBareId();
  std::string_view peekBareId();
  bool parseString(std::string* out, Status* status);  // "..." with MLIR escapes
  Status parseStringLiteral(std::string* out);
  Status parseSymbolName(std::string* out);  // @name or @"name"
  // Skips a balanced group starting at the current `<`, `(`, `[` or `{`, honouring strings and
  // treating `->` as one token. Returns the skipped text.
  Status skipBalanced(std::string_view* text);
  // At '!': reads a dialect type (`!quant.uniform<...>`, `!stablehlo.token`) and returns its
  // whole spelling; `what` names the expected thing in the error.
  Status parseDialectTypeText(std::string* text, const char* what);
  Status parseIntegerValue(int64_t* out);  // [-]digits or hex
  // A number token as text: [-]digits[.digits][e[+-]digits] or [-]0x hex; empty if none.
  std::string_view parseNumberToken();

  Status errorAt(size_t pos, const std::string& message) const;
  Status errorHere(const std::string& message) {
    skipWs();
    return errorAt(pos_, message);
  }
  Location locationAt(size_t pos) const;
  std::string describeNext();  // the next token, quoted, for "expected X, found Y" messages

  // Nesting guard: everything that recurses takes one of these.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    bool tooDeep() const { return p_->depth_ > kMaxDepth; }

   private:
    Parser* p_;
  };
  static constexpr int kMaxDepth = 200;
  Status depthError() { return errorHere("nesting too deep (more than 200 levels)"); }

  // ---- Types and attributes (parse_attributes.cpp) ----
  Status parseType(Type* out);
  Status parseElementType(ElementType* out, std::string* quantized);
  Status parseTypeList(std::vector<Type>* out);          // `t1, t2, ...` (at least one)
  Status parseParenTypeList(std::vector<Type>* out);     // `(t1, t2)` possibly empty
  Status parseFunctionResults(std::vector<Type>* out);   // `t` or `(t1, t2)`
  Status parseTypeSpec(TypeSpec* out);                   // after ':'
  bool atTypeStart();
  Status parseAttribute(Attribute* out);
  Status parseAttrDict(std::vector<NamedAttribute>* out);  // `{a = 1, b}`
  Status parseAttrDictInto(AttributeMap* out);
  Status parseDenseElements(Attribute* out, Type* typeOut = nullptr);
  Status parseDenseResource(Attribute* out);
  Status parseDenseArray(Attribute* out);
  Status parseHashAttribute(Attribute* out);
  Status parseDialectStructBody(const std::string& name, Attribute* out);
  Status parseConvDimensionNumbers(std::vector<NamedAttribute>* fields);  // [b,0,1,f]x[..]->[..]
  Status parseIntList(std::vector<int64_t>* out);  // `[1, 2, 3]`
  Status parseBoundsList(std::vector<int64_t>* out);  // `[1, ?, 3]`
  Status parseNumberAttribute(Attribute* out);
  Status buildDense(std::string_view body, size_t bodyPos, const Type& type, Attribute* out);
  Status makeResourceLiteral(const std::string& key, const Type& type, std::optional<Literal>* out,
                             size_t pos);
  Status checkConstantSize(const Type& type, size_t pos);
  Status allocateConstant(const Type& type, Literal* out, size_t pos);

  // ---- Module structure and generic ops (parser.cpp) ----
  Status parseTopLevel(Module* module);
  Status parseAliasDefinition();
  Status parseResourceSection(Module* module);
  Status parseOperation(Block* block, Module* module);
  Status parseFunc(Operation* op, size_t namePos);
  Status parseModuleOp(Module* module, size_t pos);
  static bool hasKnownSyntax(std::string_view name);
  Status skipUnknownOpSyntax(std::string* out, size_t* start);
  Status parseGenericBody(Operation* op, size_t numLhs, std::vector<Type>* resultTypes);
  Status parseRegion(Region* region, const std::vector<ArgDecl>* entryArgs, bool isolated);
  Status parseBlockArgs(std::vector<ArgDecl>* args);
  Status parseArgDecl(ArgDecl* arg, bool allowAttrs);
  Status parseValueRef(ValueRef* out);
  Status parseValueRefList(std::vector<ValueRef>* out);  // `%a, %b#1` (at least one)
  Status resolve(const ValueRef& ref, Value** out);
  Status resolveOperands(Operation* op, const std::vector<ValueRef>& refs);
  Status defineValue(const std::string& name, std::vector<Value*> values, size_t pos);
  Status parseTrailingLocation(std::string* source);  // optional `loc(...)`
  Status parseLocationBody(std::string* source);      // after `loc`

  // ---- Custom op syntaxes (parse_pretty_ops.cpp) ----
  Status parsePrettyBody(Operation* op, size_t numLhs, std::vector<Type>* resultTypes);
  Status parsePrettyItems(Operation* op, std::vector<ValueRef>* operands, int* wordCount);
  Status parseKeywordValue(Operation* op, const std::string& key, size_t keyPos);
  Status parseReduceOp(Operation* op, size_t numLhs, std::vector<Type>* resultTypes);
  Status parseWhileOp(Operation* op, std::vector<Type>* resultTypes);
  Status parseWindowAttributes(Operation* op);
  Status parseSliceRanges(Operation* op);
  Status deriveResultTypes(Operation* op, const TypeSpec& spec, size_t numLhs, size_t typePos,
                           std::vector<Type>* resultTypes);

  // ---- State ----
  std::string_view text_;
  ParseOptions options_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<size_t> lineStarts_;
  bool prepass_ = false;  // collecting aliases/resources ahead of the main parse

  struct Scope {
    std::unordered_map<std::string, std::vector<Value*>> values;
    bool isolated = false;
  };
  std::vector<Scope> scopes_;
  std::map<std::string, Attribute, std::less<>> attrAliases_;
  std::map<std::string, std::string, std::less<>> locAliases_;
  std::map<std::string, Type, std::less<>> typeAliases_;
  std::map<std::string, ResourceBlob, std::less<>> resources_;
};

}  // namespace wf::parser_detail
