// NumPy .npy files (format versions 1.0, 2.0 and 3.0) to and from Literals.
//
// dtype mapping (little-endian on disk; big-endian files are byte-swapped on read):
//   bool '|b1'  int8..int64 '|i1' '<i2' '<i4' '<i8'  uint8..uint64 '|u1' '<u2' '<u4' '<u8'
//   float16 '<f2'  float32 '<f4'  float64 '<f8'  complex64 '<c8'  complex128 '<c16'
//   bfloat16: ml_dtypes saves it as raw void '<V2', which is read as bf16 (or as the expected
//   16-bit type when one is given); f8 types are saved as '|V1' and read back only when the
//   caller names the expected element type, since one byte of void says nothing about the format.
//   i2/i4 and ui2/ui4 are written as int8/uint8 and read back from them when expected.
// Fortran-order arrays are transposed to row-major on read; writes are always C order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ir/literal.h"
#include "support/status.h"

namespace wf {

// `expected`: the element type the caller needs (for example a function argument's type). It
// resolves raw void dtypes, and a file whose dtype does not match it is an error.
// `name` is used in error messages (usually the file path).
Expected<Literal> decodeNpy(std::span<const uint8_t> bytes, std::string_view name,
                            std::optional<ElementType> expected = std::nullopt);
Expected<Literal> readNpy(const std::string& path, std::optional<ElementType> expected = std::nullopt);

// The numpy dtype string ('<f4') WarpForge writes for an element type.
Expected<std::string> npyDescrFor(ElementType type);
Expected<std::string> encodeNpy(const Literal& value);
// Writes atomically: to a temporary file beside `path`, then renamed.
Status writeNpy(const std::string& path, const Literal& value);

}  // namespace wf
