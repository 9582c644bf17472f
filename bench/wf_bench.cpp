// wf_bench: times one StableHLO function on the CPU backend, in process.
//
//   wf_bench FILE.mlir [--entry NAME] [--iters N] [--warmup W] [--input I=PATH.npy]...
//            [--int-max M] [--profile]
//
// Warm-up is at least W runs and at least 250 ms. Arguments without an --input get
// deterministic random values: floats uniform in [-1, 1), integers uniform in [0, M) (default
// M = 100, e.g. token ids), booleans random. Prints one JSON
// line: {"median_ms", "p10_ms", "p90_ms", "min_ms", "iters"}. With --profile the entry function's
// top-level ops are run one by one (nested regions as usual) and the time per op name is
// printed to stderr, largest first. The thread count is WARPFORGE_NUM_THREADS (see
// src/support/thread_pool.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "eval/interpreter.h"
#include "ir/verifier.h"
#include "runtime/file_io.h"
#include "runtime/npy.h"
#include "stablehlo/parser.h"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "wf_bench: %s\n", msg.c_str());
  std::exit(2);
}

wf::Literal randomLiteral(const wf::Type& t, std::mt19937_64& rng, int64_t intMax) {
  if (!t.isTensor() || !t.hasStaticShape()) die("argument of type " + t.toString() + " needs an --input");
  wf::Literal l = wf::Literal::zeros(t);
  wf::ElementType et = t.elementType();
  int64_t n = l.numElements();
  if (et == wf::ElementType::kF32) {
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    float* p = l.dataAs<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = u(rng);
  } else if (wf::isFloat(et)) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int64_t i = 0; i < n; ++i) l.setDouble(i, u(rng));
  } else if (et == wf::ElementType::kI1) {
    for (int64_t i = 0; i < n; ++i) l.setInt(i, static_cast<int64_t>(rng() & 1));
  } else {
    std::uniform_int_distribution<int64_t> u(0, std::max<int64_t>(intMax - 1, 0));
    for (int64_t i = 0; i < n; ++i) l.setInt(i, u(rng));
  }
  return l;
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  double f = pos - static_cast<double>(lo);
  return v[lo] * (1 - f) + v[hi] * f;
}

// Runs the top-level block of `func` op by op, adding each op's time to `perOp`.
void profiledRun(const wf::Operation& func, const std::vector<wf::Literal>& args, wf::EvalContext& ctx,
                 std::map<std::string, std::pair<double, int64_t>>& perOp) {
  wf::FuncOp fn(&func);
  const wf::Block& body = fn.body();
  wf::ValueScope scope(nullptr);
  for (size_t i = 0; i < args.size(); ++i) scope.bind(body.argument(i), args[i]);
  const wf::KernelRegistry& registry = wf::KernelRegistry::instance();
  std::vector<wf::Literal> operands;
  for (const auto& opPtr : body.operations()) {
    const wf::Operation& op = *opPtr;
    if (op.code() == wf::OpCode::Return || op.code() == wf::OpCode::FuncReturn) break;
    operands.clear();
    for (const wf::Value* v : op.operands()) {
      const wf::Literal* l = scope.lookup(v);
      if (!l) die(op.describe() + ": operand has no value");
      operands.push_back(*l);
    }
    const wf::Kernel* kernel = registry.find(op.code());
    if (!kernel) die(op.describe() + ": no CPU kernel");
    ctx.scope = &scope;
    auto start = Clock::now();
    auto results = (*kernel)(op, operands, ctx);
    double t = ms(Clock::now() - start);
    ctx.scope = nullptr;
    if (!results) die(results.status().message());
    std::string key = op.name();
    if (op.code() == wf::OpCode::Convolution || op.code() == wf::OpCode::DotGeneral) {
      key += " " + op.result(0)->type().toString();
    }
    auto& slot = perOp[key];
    slot.first += t;
    slot.second += 1;
    for (size_t i = 0; i < results->size(); ++i) scope.bind(op.result(i), std::move((*results)[i]));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, entry;
  int iters = 20, warmup = 3;
  int64_t intMax = 100;
  bool profile = false;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--entry") entry = next();
    else if (a == "--iters") iters = std::max(1, std::atoi(next().c_str()));
    else if (a == "--warmup") warmup = std::max(0, std::atoi(next().c_str()));
    else if (a == "--input") inputs.push_back(next());
    else if (a == "--int-max") intMax = std::atoll(next().c_str());
    else if (a == "--profile") profile = true;
    else if (!a.empty() && a[0] == '-') die("unknown option " + a);
    else file = a;
  }
  if (file.empty()) die("usage: wf_bench FILE.mlir [--entry NAME] [--iters N] [--warmup W] [--input I=PATH.npy]");

  auto text = wf::readFileBytes(file);
  if (!text) die(text.status().message());
  wf::ParseOptions po;
  po.fileName = file;
  auto module = wf::parseModule(*text, po);
  if (!module) die(module.status().message());
  if (auto s = wf::verifyModule(*module); !s.isOk()) die(s.message());
  const wf::Operation* func = module->lookupFunction(entry.empty() ? "main" : entry);
  if (!func) die("no function @" + (entry.empty() ? std::string("main") : entry));
  wf::FuncOp fn(func);

  size_t nargs = fn.body().numArguments();
  std::vector<wf::Literal> args(nargs);
  std::vector<bool> given(nargs, false);
  for (const std::string& spec : inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) die("--input wants I=PATH.npy");
    size_t idx = static_cast<size_t>(std::atoll(spec.substr(0, eq).c_str()));
    if (idx >= nargs) die("--input " + spec + ": no such argument");
    auto l = wf::readNpy(spec.substr(eq + 1));
    if (!l) die(l.status().message());
    args[idx] = std::move(*l);
    given[idx] = true;
  }
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < nargs; ++i)
    if (!given[i]) args[i] = randomLiteral(fn.body().argument(i)->type(), rng, intMax);

  wf::EvalContext ctx;
  ctx.module = &*module;
  auto once = [&]() {
    auto r = wf::Interpreter::callFunction(*func, args, ctx);
    if (!r) die(r.status().message());
  };
  // Warm up for `warmup` runs and at least a quarter second: worker threads that libraries
  // start spinning at load time (OpenBLAS) would otherwise share the cores with the first runs.
  auto warmStart = Clock::now();
  for (int i = 0; i < warmup || ms(Clock::now() - warmStart) < 250.0; ++i) once();
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    auto start = Clock::now();
    once();
    times.push_back(ms(Clock::now() - start));
  }
  std::printf("{\"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"min_ms\": %.4f, \"iters\": %d}\n",
              percentile(times, 0.5), percentile(times, 0.1), percentile(times, 0.9),
              *std::min_element(times.begin(), times.end()), iters);

  if (profile) {
    std::map<std::string, std::pair<double, int64_t>> perOp;
    int rounds = std::max(1, std::min(iters, 5));
    for (int i = 0; i < rounds; ++i) profiledRun(*func, args, ctx, perOp);
    std::vector<std::pair<std::string, std::pair<double, int64_t>>> rows(perOp.begin(), perOp.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    double total = 0;
    for (const auto& r : rows) total += r.second.first;
    std::fprintf(stderr, "%10s %6s %6s  %s\n", "ms/run", "%", "count", "op");
    for (const auto& r : rows)
      std::fprintf(stderr, "%10.3f %6.1f %6lld  %s\n", r.second.first / rounds, 100.0 * r.second.first / total,
                   static_cast<long long>(r.second.second / rounds), r.first.c_str());
    std::fprintf(stderr, "%10.3f  total (op by op)\n", total / rounds);
  }
  return 0;
}
