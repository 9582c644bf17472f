// `warpforge inspect`: functions with their signatures, and how often each op occurs.
#include <iomanip>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "ir/verifier.h"
#include "runtime/file_io.h"
#include "stablehlo/parser.h"

namespace wf::cli {
namespace {

using json = nlohmann::json;

// Counts the ops nested in `op`'s regions (not `op` itself), by name.
int64_t countNested(const Operation& op, std::map<std::string, int64_t>& counts) {
  int64_t total = 0;
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        ++counts[inner->name()];
        total += 1 + countNested(*inner, counts);
      }
  return total;
}

}  // namespace

int runInspect(const InspectOptions& options) {
  auto text = readFileBytes(options.file);
  if (!text) return reportStatus(text.status());

  json functions = json::array();
  std::map<std::string, int64_t> counts;
  std::vector<std::string> verifyMessages;
  std::vector<SourceChunk> chunks = splitInputFile(*text);
  for (const SourceChunk& chunk : chunks) {
    ParseOptions parseOptions;
    parseOptions.fileName = options.file;
    parseOptions.firstLine = chunk.firstLine;
    auto module = parseModule(chunk.text, parseOptions);
    if (!module) return reportStatus(module.status());
    if (Status s = verifyModule(*module); !s.isOk()) verifyMessages.push_back(s.message());
    for (const auto& op : module->operations()) {
      if (op->code() != OpCode::FuncFunc) {
        ++counts[op->name()];
        countNested(*op, counts);
        continue;
      }
      FuncOp fn(op.get());
      std::map<std::string, int64_t> own;
      int64_t n = countNested(*op, own);
      for (const auto& [name, c] : own) counts[name] += c;
      functions.push_back({{"name", std::string(fn.symName())},
                           {"visibility", fn.isPublic() ? "public" : "private"},
                           {"signature", fn.functionType().toString()},
                           {"line", op->location().line},
                           {"ops", n}});
    }
  }

  int64_t total = 0;
  for (const auto& [name, c] : counts) total += c;
  if (options.json) {
    json out{{"file", options.file},
             {"functions", functions},
             {"op_counts", counts},
             {"total_ops", total},
             {"verify", verifyMessages.empty() ? json("ok") : json(verifyMessages)}};
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << options.file << ": " << functions.size() << " function" << (functions.size() == 1 ? "" : "s");
  if (chunks.size() > 1) std::cout << " in " << chunks.size() << " chunks";
  std::cout << "\n";
  for (const json& f : functions)
    std::cout << "  @" << f["name"].get<std::string>() << " (" << f["visibility"].get<std::string>() << ", line "
              << f["line"].get<int>() << ", " << f["ops"].get<int64_t>() << " ops): " << f["signature"].get<std::string>()
              << "\n";
  std::cout << "ops:\n";
  size_t width = 0;
  for (const auto& [name, c] : counts) width = std::max(width, name.size());
  for (const auto& [name, c] : counts)
    std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << name << "  " << c << "\n";
  std::cout << "total: " << total << " ops\n";
  if (verifyMessages.empty()) {
    std::cout << "verifier: ok\n";
  } else {
    for (const std::string& m : verifyMessages) std::cout << "verifier: " << m << "\n";
  }
  return kExitOk;
}

}  // namespace wf::cli
