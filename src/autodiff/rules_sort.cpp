// VJP rules of sort and chlo.top_k. A sort permutes along one dimension, so each sorted operand's cotangent goes
// back through the inverse permutation. The permutation is recovered by sorting once more with
// an iota carried along (the comparator ignores it, so the order is the forward one), and
// inverted by sorting (permutation, cotangents...) on the permutation.
#include "autodiff/rules.h"
#include "ir/attr_reader.h"

namespace wf::autodiff {
namespace {

Operation* sortWith(OpBuilder& b, const std::vector<Value*>& operands, int64_t dim, bool stable,
                const std::function<void(Block*)>& comparator) {
  std::vector<Type> types;
  for (Value* v : operands) types.push_back(v->type());
  Operation* op = b.create("stablehlo.sort", operands,
                           {{"dimension", Attribute::integer(dim)}, {"is_stable", Attribute::boolean(stable)}}, types,
                           operands.size(), [&](Operation* s) {
                             Block* body = s->addRegion()->addBlock();
                             for (Value* v : operands) {
                               body->addArgument(Type::scalar(v->type().elementType()));
                               body->addArgument(Type::scalar(v->type().elementType()));
                             }
                             comparator(body);
                           });
  return op;
}

Status sortRule(VjpContext& c) {
  OpBuilder& b = c.b;
  AttrReader attrs(c.op);
  const Type& t = c.operandType(0);
  WF_ASSIGN_OR_RETURN(int64_t dim, attrs.integer("dimension", -1));
  if (dim < 0) dim += t.rank();
  const Attribute* stableAttr = c.op.attr("is_stable");
  bool stable = stableAttr && stableAttr->kind() == Attribute::Kind::kBool && stableAttr->boolValue();
  size_t n = c.op.numOperands();
  Location loc = b.location();

  // The forward order, with an iota riding along: its sorted value is the permutation.
  std::vector<Value*> operands(c.op.operands().begin(), c.op.operands().end());
  operands.push_back(b.iota(t.withElementType(ElementType::kSI64), dim));
  const Block& cmp = c.op.region(0).front();
  Operation* forward = sortWith(b, operands, dim, stable, [&](Block* body) {
    std::unordered_map<const Value*, Value*> mapping;
    for (size_t i = 0; i < cmp.numArguments(); ++i) mapping[cmp.argument(i)] = body->argument(i);
    for (const auto& op : cmp.operations()) body->append(cloneOperation(*op, mapping));
  });

  // Sorting by the permutation puts each cotangent back where its element came from.
  std::vector<Value*> back = {forward->result(n)};
  std::vector<size_t> which;
  for (size_t i = 0; i < n; ++i) {
    if (!c.active(i)) continue;
    back.push_back(c.cotangentOrZeros(i));
    which.push_back(i);
  }
  if (which.empty()) return Status::ok();
  Operation* inverse = sortWith(b, back, dim, /*stable=*/true, [&](Block* body) {
    OpBuilder cb(body, loc);
    Value* less = cb.compare(body->argument(0), body->argument(1), "LT");
    cb.create("stablehlo.return", {less}, {}, {}, 0);
    b.fail(cb.status());
  });
  WF_RETURN_IF_ERROR(b.status());
  for (size_t k = 0; k < which.size(); ++k) c.accumulate(which[k], inverse->result(1 + k));
  return Status::ok();
}

// chlo.top_k(x) -> (values, indices) along the last dimension: each value's cotangent goes to
// the element its index names. Formed as a one-hot comparison of the indices with an iota over
// the last dimension of x, summed over the k selected positions ([..., k, n] elements).
Status topKRule(VjpContext& c) {
  if (!c.active(0) || !c.cotangent(0)) return Status::ok();
  OpBuilder& b = c.b;
  const Type& x = c.operandType(0);
  Value* indices = c.result(1);
  int64_t r = x.rank();
  std::vector<int64_t> shape = indices->type().shape();  // [..., k]
  shape.push_back(x.dim(r - 1));                          // [..., k, n]
  std::vector<int64_t> lead(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) lead[static_cast<size_t>(i)] = i;
  Type wide = Type::tensor(shape, indices->type().elementType());
  Value* hit = b.compare(b.broadcastInDim(indices, wide, lead), b.iota(wide, r), "EQ");
  Value* ct = b.broadcastInDim(c.cotangent(0), wide.withElementType(x.elementType()), lead);
  Value* spread = b.select(hit, ct, b.zeros(ct->type()));
  c.accumulate(0, b.reduceSum(spread, {r - 1}));
  return Status::ok();
}

}  // namespace

void registerSortRules(RuleTable& t) {
  t.add(OpCode::Sort, sortRule);
  t.add(OpCode::ChloTopK, topKRule);
}

}  // namespace wf::autodiff
