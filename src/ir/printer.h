// Prints IR as MLIR text in the generic op form, which parseModule reads back to an
// identical module (the round-trip property the tests check).
#pragma once

#include <string>

#include "ir/ir.h"

namespace wf {

struct PrintOptions {
  bool printLocations = false;  // emit loc("file":line:col) after each op
};

std::string printModule(const Module& module, const PrintOptions& options = {});
std::string printOperation(const Operation& op, const PrintOptions& options = {});
std::string printAttribute(const Attribute& attr);
// Deep structural equality of two modules (ops, types, attributes, regions, SSA use-def),
// ignoring locations and value names. On mismatch, `why` says where.
bool modulesEquivalent(const Module& a, const Module& b, std::string* why = nullptr);

}  // namespace wf
