// Parser for MLIR text as StableHLO producers print it (JAX, torch-mlir, torch_xla, the
// StableHLO repository): pretty and generic op forms, func/call/return, nested regions,
// every StableHLO attribute, dense/dense_resource literals, locations and aliases.
// Every error is "file:line:col: message".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

struct ParseOptions {
  std::string fileName;  // used in locations and error messages
  int firstLine = 1;     // line number of the text's first line (for split files)
  // Largest constant (dense literal) the parser materialises, in elements; bigger ones are
  // rejected with an error rather than allocated.
  int64_t maxConstantElements = int64_t{1} << 30;
};

Expected<Module> parseModule(std::string_view text, const ParseOptions& options = {});

// A file split at lines that are exactly "// -----" (mlir-opt's -split-input-file).
struct SourceChunk {
  std::string_view text;
  int firstLine = 1;
};
std::vector<SourceChunk> splitInputFile(std::string_view text);

}  // namespace wf
