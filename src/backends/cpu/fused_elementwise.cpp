// The fused elementwise loop of the CPU plan (fused_elementwise.h).
#include "backends/cpu/fused_elementwise.h"

#include <algorithm>
#include <cstring>

#include "eval/element_math.h"
#include "eval/elementwise_ops.h"
#include "support/thread_pool.h"

namespace wf::cpu {
namespace {

// Elements per tile: every node's tile stays in L1/L2 together (a GELU or normalisation group
// holds about ten nodes), and a tile is long enough that the per-node dispatch is noise.
constexpr int64_t kTile = 512;

// X(OpCode, functor) for the f32 ops a group computes with element_math.h's functors.
#define WF_FUSED_UNARY(X)                                                                          \
  X(Abs, Abs) X(Negate, Negate) X(Exponential, Exp) X(ExponentialMinusOne, Expm1) X(Log, Log)      \
  X(LogPlusOne, Log1p) X(Logistic, Logistic) X(Sqrt, Sqrt) X(Rsqrt, Rsqrt) X(Cbrt, Cbrt)           \
  X(Sine, Sin) X(Cosine, Cos) X(Tan, Tan) X(Tanh, Tanh) X(Floor, Floor) X(Ceil, Ceil)              \
  X(RoundNearestAfz, RoundAfz) X(RoundNearestEven, RoundEven) X(Sign, Sign)
#define WF_FUSED_BINARY(X)                                                                         \
  X(Add, Add) X(Subtract, Sub) X(Multiply, Mul) X(Divide, Div) X(Remainder, Rem) X(Maximum, Max)   \
  X(Minimum, Min) X(Power, Pow) X(Atan2, Atan2)

template <typename F>
inline __attribute__((always_inline)) void unaryLoop(const float* __restrict a, float* __restrict out, int64_t n) {
  WF_SIMD
  for (int64_t i = 0; i < n; ++i) out[i] = F::template apply<0>(a[i]);
}

template <typename F>
inline __attribute__((always_inline)) void binaryLoop(const float* __restrict a, const float* __restrict b,
                                                      float* __restrict out, int64_t n) {
  WF_SIMD
  for (int64_t i = 0; i < n; ++i) out[i] = F::template apply<0>(a[i], b[i]);
}

// One node over a tile. Operand pointers are tile-local (index 0 is the tile's first element).
// Compiled for AVX2 and AVX-512 beside the baseline, picked by the CPU at load time (GCC's
// function multiversioning): the loops run 8 or 16 lanes wide where the CPU has them. No
// multiply-add is contracted (-ffp-contract=off for this file, CMakeLists.txt; AVX-512F has FMA
// instructions that GCC would otherwise use), so every lane rounds as the interpreter does.
__attribute__((target_clones("avx512f", "avx2", "default")))
void runNode(OpCode code, const float* const* in, const uint8_t* pred, float* out, int64_t n) {
  switch (code) {
#define WF_CASE(op, F) \
  case OpCode::op: unaryLoop<em::F>(in[0], out, n); return;
    WF_FUSED_UNARY(WF_CASE)
#undef WF_CASE
#define WF_CASE(op, F) \
  case OpCode::op: binaryLoop<em::F>(in[0], in[1], out, n); return;
    WF_FUSED_BINARY(WF_CASE)
#undef WF_CASE
    case OpCode::ChloErf: {
      const float* __restrict a = in[0];
      WF_SIMD
      for (int64_t i = 0; i < n; ++i) out[i] = ew::erfF32(a[i]);
      return;
    }
    case OpCode::Reshape:
      std::memcpy(out, in[0], static_cast<size_t>(n) * sizeof(float));
      return;
    case OpCode::Select: {
      const float* __restrict t = in[1];
      const float* __restrict f = in[2];
      WF_SIMD
      for (int64_t i = 0; i < n; ++i) out[i] = pred[i] ? t[i] : f[i];
      return;
    }
    default:
      return;  // fusibleElementwise() admits nothing else
  }
}

// The row-major multi-index of flat element `start` of `shape`, for stepping leaves.
void unflatten(int64_t start, const std::vector<int64_t>& shape, std::vector<int64_t>& index) {
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? start % shape[d] : 0;
    start = shape[d] ? start / shape[d] : 0;
  }
}

// Copies elements [start, start + n) of a strided leaf into `out` (row by row of the
// innermost dimension: each row is a run of stride `strides.back()`).
template <typename T>
void gather(const T* src, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t start,
            int64_t n, T* out, std::vector<int64_t>& index) {
  const size_t r = shape.size();
  if (r == 0) {
    std::fill(out, out + n, src[0]);
    return;
  }
  index.resize(r);
  unflatten(start, shape, index);
  int64_t offset = 0;
  for (size_t d = 0; d < r; ++d) offset += index[d] * strides[d];
  const int64_t inner = shape[r - 1], innerStride = strides[r - 1];
  int64_t done = 0;
  while (done < n) {
    int64_t run = std::min(n - done, inner - index[r - 1]);
    if (innerStride == 0) {
      std::fill(out + done, out + done + run, src[offset]);
    } else if (innerStride == 1) {
      std::memcpy(out + done, src + offset, static_cast<size_t>(run) * sizeof(T));
    } else {
      for (int64_t i = 0; i < run; ++i) out[done + i] = src[offset + i * innerStride];
    }
    done += run;
    // Advance the multi-index by `run` (to the start of the next row).
    index[r - 1] += run;
    offset += run * innerStride;
    for (size_t d = r - 1; d > 0 && index[d] == shape[d]; --d) {
      offset -= index[d] * strides[d];
      index[d] = 0;
      ++index[d - 1];
      offset += strides[d - 1];
    }
  }
}

}  // namespace

std::optional<float> splatF32Constant(const Operation& op) {
  if (op.code() != OpCode::Constant || op.numResults() != 1) return std::nullopt;
  const Type& t = op.result(0)->type();
  const Attribute* value = op.attr("value");
  const Literal* l = nullptr;
  if (value && value->kind() == Attribute::Kind::kDenseElements)
    l = value->splatValue() ? value->splatValue() : value->literal();  // a splat is never made whole here
  if (!t.isTensor() || t.elementType() != ElementType::kF32 || !l || l->elementType() != ElementType::kF32 ||
      l->numElements() < 1)
    return std::nullopt;
  const uint32_t* bits = l->dataAs<uint32_t>();
  for (int64_t i = 1; i < l->numElements(); ++i)
    if (bits[i] != bits[0]) return std::nullopt;
  return l->dataAs<float>()[0];
}

bool fusibleElementwise(OpCode code) {
  switch (code) {
#define WF_CASE(op, F) case OpCode::op:
    WF_FUSED_UNARY(WF_CASE)
    WF_FUSED_BINARY(WF_CASE)
#undef WF_CASE
    case OpCode::ChloErf:
    case OpCode::Select:
    case OpCode::Reshape:
      return true;
    default:
      return false;
  }
}

Expected<std::vector<Literal>> runFusedElementwise(const FusedElementwise& g, const std::vector<const Literal*>& leaves) {
  if (leaves.size() != g.leaves.size())
    return internalError("fused group at " + g.ops.back()->describe() + ": " + std::to_string(leaves.size()) +
                         " leaves bound, the group reads " + std::to_string(g.leaves.size()));
  const int64_t total = g.elements;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const FusedLeaf& leaf = g.leaves[i];
    int64_t reach = 0;  // the largest element index the strides touch, + 1
    for (size_t d = 0; d < leaf.shape.size(); ++d) reach += (leaf.shape[d] - 1) * leaf.strides[d];
    if (leaves[i]->elementType() != leaf.type || (total > 0 && leaves[i]->numElements() < reach + 1))
      return internalError("fused group at " + g.ops.back()->describe() + ": leaf " + leaf.value->nameHint() +
                           " is " + leaves[i]->type().toString() + ", too small or of another type for its strides");
  }
  std::vector<Literal> outputs;
  std::vector<float*> nodeOut(g.nodes.size(), nullptr);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].output) {
      outputs.push_back(Literal::uninitialized(g.nodes[i].result->type()));
      nodeOut[i] = outputs.back().dataAs<float>();
    }
  if (total == 0) return outputs;

  const int64_t tiles = (total + kTile - 1) / kTile;
  // Cheap groups (a bias add) want several tiles per task; math-heavy ones split finer.
  parallelFor(tiles, std::max<int64_t>(1, 16384 / (kTile * static_cast<int64_t>(g.nodes.size()))),
              [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<size_t>(kTile) * (g.leaves.size() + g.nodes.size()));
    std::vector<uint8_t> predScratch(static_cast<size_t>(kTile) * g.leaves.size());
    // Scalar operands (splat constants) as tiles, filled once per task: operand o of node k
    // reads splats[3 * k + o].
    std::vector<std::vector<float>> splats(3 * g.nodes.size());
    for (size_t k = 0; k < g.nodes.size(); ++k)
      for (size_t o = 0; o < g.nodes[k].operands.size(); ++o)
        if (g.nodes[k].operands[o].kind == FusedRef::Kind::kScalar)
          splats[3 * k + o].assign(static_cast<size_t>(kTile), g.nodes[k].operands[o].scalar);
    std::vector<const float*> leafPtr(g.leaves.size());
    std::vector<const uint8_t*> predPtr(g.leaves.size());
    std::vector<const float*> nodePtr(g.nodes.size());
    std::vector<int64_t> index;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t start = t * kTile, n = std::min(kTile, total - start);
      for (size_t l = 0; l < g.leaves.size(); ++l) {
        const FusedLeaf& leaf = g.leaves[l];
        if (leaf.type == ElementType::kI1) {
          const uint8_t* src = leaves[l]->dataAs<uint8_t>();
          if (leaf.dense) {
            predPtr[l] = src + start;
          } else {
            uint8_t* buf = predScratch.data() + l * kTile;
            gather(src, leaf.shape, leaf.strides, start, n, buf, index);
            predPtr[l] = buf;
          }
          continue;
        }
        const float* src = leaves[l]->dataAs<float>();
        if (leaf.dense) {
          leafPtr[l] = src + start;
        } else {
          float* buf = scratch.data() + l * kTile;
          gather(src, leaf.shape, leaf.strides, start, n, buf, index);
          leafPtr[l] = buf;
        }
      }
      for (size_t k = 0; k < g.nodes.size(); ++k) {
        const FusedNode& node = g.nodes[k];
        const float* in[3] = {nullptr, nullptr, nullptr};
        const uint8_t* pred = nullptr;
        for (size_t o = 0; o < node.operands.size(); ++o) {
          const FusedRef& ref = node.operands[o];
          const auto i = static_cast<size_t>(ref.index);
          if (ref.kind == FusedRef::Kind::kNode) {
            in[o] = nodePtr[i];
          } else if (ref.kind == FusedRef::Kind::kScalar) {
            in[o] = splats[3 * k + o].data();
          } else if (g.leaves[i].type == ElementType::kI1) {
            pred = predPtr[i];
          } else {
            in[o] = leafPtr[i];
          }
        }
        float* out = nodeOut[k] ? nodeOut[k] + start : scratch.data() + (g.leaves.size() + k) * kTile;
        runNode(node.code, in, pred, out, n);
        nodePtr[k] = out;
      }
    }
  });
  return outputs;
}

}  // namespace wf::cpu
