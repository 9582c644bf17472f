// Attention composites reading and writing the projections' layout (attention_layouts.h).
#include "transforms/attention_layouts.h"

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/attr_reader.h"
#include "ir/builder.h"
#include "ir/composites.h"

namespace wf {
namespace {

using Dims = std::vector<int64_t>;
const Dims kSwapSequenceAndHeads = {0, 2, 1, 3};  // its own inverse

bool isHeadTranspose(const Operation* op) {
  if (!op || op->code() != OpCode::Transpose || op->numOperands() != 1) return false;
  Expected<Dims> permutation = AttrReader(*op).ints("permutation");
  return permutation && *permutation == kSwapSequenceAndHeads;
}

// Whether every reader of `v` is `reader`.
bool readOnlyBy(const Readers& readers, const Value* v, const Operation* reader) {
  return onlyReader(readers, v) == reader;
}

// A new decomposition for each of `composites`, built by `build(old decomposition, i, name)` under
// a fresh name starting with `prefix`: all of them first, so that nothing changes on error.
Expected<std::vector<std::unique_ptr<Operation>>> newDecompositions(
    const Module& module, const std::vector<const Operation*>& composites, const std::string& prefix,
    const std::function<Expected<std::unique_ptr<Operation>>(const Operation&, size_t, const std::string&)>& build) {
  std::vector<std::unique_ptr<Operation>> functions;
  int next = 0;
  for (size_t i = 0; i < composites.size(); ++i) {
    const Attribute* decomposition = composites[i]->attr("decomposition");
    const Operation* old = decomposition ? module.lookupFunction(decomposition->stringValue()) : nullptr;
    if (!old) return internalError(composites[i]->describe() + ": attention composite without its decomposition");
    std::string name;
    do name = prefix + std::to_string(next++);
    while (module.lookupFunction(name));
    WF_ASSIGN_OR_RETURN(std::unique_ptr<Operation> fn, build(*old, i, name));
    functions.push_back(std::move(fn));
  }
  return functions;
}

using OpsByPlace = std::unordered_map<const Operation*, std::vector<std::unique_ptr<Operation>>>;

// Rebuilds `body` in order without the `removed` ops, with `before[op]` right before op and
// `after[op]` right after it.
void rebuildBlock(Block& body, const std::unordered_set<const Operation*>& removed, OpsByPlace& before,
                  OpsByPlace& after) {
  auto& ops = body.mutableOperations();
  std::vector<std::unique_ptr<Operation>> rewritten;
  rewritten.reserve(ops.size());
  for (auto& op : ops) {
    if (removed.count(op.get())) continue;
    const Operation* at = op.get();
    if (auto it = before.find(at); it != before.end())
      for (auto& c : it->second) rewritten.push_back(std::move(c));
    rewritten.push_back(std::move(op));
    if (auto it = after.find(at); it != after.end())
      for (auto& c : it->second) rewritten.push_back(std::move(c));
  }
  for (auto& op : rewritten) op->setParentBlock(&body);
  ops = std::move(rewritten);
}

bool isConvert(const Operation* op) { return op && op->code() == OpCode::Convert && op->numOperands() == 1; }

// An operand the composite reads in place of the transpose: transpose(x) itself, or
// convert(transpose(x)) (exporters transpose in f32 and narrow after), which becomes convert(x).
struct AbsorbedOperand {
  Operation* transpose = nullptr;  // nullptr: nothing absorbed
  Operation* convert = nullptr;    // the narrowing after it, or nullptr
};

// What one composite absorbs.
struct Absorbed {
  Operation* composite = nullptr;
  std::array<AbsorbedOperand, 3> operands{};
  // o's readers, each a head transpose (`transposes`) or a convert that only head transposes read
  // (`converts`, whose transposes are in `transposes` too); empty where o keeps its layout.
  std::vector<Operation*> transposes, converts;
  bool absorbsResult() const { return !transposes.empty(); }
};

AbsorbedOperand absorbableOperand(const Readers& readers, const Operation& composite, size_t i, const Block& body) {
  Operation* p = composite.operand(i)->definingOp();
  Operation* convert = isConvert(p) ? p : nullptr;
  if (convert) {
    if (!readOnlyBy(readers, convert->result(0), &composite)) return {};
    p = convert->operand(0)->definingOp();
  }
  const Operation* reader = convert ? convert : &composite;
  if (!isHeadTranspose(p) || p->parentBlock() != &body || !readOnlyBy(readers, p->result(0), reader)) return {};
  return {p, convert};
}

// Fills `a`'s result side where every reader of o is a head transpose, or a convert read by head
// transposes alone.
void absorbResult(const Readers& readers, const Value* o, Absorbed& a) {
  std::vector<Operation*> transposes, converts;
  auto addTranspose = [&](const Operation* r, const Value* from) {
    if (!isHeadTranspose(r) || r->operand(0) != from) return false;
    if (std::find(transposes.begin(), transposes.end(), r) == transposes.end())
      transposes.push_back(const_cast<Operation*>(r));
    return true;
  };
  const auto& direct = readersOf(readers, o);
  if (direct.empty()) return;
  for (const Operation* r : direct) {
    if (addTranspose(r, o)) continue;
    if (!isConvert(r) || r->operand(0) != o) return;
    const auto& next = readersOf(readers, r->result(0));
    if (next.empty()) return;
    for (const Operation* t : next)
      if (!addTranspose(t, r->result(0))) return;
    if (std::find(converts.begin(), converts.end(), r) == converts.end()) converts.push_back(const_cast<Operation*>(r));
  }
  a.transposes = std::move(transposes);
  a.converts = std::move(converts);
}

// A new private function `name` computing what `old` (an attention decomposition returning
// (o, lse)) computes for operands stored otherwise: argument i of type `argType(i, old's type)`,
// turned into what the old body reads by `toOld(i, arg)`, and o turned into what the composite
// returns by `fromOld(o)`.
Expected<std::unique_ptr<Operation>> rewrappedDecomposition(
    const Operation& old, const std::string& name, const std::function<Type(size_t, const Type&)>& argType,
    const std::function<Value*(size_t, Value*, OpBuilder&)>& toOld,
    const std::function<Value*(Value*, OpBuilder&)>& fromOld) {
  const Block& oldBody = FuncOp(&old).body();
  const Location& loc = old.location();
  auto fn = std::make_unique<Operation>("func.func", loc);
  fn->setAttr("sym_name", Attribute::string(name));
  fn->setAttr("sym_visibility", Attribute::string("private"));
  Block& body = *fn->addRegion()->addBlock();
  OpBuilder b(&body, loc);
  std::unordered_map<const Value*, Value*> mapping;
  FunctionType type;
  for (size_t i = 0; i < oldBody.arguments().size(); ++i) {
    const Value* oldArg = oldBody.argument(i);
    const Type t = argType(i, oldArg->type());
    type.inputs.push_back(t);
    mapping[oldArg] = toOld(i, body.addArgument(t), b);
  }
  const Operation* ret = nullptr;
  for (const auto& op : oldBody.operations()) {
    if (op->code() == OpCode::FuncReturn) {
      ret = op.get();
      break;
    }
    body.append(cloneOperation(*op, mapping));
  }
  if (!ret || ret->numOperands() != 2)
    return internalError(old.describe() + ": attention decomposition without a return of (o, lse)");
  Value* o = fromOld(mapping.at(ret->operand(0)), b);
  Value* lse = mapping.at(ret->operand(1));
  WF_RETURN_IF_ERROR(b.status());
  auto newRet = std::make_unique<Operation>("func.return", ret->location());
  newRet->addOperand(o);
  newRet->addOperand(lse);
  type.results = {o->type(), lse->type()};
  body.append(std::move(newRet));
  fn->setAttr("function_type", Attribute::functionType(type));
  return fn;
}

// A new decomposition of `old` for the absorbed layouts: the composite's new operands transposed
// back to [B, H, S, D], the old body's ops, and o transposed to [B, S, H, D] where it was absorbed.
Expected<std::unique_ptr<Operation>> wrappedDecomposition(const Operation& old, const Absorbed& a,
                                                          const std::string& name) {
  auto transposeOf = [&](size_t i) { return i < 3 ? a.operands[i].transpose : nullptr; };
  return rewrappedDecomposition(
      old, name,
      [&](size_t i, const Type& t) {
        // The composite's new operand: x, or x converted to the old operand's type.
        const Operation* transpose = transposeOf(i);
        return transpose ? Type::tensor(transpose->operand(0)->type().shape(), t.elementType()) : t;
      },
      [&](size_t i, Value* arg, OpBuilder& b) {
        return transposeOf(i) ? b.transpose(arg, kSwapSequenceAndHeads) : arg;
      },
      [&](Value* o, OpBuilder& b) { return a.absorbsResult() ? b.transpose(o, kSwapSequenceAndHeads) : o; });
}

}  // namespace

Expected<int> absorbAttentionTransposes(Module& module, std::string_view function) {
  Operation* fnOp = module.lookupFunction(function);
  if (!fnOp) return notFound("attention layouts: no function @" + std::string(function) + " in the module");
  Block& body = FuncOp(fnOp).body();
  const Readers readers = readersIn(body);
  std::vector<Absorbed> found;
  for (const auto& op : body.operations()) {
    if (op->code() != OpCode::Composite || op->numOperands() < 3 || op->numResults() != 2) continue;
    const Attribute* name = op->attr("name");
    const Attribute* attrs = op->attr("composite_attributes");
    if (!name || name->stringValue() != kAttentionComposite || !attrs) continue;
    // Absorbed once: a second pass would read an absorbed operand's layout as [B, H, S, D].
    if (attrs->field("q_layout") || attrs->field("k_layout") || attrs->field("v_layout") || attrs->field("o_layout"))
      continue;
    Absorbed a;
    a.composite = op.get();
    bool any = false;
    for (size_t i = 0; i < 3; ++i) {
      a.operands[i] = absorbableOperand(readers, *op, i, body);
      any = any || a.operands[i].transpose;
    }
    absorbResult(readers, op->result(0), a);
    if (any || a.absorbsResult()) found.push_back(std::move(a));
  }
  if (found.empty()) return 0;

  std::vector<const Operation*> composites;
  for (const Absorbed& a : found) composites.push_back(a.composite);
  WF_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Operation>> functions,
                      newDecompositions(module, composites, "warpforge_attention_bshd_",
                                        [&](const Operation& old, size_t i, const std::string& name) {
                                          return wrappedDecomposition(old, found[i], name);
                                        }));

  std::unordered_set<const Operation*> removed;
  std::unordered_map<const Value*, Value*> replacement;
  // New converts, each to go right before (operands) or after (o) its composite.
  OpsByPlace before, after;
  auto convertOf = [](Value* x, const Operation& like) {
    auto c = std::make_unique<Operation>("stablehlo.convert", like.location());
    c->addOperand(x);
    c->addResult(Type::tensor(x->type().shape(), like.result(0)->type().elementType()));
    return c;
  };
  for (size_t i = 0; i < found.size(); ++i) {
    const Absorbed& a = found[i];
    Operation& c = *a.composite;
    std::vector<NamedAttribute> fields = c.attr("composite_attributes")->fields();
    static constexpr const char* kNames[3] = {"q_layout", "k_layout", "v_layout"};
    for (size_t j = 0; j < 3; ++j) {
      const AbsorbedOperand& in = a.operands[j];
      if (!in.transpose) continue;
      Value* x = in.transpose->operand(0);
      if (in.convert) {
        before[&c].push_back(convertOf(x, *in.convert));
        x = before[&c].back()->result(0);
        removed.insert(in.convert);
      }
      c.setOperand(j, x);
      fields.push_back({kNames[j], Attribute::string(std::string(kSequenceMajorLayout))});
      removed.insert(in.transpose);
    }
    if (a.absorbsResult()) {
      c.result(0)->setType(Type::tensor(a.transposes.front()->result(0)->type().shape(),
                                        c.result(0)->type().elementType()));
      for (Operation* t : a.transposes) {
        if (t->operand(0) == c.result(0)) replacement[t->result(0)] = c.result(0);
        removed.insert(t);
      }
      for (Operation* convert : a.converts) {
        after[&c].push_back(convertOf(c.result(0), *convert));
        Value* wide = after[&c].back()->result(0);
        for (Operation* t : a.transposes)
          if (t->operand(0) == convert->result(0)) replacement[t->result(0)] = wide;
        removed.insert(convert);
      }
      fields.push_back({"o_layout", Attribute::string(std::string(kSequenceMajorLayout))});
    }
    c.setAttr("composite_attributes", Attribute::dictionary(std::move(fields)));
    c.setAttr("decomposition", Attribute::symbolRef(functions[i]->attr("sym_name")->stringValue()));
  }
  replaceUses(body, replacement);
  // The composite stays where it was: an absorbed operand's transpose (and its x) came before it,
  // and the transposes of o came after it.
  rebuildBlock(body, removed, before, after);
  for (auto& fn : functions) module.append(std::move(fn));
  return static_cast<int>(found.size());
}

namespace {

// An operand read as heads of a wider projection (absorbAttentionHeadSlices).
struct HeadSlice {
  Operation* slice = nullptr;  // nullptr: nothing absorbed
  std::vector<Operation*> chain;  // the slice and the reshapes after it, read only along the chain
  int64_t first = 0, count = 0, heads = 0;  // in heads of D; `heads` in Y's last dim
};

// Whether operand `i` of `composite`, stored [B, S, H, D], is reshape*(slice(Y)) as
// absorbAttentionHeadSlices takes it.
HeadSlice headSlice(const Readers& readers, const Operation& composite, size_t i, const Block& body) {
  const Type& x = composite.operand(i)->type();
  if (x.rank() != 4 || !x.hasStaticShape()) return {};
  const int64_t b = x.dim(0), s = x.dim(1), h = x.dim(2), d = x.dim(3);
  std::vector<Operation*> reshapes;
  Operation* p = composite.operand(i)->definingOp();
  while (p && p->code() == OpCode::Reshape && p->parentBlock() == &body) {
    reshapes.push_back(p);
    p = p->operand(0)->definingOp();
  }
  if (!p || p->code() != OpCode::Slice || p->parentBlock() != &body || d == 0) return {};
  const Type& y = p->operand(0)->type();
  AttrReader attrs(*p);
  Expected<Dims> start = attrs.ints("start_indices"), limit = attrs.ints("limit_indices"),
                 strides = attrs.ints("strides");
  if (!y.hasStaticShape() || y.rank() < 1 || !start || !limit || !strides ||
      static_cast<int64_t>(start->size()) != y.rank())
    return {};
  for (int64_t k = 0; k < y.rank(); ++k) {
    const auto j = static_cast<size_t>(k);
    if ((*strides)[j] != 1 || (k + 1 < y.rank() && ((*start)[j] != 0 || (*limit)[j] != y.dim(k)))) return {};
  }
  const int64_t c = y.shape().back(), a = start->back();
  if (limit->back() - a != h * d || a % d != 0 || c % d != 0 || y.numElements() != b * s * c) return {};
  HeadSlice hs;
  hs.slice = p;
  hs.first = a / d;
  hs.count = h;
  hs.heads = c / d;
  // The chain's ops that go with the rewrite: from the operand back, while each is read only by
  // the next (the composite for the first).
  const Operation* reader = &composite;
  std::vector<Operation*> chain = reshapes;
  chain.push_back(p);
  for (Operation* op : chain) {
    if (!readOnlyBy(readers, op->result(0), reader)) break;
    hs.chain.push_back(op);
    reader = op;
  }
  return hs;
}

// A new decomposition of `old` whose sliced operands are the whole [B, S, heads, D] projections:
// each is sliced to its heads, then the old body's ops run.
Expected<std::unique_ptr<Operation>> headSliceDecomposition(const Operation& old,
                                                            const std::array<HeadSlice, 3>& slices,
                                                            const std::string& name) {
  auto sliceOf = [&](size_t i) { return i < 3 && slices[i].slice ? &slices[i] : nullptr; };
  return rewrappedDecomposition(
      old, name,
      [&](size_t i, const Type& t) {
        const HeadSlice* hs = sliceOf(i);
        if (!hs) return t;
        Dims shape = t.shape();
        shape[2] = hs->heads;
        return Type::tensor(shape, t.elementType());
      },
      [&](size_t i, Value* arg, OpBuilder& b) {
        const HeadSlice* hs = sliceOf(i);
        if (!hs) return arg;
        Dims start = {0, 0, hs->first, 0}, limit = arg->type().shape();
        limit[2] = hs->first + hs->count;
        return b.slice(arg, start, limit, {1, 1, 1, 1});
      },
      [](Value* o, OpBuilder&) { return o; });
}

}  // namespace

Expected<int> absorbAttentionHeadSlices(Module& module, std::string_view function) {
  Operation* fnOp = module.lookupFunction(function);
  if (!fnOp) return notFound("attention head slices: no function @" + std::string(function) + " in the module");
  Block& body = FuncOp(fnOp).body();
  const Readers readers = readersIn(body);
  static constexpr const char* kLayouts[3] = {"q_layout", "k_layout", "v_layout"};
  static constexpr const char* kHeads[3] = {"q_heads", "k_heads", "v_heads"};
  struct Found {
    Operation* composite;
    std::array<HeadSlice, 3> slices;
  };
  std::vector<Found> found;
  for (const auto& op : body.operations()) {
    if (op->code() != OpCode::Composite || op->numOperands() < 3 || op->numResults() != 2) continue;
    const Attribute* name = op->attr("name");
    const Attribute* attrs = op->attr("composite_attributes");
    if (!name || name->stringValue() != kAttentionComposite || !attrs) continue;
    Found f{op.get(), {}};
    bool any = false;
    for (size_t i = 0; i < 3; ++i) {
      const Attribute* layout = attrs->field(kLayouts[i]);
      if (!layout || layout->kind() != Attribute::Kind::kString || layout->stringValue() != kSequenceMajorLayout ||
          attrs->field(kHeads[i]))
        continue;
      f.slices[i] = headSlice(readers, *op, i, body);
      any = any || f.slices[i].slice;
    }
    if (any) found.push_back(std::move(f));
  }
  if (found.empty()) return 0;

  std::vector<const Operation*> composites;
  for (const Found& f : found) composites.push_back(f.composite);
  WF_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Operation>> functions,
                      newDecompositions(module, composites, "warpforge_attention_heads_",
                                        [&](const Operation& old, size_t i, const std::string& name) {
                                          return headSliceDecomposition(old, found[i].slices, name);
                                        }));

  // Each composite reads reshape(Y), made right before it; the chains only it read go.
  std::unordered_set<const Operation*> removed;
  OpsByPlace before, after;
  for (size_t n = 0; n < found.size(); ++n) {
    Operation& c = *found[n].composite;
    std::vector<NamedAttribute> fields = c.attr("composite_attributes")->fields();
    for (size_t i = 0; i < 3; ++i) {
      const HeadSlice& hs = found[n].slices[i];
      if (!hs.slice) continue;
      Value* y = hs.slice->operand(0);
      Dims shape = c.operand(i)->type().shape();
      shape[2] = hs.heads;
      auto reshape = std::make_unique<Operation>("stablehlo.reshape", hs.slice->location());
      reshape->addOperand(y);
      reshape->addResult(Type::tensor(shape, y->type().elementType()));
      c.setOperand(i, reshape->result(0));
      before[&c].push_back(std::move(reshape));
      fields.push_back({kHeads[i], i64DenseArray({hs.first, hs.count})});
      removed.insert(hs.chain.begin(), hs.chain.end());
    }
    c.setAttr("composite_attributes", Attribute::dictionary(std::move(fields)));
    c.setAttr("decomposition", Attribute::symbolRef(functions[n]->attr("sym_name")->stringValue()));
  }
  rebuildBlock(body, removed, before, after);
  for (auto& fn : functions) module.append(std::move(fn));
  return static_cast<int>(found.size());
}

}  // namespace wf
