// Matrix products of one activation by several weights merged into one (merge_products.h).
#include "transforms/merge_products.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/attr_reader.h"
#include "ir/builder.h"

namespace wf {
namespace {

// Appends to `chain` (operands first) the ops of `body` computing `v` from `body`'s arguments
// and constants by transposes, reshapes and conversions; false if `v` is computed otherwise.
bool weightChain(const Value* v, const Block& body, std::vector<Operation*>& chain, int depth = 0) {
  constexpr int kMaxDepth = 8;
  if (v->isBlockArgument()) return v->ownerBlock() == &body;
  Operation* p = v->definingOp();
  if (!p || p->parentBlock() != &body || depth > kMaxDepth) return false;
  const OpCode c = p->code();
  if (c == OpCode::Constant) {
    chain.push_back(p);
    return true;
  }
  if ((c != OpCode::Transpose && c != OpCode::Reshape && c != OpCode::Convert) || p->numOperands() != 1) return false;
  if (!weightChain(p->operand(0), body, chain, depth + 1)) return false;
  chain.push_back(p);
  return true;
}

// The rhs free dim of a dot_general taken by the merge (no batch dims, one rhs free dim), or
// nullopt.
std::optional<int64_t> rhsFreeDim(const Operation& dot) {
  if (dot.code() != OpCode::DotGeneral || dot.numOperands() != 2 || dot.numResults() != 1) return std::nullopt;
  const Type& rhs = dot.operand(1)->type();
  const Type& result = dot.result(0)->type();
  if (!rhs.hasStaticShape() || !result.hasStaticShape() || !dot.operand(0)->type().hasStaticShape()) return std::nullopt;
  AttrReader attrs(dot);
  Expected<const Attribute*> dn = attrs.dialectStruct("dot_dimension_numbers");
  if (!dn || !AttrReader::fieldInts(**dn, "lhs_batching_dimensions").empty() ||
      !AttrReader::fieldInts(**dn, "rhs_batching_dimensions").empty())
    return std::nullopt;
  const std::vector<int64_t> contracting = AttrReader::fieldInts(**dn, "rhs_contracting_dimensions");
  if (static_cast<int64_t>(contracting.size()) + 1 != rhs.rank()) return std::nullopt;
  for (int64_t d = 0; d < rhs.rank(); ++d)
    if (std::find(contracting.begin(), contracting.end(), d) == contracting.end()) return d;
  return std::nullopt;
}

struct Siblings {
  std::vector<Operation*> dots;  // in block order
  int64_t freeDim = 0;
};

// Whether `dot` computes what `group`'s first product does, by another weight.
bool sameProduct(const Operation& dot, int64_t freeDim, const Siblings& group) {
  const Operation& first = *group.dots.front();
  if (freeDim != group.freeDim || dot.operand(0) != first.operand(0) || !(dot.attributes() == first.attributes()) ||
      dot.result(0)->type().elementType() != first.result(0)->type().elementType() ||
      dot.operand(1)->type().elementType() != first.operand(1)->type().elementType())
    return false;
  std::vector<int64_t> a = dot.operand(1)->type().shape(), b = first.operand(1)->type().shape();
  a[static_cast<size_t>(freeDim)] = b[static_cast<size_t>(freeDim)] = 0;
  return a == b;
}

}  // namespace

Expected<int> mergeSiblingProducts(Operation& function, const MergeProductsOptions& options) {
  if (function.code() != OpCode::FuncFunc || function.numRegions() == 0 || function.region(0).empty())
    return invalidArgument("mergeSiblingProducts: not a function with a body");
  Block& body = function.region(0).front();
  std::vector<Siblings> groups;
  std::unordered_map<const Operation*, std::vector<Operation*>> chains;  // each product's weight chain
  for (const auto& op : body.operations()) {
    const std::optional<int64_t> freeDim = rhsFreeDim(*op);
    if (!freeDim || op->result(0)->type().numElements() > options.maxResultElements) continue;
    std::vector<Operation*> chain;
    if (!weightChain(op->operand(1), body, chain)) continue;
    chains[op.get()] = std::move(chain);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Siblings& g) { return sameProduct(*op, *freeDim, g); });
    if (it == groups.end()) groups.push_back({{op.get()}, *freeDim});
    else it->dots.push_back(op.get());
  }
  std::unordered_map<const Operation*, const Siblings*> firstOf;
  std::unordered_set<const Operation*> merged;
  int removed = 0;
  for (const Siblings& g : groups) {
    if (g.dots.size() < 2) continue;
    firstOf[g.dots.front()] = &g;
    merged.insert(g.dots.begin(), g.dots.end());
    removed += static_cast<int>(g.dots.size()) - 1;
  }
  if (removed == 0) return 0;

  // The block is rebuilt in order. At each group's first product, the later products' weight
  // chains are appended (they read arguments and constants alone, so they may move up), then
  // the concatenated weights, the merged product and a slice per original result.
  std::vector<std::unique_ptr<Operation>> ops = std::move(body.mutableOperations());
  body.mutableOperations().clear();
  std::unordered_map<const Operation*, size_t> position;
  for (size_t i = 0; i < ops.size(); ++i) position[ops[i].get()] = i;
  std::unordered_map<const Value*, Value*> replacement;
  std::vector<std::unique_ptr<Operation>> dropped;
  for (auto& op : ops) {
    if (!op) continue;  // moved up into an earlier group's chains
    auto first = firstOf.find(op.get());
    if (first == firstOf.end()) {
      if (merged.count(op.get())) dropped.push_back(std::move(op));
      else body.append(std::move(op));
      continue;
    }
    const Siblings& g = *first->second;
    for (const Operation* dot : g.dots)
      for (Operation* link : chains[dot]) {
        std::unique_ptr<Operation>& slot = ops[position.at(link)];
        if (slot) body.append(std::move(slot));
      }
    const Operation& lead = *g.dots.front();
    OpBuilder b(&body, lead.location());
    std::vector<Value*> weights;
    for (const Operation* dot : g.dots) weights.push_back(dot->operand(1));
    Value* concatenated = b.concatenate(weights, g.freeDim);
    const Type& leadType = lead.result(0)->type();
    std::vector<int64_t> shape = leadType.shape();
    shape.back() = 0;
    for (const Operation* dot : g.dots) shape.back() += dot->result(0)->type().shape().back();
    Value* product = b.create1("stablehlo.dot_general", {lead.operand(0), concatenated}, lead.attributes().entries(),
                               leadType.withShape(shape));
    std::vector<int64_t> start(shape.size(), 0), limit = shape, strides(shape.size(), 1);
    for (const Operation* dot : g.dots) {
      limit.back() = start.back() + dot->result(0)->type().shape().back();
      replacement[dot->result(0)] = b.slice(product, start, limit, strides);
      start.back() = limit.back();
    }
    if (!b.ok()) return b.status().withContext(lead.describe() + ": merging " + std::to_string(g.dots.size()) + " products");
    dropped.push_back(std::move(op));
  }
  replaceUses(body, replacement);
  return removed;
}

}  // namespace wf
