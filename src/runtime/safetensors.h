// safetensors files to and from Literals.
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}}
// then the data buffer; offsets are relative to the buffer's start, every tensor's bytes are
// row-major little-endian, and the tensors cover the buffer exactly (no holes, no overlaps).
//
// dtypes: BOOL U8 I8 U16 I16 U32 I32 U64 I64 F16 BF16 F32 F64 F8_E4M3 (e4m3fn) F8_E5M2, and C64.
// Every error names the offending tensor.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"

namespace wf {

struct NamedLiteral {
  std::string name;
  Literal value;
};

struct SafetensorsFile {
  std::vector<NamedLiteral> tensors;  // in the order of their data offsets
  std::map<std::string, std::string> metadata;

  const Literal* find(std::string_view name) const;
  Literal* find(std::string_view name) {
    return const_cast<Literal*>(static_cast<const SafetensorsFile*>(this)->find(name));
  }
};

// `name` is used in error messages (usually the file path).
Expected<SafetensorsFile> decodeSafetensors(std::span<const uint8_t> bytes, std::string_view name);
Expected<SafetensorsFile> readSafetensors(const std::string& path);

// The safetensors dtype string for an element type ("F32"), or an error if it has none.
Expected<std::string> safetensorsDtypeFor(ElementType type);
// Tensors are laid out in the given order; names must be unique and non-empty.
Expected<std::string> encodeSafetensors(const SafetensorsFile& file);
// Writes atomically (temporary file + rename).
Status writeSafetensors(const std::string& path, const SafetensorsFile& file);

}  // namespace wf
