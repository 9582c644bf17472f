// Outlining of written-out attention into a "warpforge.attention" composite (attention.h).
#include "transforms/attention.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/attr_reader.h"
#include "ir/builder.h"

namespace wf {
namespace {

using Dims = std::vector<int64_t>;

bool dotNumbers(const Operation& op, const Dims& lb, const Dims& rb, const Dims& lc, const Dims& rc) {
  Expected<const Attribute*> dn = AttrReader(op).dialectStruct("dot_dimension_numbers");
  if (!dn) return false;
  return AttrReader::fieldInts(**dn, "lhs_batching_dimensions") == lb &&
         AttrReader::fieldInts(**dn, "rhs_batching_dimensions") == rb &&
         AttrReader::fieldInts(**dn, "lhs_contracting_dimensions") == lc &&
         AttrReader::fieldInts(**dn, "rhs_contracting_dimensions") == rc;
}

// The binary op of a reduction body `^bb(%a, %b): %r = op(%a, %b); return %r`.
OpCode reductionKind(const Operation& reduce) {
  if (reduce.numRegions() != 1 || reduce.region(0).empty()) return OpCode::kUnknown;
  const auto& ops = reduce.region(0).front().operations();
  if (ops.size() != 2 || ops[0]->numOperands() != 2) return OpCode::kUnknown;
  return ops[0]->code();
}

// reduce(x, init) over dim 3 alone with body `kind` and the init constant `init`.
bool isRowReduction(const Operation* r, OpCode kind, double init) {
  if (!r || r->numOperands() != 2 || r->numResults() != 1 || reductionKind(*r) != kind) return false;
  Expected<Dims> dims = AttrReader(*r).ints("dimensions");
  std::optional<double> v = splatConstant(r->operand(1));
  return dims && *dims == Dims{3} && v && (*v == init || (std::isinf(init) && std::isinf(*v) && (*v < 0) == (init < 0)));
}

// broadcast_in_dim(x) with broadcast_dimensions `dims`: x, else nullptr.
Operation* broadcastOf(const Value* v, const Dims& dims) {
  Operation* b = definedBy(v, OpCode::BroadcastInDim);
  if (!b) return nullptr;
  Expected<Dims> d = AttrReader(*b).ints("broadcast_dimensions");
  return d && *d == dims ? b : nullptr;
}

bool isRank4Float(const Value* v) { return v->type().isTensor() && v->type().hasStaticShape() && v->type().rank() == 4 && isFloat(v->type().elementType()); }

// A mask or bias operand: rank 4, each dim that of `scores` or 1.
bool broadcastsTo(const Value* mask, const Type& scores) {
  const Type& t = mask->type();
  if (!t.isTensor() || !t.hasStaticShape() || t.rank() != 4) return false;
  for (int64_t d = 0; d < 4; ++d)
    if (t.dim(d) != scores.dim(d) && t.dim(d) != 1) return false;
  return true;
}


struct Match {
  Value* q = nullptr;
  Value* k = nullptr;
  Value* v = nullptr;
  Value* mask = nullptr;  // pre-broadcast mask or bias, or nullptr
  std::string maskKind = "none";
  double scale = 1.0;
  Operation* product = nullptr;   // o = p . v, replaced by the composite
  Operation* maximum = nullptr;   // the row max, or nullptr (softmax without the shift)
  Operation* sum = nullptr;       // the row sum of the exponentials
  std::vector<Operation*> chain;  // the ops replaced (nothing else reads their results)
  std::vector<Operation*> shared;  // constants and the mask's broadcast (copied; removed when unused)
};

class Matcher {
 public:
  explicit Matcher(const Readers& users) : users_(users) {}

  std::optional<Match> match(Operation& product) {
    Match m;
    m.product = &product;
    if (product.code() != OpCode::DotGeneral || product.numOperands() != 2 ||
        !dotNumbers(product, {0, 1}, {0, 1}, {3}, {2}))
      return std::nullopt;
    m.v = product.operand(1);
    if (!isRank4Float(product.operand(0)) || !isRank4Float(m.v) || !isRank4Float(product.result(0))) return std::nullopt;
    m.chain.push_back(&product);
    // The probabilities, perhaps narrowed.
    Value* p = product.operand(0);
    if (Operation* narrow = definedBy(p, OpCode::Convert)) {
      if (!take(m, narrow)) return std::nullopt;
      p = narrow->operand(0);
    }
    Operation* divide = definedBy(p, OpCode::Divide);
    if (!divide || !take(m, divide)) return std::nullopt;
    Value* e = divide->operand(0);
    Operation* sumBroadcast = broadcastOf(divide->operand(1), {0, 1, 2});
    Operation* sum = sumBroadcast ? definedBy(sumBroadcast->operand(0), OpCode::Reduce) : nullptr;
    if (!sum || sum->operand(0) != e || !isRowReduction(sum, OpCode::Add, 0.0) || !take(m, sumBroadcast) ||
        !take(m, sum) || !constant(m, sum->operand(1)))
      return std::nullopt;
    m.sum = sum;
    Operation* exp = definedBy(e, OpCode::Exponential);
    if (!exp || !take(m, exp)) return std::nullopt;
    Value* x = exp->operand(0);
    if (Operation* shift = definedBy(x, OpCode::Subtract)) {
      Operation* maxBroadcast = broadcastOf(shift->operand(1), {0, 1, 2});
      Operation* maximum = maxBroadcast ? definedBy(maxBroadcast->operand(0), OpCode::Reduce) : nullptr;
      if (!maximum || maximum->operand(0) != shift->operand(0) ||
          !isRowReduction(maximum, OpCode::Maximum, -INFINITY) || !take(m, shift) || !take(m, maxBroadcast) ||
          !take(m, maximum) || !constant(m, maximum->operand(1)))
        return std::nullopt;
      m.maximum = maximum;
      x = shift->operand(0);
    }
    // The mask.
    const Type scoresType = x->type();
    if (Operation* select = definedBy(x, OpCode::Select)) {
      std::optional<double> fill = splatConstant(select->operand(2));
      if (!fill || !std::isinf(*fill) || *fill > 0 || !take(m, select) || !constant(m, select->operand(2)))
        return std::nullopt;
      m.mask = maskSource(m, select->operand(0));
      if (!m.mask || m.mask->type().elementType() != ElementType::kI1) return std::nullopt;
      m.maskKind = "select";
      x = select->operand(1);
    } else if (Operation* add = definedBy(x, OpCode::Add)) {
      // The bias is the operand that is not the scaled product q . k.
      for (int side = 0; side < 2 && !m.mask; ++side) {
        if (!reachesScores(add->operand(side))) continue;
        m.mask = maskSource(m, add->operand(1 - side));
        x = add->operand(side);
      }
      if (!m.mask || !isFloat(m.mask->type().elementType()) || !take(m, add)) return std::nullopt;
      m.maskKind = "add";
    }
    // The scale.
    if (Operation* mul = definedBy(x, OpCode::Multiply)) {
      for (int side = 0; side < 2; ++side)
        if (std::optional<double> c = splatConstant(mul->operand(side))) {
          if (!take(m, mul) || !constant(m, mul->operand(side))) return std::nullopt;
          m.scale = *c;
          x = mul->operand(1 - side);
          break;
        }
    } else if (Operation* div = definedBy(x, OpCode::Divide)) {
      std::optional<double> c = splatConstant(div->operand(1));
      if (c && *c != 0) {
        if (!take(m, div) || !constant(m, div->operand(1))) return std::nullopt;
        m.scale = 1.0 / *c;
        x = div->operand(0);
      }
    }
    if (Operation* widen = definedBy(x, OpCode::Convert)) {
      if (!take(m, widen)) return std::nullopt;
      x = widen->operand(0);
    }
    Operation* scores = definedBy(x, OpCode::DotGeneral);
    if (!scores || !dotNumbers(*scores, {0, 1}, {0, 1}, {3}, {3}) || !take(m, scores)) return std::nullopt;
    m.q = scores->operand(0);
    m.k = scores->operand(1);
    if (!isRank4Float(m.q) || !isRank4Float(m.k)) return std::nullopt;
    const Type& qt = m.q->type();
    const Type& kt = m.k->type();
    const Type& vt = m.v->type();
    const ElementType et = qt.elementType();
    if (kt.elementType() != et || vt.elementType() != et || product.result(0)->type().elementType() != et)
      return std::nullopt;
    for (int64_t d = 0; d < 2; ++d)
      if (kt.dim(d) != qt.dim(d) || vt.dim(d) != qt.dim(d)) return std::nullopt;
    if (kt.dim(3) != qt.dim(3) || vt.dim(2) != kt.dim(2)) return std::nullopt;
    if (m.mask && !broadcastsTo(m.mask, scoresType)) return std::nullopt;
    // Nothing outside the pattern may read its intermediates (the product's result excepted).
    for (const Operation* op : m.chain) {
      if (op == m.product) continue;
      for (const auto& r : op->results()) {
        auto it = users_.find(r.get());
        if (it == users_.end()) continue;
        for (const Operation* user : it->second)
          if (std::find(m.chain.begin(), m.chain.end(), user) == m.chain.end()) return std::nullopt;
      }
    }
    return m;
  }

 private:
  // Adds `op` to the ops the pattern replaces (match() then checks that nothing else reads them).
  bool take(Match& m, Operation* op) {
    if (std::find(m.chain.begin(), m.chain.end(), op) == m.chain.end()) m.chain.push_back(op);
    return true;
  }
  bool constant(Match& m, Value* v) {
    if (Operation* b = broadcastScalarConstant(v)) {
      m.shared.push_back(definedBy(b->operand(0), OpCode::Constant));
      m.shared.push_back(b);
      return true;
    }
    Operation* c = definedBy(v, OpCode::Constant);
    if (!c) return false;
    m.shared.push_back(c);
    return true;
  }
  // The mask as it is before an identity-dims broadcast to the scores' shape (the broadcast is
  // then copied into the decomposition), or the operand itself.
  Value* maskSource(Match& m, Value* operand) {
    if (Operation* b = broadcastOf(operand, {0, 1, 2, 3})) {
      m.shared.push_back(b);
      return b->operand(0);
    }
    return operand;
  }
  // `v` is the (scaled, widened) product q . k the pattern starts from.
  static bool reachesScores(const Value* v) {
    for (int depth = 0; depth < 3; ++depth) {
      const Operation* op = v->definingOp();
      if (!op) return false;
      if (op->code() == OpCode::DotGeneral) return true;
      if (op->code() != OpCode::Multiply && op->code() != OpCode::Divide && op->code() != OpCode::Convert) return false;
      v = op->code() == OpCode::Multiply && splatConstant(op->operand(0)) ? op->operand(1) : op->operand(0);
    }
    return false;
  }

  const Readers& users_;
};

void replaceUses(Block& block, const Value* from, Value* to) {
  for (auto& op : block.mutableOperations()) {
    for (size_t i = 0; i < op->numOperands(); ++i)
      if (op->operand(i) == from) op->setOperand(i, to);
    for (const auto& region : op->regions())
      for (const auto& b : region->blocks()) replaceUses(*b, from, to);
  }
}

// The decomposition: the matched ops copied into a private function of (q, k, v[, mask]) that
// returns (o, lse).
Expected<std::unique_ptr<Operation>> decomposition(const Block& body, const Match& m, const std::string& name) {
  const Location& loc = m.product->location();
  auto fn = std::make_unique<Operation>("func.func", loc);
  fn->setAttr("sym_name", Attribute::string(name));
  fn->setAttr("sym_visibility", Attribute::string("private"));
  Block& fb = *fn->addRegion()->addBlock();
  FunctionType type;
  std::unordered_map<const Value*, Value*> mapping;
  std::vector<Value*> inputs = {m.q, m.k, m.v};
  if (m.mask) inputs.push_back(m.mask);
  for (Value* in : inputs) {
    Value* arg = fb.addArgument(in->type());
    mapping[in] = arg;
    type.inputs.push_back(in->type());
  }
  std::unordered_set<const Operation*> copied(m.chain.begin(), m.chain.end());
  copied.insert(m.shared.begin(), m.shared.end());
  for (const auto& op : body.operations())
    if (copied.count(op.get())) {
      for (const Value* v : op->operands())
        if (!mapping.count(v))
          return internalError(op->describe() + ": attention outlining: operand defined outside the pattern");
      fb.append(cloneOperation(*op, mapping));
    }
  OpBuilder b(&fb, loc);
  Value* o = mapping.at(m.product->result(0));
  Value* lse = b.unary("stablehlo.log", mapping.at(m.sum->result(0)));
  if (m.maximum) lse = b.add(mapping.at(m.maximum->result(0)), lse);
  if (lse->type().elementType() != ElementType::kF32) lse = b.convert(lse, ElementType::kF32);
  WF_RETURN_IF_ERROR(b.status());
  auto ret = std::make_unique<Operation>("func.return", loc);
  ret->addOperand(o);
  ret->addOperand(lse);
  type.results = {o->type(), lse->type()};
  fb.append(std::move(ret));
  fn->setAttr("function_type", Attribute::functionType(type));
  return fn;
}

}  // namespace

Expected<int> outlineAttention(Module& module, std::string_view function, const OutlineAttentionOptions& options) {
  const Operation* fnOp = module.lookupFunction(function);
  if (!fnOp) return notFound("attention outlining: no function @" + std::string(function) + " in the module");
  Block& body = FuncOp(fnOp).body();
  Readers users = readersIn(body);
  Matcher matcher(users);
  std::vector<Match> matches;
  for (const auto& op : body.operations())
    if (std::optional<Match> m = matcher.match(*op)) {
      const ElementType et = m->q->type().elementType();
      if (options.narrowOnly && et != ElementType::kBF16 && et != ElementType::kF16) continue;
      matches.push_back(std::move(*m));
    }
  if (matches.empty()) return 0;

  // Build every decomposition first: nothing changes on error.
  std::vector<std::unique_ptr<Operation>> functions;
  std::vector<std::string> names;
  int next = 0;
  for (const Match& m : matches) {
    std::string name;
    do name = "warpforge_attention_" + std::to_string(next++);
    while (module.lookupFunction(name));
    WF_ASSIGN_OR_RETURN(std::unique_ptr<Operation> fn, decomposition(body, m, name));
    functions.push_back(std::move(fn));
    names.push_back(name);
  }
  std::unordered_set<const Operation*> removed;
  for (size_t i = 0; i < matches.size(); ++i) {
    const Match& m = matches[i];
    auto composite = std::make_unique<Operation>("stablehlo.composite", m.product->location());
    composite->addOperand(m.q);
    composite->addOperand(m.k);
    composite->addOperand(m.v);
    if (m.mask) composite->addOperand(m.mask);
    composite->setAttr("name", Attribute::string(std::string(kAttentionComposite)));
    composite->setAttr("composite_attributes",
                       Attribute::dictionary({{"scale", Attribute::floating(m.scale, ElementType::kF32)},
                                              {"mask", Attribute::string(m.maskKind)}}));
    composite->setAttr("decomposition", Attribute::symbolRef(names[i]));
    composite->setAttr("version", Attribute::integer(0, ElementType::kSI32));
    const FunctionType ft = FuncOp(functions[i].get()).functionType();
    for (const Type& t : ft.results) composite->addResult(t);
    Value* o = composite->result(0);
    // The composite takes the product's place; the product's users read the composite.
    auto& ops = body.mutableOperations();
    auto at = std::find_if(ops.begin(), ops.end(), [&](const auto& op) { return op.get() == m.product; });
    const Value* old = m.product->result(0);
    composite->setParentBlock(&body);
    at = ops.insert(at, std::move(composite));
    replaceUses(body, old, o);
    removed.insert(m.chain.begin(), m.chain.end());
  }
  // Remove the outlined ops, then the constants and broadcasts nothing reads any more.
  auto& ops = body.mutableOperations();
  ops.erase(std::remove_if(ops.begin(), ops.end(), [&](const auto& op) { return removed.count(op.get()) != 0; }),
            ops.end());
  std::unordered_set<const Operation*> candidates;
  for (const Match& m : matches) candidates.insert(m.shared.begin(), m.shared.end());
  // Twice: a scalar constant's only user may be a broadcast removed in the first pass.
  for (int pass = 0; pass < 2; ++pass) {
    users = readersIn(body);
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [&](const auto& op) {
                               if (!candidates.count(op.get())) return false;
                               for (const auto& r : op->results())
                                 if (users.count(r.get())) return false;
                               return true;
                             }),
              ops.end());
  }
  for (auto& fn : functions) module.append(std::move(fn));
  return static_cast<int>(matches.size());
}

}  // namespace wf
