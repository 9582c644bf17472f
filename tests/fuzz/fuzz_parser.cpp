// libFuzzer target: the parser must return a value or an error for any input, never crash,
// hang, leak or trip a sanitizer.  Seed it with the StableHLO interpreter tests:
//   fuzz_parser -max_len=65536 corpus/ ../shared/stablehlo/interpret
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "stablehlo/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  wf::ParseOptions options;
  options.fileName = "fuzz.mlir";
  // Keep constants small so that the fuzzer explores syntax rather than allocation limits.
  options.maxConstantElements = int64_t{1} << 20;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  wf::Expected<wf::Module> module = wf::parseModule(text, options);
  if (!module.hasValue() && module.status().message().empty()) __builtin_trap();
  // Split files are parsed chunk by chunk in practice; exercise that path too.
  std::vector<wf::SourceChunk> chunks = wf::splitInputFile(text);
  if (chunks.size() < 2) return 0;
  for (const wf::SourceChunk& chunk : chunks) {
    options.firstLine = chunk.firstLine;
    (void)wf::parseModule(chunk.text, options);
  }
  return 0;
}
