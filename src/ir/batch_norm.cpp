// The batch-norm ops' attributes (batch_norm.h).
#include "ir/batch_norm.h"

namespace wf {

Expected<BatchNormLayout> readBatchNorm(const Operation& op) {
  if (op.numOperands() == 0) return invalidArgument(op.describe() + ": batch norm without an operand");
  const Type& x = op.operand(0)->type();
  if (!x.isTensor() || !x.hasStaticShape() || !isFloat(x.elementType()))
    return invalidArgument(op.describe() + ": batch norm needs a float operand of static shape here");
  const Attribute* fi = op.attr("feature_index");
  int64_t feature = -1;
  if (fi)
    if (auto v = fi->asInt()) feature = *v;
  if (feature < 0 || feature >= x.rank()) return invalidArgument(op.describe() + ": bad feature_index");
  const Attribute* eps = op.attr("epsilon");
  if (!eps || eps->kind() != Attribute::Kind::kFloat) return invalidArgument(op.describe() + ": no float epsilon");
  BatchNormLayout l;
  l.feature = feature;
  l.epsilon = eps->floatValue();
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d == feature) continue;
    l.others.push_back(d);
    l.perFeature *= x.dim(d);
  }
  return l;
}

}  // namespace wf
