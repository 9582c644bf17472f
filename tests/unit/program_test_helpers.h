// Parsing and running programs written as MLIR text in tests (the autodiff and attention tests).
#pragma once

#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf::programtest {

// Parses `text` (errors name `fileName`) and verifies the module.
inline Expected<Module> parseAndVerify(const std::string& text, const std::string& fileName = "test.mlir") {
  ParseOptions options;
  options.fileName = fileName;
  auto m = parseModule(text, options);
  if (!m) return m.status();
  WF_RETURN_IF_ERROR(verifyModule(*m));
  return std::move(*m);
}

// Runs @name of `m` on copies of `args` in the interpreter.
inline Expected<std::vector<Literal>> run(const Module& m, const std::string& name, const std::vector<Literal>& args) {
  EvalContext ctx;
  ctx.module = &m;
  const Operation* f = m.lookupFunction(name);
  if (!f) return notFound("no function @" + name);
  std::vector<Literal> copies;
  for (const Literal& a : args) copies.push_back(a.clone());
  return Interpreter::callFunction(*f, std::move(copies), ctx);
}

}  // namespace wf::programtest
