// Attention composites whose select mask is the causal mask (causal_masks.h).
#include "transforms/causal_masks.h"

#include <string>
#include <vector>

#include "ir/composites.h"
#include "transforms/known_values.h"

namespace wf {

bool isTopLeftCausal(const Literal& mask) {
  const Type& t = mask.type();
  if (!t.isTensor() || t.rank() != 4 || t.elementType() != ElementType::kI1) return false;
  const int64_t sq = t.dim(2), skv = t.dim(3);
  if (sq == 0 || skv == 0) return false;
  const int64_t slices = t.dim(0) * t.dim(1);
  for (int64_t s = 0; s < slices; ++s)
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < skv; ++j)
        if ((mask.getInt((s * sq + i) * skv + j) != 0) != (j <= i)) return false;
  return true;
}

Expected<int> markCausalAttentionMasks(Module& module, std::string_view function) {
  Operation* fnOp = module.lookupFunction(function);
  if (!fnOp) return invalidArgument("markCausalAttentionMasks: no function @" + std::string(function));
  KnownValues known(kMaxEvaluatedMaskElements);
  int marked = 0;
  for (auto& owned : FuncOp(fnOp).body().mutableOperations()) {
    Operation& op = *owned;
    if (op.code() != OpCode::Composite || op.numOperands() < 4) continue;
    const Attribute* name = op.attr("name");
    if (!name || (name->stringValue() != kAttentionComposite && name->stringValue() != kAttentionGradComposite))
      continue;
    const Attribute* attrs = op.attr("composite_attributes");
    const Attribute* mask = attrs ? attrs->field("mask") : nullptr;
    if (!mask || mask->kind() != Attribute::Kind::kString || mask->stringValue() != "select") continue;
    if (attrs->field("mask_is_causal")) continue;
    // The mask must have the scores' [Sq, Skv] itself: one broadcast over queries or keys is not
    // causal whatever its row holds.
    const Type& q = op.operand(0)->type();
    const Type& k = op.operand(1)->type();
    const Type& m = op.operand(3)->type();
    if (q.rank() != 4 || k.rank() != 4 || m.rank() != 4 || !q.hasStaticShape() || !k.hasStaticShape() ||
        !m.hasStaticShape() || m.dim(2) != q.dim(2) || m.dim(3) != k.dim(2))
      continue;
    const Literal* value = known.value(op.operand(3));
    if (!value || !isTopLeftCausal(*value)) continue;
    std::vector<NamedAttribute> fields = attrs->fields();
    fields.push_back({"mask_is_causal", Attribute::boolean(true)});
    op.setAttr("composite_attributes", Attribute::dictionary(std::move(fields)));
    ++marked;
  }
  return marked;
}

}  // namespace wf
