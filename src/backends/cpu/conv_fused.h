// Fused convolutions of the CPU plan (plan.h), on oneDNN's convolution primitive.
//
// Pattern (what the PyTorch exporter writes for Conv2d -> BatchNorm2d (eval) -> [+ residual] ->
// [ReLU], and for a Conv2d with bias):
//
//   %c = convolution(%x, %w)          2-D, f32, [b,f,0,1]x[o,i,0,1]->[b,f,0,1], %w hoisted
//   %a = %c (-|+|*) broadcast(%v)     any number of these: %v a hoisted [O] vector (dims = [1])
//                                     or a splat constant
//   %r = add %a, %residual            optional: a per-run tensor of the same shape
//   %y = maximum %r, 0                optional
//   %p = reduce_window max (%y, -inf)  optional, without a residual: max pooling over H and W
//
// Every intermediate has one reader. The affine chain folds into the kernel and a bias once, in
// the prologue (w' = w * scale[o], bias = shift[o]), as ONNX Runtime and PyTorch's
// inference-mode fusions do; the residual is oneDNN's sum post-op and the ReLU its eltwise
// post-op, and a max pooling after it (ResNet's stem) is oneDNN's pooling primitive run on the
// convolution's blocked result. A 3x3 stride-1 convolution may run Winograd's algorithm instead
// (`winograd`, where oneDNN has it for the CPU). The weights are reordered into the primitive's blocked layout once. The result
// differs from the op-by-op program only by rounding (the scale multiplies the kernel before
// the sum instead of the sum after it), well inside the fp32 tolerances (tests compare both).
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

class FusedConv {
 public:
  // One op of the per-channel affine chain: result = conv-so-far <code> operand, where the
  // operand is `vector` (an [O] value, per output channel) or `scalar` when vector is null.
  struct Affine {
    OpCode code = OpCode::Add;  // Add, Subtract (conv - operand) or Multiply
    const Value* vector = nullptr;
    float scalar = 0;
  };

  FusedConv();
  ~FusedConv();
  FusedConv(FusedConv&&) noexcept;

  // Whether oneDNN has a Winograd implementation of this convolution on this CPU (a 3x3 stride-1
  // ungrouped one, with this step's post-ops): the planner sets `winograd` from it.
  bool offersWinograd() const;

  // Folds the affine chain into the kernel and bias and builds the primitive; `hoisted` gives
  // the Literals of the kernel and the affine vectors. Called after every bind (the prologue).
  Status prepare(const std::function<const Literal*(const Value*)>& hoisted);
  // Runs on the per-run input (and residual, when the pattern has one). `residualIsDead`: nothing
  // reads the residual after this step, so where no other Literal shares its storage and it is
  // in the destination's layout, the sum post-op adds the convolution into it in place and it
  // becomes the result (no copy of the residual into the destination first).
  Expected<Literal> run(const Literal& input, const Literal* residual, Literal* residualIsDead = nullptr) const;

  // The per-run values the step reads: the input, and the residual if any.
  std::vector<const Value*> perRunInputs() const;
  std::string describe() const;

  const Operation* conv = nullptr;
  const Value* input = nullptr;
  const Value* kernel = nullptr;
  std::vector<Affine> affine;
  const Value* residual = nullptr;
  bool relu = false;
  // Max pooling of the result (padding never wins: it pads with -inf).
  bool pool = false;
  int64_t poolWindow[2] = {1, 1}, poolStride[2] = {1, 1}, poolPadLo[2] = {0, 0}, poolPadHi[2] = {0, 0};
  const Value* result = nullptr;  // the value of the chain's last op
  // Run Winograd's algorithm (oneDNN's convolution_winograd) instead of the direct convolution:
  // about 2.25x (F(2x2, 3x3)) to 4x (F(4x4, 3x3)) fewer multiplications, at the cost of rounding
  // through the input and output transforms (the result stays within the fp32 tolerances).
  bool winograd = false;
  // Blocked layouts between fused convolutions: when every reader of `result` is another fused
  // convolution (as its input or residual), the result stays in this primitive's own layout
  // (a flat f32 carrier Literal of its padded size), and the readers take it as is. The
  // producers are prepared before their readers (program order).
  bool blockedOutput = false;
  const FusedConv* inputProducer = nullptr;     // set when `input` arrives blocked
  const FusedConv* residualProducer = nullptr;  // set when `residual` arrives blocked

 private:
  struct Prepared;
  std::shared_ptr<Prepared> prepared_;
};

struct FusedConvMatch {
  FusedConv conv;
  std::vector<const Operation*> ops;       // the convolution and its chain, in program order
  std::vector<const Operation*> absorbed;  // broadcasts and splats only the chain read
};

// Matches the pattern at `conv`. usersOf(v): the ops reading v; hoisted(v): v is computed in the
// prologue (or a bound argument); kept(v): v is returned or tapped; taken(op): op belongs to
// another fused convolution already (the chain stops before it). Null where oneDNN is absent or
// the op does not fit.
std::optional<FusedConvMatch> matchFusedConv(
    const Operation& conv, const std::function<const std::vector<const Operation*>&(const Value*)>& usersOf,
    const std::function<bool(const Value*)>& hoisted, const std::function<bool(const Value*)>& kept,
    const std::function<bool(const Operation*)>& taken);

}  // namespace wf::cpu
