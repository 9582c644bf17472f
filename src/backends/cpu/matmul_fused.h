// Fused matrix products of the CPU plan (plan.h), on oneDNN's matmul primitive.
//
// Pattern (what the PyTorch exporter writes for nn.Linear):
//
//   %t = transpose %w, dims = [1, 0]      %w hoisted [N, K] (or %w [K, N] used directly)
//   %y = dot_general %x, %t               %x [M, K] f32, contracting x.1 with t.0, no batch dims
//   %z = add %y, broadcast(%b)            optional: %b a hoisted [N] vector (dims = [1])
//
// for products of at least 2^18 multiply-adds (smaller ones stay on the interpreter's GEMM).
// The weights are reordered once, in the prologue, into the layout the primitive wants (packed
// panels where the CPU has a blocked GEMM kernel, e.g. AVX-512), as ONNX Runtime prepacks
// constant GEMM operands at load; the bias is the primitive's bias. The product sums in the
// library's order (like the interpreter's sgemm, not bit for bit); tests compare within fp32
// rounding.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/literal.h"
#include "support/status.h"

namespace wf::cpu {

class FusedMatmul {
 public:
  FusedMatmul();
  ~FusedMatmul();
  FusedMatmul(FusedMatmul&&) noexcept;

  // Reorders the weights and builds the primitive; `hoisted` gives the weights' and bias's
  // Literals. Called after every bind (the prologue).
  Status prepare(const std::function<const Literal*(const Value*)>& hoisted);
  Expected<Literal> run(const Literal& lhs) const;
  std::string describe() const;

  const Operation* dot = nullptr;
  const Value* lhs = nullptr;      // [M, K], per run
  const Value* weights = nullptr;  // hoisted: [N, K] when weightsTransposed, else [K, N]
  bool weightsTransposed = false;
  const Value* bias = nullptr;  // hoisted [N], or null
  const Value* result = nullptr;
  int64_t m = 0, n = 0, k = 0;

 private:
  struct Prepared;
  std::shared_ptr<Prepared> prepared_;
};

struct FusedMatmulMatch {
  FusedMatmul matmul;
  std::vector<const Operation*> ops;       // the dot_general and its bias add, in program order
  std::vector<const Operation*> absorbed;  // the weight transpose and bias broadcast, read by nothing else
};

// Matches the pattern at `dot` (the callbacks as for matchFusedConv). Null where oneDNN is absent,
// the op does not fit, or (unless setFusedMatmulNeedsPackedWeights(false)) oneDNN has no packed
// weights layout for the product on this CPU: there its matmul primitive runs the same sgemm as
// the interpreter's dot_general, slower on transposed weights (oneDNN 2.6 on AVX2), and nothing
// is gained.
std::optional<FusedMatmulMatch> matchFusedMatmul(
    const Operation& dot, const std::function<const std::vector<const Operation*>&(const Value*)>& usersOf,
    const std::function<bool(const Value*)>& hoisted, const std::function<bool(const Value*)>& kept,
    const std::function<bool(const Operation*)>& taken);

// Tests exercise the fused path on CPUs without a packed kernel by turning the condition off.
void setFusedMatmulNeedsPackedWeights(bool needed);

}  // namespace wf::cpu
