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

// Whether `dot` is one to merge (merge_products.h): a small result, or a product of at least as
// many rows as the weight has inputs (rhs elements <= result elements, each over the free dim's
// width).
bool worthMerging(const Operation& dot, const MergeProductsOptions& options) {
  const int64_t result = dot.result(0)->type().numElements();
  return result <= options.maxResultElements ||
         (options.mergeManyRows && dot.operand(1)->type().numElements() <= result);
}

}  // namespace

Expected<int> mergeSiblingProducts(Operation& function, const MergeProductsOptions& options) {
  WF_ASSIGN_OR_RETURN(Block* bodyPtr, functionBody(function, "mergeSiblingProducts"));
  Block& body = *bodyPtr;
  std::vector<Siblings> groups;
  std::unordered_map<const Operation*, std::vector<Operation*>> chains;  // each product's weight chain
  for (const auto& op : body.operations()) {
    const std::optional<int64_t> freeDim = rhsFreeDim(*op);
    if (!freeDim || !worthMerging(*op, options)) continue;
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

namespace {

// One slice of a merged product and the bias add around it (mergeBiasAddsOfSlices).
struct SlicedBiasAdd {
  Operation* slice = nullptr;
  int64_t start = 0, limit = 0;  // along the last dim
  Operation* widen = nullptr;
  Operation* add = nullptr;
  Value* bias = nullptr;              // b_i, [limit - start]
  Operation* broadcast = nullptr;     // of b_i, where the add is its only reader (it goes too)
  std::vector<Operation*> reshapes;   // after the add, in order
  Operation* narrow = nullptr;
};

// `slice`'s chain up to its narrowing convert, where it has the form of mergeBiasAddsOfSlices.
std::optional<SlicedBiasAdd> slicedBiasAdd(const Readers& readers, const Operation& slice, const Type& product) {
  const int64_t rank = product.rank();
  AttrReader attrs(slice);
  Expected<std::vector<int64_t>> start = attrs.ints("start_indices"), limit = attrs.ints("limit_indices"),
                                 strides = attrs.ints("strides");
  if (!start || !limit || !strides || static_cast<int64_t>(start->size()) != rank) return std::nullopt;
  for (int64_t d = 0; d < rank; ++d) {
    const auto i = static_cast<size_t>(d);
    if ((*strides)[i] != 1 || (d + 1 < rank && ((*start)[i] != 0 || (*limit)[i] != product.dim(d))))
      return std::nullopt;
  }
  SlicedBiasAdd s;
  s.slice = const_cast<Operation*>(&slice);
  s.start = start->back();
  s.limit = limit->back();
  s.widen = const_cast<Operation*>(onlyReader(readers, slice.result(0)));
  if (!s.widen || s.widen->code() != OpCode::Convert) return std::nullopt;
  const ElementType wide = s.widen->result(0)->type().elementType();
  if (!isFloat(wide) || bitWidth(wide) <= bitWidth(product.elementType())) return std::nullopt;
  s.add = const_cast<Operation*>(onlyReader(readers, s.widen->result(0)));
  if (!s.add || s.add->code() != OpCode::Add || s.add->numOperands() != 2) return std::nullopt;
  const Value* other = s.add->operand(0) == s.widen->result(0) ? s.add->operand(1) : s.add->operand(0);
  const Operation* broadcast = other->definingOp();
  if (other == s.widen->result(0) || !broadcast || broadcast->code() != OpCode::BroadcastInDim) return std::nullopt;
  Expected<std::vector<int64_t>> dims = AttrReader(*broadcast).ints("broadcast_dimensions");
  s.bias = broadcast->operand(0);
  if (!dims || *dims != std::vector<int64_t>{rank - 1} ||
      s.bias->type().shape() != std::vector<int64_t>{s.limit - s.start} || s.bias->type().elementType() != wide)
    return std::nullopt;
  if (onlyReader(readers, other) == s.add) s.broadcast = const_cast<Operation*>(broadcast);
  const Operation* at = s.add;
  for (;;) {
    const Operation* next = onlyReader(readers, at->result(0));
    if (!next) return std::nullopt;
    if (next->code() == OpCode::Reshape) {
      s.reshapes.push_back(const_cast<Operation*>(next));
      at = next;
      continue;
    }
    if (next->code() != OpCode::Convert || next->result(0)->type().elementType() != product.elementType())
      return std::nullopt;
    s.narrow = const_cast<Operation*>(next);
    return s;
  }
}

// A product whose slices' bias adds all merge, with the op after which the new ops go: the last
// of the product and the biases' definitions.
struct BiasMerge {
  Operation* product = nullptr;
  std::vector<SlicedBiasAdd> parts;  // by start
  const Operation* insertAfter = nullptr;
};

std::optional<BiasMerge> biasMerge(const Readers& readers, const std::unordered_map<const Operation*, size_t>& position,
                                   Operation& product) {
  if (product.code() != OpCode::DotGeneral || product.numResults() != 1) return std::nullopt;
  const Type& type = product.result(0)->type();
  if ((type.elementType() != ElementType::kBF16 && type.elementType() != ElementType::kF16) ||
      !type.hasStaticShape() || type.rank() < 1)
    return std::nullopt;
  const std::vector<const Operation*>& slices = readersOf(readers, product.result(0));
  if (slices.size() < 2) return std::nullopt;
  BiasMerge m;
  m.product = &product;
  m.insertAfter = &product;
  for (const Operation* r : slices) {
    std::optional<SlicedBiasAdd> part;
    if (r->code() == OpCode::Slice) part = slicedBiasAdd(readers, *r, type);
    if (!part) return std::nullopt;
    if (const Operation* def = part->bias->definingOp(); def && position.at(def) > position.at(m.insertAfter))
      m.insertAfter = def;
    m.parts.push_back(std::move(*part));
  }
  std::sort(m.parts.begin(), m.parts.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  int64_t covered = 0;
  const ElementType wide = m.parts.front().widen->result(0)->type().elementType();
  for (const SlicedBiasAdd& p : m.parts) {
    if (p.start != covered || p.widen->result(0)->type().elementType() != wide) return std::nullopt;
    covered = p.limit;
  }
  if (covered != type.shape().back()) return std::nullopt;
  // Every narrowed value is first read after the new ops.
  for (const SlicedBiasAdd& p : m.parts)
    for (const Operation* reader : readersOf(readers, p.narrow->result(0)))
      if (position.at(reader) <= position.at(m.insertAfter)) return std::nullopt;
  return m;
}

}  // namespace

Expected<int> mergeBiasAddsOfSlices(Operation& function) {
  WF_ASSIGN_OR_RETURN(Block* bodyPtr, functionBody(function, "mergeBiasAddsOfSlices"));
  Block& body = *bodyPtr;
  const Readers readers = readersIn(body);
  std::unordered_map<const Operation*, size_t> position;
  for (size_t i = 0; i < body.operations().size(); ++i) position[body.operations()[i].get()] = i;
  std::vector<BiasMerge> merges;
  for (const auto& op : body.operations())
    if (std::optional<BiasMerge> m = biasMerge(readers, position, *op)) merges.push_back(std::move(*m));
  if (merges.empty()) return 0;

  std::unordered_map<const Operation*, std::vector<const BiasMerge*>> after;
  std::unordered_set<const Operation*> removed;
  int gone = 0;
  for (const BiasMerge& m : merges) {
    after[m.insertAfter].push_back(&m);
    for (const SlicedBiasAdd& p : m.parts) {
      removed.insert({p.slice, p.widen, p.add, p.narrow});
      if (p.broadcast) removed.insert(p.broadcast);
      removed.insert(p.reshapes.begin(), p.reshapes.end());
    }
    gone += static_cast<int>(m.parts.size()) - 1;
  }
  // The block is rebuilt in order, the merged add right after its insertion point.
  std::vector<std::unique_ptr<Operation>> ops = std::move(body.mutableOperations());
  body.mutableOperations().clear();
  std::unordered_map<const Value*, Value*> replacement;
  std::vector<std::unique_ptr<Operation>> dropped;
  for (auto& op : ops) {
    const Operation* current = op.get();
    if (removed.count(current)) {
      dropped.push_back(std::move(op));
      continue;
    }
    body.append(std::move(op));
    auto it = after.find(current);
    if (it == after.end()) continue;
    for (const BiasMerge* m : it->second) {
      const Type& type = m->product->result(0)->type();
      const ElementType wide = m->parts.front().widen->result(0)->type().elementType();
      OpBuilder b(&body, m->product->location());
      // Biases widened from one type are concatenated in it and widened once (the bias epilogue
      // reads a bias of the product's type).
      std::vector<Value*> biases;
      bool widenedFromOne = true;
      for (const SlicedBiasAdd& p : m->parts) {
        const Operation* def = p.bias->definingOp();
        widenedFromOne = widenedFromOne && def && def->code() == OpCode::Convert &&
                         def->operand(0)->type().elementType() ==
                             m->parts.front().bias->definingOp()->operand(0)->type().elementType();
      }
      for (const SlicedBiasAdd& p : m->parts)
        biases.push_back(widenedFromOne ? p.bias->definingOp()->operand(0) : p.bias);
      Value* bias = b.concatenate(biases, 0);
      if (widenedFromOne) bias = b.convert(bias, wide);
      Value* widened = b.convert(m->product->result(0), wide);
      Value* broadcast = b.broadcastInDim(bias, Type::tensor(type.shape(), wide), {type.rank() - 1});
      Value* narrowed = b.convert(b.add(widened, broadcast), type.elementType());
      std::vector<int64_t> start(static_cast<size_t>(type.rank()), 0), limit = type.shape(),
          strides(static_cast<size_t>(type.rank()), 1);
      for (const SlicedBiasAdd& p : m->parts) {
        start.back() = p.start;
        limit.back() = p.limit;
        Value* x = b.slice(narrowed, start, limit, strides);
        for (const Operation* r : p.reshapes) x = b.reshape(x, r->result(0)->type().shape());
        replacement[p.narrow->result(0)] = x;
      }
      if (!b.ok()) return b.status().withContext(m->product->describe() + ": merging the bias adds of its slices");
    }
  }
  replaceUses(body, replacement);
  return gone;
}

}  // namespace wf
