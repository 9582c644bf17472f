// The custom ("pretty") assembly formats of StableHLO, CHLO, check and interpreter ops, mapped
// onto the canonical attributes of docs/ir-attributes.md. Most formats are a comma-separated
// list of operands and `keyword = value` items followed by an optional attribute dictionary
// and `: types`; the few with structure of their own (reduce, while, slice ranges, convolution
// windows) have their own functions.
#include <cctype>

#include "stablehlo/parser_impl.h"

namespace wf::parser_detail {
namespace {

// "stablehlo.add" -> "add"; other dialects keep their prefix so names cannot collide.
std::string_view shortName(std::string_view name) {
  if (name.rfind("stablehlo.", 0) == 0) return name.substr(10);
  if (name.rfind("mhlo.", 0) == 0) return name.substr(5);
  return name;
}

Attribute i64Array(std::vector<int64_t> v) { return Attribute::denseArray(ElementType::kSI64, std::move(v)); }

// Canonical attribute name for a pretty-form keyword of an op.
std::string canonicalKey(std::string_view op, std::string_view key) {
  if (key == "dims") {
    if (op == "broadcast_in_dim" || op == "dynamic_broadcast_in_dim") return "broadcast_dimensions";
    if (op == "transpose") return "permutation";
    return "dimensions";
  }
  if (key == "dim") {
    if (op == "iota" || op == "dynamic_iota") return "iota_dimension";
    return "dimension";
  }
  if (key == "sizes") return op == "broadcast" ? "broadcast_sizes" : "slice_sizes";
  if (key == "low") return "edge_padding_low";
  if (key == "high") return "edge_padding_high";
  if (key == "interior") return "interior_padding";
  if (key == "length") return "fft_length";
  if (key == "config") return "einsum_config";
  return std::string(key);
}

}  // namespace

Status Parser::parseSliceRanges(Operation* op) {
  // [start:limit(:stride)?, ...]
  WF_RETURN_IF_ERROR(expect('[', "to begin slice ranges"));
  std::vector<int64_t> starts, limits, strides;
  if (!consumeIf(']')) {
    do {
      int64_t s, l, st = 1;
      WF_RETURN_IF_ERROR(parseIntegerValue(&s));
      WF_RETURN_IF_ERROR(expect(':', "in slice range 'start:limit'"));
      WF_RETURN_IF_ERROR(parseIntegerValue(&l));
      if (consumeIf(':')) WF_RETURN_IF_ERROR(parseIntegerValue(&st));
      starts.push_back(s);
      limits.push_back(l);
      strides.push_back(st);
      if (starts.size() > 64) return errorHere("too many slice ranges");
    } while (consumeIf(','));
    WF_RETURN_IF_ERROR(expect(']', "to end slice ranges"));
  }
  op->setAttr("start_indices", i64Array(std::move(starts)));
  op->setAttr("limit_indices", i64Array(std::move(limits)));
  op->setAttr("strides", i64Array(std::move(strides)));
  return Status::ok();
}

// window = {stride = [..], pad = [[l, h], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}
Status Parser::parseWindowAttributes(Operation* op) {
  WF_RETURN_IF_ERROR(expect('{', "to begin convolution window"));
  if (consumeIf('}')) return Status::ok();
  do {
    skipWs();
    size_t keyPos = pos_;
    std::string key(parseBareId());
    WF_RETURN_IF_ERROR(expect('=', "after window attribute name"));
    if (key == "pad") {
      WF_RETURN_IF_ERROR(expect('[', "to begin window padding"));
      std::vector<int64_t> pads;
      if (!consumeIf(']')) {
        do {
          std::vector<int64_t> pair;
          WF_RETURN_IF_ERROR(parseIntList(&pair));
          if (pair.size() != 2) return errorAt(keyPos, "window padding entries must be [low, high] pairs");
          pads.insert(pads.end(), pair.begin(), pair.end());
          if (pads.size() > 256) return errorAt(keyPos, "window padding too long");
        } while (consumeIf(','));
        WF_RETURN_IF_ERROR(expect(']', "to end window padding"));
      }
      Literal lit = Literal::zeros(Type::tensor({static_cast<int64_t>(pads.size() / 2), 2}, ElementType::kSI64));
      for (size_t i = 0; i < pads.size(); ++i) lit.setInt(static_cast<int64_t>(i), pads[i]);
      op->setAttr("padding", Attribute::denseElements(std::move(lit)));
    } else if (key == "reverse") {
      WF_RETURN_IF_ERROR(expect('[', "to begin window reversal"));
      std::vector<int64_t> flags;
      if (!consumeIf(']')) {
        do {
          if (consumeKeyword("true")) flags.push_back(1);
          else if (consumeKeyword("false")) flags.push_back(0);
          else {
            int64_t v;
            WF_RETURN_IF_ERROR(parseIntegerValue(&v));
            flags.push_back(v != 0);
          }
          if (flags.size() > 64) return errorAt(keyPos, "window reversal too long");
        } while (consumeIf(','));
        WF_RETURN_IF_ERROR(expect(']', "to end window reversal"));
      }
      op->setAttr("window_reversal", Attribute::denseArray(ElementType::kI1, std::move(flags)));
    } else {
      std::string name = key == "stride"       ? "window_strides"
                         : key == "lhs_dilate" ? "lhs_dilation"
                         : key == "rhs_dilate" ? "rhs_dilation"
                                               : "";
      if (name.empty()) return errorAt(keyPos, "unknown convolution window attribute '" + key + "'");
      std::vector<int64_t> v;
      WF_RETURN_IF_ERROR(parseIntList(&v));
      op->setAttr(name, i64Array(std::move(v)));
    }
  } while (consumeIf(','));
  return expect('}', "to end convolution window");
}

Status Parser::parseKeywordValue(Operation* op, const std::string& key, size_t keyPos) {
  std::string_view opName = shortName(op->name());
  std::string name = canonicalKey(opName, key);
  skipWs();
  if (key == "batching_dims" || key == "contracting_dims") {
    // dot_general: `batching_dims = [0] x [0], contracting_dims = [2] x [1]`
    std::vector<int64_t> lhs, rhs;
    WF_RETURN_IF_ERROR(parseIntList(&lhs));
    WF_RETURN_IF_ERROR(expectKeyword("x", "between lhs and rhs dimensions"));
    WF_RETURN_IF_ERROR(parseIntList(&rhs));
    auto toArray = [](const std::vector<int64_t>& v) {
      std::vector<Attribute> a;
      for (int64_t x : v) a.push_back(Attribute::integer(x));
      return Attribute::array(std::move(a));
    };
    std::vector<NamedAttribute> fields;
    if (const Attribute* existing = op->attr("dot_dimension_numbers")) fields = existing->fields();
    std::string prefix = key == "batching_dims" ? "batching_dimensions" : "contracting_dimensions";
    if (!lhs.empty()) fields.emplace_back("lhs_" + prefix, toArray(lhs));
    if (!rhs.empty()) fields.emplace_back("rhs_" + prefix, toArray(rhs));
    // Keep MLIR's field order: batching before contracting, lhs before rhs.
    std::vector<NamedAttribute> ordered;
    for (const char* f : {"lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
                          "rhs_contracting_dimensions"})
      for (auto& nf : fields)
        if (nf.first == f) ordered.push_back(nf);
    op->setAttr("dot_dimension_numbers", Attribute::dialectStruct("stablehlo.dot", std::move(ordered)));
    return Status::ok();
  }
  if (key == "precision") {
    WF_RETURN_IF_ERROR(expect('[', "to begin precision list"));
    std::vector<Attribute> values;
    if (!consumeIf(']')) {
      do {
        std::string_view w = parseBareId();
        if (w.empty()) return errorHere("expected precision (DEFAULT, HIGH, HIGHEST), found " + describeNext());
        values.push_back(Attribute::enumValue("stablehlo", "precision", std::string(w)));
        if (values.size() > 64) return errorHere("precision list too long");
      } while (consumeIf(','));
      WF_RETURN_IF_ERROR(expect(']', "to end precision list"));
    }
    op->setAttr("precision_config", Attribute::array(std::move(values)));
    return Status::ok();
  }
  if (key == "algorithm" && peekChar() == '<') {
    Attribute a;
    WF_RETURN_IF_ERROR(parseDialectStructBody("stablehlo.dot_algorithm", &a));
    op->setAttr("algorithm", std::move(a));
    return Status::ok();
  }
  if (key == "dim_numbers") {
    std::vector<NamedAttribute> fields;
    WF_RETURN_IF_ERROR(parseConvDimensionNumbers(&fields));
    op->setAttr("dimension_numbers", Attribute::dialectStruct("stablehlo.conv", std::move(fields)));
    return Status::ok();
  }
  if (key == "window" && peekChar() == '{') return parseWindowAttributes(op);
  if (key == "format") {
    // reduce_precision: `format = e5m2`
    size_t p = pos_;
    std::string_view w = parseBareId();
    size_t m = w.find('m');
    if (w.size() < 4 || w[0] != 'e' || m == std::string_view::npos)
      return errorAt(p, "expected format 'eXmY', found '" + std::string(w) + "'");
    int64_t e = 0, mant = 0;
    for (size_t i = 1; i < m; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(w[i])) || e > 1000) return errorAt(p, "invalid format '" + std::string(w) + "'");
      e = e * 10 + (w[i] - '0');
    }
    for (size_t i = m + 1; i < w.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(w[i])) || mant > 1000) return errorAt(p, "invalid format '" + std::string(w) + "'");
      mant = mant * 10 + (w[i] - '0');
    }
    if (m == 1 || m + 1 == w.size()) return errorAt(p, "invalid format '" + std::string(w) + "'");
    op->setAttr("exponent_bits", Attribute::integer(e, ElementType::kSI32));
    op->setAttr("mantissa_bits", Attribute::integer(mant, ElementType::kSI32));
    return Status::ok();
  }
  // Enum keywords: a bare word mapped to the op's enum attribute.
  struct EnumKey {
    const char* op;
    const char* key;
    const char* attr;
    const char* enumName;
  };
  static const EnumKey kEnums[] = {
      {"fft", "type", "fft_type", "fft_type"},
      {"rng", "distribution", "rng_distribution", "rng_distribution"},
      {"rng_bit_generator", "algorithm", "rng_algorithm", "rng_algorithm"},
  };
  for (const EnumKey& e : kEnums) {
    if (opName == e.op && key == e.key) {
      std::string_view w = parseBareId();
      if (w.empty()) return errorHere("expected " + std::string(e.enumName) + " value, found " + describeNext());
      op->setAttr(e.attr, Attribute::enumValue("stablehlo", e.enumName, std::string(w)));
      return Status::ok();
    }
  }
  if (peekChar() == '[' && (key == "dims" || key == "sizes" || key == "low" || key == "high" ||
                            key == "interior" || key == "length")) {
    std::vector<int64_t> v;
    WF_RETURN_IF_ERROR(parseIntList(&v));
    op->setAttr(name, i64Array(std::move(v)));
    return Status::ok();
  }
  if (key == "dim") {
    int64_t v;
    WF_RETURN_IF_ERROR(parseIntegerValue(&v));
    op->setAttr(name, Attribute::integer(v));
    return Status::ok();
  }
  Attribute value;
  WF_RETURN_IF_ERROR(parseAttribute(&value));
  (void)keyPos;
  op->setAttr(name, std::move(value));
  return Status::ok();
}

// Comma-separated operands and `keyword = value` items, plus the few item shapes that
// particular ops use (`@callee(...)`, `"name"`, `%t[0]`, `[1:2]`, words).
Status Parser::parsePrettyItems(Operation* op, std::vector<ValueRef>* operands, int* wordCount) {
  DepthGuard guard(this);
  if (guard.tooDeep()) return depthError();
  std::string_view opName = shortName(op->name());
  bool expectItem = false;  // after a ',' an item is required
  while (true) {
    skipWs();
    char c = peekChar();
    size_t itemPos = pos_;
    if (c == '%') {
      ValueRef r;
      WF_RETURN_IF_ERROR(parseValueRef(&r));
      operands->push_back(std::move(r));
      if (peekChar() == '[' || peekIs('[')) {
        if (opName == "get_tuple_element") {
          ++pos_;
          int64_t idx;
          WF_RETURN_IF_ERROR(parseIntegerValue(&idx));
          WF_RETURN_IF_ERROR(expect(']', "after tuple index"));
          op->setAttr("index", Attribute::integer(idx, ElementType::kSI32));
        } else if (opName == "slice") {
          WF_RETURN_IF_ERROR(parseSliceRanges(op));
        }
      }
    } else if (c == '@') {
      std::string sym;
      WF_RETURN_IF_ERROR(parseSymbolName(&sym));
      if (op->name() == "func.call") op->setAttr("callee", Attribute::symbolRef(sym));
      else if (opName == "custom_call") op->setAttr("call_target_name", Attribute::string(sym));
      else op->setAttr("callee", Attribute::symbolRef(sym));
      if (peekIs('(')) {
        ++pos_;
        if (!consumeIf(')')) {
          WF_RETURN_IF_ERROR(parseValueRefList(operands));
          WF_RETURN_IF_ERROR(expect(')', "to end the operand list of '" + op->name() + "'"));
        }
      }
    } else if (c == '"') {
      std::string s;
      WF_RETURN_IF_ERROR(parseStringLiteral(&s));
      op->setAttr("name", Attribute::string(std::move(s)));
      // composite: `"name" %a, %b` has no comma after the name.
      if (peekIs('%')) continue;
    } else if (c == '(') {
      ++pos_;
      if (!consumeIf(')')) {
        WF_RETURN_IF_ERROR(parsePrettyItems(op, operands, wordCount));
        WF_RETURN_IF_ERROR(expect(')', "to end the operand list of '" + op->name() + "'"));
      }
    } else if (peekKeyword("dense") || peekKeyword("dense_resource")) {
      Attribute value;
      WF_RETURN_IF_ERROR(parseAttribute(&value));
      op->setAttr("value", std::move(value));
    } else if (!peekBareId().empty()) {
      std::string_view id = peekBareId();
      size_t after = pos_ + id.size();
      while (after < text_.size() && std::isspace(static_cast<unsigned char>(text_[after]))) ++after;
      bool isKeyword = after < text_.size() && text_[after] == '=' && (after + 1 >= text_.size() || text_[after + 1] != '=');
      if (isKeyword) {
        std::string key(id);
        pos_ = after + 1;
        WF_RETURN_IF_ERROR(parseKeywordValue(op, key, itemPos));
      } else if (opName == "compare" || op->name() == "chlo.broadcast_compare") {
        // `LT, %a, %b, FLOAT`: the direction first, an optional comparison type last.
        std::string word(parseBareId());
        if (*wordCount == 0) op->setAttr("comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", word));
        else if (*wordCount == 1) op->setAttr("compare_type", Attribute::enumValue("stablehlo", "comparison_type", word));
        else return errorAt(itemPos, "unexpected '" + word + "' in '" + op->name() + "'");
        ++*wordCount;
      } else if (expectItem) {
        return errorAt(itemPos, "unexpected '" + std::string(id) + "' in '" + op->name() + "'");
      } else {
        break;
      }
    } else {
      if (expectItem) return errorHere("expected operand or attribute in '" + op->name() + "', found " + describeNext());
      break;
    }
    if (consumeIf(',')) {
      expectItem = true;
      continue;
    }
    expectItem = false;
    // Keyword items may follow a parenthesised operand list without a comma:
    // `stablehlo.convolution(%a, %b) dim_numbers = ..., window = {...}`.
    std::string_view id = peekBareId();
    if (id.empty()) break;
    size_t after = pos_ + id.size();
    while (after < text_.size() && std::isspace(static_cast<unsigned char>(text_[after]))) ++after;
    if (!(after < text_.size() && text_[after] == '=' && (after + 1 >= text_.size() || text_[after + 1] != '='))) break;
  }
  return Status::ok();
}

Status Parser::deriveResultTypes(Operation* op, const TypeSpec& spec, size_t numLhs, size_t typePos,
                                 std::vector<Type>* resultTypes) {
  if (spec.functional) {
    if (spec.inputs.size() != op->numOperands())
      return errorAt(typePos, "'" + op->name() + "' has " + std::to_string(op->numOperands()) +
                                  " operands but its type lists " + std::to_string(spec.inputs.size()));
    *resultTypes = spec.results;
    return Status::ok();
  }
  const std::vector<Type>& types = spec.inputs;
  if (numLhs == 0) return Status::ok();
  if (types.empty()) return errorAt(typePos, "expected result types for '" + op->name() + "'");
  if (numLhs == types.size()) {
    *resultTypes = types;
  } else if (numLhs == 1) {
    *resultTypes = {types.back()};
  } else {
    return errorAt(typePos, "cannot tell the " + std::to_string(numLhs) + " result types of '" + op->name() +
                                "' from " + std::to_string(types.size()) + " types");
  }
  // A comparison printed with its operand type alone yields booleans of that shape.
  std::string_view n = shortName(op->name());
  if ((n == "compare" || n == "is_finite") && resultTypes->size() == 1 && (*resultTypes)[0].isTensor() &&
      (*resultTypes)[0].elementType() != ElementType::kI1)
    (*resultTypes)[0] = (*resultTypes)[0].withElementType(ElementType::kI1);
  return Status::ok();
}

// stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (...) -> ...
// stablehlo.reduce(%a init: %c), (%b init: %d) across dimensions = [1] : (...) -> (...)
//   reducer(%acc0: T, %x0: T) (%acc1: U, %x1: U) { ... }
Status Parser::parseReduceOp(Operation* op, size_t numLhs, std::vector<Type>* resultTypes) {
  std::vector<ValueRef> inputs, inits;
  do {
    WF_RETURN_IF_ERROR(expect('(', "to begin a reduce operand"));
    ValueRef in, init;
    WF_RETURN_IF_ERROR(parseValueRef(&in));
    WF_RETURN_IF_ERROR(expectKeyword("init", "in reduce operand '(%x init: %c)'"));
    WF_RETURN_IF_ERROR(expect(':', "after 'init'"));
    WF_RETURN_IF_ERROR(parseValueRef(&init));
    WF_RETURN_IF_ERROR(expect(')', "to end a reduce operand"));
    inputs.push_back(std::move(in));
    inits.push_back(std::move(init));
  } while (consumeIf(','));
  WF_RETURN_IF_ERROR(resolveOperands(op, inputs));
  WF_RETURN_IF_ERROR(resolveOperands(op, inits));
  std::string appliedOp;
  size_t appliedPos = 0;
  if (consumeKeyword("applies")) {
    skipWs();
    appliedPos = pos_;
    appliedOp = std::string(parseBareId());
    if (appliedOp.empty()) return errorHere("expected op name after 'applies', found " + describeNext());
  }
  WF_RETURN_IF_ERROR(expectKeyword("across", "in reduce"));
  WF_RETURN_IF_ERROR(expectKeyword("dimensions", "after 'across'"));
  WF_RETURN_IF_ERROR(expect('=', "after 'dimensions'"));
  std::vector<int64_t> dims;
  WF_RETURN_IF_ERROR(parseIntList(&dims));
  op->setAttr("dimensions", i64Array(std::move(dims)));
  if (peekIs('{')) WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
  WF_RETURN_IF_ERROR(expect(':', "before the type of 'stablehlo.reduce'"));
  skipWs();
  size_t typePos = pos_;
  TypeSpec spec;
  WF_RETURN_IF_ERROR(parseTypeSpec(&spec));
  WF_RETURN_IF_ERROR(deriveResultTypes(op, spec, numLhs, typePos, resultTypes));
  Region* body = op->addRegion();
  const size_t n = inputs.size();
  if (!appliedOp.empty()) {
    // Synthesise the body: ^bb0(%lhs: T, %rhs: T): %r = applied %lhs, %rhs; stablehlo.return %r
    if (n != 1) return errorAt(appliedPos, "'applies' form of reduce needs exactly one input");
    Value* init = op->operand(1);
    if (!init->type().isTensor()) return errorAt(appliedPos, "reduce init value must be a tensor");
    Type scalar = Type::scalar(init->type().elementType());
    if (!init->type().quantizedSpelling().empty()) scalar.setQuantizedSpelling(init->type().quantizedSpelling());
    Block* block = body->addBlock();
    Value* lhs = block->addArgument(scalar);
    Value* rhs = block->addArgument(scalar);
    auto inner = std::make_unique<Operation>(appliedOp, op->location());
    inner->addOperand(lhs);
    inner->addOperand(rhs);
    Value* r = inner->addResult(scalar);
    block->append(std::move(inner));
    auto ret = std::make_unique<Operation>("stablehlo.return", op->location());
    ret->addOperand(r);
    block->append(std::move(ret));
    return Status::ok();
  }
  WF_RETURN_IF_ERROR(expectKeyword("reducer", "(or 'applies') in reduce"));
  std::vector<ArgDecl> lhsArgs, rhsArgs;
  for (size_t i = 0; i < n; ++i) {
    WF_RETURN_IF_ERROR(expect('(', "to begin a reducer argument pair"));
    ArgDecl a, b;
    WF_RETURN_IF_ERROR(parseArgDecl(&a, false));
    WF_RETURN_IF_ERROR(expect(',', "between reducer arguments"));
    WF_RETURN_IF_ERROR(parseArgDecl(&b, false));
    WF_RETURN_IF_ERROR(expect(')', "to end a reducer argument pair"));
    lhsArgs.push_back(std::move(a));
    rhsArgs.push_back(std::move(b));
  }
  std::vector<ArgDecl> args = std::move(lhsArgs);
  for (ArgDecl& a : rhsArgs) args.push_back(std::move(a));
  return parseRegion(body, &args, /*isolated=*/false);
}

// stablehlo.while(%iterArg = %init, ...) : T, ... [attributes {...}] cond { ... } do { ... }
Status Parser::parseWhileOp(Operation* op, std::vector<Type>* resultTypes) {
  WF_RETURN_IF_ERROR(expect('(', "after 'stablehlo.while'"));
  std::vector<ArgDecl> args;
  std::vector<ValueRef> inits;
  if (!consumeIf(')')) {
    do {
      ValueRef name, init;
      WF_RETURN_IF_ERROR(parseValueRef(&name));
      WF_RETURN_IF_ERROR(expect('=', "in while operand '%iterArg = %init'"));
      WF_RETURN_IF_ERROR(parseValueRef(&init));
      ArgDecl a;
      a.name = name.name;
      a.pos = name.pos;
      args.push_back(std::move(a));
      inits.push_back(std::move(init));
    } while (consumeIf(','));
    WF_RETURN_IF_ERROR(expect(')', "to end while operands"));
  }
  WF_RETURN_IF_ERROR(resolveOperands(op, inits));
  std::vector<Type> types;
  if (consumeIf(':')) {
    skipWs();
  size_t typePos = pos_;
    if (peekIs('(')) WF_RETURN_IF_ERROR(parseParenTypeList(&types));
    else WF_RETURN_IF_ERROR(parseTypeList(&types));
    if (types.size() != args.size())
      return errorAt(typePos, "'stablehlo.while' has " + std::to_string(args.size()) + " operands but " +
                                  std::to_string(types.size()) + " types");
  } else if (!args.empty()) {
    return errorHere("expected ':' and operand types in 'stablehlo.while', found " + describeNext());
  }
  for (size_t i = 0; i < args.size(); ++i) args[i].type = types[i];
  if (consumeKeyword("attributes")) WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
  WF_RETURN_IF_ERROR(expectKeyword("cond", "in 'stablehlo.while'"));
  WF_RETURN_IF_ERROR(parseRegion(op->addRegion(), &args, false));
  WF_RETURN_IF_ERROR(expectKeyword("do", "in 'stablehlo.while'"));
  WF_RETURN_IF_ERROR(parseRegion(op->addRegion(), &args, false));
  *resultTypes = types;
  return Status::ok();
}

// chlo.scan(%inputs) inits(%inits) dimension=0 [attributes {...}] { body } : (...) -> (...)
static Status parseScanOp(Parser& p, Operation* op, size_t numLhs, std::vector<Type>* resultTypes) {
  std::vector<ValueRef> operands;
  WF_RETURN_IF_ERROR(p.expect('(', "after 'chlo.scan'"));
  if (!p.consumeIf(')')) {
    WF_RETURN_IF_ERROR(p.parseValueRefList(&operands));
    WF_RETURN_IF_ERROR(p.expect(')', "to end scan inputs"));
  }
  WF_RETURN_IF_ERROR(p.expectKeyword("inits", "in 'chlo.scan'"));
  WF_RETURN_IF_ERROR(p.expect('(', "after 'inits'"));
  if (!p.consumeIf(')')) {
    WF_RETURN_IF_ERROR(p.parseValueRefList(&operands));
    WF_RETURN_IF_ERROR(p.expect(')', "to end scan inits"));
  }
  WF_RETURN_IF_ERROR(p.resolveOperands(op, operands));
  WF_RETURN_IF_ERROR(p.expectKeyword("dimension", "in 'chlo.scan'"));
  WF_RETURN_IF_ERROR(p.expect('=', "after 'dimension'"));
  int64_t dim;
  WF_RETURN_IF_ERROR(p.parseIntegerValue(&dim));
  op->setAttr("dimension", Attribute::integer(dim));
  if (p.consumeKeyword("attributes")) WF_RETURN_IF_ERROR(p.parseAttrDictInto(&op->attributes()));
  WF_RETURN_IF_ERROR(p.parseRegion(op->addRegion(), nullptr, false));
  WF_RETURN_IF_ERROR(p.expect(':', "before the type of 'chlo.scan'"));
  p.skipWs();
  size_t typePos = p.pos_;
  TypeSpec spec;
  WF_RETURN_IF_ERROR(p.parseTypeSpec(&spec));
  return p.deriveResultTypes(op, spec, numLhs, typePos, resultTypes);
}

Status Parser::parsePrettyBody(Operation* op, size_t numLhs, std::vector<Type>* resultTypes) {
  if (op->name() == "chlo.scan" && peekIs('(')) return parseScanOp(*this, op, numLhs, resultTypes);
  std::string_view n = shortName(op->name());
  const bool hlo = op->name().rfind("stablehlo.", 0) == 0 || op->name().rfind("mhlo.", 0) == 0;
  if (hlo && n == "reduce" && peekIs('(')) return parseReduceOp(op, numLhs, resultTypes);
  if (hlo && n == "while" && peekIs('(')) return parseWhileOp(op, resultTypes);
  if ((hlo && n == "constant") || op->name() == "chlo.constant") {
    if (peekIs('(')) return parseGenericBody(op, numLhs, resultTypes);  // `constant() <{value = ...}> : () -> T`
    if (peekIs('{')) WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
    skipWs();
    size_t valuePos = pos_;
    Attribute value;
    Type type;
    if (consumeKeyword("dense")) {
      WF_RETURN_IF_ERROR(parseDenseElements(&value, &type));
    } else {
      WF_RETURN_IF_ERROR(parseAttribute(&value));
      if (value.kind() != Attribute::Kind::kDenseElements)
        return errorAt(valuePos, "expected 'dense<...> : type' in '" + op->name() + "'");
      type = value.typeValue();
    }
    op->setAttr("value", std::move(value));
    resultTypes->push_back(type);
    return Status::ok();
  }
  std::vector<ValueRef> operands;
  int words = 0;
  WF_RETURN_IF_ERROR(parsePrettyItems(op, &operands, &words));
  WF_RETURN_IF_ERROR(resolveOperands(op, operands));
  if (peekIs('{')) WF_RETURN_IF_ERROR(parseAttrDictInto(&op->attributes()));
  if (consumeIf(':')) {
    skipWs();
  size_t typePos = pos_;
    TypeSpec spec;
    WF_RETURN_IF_ERROR(parseTypeSpec(&spec));
    WF_RETURN_IF_ERROR(deriveResultTypes(op, spec, numLhs, typePos, resultTypes));
  } else if (numLhs > 0) {
    return errorHere("expected ':' and the type of '" + op->name() + "', found " + describeNext());
  }
  return Status::ok();
}

}  // namespace wf::parser_detail
