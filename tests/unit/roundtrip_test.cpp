// Round-trip of every interpreter test chunk and JAX sample through the parser and printer:
// parse -> print -> parse -> print must give identical text and equivalent modules, and the
// verifier must accept every chunk (they are all valid programs).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> mlirFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".mlir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Tally {
  int chunks = 0;
  int failures = 0;
};

// Checks one chunk; returns an empty string on success, else what went wrong.
std::string roundTripChunk(std::string_view text, const std::string& name, int firstLine) {
  ParseOptions options;
  options.fileName = name;
  options.firstLine = firstLine;
  Expected<Module> first = parseModule(text, options);
  if (!first) return "parse of the source failed: " + first.status().message();
  Status verified = verifyModule(*first);
  if (!verified.isOk()) return "verifier rejected a valid program: " + verified.message();
  std::string printed = printModule(*first);
  options.fileName = name + " (printed)";
  options.firstLine = 1;
  Expected<Module> second = parseModule(printed, options);
  if (!second) return "parse of the printed text failed: " + second.status().message() + "\n" + printed;
  std::string reprinted = printModule(*second);
  if (printed != reprinted) return "second print differs from the first:\n" + printed + "\n---\n" + reprinted;
  std::string why;
  if (!modulesEquivalent(*first, *second, &why)) return "modules differ after the round trip: " + why + "\n" + printed;
  Status reverified = verifyModule(*second);
  if (!reverified.isOk()) return "verifier rejected the printed program: " + reverified.message();
  return "";
}

Tally roundTripFiles(const std::vector<fs::path>& files) {
  Tally tally;
  for (const fs::path& path : files) {
    std::string text = readFile(path);
    for (const SourceChunk& chunk : splitInputFile(text)) {
      ++tally.chunks;
      std::string problem = roundTripChunk(chunk.text, path.string(), chunk.firstLine);
      if (!problem.empty()) {
        ++tally.failures;
        ADD_FAILURE() << path.string() << ":" << chunk.firstLine << ": " << problem.substr(0, 4000);
      }
    }
  }
  return tally;
}

TEST(RoundTrip, InterpreterTestChunks) {
  auto files = mlirFiles(fs::path(WF_SHARED_DIR) / "stablehlo" / "interpret");
  ASSERT_FALSE(files.empty()) << "no interpreter test files under " << WF_SHARED_DIR;
  Tally tally = roundTripFiles(files);
  EXPECT_GT(tally.chunks, 500);
  std::cout << "interpreter chunks: " << tally.chunks - tally.failures << " of " << tally.chunks
            << " round-trip and verify\n";
}

TEST(RoundTrip, JaxSamples) {
  auto files = mlirFiles(fs::path(WF_SOURCE_DIR) / "tests" / "data" / "jax");
  if (files.empty()) GTEST_SKIP() << "no JAX samples in tests/data/jax yet";
  Tally tally = roundTripFiles(files);
  std::cout << "JAX samples: " << tally.chunks - tally.failures << " of " << tally.chunks
            << " round-trip and verify\n";
}

}  // namespace
}  // namespace wf
