// The CPU backend's plan: what compile() makes of the entry function once, and what each run
// executes (cpu_backend.cpp). The interpreter (eval/) stays the reference meaning of every op;
// the plan only decides, per op of the entry body, how it runs:
//
// - Hoisting: ops whose operands depend only on bound arguments (CompileOptions::boundArguments,
//   carried ones excepted) and constants run once after the arguments are bound (the prologue),
//   not on every run: batch-norm scale and shift vectors, constant masks, folded weights.
// - Fused elementwise groups (fused_elementwise.h): chains of f32 elementwise ops of one shape
//   run as one tiled pass; the broadcasts and splat constants feeding them are never
//   materialized.
// - Fused convolutions (conv_fused.h): a 2-D f32 convolution whose kernel is hoisted, followed by
//   a per-channel affine chain (batch norm in inference, a bias), a residual add and a ReLU, runs
//   as one oneDNN primitive with the affine folded into its weights and bias at prologue time and
//   the rest as post-ops; activations between such convolutions stay in oneDNN's blocked layout.
// - Fused matrix products (matmul_fused.h): a dot_general of a per-run [M, K] matrix with
//   hoisted weights (nn.Linear's transpose(w) included) and its bias add run as one oneDNN matmul
//   whose weights are reordered into the primitive's layout once, in the prologue.
// - Everything else runs the interpreter's kernel for the op, as before.
//
// The plan is data: tests and `warpforge inspect` read its steps and stats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/fused_elementwise.h"
#include "ir/ir.h"
#include "runtime/backend.h"

namespace wf::cpu {

class FusedConv;     // conv_fused.h
class FusedMatmul;   // matmul_fused.h

struct Step {
  enum class Kind { kOp, kFusedElementwise, kFusedConv, kFusedMatmul };
  Kind kind = Kind::kOp;
  const Operation* op = nullptr;  // kOp: the op; fused steps: the group's last op (names, locations)
  int fused = -1;                 // index into CpuPlan::fusedElementwise / fusedConvs / fusedMatmuls
  std::vector<const Value*> outputs;  // values this step binds
  std::vector<const Value*> dead;     // values no later step reads (freed after this one)
};

struct CpuPlanStats {
  int steps = 0;           // per-run steps
  int hoistedSteps = 0;    // prologue steps
  int fusedGroups = 0;     // fused elementwise steps
  int fusedOps = 0;        // ops inside them
  int fusedConvs = 0;      // fused convolution steps
  int fusedConvOps = 0;    // ops folded into them (the convolution, its affine chain, add, ReLU)
  int blockedValues = 0;   // values passed between fused convolutions in oneDNN's blocked layout
  int winogradConvs = 0;   // fused convolutions that run Winograd's algorithm (CompileOptions::winograd)
  int fusedMatmuls = 0;    // fused matrix products (weights prepacked, bias fused)
};

struct CpuPlan {
  const Operation* entry = nullptr;
  std::vector<Step> prologue;  // hoisted steps, in program order
  std::vector<Step> steps;     // per-run steps, in program order
  std::vector<FusedElementwise> fusedElementwise;
  std::vector<std::shared_ptr<FusedConv>> fusedConvs;
  std::vector<std::shared_ptr<FusedMatmul>> fusedMatmuls;
  CpuPlanStats stats;

  // One line per step ("prologue:" / "run:" then the step), for `inspect` and tests.
  std::string describe() const;
};

// Plans `entry` (a func.func of `module`). options.fuse = false keeps one step per op (hoisting
// still applies); taps are values a run must materialize.
Expected<CpuPlan> planCpu(const Module& module, const Operation& entry, const CompileOptions& options,
                          const std::vector<const Value*>& taps);

}  // namespace wf::cpu
