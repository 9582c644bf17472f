// The one reader of the batch-norm ops' attributes (batch_norm_training, batch_norm_grad,
// batch_norm_inference) for the passes that write them out or differentiate them: the feature
// dim, epsilon, and the operand's other dims, over which the statistics are taken.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

struct BatchNormLayout {
  int64_t feature = 0;
  double epsilon = 0;
  int64_t perFeature = 1;       // elements of the operand per feature
  std::vector<int64_t> others;  // the operand's dims but the feature dim, ascending
};

// Reads `op`'s feature_index and epsilon against its operand 0, which must be a float tensor of
// static shape. Errors name the op: a dynamic shape, a feature_index out of range, no float epsilon.
Expected<BatchNormLayout> readBatchNorm(const Operation& op);

}  // namespace wf
