// The VJP of the attention composite (ir/composites.h, transforms/attention.h).
//
// Autodiff keeps "warpforge.attention" as one op (every other composite is inlined first), and
// its rule emits one "warpforge.attention_grad" composite of (q, k, v[, mask], o, lse, do) whose
// decomposition is the VJP of the attention's decomposition, recomputing the forward ops: the
// forward pass keeps q, k, v, o and the row log-sum-exp, never the [B, H, Sq, Skv] scores or
// probabilities (what FlashAttention's backward pass does). A backend with a fused attention
// backward (cuDNN's) runs the composite as one kernel from lse; the others run the decomposition.
//
// When the mask is a float that itself needs a gradient (a learned bias), or the lse result is
// used, the rule emits the decomposition's VJP inline instead (the same recomputation).
#include "autodiff/rules.h"
#include "ir/composites.h"

namespace wf::autodiff {

bool isAttentionComposite(const Operation& op) {
  const Attribute* name = op.attr("name");
  return op.code() == OpCode::Composite && name && name->kind() == Attribute::Kind::kString &&
         name->stringValue() == kAttentionComposite;
}

namespace {

// The function @name: the decomposition's VJP, of (q, k, v[, mask], o, lse, do) returning
// (dq, dk, dv). o and lse are there for fused kernels; the decomposition does not read them.
Expected<std::unique_ptr<Operation>> gradFunction(const Operation& attention, const Block& forward,
                                                  const std::string& name, const Module* module) {
  const Location& loc = attention.location();
  auto fn = std::make_unique<Operation>("func.func", loc);
  fn->setAttr("sym_name", Attribute::string(name));
  fn->setAttr("sym_visibility", Attribute::string("private"));
  Block& body = *fn->addRegion()->addBlock();
  FunctionType type;
  std::vector<Value*> inputs;
  for (const Value* v : attention.operands()) inputs.push_back(body.addArgument(v->type()));
  body.addArgument(attention.result(0)->type());  // o
  body.addArgument(attention.result(1)->type());  // lse
  Value* dOut = body.addArgument(attention.result(0)->type());
  for (const auto& arg : body.arguments()) type.inputs.push_back(arg->type());
  std::vector<Value*> wrt = {forward.argument(0), forward.argument(1), forward.argument(2)};
  Differentiator outer(module);
  WF_ASSIGN_OR_RETURN(std::vector<Value*> grads, emitBlockVjp(forward, &body, inputs, {dOut, nullptr}, wrt, outer, loc));
  auto ret = std::make_unique<Operation>("func.return", loc);
  for (Value* g : grads) {
    ret->addOperand(g);
    type.results.push_back(g->type());
  }
  body.append(std::move(ret));
  fn->setAttr("function_type", Attribute::functionType(type));
  return fn;
}

Status compositeRule(VjpContext& c) {
  const Operation& op = c.op;
  if (!isAttentionComposite(op))  // other composites are inlined before the reverse walk
    return c.unsupported("no VJP rule for this composite (it should have been inlined)");
  const Attribute* decomposition = op.attr("decomposition");
  const Operation* fn = decomposition && decomposition->kind() == Attribute::Kind::kSymbolRef
                            ? c.differentiator().lookupFunction(decomposition->stringValue())
                            : nullptr;
  if (!fn) return c.unsupported("the attention's decomposition is not in the module");
  const Block& forward = FuncOp(fn).body();
  const size_t n = op.numOperands();
  if (n < 3 || n > 4 || op.numResults() != 2 || forward.numArguments() != n)
    return c.unsupported("an attention composite takes q, k, v and an optional mask, and returns o and lse");
  Value* dOut = c.cotangent(0);
  if (!dOut && !c.cotangent(1)) return Status::ok();
  if ((n == 4 && c.active(3)) || c.cotangent(1)) {
    std::vector<Value*> wrt;
    for (size_t i = 0; i < n; ++i) wrt.push_back(forward.argument(i));
    WF_ASSIGN_OR_RETURN(std::vector<Value*> grads,
                        emitBlockVjp(forward, c.b.block(), op.operands(), {dOut, c.cotangent(1)}, wrt,
                                     c.differentiator(), op.location()));
    for (size_t i = 0; i < n; ++i)
      if (c.active(i)) c.accumulate(i, grads[i]);
    return Status::ok();
  }

  // One backward function per forward decomposition, shared by the layers that share it.
  const std::string gradName = decomposition->stringValue() + "_grad";
  if (!c.differentiator().lookupFunction(gradName)) {
    WF_ASSIGN_OR_RETURN(std::unique_ptr<Operation> grad,
                        gradFunction(op, forward, gradName, c.differentiator().module()));
    c.differentiator().addFunction(std::move(grad));
  }
  auto grad = std::make_unique<Operation>("stablehlo.composite", op.location());
  for (Value* v : op.operands()) grad->addOperand(v);
  grad->addOperand(op.result(0));
  grad->addOperand(op.result(1));
  grad->addOperand(dOut);
  grad->setAttr("name", Attribute::string(std::string(kAttentionGradComposite)));
  if (const Attribute* attrs = op.attr("composite_attributes")) grad->setAttr("composite_attributes", *attrs);
  grad->setAttr("decomposition", Attribute::symbolRef(gradName));
  grad->setAttr("version", Attribute::integer(0, ElementType::kSI32));
  for (size_t i = 0; i < 3; ++i) grad->addResult(op.operand(i)->type());
  Operation* g = c.b.block()->append(std::move(grad));
  for (size_t i = 0; i < 3; ++i)
    if (c.active(i)) c.accumulate(i, g->result(i));
  return Status::ok();
}

}  // namespace

void registerCompositeRules(RuleTable& t) { t.add(OpCode::Composite, compositeRule); }

}  // namespace wf::autodiff
