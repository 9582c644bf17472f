#include "runtime/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <variant>
#include <vector>

#include "runtime/file_io.h"

namespace wf {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This is a small parser for the subset numpy writes: strings, booleans, integers and tuples of
// integers. Anything else (structured dtypes are lists) is reported as unsupported.
struct HeaderValue {
  enum class Kind { kString, kBool, kInt, kTuple } kind = Kind::kString;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<int64_t> tuple;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  Expected<std::map<std::string, HeaderValue>> parseDict() {
    std::map<std::string, HeaderValue> dict;
    skipSpace();
    if (!consume('{')) return error("expected '{' at the start of the header");
    while (true) {
      skipSpace();
      if (consume('}')) break;
      WF_ASSIGN_OR_RETURN(HeaderValue key, parseValue());
      if (key.kind != HeaderValue::Kind::kString) return error("dictionary keys must be strings");
      skipSpace();
      if (!consume(':')) return error("expected ':' after key '" + key.str + "'");
      skipSpace();
      WF_ASSIGN_OR_RETURN(HeaderValue value, parseValue());
      if (dict.count(key.str)) return error("duplicate key '" + key.str + "'");
      dict.emplace(key.str, std::move(value));
      skipSpace();
      if (consume(',')) continue;
      skipSpace();
      if (consume('}')) break;
      return error("expected ',' or '}' in the header dictionary");
    }
    skipSpace();
    if (pos_ != text_.size()) return error("unexpected text after the header dictionary");
    return dict;
  }

 private:
  Status error(const std::string& message) const {
    return invalidArgument(std::string(name_) + ": malformed .npy header: " + message + " (at offset " +
                           std::to_string(pos_) + ")");
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool consumeWord(std::string_view w) {
    if (text_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }

  Expected<int64_t> parseInt() {
    size_t start = pos_;
    bool negative = consume('-');
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
      return error("expected an integer");
    uint64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
        pos_ = start;
        return error("integer out of range");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    // Python 2 era files may carry a long suffix.
    consume('L');
    return negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  Expected<HeaderValue> parseValue() {
    HeaderValue v;
    if (pos_ >= text_.size()) return error("unexpected end of header");
    char c = text_[pos_];
    if (c == '\'' || c == '"') {
      ++pos_;
      size_t end = text_.find(c, pos_);
      if (end == std::string_view::npos) return error("unterminated string");
      v.kind = HeaderValue::Kind::kString;
      v.str = std::string(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return v;
    }
    if (consumeWord("True")) {
      v.kind = HeaderValue::Kind::kBool;
      v.boolean = true;
      return v;
    }
    if (consumeWord("False")) {
      v.kind = HeaderValue::Kind::kBool;
      return v;
    }
    if (c == '(') {
      ++pos_;
      v.kind = HeaderValue::Kind::kTuple;
      while (true) {
        skipSpace();
        if (consume(')')) break;
        WF_ASSIGN_OR_RETURN(int64_t d, parseInt());
        v.tuple.push_back(d);
        skipSpace();
        if (consume(',')) continue;
        skipSpace();
        if (consume(')')) break;
        return error("expected ',' or ')' in a tuple");
      }
      return v;
    }
    if (c == '[') return error("structured dtypes (a list descr) are not supported");
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = HeaderValue::Kind::kInt;
      WF_ASSIGN_OR_RETURN(v.integer, parseInt());
      return v;
    }
    return error(std::string("unexpected character '") + c + "'");
  }

  std::string_view text_;
  std::string_view name_;
  size_t pos_ = 0;
};

// What a descr string says about the bytes on disk.
struct Descr {
  char byteOrder = '<';  // '<', '>', '|'
  char kind = 'f';       // b i u f c V
  int itemSize = 4;
};

Expected<Descr> parseDescr(const std::string& s, std::string_view name) {
  auto bad = [&] { return invalidArgument(std::string(name) + ": unsupported .npy dtype '" + s + "'"); };
  if (s.size() < 3) return bad();
  Descr d;
  d.byteOrder = s[0];
  if (d.byteOrder == '=') d.byteOrder = '<';  // native: WarpForge runs on little-endian hosts
  if (d.byteOrder != '<' && d.byteOrder != '>' && d.byteOrder != '|') return bad();
  d.kind = s[1];
  std::string digits = s.substr(2);
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return bad();
  d.itemSize = std::stoi(digits);
  return d;
}

// The element type a descr denotes on its own, or nullopt for raw void bytes.
Expected<std::optional<ElementType>> elementTypeOfDescr(const Descr& d, const std::string& text,
                                                        std::string_view name) {
  using ET = ElementType;
  auto bad = [&] { return invalidArgument(std::string(name) + ": unsupported .npy dtype '" + text + "'"); };
  switch (d.kind) {
    case 'b':
      if (d.itemSize == 1) return std::optional<ET>(ET::kI1);
      return bad();
    case 'i':
      switch (d.itemSize) {
        case 1: return std::optional<ET>(ET::kSI8);
        case 2: return std::optional<ET>(ET::kSI16);
        case 4: return std::optional<ET>(ET::kSI32);
        case 8: return std::optional<ET>(ET::kSI64);
        default: return bad();
      }
    case 'u':
      switch (d.itemSize) {
        case 1: return std::optional<ET>(ET::kUI8);
        case 2: return std::optional<ET>(ET::kUI16);
        case 4: return std::optional<ET>(ET::kUI32);
        case 8: return std::optional<ET>(ET::kUI64);
        default: return bad();
      }
    case 'f':
      switch (d.itemSize) {
        case 2: return std::optional<ET>(ET::kF16);
        case 4: return std::optional<ET>(ET::kF32);
        case 8: return std::optional<ET>(ET::kF64);
        default: return bad();
      }
    case 'c':
      switch (d.itemSize) {
        case 8: return std::optional<ET>(ET::kComplexF32);
        case 16: return std::optional<ET>(ET::kComplexF64);
        default: return bad();
      }
    case 'V':
      if (d.itemSize == 1 || d.itemSize == 2) return std::optional<ET>();
      return bad();
    default:
      return bad();
  }
}

bool isSubByteInteger(ElementType t) {
  return t == ElementType::kSI2 || t == ElementType::kSI4 || t == ElementType::kUI2 || t == ElementType::kUI4;
}

// Picks the Literal element type for a file dtype, given what the caller expects.
Expected<ElementType> resolveElementType(std::optional<ElementType> fileType, const Descr& d,
                                         const std::string& descrText, std::optional<ElementType> expected,
                                         std::string_view name) {
  auto mismatch = [&](const std::string& have) {
    return invalidArgument(std::string(name) + ": dtype '" + descrText + "' (" + have + ") does not match expected " +
                           std::string(elementTypeName(*expected)));
  };
  if (!fileType) {
    // Raw void bytes: ml_dtypes' bfloat16 ('<V2') and f8 types ('|V1').
    if (expected) {
      if (storageBytes(*expected) == d.itemSize &&
          (*expected == ElementType::kBF16 || *expected == ElementType::kF16 || isF8OrSmaller(*expected) ||
           (d.itemSize == 1 && isInteger(*expected))))
        return *expected;
      return mismatch("raw " + std::to_string(d.itemSize) + "-byte values");
    }
    if (d.itemSize == 2) return ElementType::kBF16;
    return invalidArgument(std::string(name) + ": dtype '" + descrText +
                           "' holds raw bytes (an f8 type?); the element type must be known to read it");
  }
  if (!expected || *expected == *fileType) return *fileType;
  // Widened storage for types numpy lacks.
  if (isSubByteInteger(*expected) && storageBytes(*fileType) == 1 &&
      isSignedInteger(*expected) == isSignedInteger(*fileType))
    return *expected;
  if (*expected == ElementType::kIndex && *fileType == ElementType::kSI64) return *expected;
  return mismatch(std::string(elementTypeName(*fileType)));
}

void byteSwapInPlace(uint8_t* data, size_t count, int unit) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * static_cast<size_t>(unit), data + (i + 1) * static_cast<size_t>(unit));
}

}  // namespace

Expected<Literal> decodeNpy(std::span<const uint8_t> bytes, std::string_view name,
                            std::optional<ElementType> expected) {
  std::string nm(name);
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    return invalidArgument(nm + ": not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen = 0;
  size_t headerStart = 0;
  if (major == 1) {
    headerLen = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalidArgument(nm + ": truncated .npy header");
    headerLen = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8 |
                static_cast<size_t>(bytes[10]) << 16 | static_cast<size_t>(bytes[11]) << 24;
    headerStart = 12;
  } else {
    return invalidArgument(nm + ": unsupported .npy format version " + std::to_string(major));
  }
  if (headerLen > bytes.size() - headerStart)
    return invalidArgument(nm + ": .npy header length " + std::to_string(headerLen) + " exceeds the file size");
  std::string_view header(reinterpret_cast<const char*>(bytes.data() + headerStart), headerLen);
  WF_ASSIGN_OR_RETURN(auto dict, HeaderParser(header, name).parseDict());

  auto need = [&](const char* key, HeaderValue::Kind kind, const char* what) -> Expected<const HeaderValue*> {
    auto it = dict.find(key);
    if (it == dict.end()) return invalidArgument(nm + ": .npy header has no '" + key + "'");
    if (it->second.kind != kind) return invalidArgument(nm + ": .npy header '" + key + "' is not " + what);
    return &it->second;
  };
  WF_ASSIGN_OR_RETURN(const HeaderValue* descrValue, need("descr", HeaderValue::Kind::kString, "a string"));
  WF_ASSIGN_OR_RETURN(const HeaderValue* fortranValue, need("fortran_order", HeaderValue::Kind::kBool, "a boolean"));
  WF_ASSIGN_OR_RETURN(const HeaderValue* shapeValue, need("shape", HeaderValue::Kind::kTuple, "a tuple"));

  WF_ASSIGN_OR_RETURN(Descr descr, parseDescr(descrValue->str, name));
  WF_ASSIGN_OR_RETURN(std::optional<ElementType> fileType, elementTypeOfDescr(descr, descrValue->str, name));
  WF_ASSIGN_OR_RETURN(ElementType type, resolveElementType(fileType, descr, descrValue->str, expected, name));

  std::vector<int64_t> shape = shapeValue->tuple;
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalidArgument(nm + ": negative dimension in .npy shape");
    if (d != 0 && count > (uint64_t{1} << 48) / static_cast<uint64_t>(d))
      return invalidArgument(nm + ": .npy shape is too large");
    count *= static_cast<uint64_t>(d);
  }
  const size_t itemSize = static_cast<size_t>(descr.itemSize);
  const size_t dataStart = headerStart + headerLen;
  const size_t available = bytes.size() - dataStart;
  if (count > available / std::max<size_t>(itemSize, 1) || count * itemSize != available)
    return invalidArgument(nm + ": .npy data is " + std::to_string(available) + " bytes, shape and dtype need " +
                           std::to_string(count * itemSize));

  Literal out = Literal::zeros(Type::tensor(shape, type));
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  const uint8_t* src = bytes.data() + dataStart;
  if (!fortranValue->boolean || shape.size() < 2) {
    std::memcpy(dst, src, count * itemSize);
  } else {
    // Column-major on disk: walk the row-major output and find each element's source offset.
    std::vector<int64_t> colStrides(shape.size(), 1);
    for (size_t i = 1; i < shape.size(); ++i) colStrides[i] = colStrides[i - 1] * shape[i - 1];
    std::vector<int64_t> index(shape.size(), 0);
    for (uint64_t linear = 0; linear < count; ++linear) {
      int64_t offset = 0;
      for (size_t i = 0; i < shape.size(); ++i) offset += index[i] * colStrides[i];
      std::memcpy(dst + linear * itemSize, src + static_cast<size_t>(offset) * itemSize, itemSize);
      for (size_t i = shape.size(); i-- > 0;) {
        if (++index[i] < shape[i]) break;
        index[i] = 0;
      }
    }
  }
  if (descr.byteOrder == '>' && itemSize > 1) {
    // Complex values are two floats, each swapped on its own.
    int unit = descr.kind == 'c' ? descr.itemSize / 2 : descr.itemSize;
    byteSwapInPlace(dst, count * itemSize / static_cast<size_t>(unit), unit);
  }
  // Normalise and range-check values whose storage allows more than the type does.
  if (type == ElementType::kI1) {
    for (uint64_t i = 0; i < count; ++i) dst[i] = dst[i] != 0;
  } else if (isSubByteInteger(type)) {
    int64_t lo = isSignedInteger(type) ? -(int64_t{1} << (bitWidth(type) - 1)) : 0;
    int64_t hi = isSignedInteger(type) ? (int64_t{1} << (bitWidth(type) - 1)) - 1 : (int64_t{1} << bitWidth(type)) - 1;
    for (uint64_t i = 0; i < count; ++i) {
      int64_t v = out.getInt(static_cast<int64_t>(i));
      if (v < lo || v > hi)
        return invalidArgument(nm + ": value " + std::to_string(v) + " at index " + std::to_string(i) +
                               " does not fit " + std::string(elementTypeName(type)));
    }
  }
  return out;
}

Expected<Literal> readNpy(const std::string& path, std::optional<ElementType> expected) {
  WF_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(path));
  return decodeNpy(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), path,
                   expected);
}

Expected<std::string> npyDescrFor(ElementType type) {
  using ET = ElementType;
  switch (type) {
    case ET::kI1: return std::string("|b1");
    case ET::kSI2:
    case ET::kSI4:
    case ET::kSI8: return std::string("|i1");
    case ET::kSI16: return std::string("<i2");
    case ET::kSI32: return std::string("<i4");
    case ET::kSI64:
    case ET::kIndex: return std::string("<i8");
    case ET::kUI2:
    case ET::kUI4:
    case ET::kUI8: return std::string("|u1");
    case ET::kUI16: return std::string("<u2");
    case ET::kUI32: return std::string("<u4");
    case ET::kUI64: return std::string("<u8");
    case ET::kF16: return std::string("<f2");
    case ET::kF32: return std::string("<f4");
    case ET::kF64: return std::string("<f8");
    case ET::kBF16: return std::string("<V2");  // what ml_dtypes.bfloat16 arrays save as
    case ET::kComplexF32: return std::string("<c8");
    case ET::kComplexF64: return std::string("<c16");
    default: break;
  }
  if (isF8OrSmaller(type)) return std::string("|V1");
  return unimplemented("no .npy dtype for element type " + std::string(elementTypeName(type)));
}

Expected<std::string> encodeNpy(const Literal& value) {
  if (!value.type().isTensor()) return invalidArgument("only tensors can be written as .npy, got " + value.type().toString());
  WF_ASSIGN_OR_RETURN(std::string descr, npyDescrFor(value.elementType()));
  std::string shape = "(";
  for (size_t i = 0; i < value.shape().size(); ++i) {
    shape += std::to_string(value.shape()[i]);
    shape += value.shape().size() == 1 ? "," : (i + 1 < value.shape().size() ? ", " : "");
  }
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Version 1.0 unless the header needs more than 16 bits of length; numpy pads the whole
  // preamble to a multiple of 64 bytes and ends it with a newline.
  bool v2 = header.size() + 1 + 10 > 65535;
  size_t preamble = v2 ? 12 : 10;
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  size_t len = header.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (v2) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  out += header;
  out.append(reinterpret_cast<const char*>(value.data()), value.sizeBytes());
  return out;
}

Status writeNpy(const std::string& path, const Literal& value) {
  WF_ASSIGN_OR_RETURN(std::string bytes, encodeNpy(value));
  return writeFileAtomically(path, bytes);
}

}  // namespace wf
