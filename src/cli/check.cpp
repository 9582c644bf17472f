// `warpforge check`: runs StableHLO interpreter test files and reports their check.* outcomes.
//
// Each file is split at `// -----`; every chunk is parsed and verified on its own, and every
// public function without arguments is run. Each such function is one result: pass, fail (a
// check did not hold), error (parse/verify/runtime error) or unsupported (it used a check
// WarpForge cannot evaluate).
//
// By default each file runs in a child process that streams its results back through a pipe,
// so that a crash or a hang in one kernel costs one function's result, not the whole run: the
// parent notes which function was running, records it as an error, and starts a new child at
// the next function.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "eval/interpreter.h"  // CheckSink
#include "cli/cli.h"
#include "ir/verifier.h"
#include "runtime/file_io.h"
#include "stablehlo/parser.h"

namespace wf::cli {
namespace {

using json = nlohmann::json;

struct Result {
  std::string file;
  int line = 0;
  std::string function;  // without '@'; empty for a chunk or file that yielded no function
  std::string status;    // pass | fail | error | unsupported
  std::string message;
  bool inputError = false;  // unreadable file, parse or verify error (exit code 2)
};

json toJson(const Result& r) {
  return json{{"file", r.file}, {"line", r.line}, {"function", r.function}, {"status", r.status}, {"message", r.message}};
}

Result fromJson(const json& j) {
  Result r;
  r.file = j.value("file", "");
  r.line = j.value("line", 0);
  r.function = j.value("function", "");
  r.status = j.value("status", "error");
  r.message = j.value("message", "");
  r.inputError = j.value("input_error", false);
  return r;
}

// Where results of one file go, in order. `begin` is called before a function runs, so that a
// crash can be attributed to it.
struct ResultWriter {
  std::function<void(size_t index, const std::string& function, int line)> begin;
  std::function<void(size_t index, const Result& result)> finish;
};

// Collects the outcome of the check ops of one function run.
class FunctionChecks : public CheckSink {
 public:
  void report(const Operation& op, bool passed, const std::string& message) override {
    if (passed) return;
    if (failures_++ == 0) {
      firstFailure_ = message;
      firstFailureLine_ = op.location().line;
    }
  }
  void unsupported(const Operation& op, const std::string& message) override {
    if (unsupported_.empty()) {
      unsupported_ = message;
      unsupportedLine_ = op.location().line;
    }
  }

  int failures_ = 0;
  std::string firstFailure_;
  int firstFailureLine_ = 0;
  std::string unsupported_;
  int unsupportedLine_ = 0;
};

Result runFunction(const std::string& file, const Module& module, FuncOp fn, const CompileOptions& compile) {
  Result r;
  r.file = file;
  r.function = std::string(fn.symName());
  r.line = fn.op()->location().line;
  FunctionChecks checks;
  std::optional<Status> error;
  try {
    // Through the CPU backend, as `run` does: check.* ops report to `checks`.
    auto executable = makeCpuBackend()->compile(module, *fn.op(), compile);
    if (!executable) {
      error = executable.status();
    } else {
      (*executable)->setCheckSink(&checks);
      auto results = (*executable)->run({});
      if (!results) error = results.status();
    }
  } catch (const std::exception& e) {
    error = internalError(std::string("uncaught exception: ") + e.what());
  }
  if (error) {
    r.status = "error";
    r.message = error->message();
  } else if (checks.failures_ > 0) {
    r.status = "fail";
    r.line = checks.firstFailureLine_ ? checks.firstFailureLine_ : r.line;
    r.message = checks.firstFailure_;
    if (checks.failures_ > 1) r.message += " (and " + std::to_string(checks.failures_ - 1) + " more failing checks)";
  } else if (!checks.unsupported_.empty()) {
    r.status = "unsupported";
    r.line = checks.unsupportedLine_ ? checks.unsupportedLine_ : r.line;
    r.message = checks.unsupported_;
  } else {
    r.status = "pass";
  }
  return r;
}

bool isRunnable(FuncOp fn) { return fn.isPublic() && fn.body().numArguments() == 0; }

struct NamedLine {
  std::string name;
  int line;
};

// The public argument-less functions of a chunk that did not parse, found textually so that
// each can be reported as an error.
std::vector<NamedLine> scanFunctionNames(std::string_view text, int firstLine) {
  static const std::regex re(R"(func\.func\s+(?:(public|private|nested)\s+)?@([A-Za-z0-9_$.\-]+)\s*\(\s*\))");
  std::vector<NamedLine> out;
  std::string s(text);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].matched && (*it)[1].str() != "public") continue;
    int line = firstLine + static_cast<int>(std::count(s.begin(), s.begin() + it->position(0), '\n'));
    out.push_back({(*it)[2].str(), line});
  }
  return out;
}

// Runs the units of one file from unit `start` on; a unit is one function, or a chunk or file
// that failed before any function could be named.
void checkFile(const std::string& path, size_t start, const ResultWriter& out, const CompileOptions& compile) {
  size_t index = 0;
  auto emit = [&](const Result& r) {
    if (index >= start) out.finish(index, r);
    ++index;
  };
  auto inputError = [&](int line, const std::string& function, const std::string& message) {
    Result r;
    r.file = path;
    r.line = line;
    r.function = function;
    r.status = "error";
    r.message = message;
    r.inputError = true;
    emit(r);
  };

  Expected<std::string> text = readFileBytes(path);
  if (!text) return inputError(0, "", text.status().message());

  for (const SourceChunk& chunk : splitInputFile(*text)) {
    ParseOptions options;
    options.fileName = path;
    options.firstLine = chunk.firstLine;
    Expected<Module> module = [&]() -> Expected<Module> {
      try {
        return parseModule(chunk.text, options);
      } catch (const std::exception& e) {
        return internalError(path + ":" + std::to_string(chunk.firstLine) + ": parser threw: " + e.what());
      }
    }();
    if (!module) {
      std::vector<NamedLine> names = scanFunctionNames(chunk.text, chunk.firstLine);
      if (names.empty()) inputError(chunk.firstLine, "", module.status().message());
      for (const NamedLine& n : names) inputError(n.line, n.name, module.status().message());
      continue;
    }
    std::vector<FuncOp> runnable;
    for (FuncOp fn : module->functions())
      if (isRunnable(fn)) runnable.push_back(fn);
    Status verified = verifyModule(*module);
    if (!verified.isOk()) {
      if (runnable.empty()) inputError(chunk.firstLine, "", verified.message());
      for (FuncOp fn : runnable) inputError(fn.op()->location().line, std::string(fn.symName()), verified.message());
      continue;
    }
    for (FuncOp fn : runnable) {
      if (index < start) {
        ++index;
        continue;
      }
      out.begin(index, std::string(fn.symName()), fn.op()->location().line);
      emit(runFunction(path, *module, fn, compile));
    }
  }
}

// --- isolation -------------------------------------------------------------------------------

bool writeAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void childMain(const std::string& path, size_t start, int fd, bool quietStdout) {
  // Keep stdout clean for the parent's JSON: anything a program prints goes to stderr.
  if (quietStdout) ::dup2(2, 1);
  ResultWriter writer;
  writer.begin = [fd](size_t index, const std::string& function, int line) {
    writeAll(fd, json{{"event", "begin"}, {"index", index}, {"function", function}, {"line", line}}.dump() + "\n");
  };
  writer.finish = [fd](size_t index, const Result& r) {
    json j = toJson(r);
    j["event"] = "result";
    j["index"] = index;
    j["input_error"] = r.inputError;
    writeAll(fd, j.dump() + "\n");
  };
  int code = 0;
  try {
    checkFile(path, start, writer, CompileOptions{});
  } catch (...) {
    code = 3;
  }
  std::cout.flush();
  std::fflush(stdout);
  ::close(fd);
  ::_exit(code);
}

std::string describeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "crashed with signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

// Runs one file in child processes, restarting after a crash or timeout at the next function.
std::vector<Result> checkFileIsolated(const std::string& path, const CheckOptions& options) {
  std::vector<Result> results;
  size_t start = 0;
  while (true) {
    int fds[2];
    if (::pipe(fds) != 0) {
      results.push_back({path, 0, "", "error", std::string("cannot create pipe: ") + std::strerror(errno), false});
      return results;
    }
    std::cout.flush();
    std::cerr.flush();
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      results.push_back({path, 0, "", "error", std::string("cannot fork: ") + std::strerror(errno), false});
      return results;
    }
    if (pid == 0) {
      ::close(fds[0]);
      childMain(path, start, fds[1], options.json);
    }
    ::close(fds[1]);

    std::optional<json> running;  // the `begin` event of the function now running
    std::string buffer;
    bool timedOut = false;
    auto deadline = std::chrono::steady_clock::now();
    auto resetDeadline = [&] {
      deadline = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(static_cast<int64_t>(options.timeoutSeconds * 1000));
    };
    resetDeadline();
    while (true) {
      int waitMs = -1;
      if (options.timeoutSeconds > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
          timedOut = true;
          break;
        }
        waitMs = static_cast<int>(std::min<int64_t>(left.count(), 1000));
      }
      pollfd p{fds[0], POLLIN, 0};
      int ready = ::poll(&p, 1, waitMs);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;
      char chunk[65536];
      ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF: the child is done (or died)
      buffer.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        json event = json::parse(buffer.substr(0, nl), nullptr, false);
        buffer.erase(0, nl + 1);
        if (event.is_discarded() || !event.is_object()) continue;
        size_t index = event.value("index", size_t{0});
        if (event.value("event", "") == "begin") {
          running = event;
          resetDeadline();
        } else {
          results.push_back(fromJson(event));
          running.reset();
          start = index + 1;
        }
      }
    }
    if (timedOut) ::kill(pid, SIGKILL);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    bool clean = !timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean) return results;
    std::ostringstream seconds;
    seconds << options.timeoutSeconds;
    std::string why = timedOut ? "timed out after " + seconds.str() + " s" : describeWaitStatus(status);
    if (!running) {
      // Died outside any function (while parsing, say): nothing to resume from.
      results.push_back({path, 0, "", "error", "warpforge " + why + " while reading this file", false});
      return results;
    }
    Result r;
    r.file = path;
    r.function = running->value("function", "");
    r.line = running->value("line", 0);
    r.status = "error";
    r.message = "function " + why;
    results.push_back(r);
    start = running->value("index", size_t{0}) + 1;
  }
}

std::vector<Result> checkFileInProcess(const std::string& path, const CompileOptions& compile) {
  std::vector<Result> results;
  ResultWriter writer;
  writer.begin = [](size_t, const std::string&, int) {};
  writer.finish = [&](size_t, const Result& r) { results.push_back(r); };
  checkFile(path, 0, writer, compile);
  return results;
}

}  // namespace

int runCheck(const CheckOptions& options) {
  auto device = resolveDevice(options.device);
  if (!device) {
    printError(device.status().message());
    return kExitUsage;
  }
  if (device->kind != "cpu") {
    printError("--device " + device->toString() + ": check evaluates check.* ops on the cpu only; use run, "
               "validate or bench on other devices");
    return kExitUsage;
  }
  std::vector<Result> all;
  for (const std::string& file : options.files) {
    // The ranks of a job run every file in this process, where they joined the job (a child
    // process per file would need a job of its own per file).
    CompileOptions compile;
    compile.job = options.job;
    std::vector<Result> results =
        options.isolate && !options.job ? checkFileIsolated(file, options) : checkFileInProcess(file, compile);
    all.insert(all.end(), results.begin(), results.end());
  }

  int passed = 0, failed = 0, skipped = 0;
  bool inputError = false;
  for (const Result& r : all) {
    if (r.status == "pass") ++passed;
    else if (r.status == "unsupported") ++skipped;
    else ++failed;
    inputError |= r.inputError;
  }

  if (options.json) {
    json array = json::array();
    for (const Result& r : all) array.push_back(toJson(r));
    std::cout << array.dump(1) << "\n";
  } else {
    for (const Result& r : all) {
      if (r.status == "pass" && !options.verbose) continue;
      std::string status = r.status == "pass" ? "PASS" : r.status == "fail" ? "FAIL" : r.status == "error" ? "ERROR" : "UNSUPPORTED";
      std::cout << r.file;
      if (r.line > 0) std::cout << ":" << r.line;
      std::cout << ": ";
      if (!r.function.empty()) std::cout << "@" << r.function << ": ";
      std::cout << status;
      if (!r.message.empty()) std::cout << ": " << r.message;
      std::cout << "\n";
    }
    std::cout << passed << " passed, " << failed << " failed";
    if (skipped > 0) std::cout << ", " << skipped << " skipped";
    std::cout << "\n";
  }
  std::cout.flush();
  if (inputError) return kExitUsage;
  return failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace wf::cli
