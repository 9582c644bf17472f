// A fused elementwise group of the CPU plan (plan.h): a DAG of f32 elementwise ops of one shape,
// computed in one parallel pass over tiles of the output instead of one pass (and one
// materialized tensor) per op. Broadcasts (broadcast_in_dim) and splat constants feeding the
// group are read through strides from their operands, never materialized.
//
// Per tile (kTile consecutive elements in row-major order) each leaf is loaded (in place when it
// is laid out like the output, else gathered through its strides) and each node runs one tight
// loop over the tile with eval/element_math.h's functor for its op, the same functor the
// interpreter's kernel runs, in the same order: the results are bit-identical to running the
// ops one by one (tests/unit/cpu_plan_test.cpp checks that on random inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/literal.h"
#include "support/status.h"

namespace wf::cpu {

// Operand of a node: another node of the group (by index, earlier in `nodes`), a leaf (by
// index), or a scalar constant.
struct FusedRef {
  enum class Kind { kNode, kLeaf, kScalar } kind = Kind::kNode;
  int index = 0;
  float scalar = 0;
};

// An input read by the group: `value`'s Literal seen as `shape` (the shape of the node reading
// it) through `strides` (elements per dimension of `shape`; 0 where it is broadcast). i1 leaves
// feed only select.
struct FusedLeaf {
  const Value* value = nullptr;
  ElementType type = ElementType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  bool dense = false;  // strides are the row-major strides of `shape`: read in place
};

struct FusedNode {
  OpCode code = OpCode::Add;
  std::vector<FusedRef> operands;
  const Value* result = nullptr;  // the op's SSA value
  bool output = false;            // read outside the group: written to its own Literal
};

// The nodes all have `elements` elements; a reshape node (its operand a node) passes its operand
// on under another shape, so a group may span a bias add, a reshape and a GELU.
struct FusedElementwise {
  int64_t elements = 0;
  std::vector<FusedLeaf> leaves;
  std::vector<FusedNode> nodes;  // in program order
  // The ops of the group, for names in errors and the plan's description.
  std::vector<const Operation*> ops;
};

// The value of an f32 constant op whose elements are all the same bits (the parser expands
// `dense<0.0>` to every element), else nullopt.
std::optional<float> splatF32Constant(const Operation& op);

// Whether the group can compute `code` (f32 unary and binary math, chlo.erf, select, and
// reshape of a node).
bool fusibleElementwise(OpCode code);

// Runs the group: `leaves[i]` is the Literal of group.leaves[i]; returns one Literal per output
// node, in node order.
Expected<std::vector<Literal>> runFusedElementwise(const FusedElementwise& group, const std::vector<const Literal*>& leaves);

}  // namespace wf::cpu
